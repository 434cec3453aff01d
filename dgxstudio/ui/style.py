"""Colours, pens and icons shared by the canvas, palette and plots."""

from __future__ import annotations

import math
from functools import lru_cache
from importlib.resources import files

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

FAMILY_COLORS = {
    "nvlink": QColor("#76b900"),
    "pcie": QColor("#7f7f7f"),
    "infiniband": QColor("#c0504d"),
    "ethernet": QColor("#8064a2"),
    "cpu": QColor("#2e75b6"),
    None: QColor("#d00000"),
}
KIND_COLORS = {
    "gpu": QColor("#76b900"), "nvswitch": QColor("#4a90d9"), "nic": QColor("#e8a33d"),
    "ib_switch": QColor("#c0504d"), "eth_switch": QColor("#8064a2"), "pcie_switch": QColor("#7f7f7f"),
    "cpu": QColor("#2e75b6"),
}
RING_COLORS = [QColor(c) for c in ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#46f0f0",
                                    "#f032e6", "#bcf60c", "#008080", "#9a6324", "#800000", "#000075")]


def link_width(bandwidth_per_direction_Bps: float) -> float:
    """Pen width grows with the log of bandwidth: 1 px at 1 GB/s, about 6 px at 300 GB/s."""
    return 1.0 + 0.9 * math.log2(1.0 + max(bandwidth_per_direction_Bps, 0.0) / 1e9)


def _svg_bytes(name: str) -> bytes | None:
    path = files("dgxstudio.resources").joinpath("icons", f"{name}.svg")
    try:
        return path.read_bytes()
    except (FileNotFoundError, OSError):
        return None


@lru_cache(maxsize=32)
def _svg_renderer(name: str) -> QSvgRenderer | None:
    """One parsed icon per name, rendered at every size asked for: the palette asks for five sizes of
    each icon and the canvas for a sixth, in the window's first frame (an SVG parse each before)."""
    data = _svg_bytes(name)
    return QSvgRenderer(QByteArray(data)) if data is not None else None


@lru_cache(maxsize=64)
def icon_pixmap(name: str, size: int = 32) -> QPixmap:
    pix = QPixmap(size, size)
    pix.fill(Qt.GlobalColor.transparent)
    renderer = _svg_renderer(name)
    if renderer is not None:
        painter = QPainter(pix)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
    return pix


def icon(name: str) -> QIcon:
    ic = QIcon()
    for size in (16, 24, 32, 48, 64):
        ic.addPixmap(icon_pixmap(name, size))
    return ic


UTILIZATION_STOPS = (QColor("#4575b4"), QColor("#fee090"), QColor("#d73027"))
IDLE_LINK = QColor("#c8c8c8")


def utilization_color(u: float) -> QColor:
    """Blue (lightly used) through yellow to red (saturated): no green, which on the canvas means NVLink."""
    u = min(max(u, 0.0), 1.0)
    a, b = (UTILIZATION_STOPS[0], UTILIZATION_STOPS[1]) if u < 0.5 else (UTILIZATION_STOPS[1], UTILIZATION_STOPS[2])
    f = u * 2 if u < 0.5 else (u - 0.5) * 2
    return QColor.fromRgbF(a.redF() + (b.redF() - a.redF()) * f, a.greenF() + (b.greenF() - a.greenF()) * f,
                           a.blueF() + (b.blueF() - a.blueF()) * f)
