"""Painting the canvas must not leak references: PySide6 6.12.0 drops a reference to None on every
Python paint() call, which crashes a canvas after a few thousand paints. pyproject.toml keeps such
versions out; this test fails if one slips back in."""

import sys

from PySide6.QtGui import QImage, QPainter


def test_painting_the_canvas_keeps_none_alive(make_window):
    w = make_window("dgx1-v100")
    vp = w.view.viewport()
    image = QImage(vp.size(), QImage.Format.Format_ARGB32_Premultiplied)
    items = len(w.scene.device_items) + len(w.scene.link_items)

    def render(n):
        for _ in range(n):
            painter = QPainter(image)
            w.view.render(painter)
            painter.end()

    render(2)
    before = sys.getrefcount(None)
    render(50)
    lost = before - sys.getrefcount(None)
    assert lost < items * 5, f"{lost} references to None lost in 50 repaints of {items} items"
