"""File > New cluster…: live counts before building, refusals that disable Build, and the built cluster."""

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from dgxstudio.ui.cluster_dialog import ClusterDialog


def _pick(combo, data):
    combo.setCurrentIndex(combo.findData(data))


def test_live_summary_counts_switches_cables_and_power(qtbot):
    d = ClusterDialog()
    qtbot.addWidget(d)
    _pick(d.system, "dgx-h100")
    d.count.setValue(128)
    text = d.summary.text()
    # the DGX SuperPOD 4-SU table: 32 leaves and 16 spines, 1,024 cables a tier; 128 x 10.2 kW + 48 x 747 W
    assert "Switches: <b>48</b> (32 leaf, 16 spine)" in text
    assert "Cables: <b>2,048</b>" in text
    assert "1,341.5 kW" in text and "747 W each" in text and "no published figure" not in text
    _pick(d.system, "dgx-a100")
    assert "no published figure: InfiniBand HDR switch" in d.summary.text()
    _pick(d.system, "hgx-a800")  # neither the HGX A800 nor the HDR switch has a published figure
    assert "Power: <b>no published figure (" in d.summary.text() and "0.0 kW" not in d.summary.text()
    d.rail.setChecked(False)
    assert "rails" not in d.summary.text()


def test_a_combination_that_cannot_be_built_disables_build(qtbot):
    d = ClusterDialog()
    qtbot.addWidget(d)
    _pick(d.system, "dgx-h100")
    d.per_unit.setValue(32)
    d.ratio.setCurrentIndex(2)  # 3:1 does not divide 32 down ports
    build = d.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert not build.isEnabled() and "does not divide" in d.summary.text()
    d.ratio.setCurrentIndex(1)
    assert build.isEnabled() and "Switches" in d.summary.text()


def test_new_cluster_from_the_file_menu(make_window, qtbot):
    w = make_window("dgx1-v100")
    action = next(a for a in w.findChildren(type(w.menuBar().actions()[0])) if a.text() == "New &cluster…")
    done = []

    def answer():
        d = QApplication.activeModalWidget()
        if not isinstance(d, ClusterDialog):
            QTimer.singleShot(20, answer)
            return
        _pick(d.system, "dgx-b200")
        d.count.setValue(4)
        qtbot.mouseClick(d.buttons.button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton)
        done.append(True)

    QTimer.singleShot(20, answer)
    action.trigger()
    assert done
    topo = w.document.topology
    assert len(topo.gpus()) == 32 and "DGX B200" in topo.name
    assert all(g in topo.layout.collapsed for g in topo.groups if g.startswith("s"))
