"""A replay recolours links without changing their geometry (issue 17: replay frames; each new pen moved
the link in the scene's index), while what is drawn stays inside the item's bounds and what a click
picks stays the link's own outline."""

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QPainterPathStroker
from PySide6.QtWidgets import QGraphicsPathItem, QToolBar

from .test_simulation_gui import configure


def _stroke(path, pen):
    s = QPainterPathStroker()
    s.setWidth(pen.widthF())
    s.setCapStyle(pen.capStyle())
    return s.createStroke(path)


def _step(w, qtbot, n):
    bar = next(b for b in w.findChildren(QToolBar) if any(a.text() == "Step" for a in b.actions()))
    button = bar.widgetForAction(next(a for a in bar.actions() if a.text() == "Step"))
    for _ in range(n):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_a_replay_changes_colours_not_geometry(make_window, qtbot):
    w = make_window("dgx-h100")
    links = [i for i in w.scene.link_items if not i.bundle]
    before = {id(i): (i.boundingRect(), i.shape().boundingRect()) for i in links}
    p = configure(w, algorithm="multi-ring", size="64MiB")
    with qtbot.waitSignal(p.resultReady, timeout=20000):
        p.run()
    w.view.zoom(3.0)
    recoloured = set()
    playing = {id(i): (i.boundingRect(), i.shape().boundingRect()) for i in links}   # room for the overlay
    for _ in range(6):
        _step(w, qtbot, 2)
        for item in links:
            pen = item.drawn_pen()
            if pen.color() != item.base_pen.color():
                recoloured.add(id(item))
            assert (item.boundingRect(), item.shape().boundingRect()) == playing[id(item)]
            # what is drawn (a replay's line is wider) stays inside the bounds Qt repaints
            assert item.boundingRect().contains(_stroke(item.path(), pen).boundingRect())
    assert len(recoloured) > len(links) // 4
    # a click picks the link's own outline, not the room kept for a replay's wider line
    item = max(links, key=lambda i: i.path().length())
    line = item.path()
    a, b = line.pointAtPercent(0.0), line.pointAtPercent(1.0)
    mid = (a + b) / 2
    d = b - a
    normal = QPointF(-d.y(), d.x()) / (d.x() ** 2 + d.y() ** 2) ** 0.5
    half = item.base_pen.widthF() / 2
    assert item in w.scene.items(mid + normal * (half - 0.3))
    assert item not in w.scene.items(mid + normal * (half + 0.6))
    w.replayer.clear()
    assert all(i.drawn_pen() == i.base_pen for i in links)
    # without a replay the bounds are QGraphicsPathItem's own (what fitting the view and the overview read)
    assert {id(i): (i.boundingRect(), i.shape().boundingRect()) for i in links} == before
    plain = QGraphicsPathItem(item.path())
    plain.setPen(item.base_pen)
    assert item.boundingRect() == plain.boundingRect() and item.shape() == plain.shape()
