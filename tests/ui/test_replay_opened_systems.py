"""A replay on a large cluster's overview: what the user opens while a run is shown (a system zoomed
into with the wheel or a double-click) carries the replay's colours like a small design does: its
GPUs their state, its inside links their utilization, chunks moving between its GPUs. Before, the
replay drew 24 pairs of each transfer pattern, looked up once at fit (blocks), so an opened system
stayed uncoloured."""

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.ui.animation import STATE_COLORS
from dgxstudio.ui.canvas_lod_items import BundleItem
from dgxstudio.ui.style import IDLE_LINK

from .test_simulation_gui import configure


@pytest.fixture(scope="module")
def cluster():
    return build_fat_tree(128, "dgx-h100", rail_optimized=True)   # 1,024 GPUs, drawn as its overview


def visible(w):
    return w.view.mapToScene(w.view.viewport().rect()).boundingRect()


def action(w, text):
    return next(a for a in w.findChildren(type(w.play_action)) if a.text() == text)


def run_ring(w, qtbot):
    p = configure(w, algorithm="ring", size="256MiB")
    with qtbot.waitSignal(p.resultReady, timeout=60000):
        qtbot.mouseClick(p.run_button, Qt.MouseButton.LeftButton)
    qtbot.wait(5)
    assert w.replayer.sim is not None


def step_until_sending(w, qtbot, most: int = 8) -> None:
    """Click Step until some transfer is on its way (a ring step alternates sending and landing)."""
    sim = w.replayer.sim
    for _ in range(most):
        action(w, "Step").trigger()
        qtbot.wait(1)
        t = w.replayer.t
        if ((sim.group_start <= t) & (sim.group_sent > t)).any():
            return
    raise AssertionError("no transfer in flight after stepping")


def gpus_of(w, system):
    lod = w.scene.lod
    return [w.scene.device_items[d] for d in lod.overview.system_devices[system]
            if w.scene.topology.devices[d].kind == "gpu"]


def assert_system_coloured(w, system) -> None:
    """The open system's GPUs show they send, its inside links carry utilization colours over a grey
    path, and chunks are drawn on its GPUs' paths, inside the view."""
    lod = w.scene.lod
    gpus = gpus_of(w, system)
    assert len(gpus) == 8
    assert all(g.state_color == STATE_COLORS["sending"] for g in gpus), [g.state_color for g in gpus]
    path_item, ends = lod.system_links[system]
    assert path_item.pen().color() == IDLE_LINK
    busy = [c for c in path_item.childItems() if c.isVisible() and not c.path().isEmpty()]
    assert busy and all(c.pen().color() != IDLE_LINK for c in busy)
    assert sum(c.path().elementCount() for c in busy) >= 2 * 8   # at least each GPU's link to its NVSwitches
    box = lod.system_items[system].sceneBoundingRect()
    dots = chunks_on_screen(w)
    assert any(box.contains(d.pos()) for d in dots)      # the opened system's own chunks


def chunks_on_screen(w) -> list:
    """The chunks drawn, checked to be in the view (with the replay's 5% margin): none off screen."""
    dots = [d for d in w.replayer._dots if d.isVisible()]
    seen = visible(w)
    margin = seen.adjusted(-seen.width() * 0.06, -seen.height() * 0.06, seen.width() * 0.06, seen.height() * 0.06)
    assert all(margin.contains(d.pos()) for d in dots)
    return dots


def ran_at_fit(make_window, qtbot, cluster):
    """A window on the cluster, a ring all-reduce run from the dock, the view at fit, stepped to a
    moment when transfers are on their way."""
    w = make_window(topology=cluster)
    run_ring(w, qtbot)
    w.view.fit()
    qtbot.wait(5)
    step_until_sending(w, qtbot)
    return w, w.scene.lod


