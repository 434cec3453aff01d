"""The report as PDF through Qt's own writer (QTextDocument + QPdfWriter): paginated A4, with the
same pictures rendered from their SVG. The one module of report/ that uses Qt (DEVELOPERS.md)."""

from __future__ import annotations

import os

from .html import ReportData, build_html


def _gui():
    """The Qt application fonts and painting need; offscreen when there is no display. A full
    QApplication, so widgets can still be made in the same process (the GUI, tests)."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    return QApplication.instance() or QApplication([])


def svg_to_image(svg: str, width: int | None = None):
    from PySide6.QtCore import QByteArray, QRectF, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _gui()
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    size = renderer.defaultSize()
    scale = (width / size.width()) if width and size.width() else 1.0
    image = QImage(int(size.width() * scale), int(size.height() * scale), QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    renderer.render(painter, QRectF(0, 0, image.width(), image.height()))
    painter.end()
    return image


def svg_to_png(svg: str, path: str, width: int | None = None) -> None:
    """Write a PNG atomically: a failing or interrupted write keeps the old file."""
    from ..model.atomic import atomic_output

    image = svg_to_image(svg, width)
    with atomic_output(path) as tmp:
        if not image.save(tmp, "PNG"):
            raise OSError(5, "the PNG writer failed (disk full or not writable?)", path)


def write_pdf(data: ReportData, path: str) -> int:
    """Write the report atomically (a temporary file renamed over ``path``); returns the pages."""
    from ..model.atomic import atomic_output

    with atomic_output(path) as tmp:
        pages = _print_pdf(data, tmp)
    return pages


def _print_pdf(data: ReportData, path: str) -> int:
    from PySide6.QtCore import QMarginsF, QSizeF, QUrl
    from PySide6.QtGui import QPageLayout, QPageSize, QPdfWriter, QTextDocument

    _gui()
    html, pictures = build_html(data, images="resources")
    doc = QTextDocument()
    writer = QPdfWriter(path)
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout.Unit.Millimeter)
    writer.setResolution(150)
    writer.setTitle(f"{data.topology.name} — DGX Studio report")
    writer.setCreator("DGX Studio")
    text_width = writer.width()
    for name, svg in pictures.items():
        doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(name), svg_to_image(svg, int(text_width * 0.95)))
    doc.setHtml(html)
    doc.setPageSize(QSizeF(writer.width(), writer.height()))
    doc.print_(writer)
    pages = doc.pageCount()
    del writer  # the PDF is complete once its writer is gone
    return pages
