"""File > New cluster…: systems on a fat tree, with a live count of switches, cables and power before it builds.

Everything the dialog offers is what ``dgxstudio generate fat-tree`` takes; the counts come from
``plan_fat_tree`` (no topology is built until OK), and a combination that cannot be built says why
in the summary and disables OK.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QSpinBox,
                               QVBoxLayout, QWidget)

from ..model.catalog import NETWORK_FAMILIES, Catalog, default_catalog
from ..model.fabrics import MAX_SYSTEMS, _fabric_nics, build_fat_tree, plan_fat_tree
from ..model.systems import SYSTEM_BUILDERS, SYSTEM_LABELS, build_system, power_text
from ..model.topology import Topology
from ..units import counted

RATIOS = ["1:1 (non-blocking)", "2:1", "3:1", "4:1"]
# The model's refusals name command-line options; the dialog names its own fields.
FIELD_NAMES = {"--nics-per-system": "NICs cabled per system", "--oversubscription": "Oversubscription",
               "--rails": "Rails", "--tiers": "Tiers", "--nic": "Compute NIC", "--switch": "Switch",
               "--rail-optimized": "Rail-optimized"}


def _network_parts(catalog: Catalog, kinds: tuple[str, ...]) -> list:
    return [p for p in catalog.parts.values() if p.kind in kinds and any(
        catalog.link_type(g.accepts[0]) is not None and catalog.link_type(g.accepts[0]).family in NETWORK_FAMILIES
        for g in p.ports)]


class ClusterDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, catalog: Catalog | None = None):
        super().__init__(parent)
        self.setObjectName("clusterDialog")
        self.setWindowTitle("New cluster")
        self.catalog = catalog or default_catalog()
        self._probes: dict[str, Topology] = {}
        self.plan = None

        form = QFormLayout()
        self.system = QComboBox()
        for key in SYSTEM_BUILDERS:
            self.system.addItem(SYSTEM_LABELS[key], key)
        self.system.setCurrentIndex(self.system.findData("dgx-h100"))
        self.count = QSpinBox()
        self.count.setRange(1, MAX_SYSTEMS)
        self.count.setValue(32)
        self.count.setGroupSeparatorShown(True)
        self.nic = QComboBox()
        self.nic.addItem("as the system has it", None)
        for p in _network_parts(self.catalog, ("nic",)):
            self.nic.addItem(p.label, p.id)
        self.nics = QSpinBox()
        self.nics.setToolTip("Cable the first K compute NICs of each system")
        self.switch = QComboBox()
        self.switch.addItem("made for the NIC's speed", None)
        for p in _network_parts(self.catalog, ("ib_switch", "eth_switch")):
            self.switch.addItem(p.label, p.id)
        self.rail = QCheckBox("NIC k of every system in a scalable unit to leaf k of that unit")
        self.rail.setChecked(True)
        self.rails = QSpinBox()
        self.rails.setRange(0, 4096)
        self.rails.setSpecialValueText("one per NIC port")
        self.per_unit = QSpinBox()
        self.per_unit.setRange(0, MAX_SYSTEMS)
        self.per_unit.setSpecialValueText("automatic (fill half a leaf)")
        self.ratio = QComboBox()
        self.ratio.addItems(RATIOS)
        self.tiers = QComboBox()
        self.tiers.addItem("automatic (3 when 2 cannot hold it)", None)
        self.tiers.addItem("2", 2)
        self.tiers.addItem("3", 3)
        form.addRow("System", self.system)
        form.addRow("Systems", self.count)
        form.addRow("Compute NIC", self.nic)
        form.addRow("NICs cabled per system", self.nics)
        form.addRow("Switch", self.switch)
        form.addRow("Rail-optimized", self.rail)
        form.addRow("Rails", self.rails)
        form.addRow("Systems per leaf / unit", self.per_unit)
        form.addRow("Oversubscription (down:up)", self.ratio)
        form.addRow("Tiers", self.tiers)

        self.summary = QLabel()
        self.summary.setObjectName("clusterSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setMinimumHeight(110)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Build")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.summary)
        layout.addWidget(self.buttons)

        self.system.currentIndexChanged.connect(self._system_changed)
        for w in (self.count, self.nics, self.rails, self.per_unit):
            w.valueChanged.connect(self.refresh)
        for w in (self.nic, self.switch, self.ratio, self.tiers):
            w.currentIndexChanged.connect(self.refresh)
        self.rail.toggled.connect(self.refresh)
        self._system_changed()

    # ---- state ------------------------------------------------------------------------------
    def _probe(self) -> Topology:
        key = self.system.currentData()
        if key not in self._probes:
            self._probes[key] = build_system(key, self.catalog)
        return self._probes[key]

    def _system_changed(self) -> None:
        n = len(_fabric_nics(self._probe(), "system"))
        self.nics.blockSignals(True)
        self.nics.setRange(1, max(n, 1))
        self.nics.setValue(n)
        self.nics.blockSignals(False)
        self.refresh()

    def options(self) -> dict:
        """The chosen options, as ``build_fat_tree`` keywords."""
        n_all = len(_fabric_nics(self._probe(), "system"))
        rail = self.rail.isChecked()
        return {"system": self.system.currentData(), "nic": self.nic.currentData(),
                "nics_per_system": self.nics.value() if self.nics.value() != n_all else None,
                "switch": self.switch.currentData(), "rail_optimized": rail,
                "rails": (self.rails.value() or None) if rail else None,
                "per_leaf": self.per_unit.value() or None,
                "oversubscription": float(self.ratio.currentIndex() + 1), "tiers": self.tiers.currentData()}

    def refresh(self) -> None:
        self.rails.setEnabled(self.rail.isChecked())
        opts = self.options()
        ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        try:
            self.plan = plan_fat_tree(self._probe(), "system", self.count.value(), opts["per_leaf"], None,
                                      system=opts["system"], nic=opts["nic"], nics_per_system=opts["nics_per_system"],
                                      rail_optimized=opts["rail_optimized"], rails=opts["rails"],
                                      oversubscription=opts["oversubscription"], tiers=opts["tiers"],
                                      switch=opts["switch"])
        except ValueError as exc:
            self.plan = None
            text = str(exc)
            for option, name in FIELD_NAMES.items():  # longest options first in the table
                text = text.replace(option, name)
            self.summary.setText(f"<span style='color:#b00020'><b>Cannot build:</b> {html.escape(text)}</span>")
            ok.setEnabled(False)
            return
        ok.setEnabled(True)
        self.summary.setText(summary_html(self.plan, self.catalog, len(self._probe().gpus())))

    def build(self) -> Topology:
        opts = self.options()
        return build_fat_tree(self.count.value(), catalog=self.catalog, **opts)


def summary_html(plan, catalog: Catalog, gpus_per_system: int) -> str:
    s = plan.summary(catalog)
    sw = ", ".join(f"{n:,} {tier}" for tier, n in s["switches"].items())
    cab = ", ".join(f"{n:,} {tier}" for tier, n in s["cables"].items())
    unit = "scalable unit" if plan.rail_optimized else "leaf"
    power = power_text(s["power_W"], s["power_unknown"])
    lines = [
        f"<b>{counted(plan.systems, 'system', grouped=True)}, {counted(plan.systems * gpus_per_system, 'GPU', grouped=True)}</b> — "
        f"{counted(plan.levels, 'tier')} of {catalog.part(plan.switch_part).label}, {counted(plan.per_leaf, 'system')} per {unit}"
        + (f", {plan.rails} rails" if plan.rail_optimized else ""),
        f"Switches: <b>{s['switches_total']:,}</b> ({sw})",
        f"Cables: <b>{s['cables_total']:,}</b> ({cab}); NIC links at {catalog.link_type(plan.link_type).label}",
        f"Power: <b>{power}</b>",
    ]
    if s["power_basis"]:
        lines.append("&nbsp;&nbsp;" + html.escape("; ".join(s["power_basis"]) + "; systems at their published maximum"))
    lines += [f"<span style='color:#a05a00'>Note: {w}</span>" for w in s["warnings"]]
    return "<br>".join(lines)


def open_cluster_dialog(window) -> None:
    """Show the dialog over a main window; on Build, replace its document (after asking about unsaved work)."""
    dialog = ClusterDialog(window, window.document.topology.catalog)
    if dialog.exec() != QDialog.DialogCode.Accepted or not window.maybe_save():
        return
    topo = dialog.build()
    window._replace(topo, None)
    window.show_status(f"Built {topo.name}: {topo.description}")