def test_a_system_opened_by_double_click_shows_the_replay(make_window, qtbot, cluster):
    w, lod = ran_at_fit(make_window, qtbot, cluster)
    # at fit: the bundles carry the utilization, the units (blocks) send
    assert any(isinstance(i, BundleItem) and i._overlay_key is not None and i._overlay_key[0] != IDLE_LINK.rgba()
               for i in w.replayer._overlaid)
    assert any(getattr(b, "fill", None) == STATE_COLORS["sending"] for b in lod.block_items.values())
    # double-click a unit, then one of its systems: it opens into devices, with the replay paused
    block = lod.block_items["t0b1"]
    qtbot.mouseDClick(w.view.viewport(), Qt.MouseButton.LeftButton,
                      pos=w.view.mapFromScene(block.sceneBoundingRect().center()))
    qtbot.waitUntil(lambda: "t0b1" in lod.open_blocks, timeout=3000)
    qtbot.wait(QApplication.doubleClickInterval() + 50)
    system = block.block.members[5]
    qtbot.mouseDClick(w.view.viewport(), Qt.MouseButton.LeftButton,
                      pos=w.view.mapFromScene(lod.system_items[system].sceneBoundingRect().center()))
    qtbot.waitUntil(lambda: system in lod.open_systems, timeout=3000)
    qtbot.wait(5)
    assert not w.replayer.timer.isActive()
    assert_system_coloured(w, system)   # coloured as it opened, without another step
    # stepping on: landing (nothing sends), then the next step sends again, on the open system too
    action(w, "Step").trigger()
    qtbot.wait(1)
    assert all(g.state_color is None for g in gpus_of(w, system))
    step_until_sending(w, qtbot)
    assert_system_coloured(w, system)


def test_a_system_opened_by_the_wheel_shows_the_replay_and_ends_clean(make_window, qtbot, cluster):
    w, lod = ran_at_fit(make_window, qtbot, cluster)
    unit = lod.block_items["t0b2"]
    for _ in range(60):   # wheel notches towards a system in the middle of the unit, as a user would
        at = unit.sceneBoundingRect().center()
        members = unit.block.members
        system = members[len(members) // 2]
        if system in lod.system_items:
            at = lod.system_items[system].sceneBoundingRect().center()
        pos = QPointF(w.view.mapFromScene(at))
        event = QWheelEvent(pos, QPointF(w.view.viewport().mapToGlobal(pos.toPoint())), QPoint(0, 0), QPoint(0, 120),
                            Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(w.view.viewport(), event)
        w.view.centerOn(at)
        qtbot.wait(5)
        if system in lod.open_systems:
            break
    qtbot.wait(50)   # the rest of the screen opens over the next turns
    assert system in lod.open_systems
    assert_system_coloured(w, system)
    for other in lod.open_systems:   # every system opened on screen is coloured, not only the first
        assert all(g.state_color == STATE_COLORS["sending"] for g in gpus_of(w, other))
    # pan a screen to the right: the systems that open there are coloured, those left behind closed
    before = set(lod.open_systems)
    bar = w.view.horizontalScrollBar()
    bar.setValue(bar.value() + w.view.viewport().width())
    qtbot.wait(100)
    assert set(lod.open_systems) - before and system not in lod.open_systems
    action(w, "Step").trigger()
    step_until_sending(w, qtbot)
    for other in lod.open_systems:
        assert all(g.state_color == STATE_COLORS["sending"] for g in gpus_of(w, other))
    assert chunks_on_screen(w)
    # the replay cleared (a new document, a new run): the open systems look as without a replay
    w.replayer.clear()
    for sid, (path_item, _ends) in lod.system_links.items():
        assert path_item.pen().color() != IDLE_LINK and not path_item.childItems()
        assert all(g.state_color is None for g in gpus_of(w, sid))
    assert not any(d.isVisible() for d in w.replayer._dots)
    # zoom back out and in again with a run loaded: the systems close, the next opened ones are coloured
    w.replayer.load(w.session["runs"][-1].sim)
    w.view.fit()
    qtbot.wait(300)
    assert not lod.open_systems
    step_until_sending(w, qtbot)
    assert lod.block_items["t0b2"].fill == STATE_COLORS["sending"]
