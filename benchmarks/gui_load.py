"""Times opening each preset in the main window offscreen and repainting the canvas (issue 6):
the 124-system fat tree must open in under 2 s; a generated 1,000-system fat tree must open and pan.
Run: python benchmarks/gui_load.py
"""

import os
import tempfile
import time

from _windows import dispose, open_window
from PySide6.QtGui import QImage, QPainter

from dgxstudio.model import fileio
from dgxstudio.model.builders import build_fat_tree
from dgxstudio.model.presets import preset_file, preset_names


def repaint_ms(window, frames: int = 10) -> float:
    """Render the visible canvas into an image, as a paint event would."""
    vp = window.view.viewport()
    image = QImage(vp.size(), QImage.Format.Format_ARGB32_Premultiplied)
    t0 = time.perf_counter()
    for _ in range(frames):
        painter = QPainter(image)
        window.view.render(painter)
        painter.end()
    return (time.perf_counter() - t0) / frames * 1e3


def measure(label: str, path: str) -> None:
    t0 = time.perf_counter()
    topo = fileio.load(path)
    app, window = open_window(topo, path)
    opened = time.perf_counter() - t0
    fit = repaint_ms(window)
    window.view.resetTransform()
    zoomed = repaint_ms(window)
    t0 = time.perf_counter()
    for dx in range(0, 4000, 400):
        window.view.horizontalScrollBar().setValue(dx)
        app.processEvents()
    pan = (time.perf_counter() - t0) / 10 * 1e3
    print(f"{label:<26} {len(topo.devices):>6} devices  open {opened * 1e3:7.1f} ms   repaint fit {fit:6.1f} ms"
          f"   repaint 100% {zoomed:6.1f} ms   pan step {pan:6.1f} ms   items {len(window.scene.items())}")
    dispose(window, app)


def main():
    for name in preset_names():
        measure(name, str(preset_file(name)))
    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "ft1000.dgxs")
        fileio.save(build_fat_tree(1000), big)
        measure("fat-tree-1000 (generated)", big)


if __name__ == "__main__":
    main()
