"""The report as a PDF to hand over: a title page with the summary, a table of contents with page
numbers, then the body laid out page by page with QPainter on QPdfWriter (A4). Headings stay with what
follows them, short tables are not split, long tables repeat their header on every page, pictures
are never cut, and every page has a footer with the design's name and "page N of M".

The one module of report/ that uses Qt (DEVELOPERS.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .content import Heading, Para, Picture, ReportData, Table, build_blocks, byline, key_figures, left_out_note, summary

MARGIN_MM = 18
DPI = 150


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
    image = QImage(max(1, int(size.width() * scale)), max(1, int(size.height() * scale)), QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
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


@dataclass
class _Op:
    """One thing drawn on a page: text in a rectangle, a filled/outlined box, or an image."""
    kind: str
    rect: tuple[float, float, float, float]
    text: str = ""
    font: str = "body"
    flags: int = 0
    image: object = None
    fill: str | None = None


class _Pages:
    """Flows blocks onto pages of a fixed text area; knows each heading's page."""

    def __init__(self, width: float, height: float, fonts: dict, metrics):
        self.w, self.h = width, height
        self.fonts, self.metrics = fonts, metrics
        self.pages: list[list[_Op]] = [[]]
        self.y = 0.0
        self.headings: list[tuple[int, str, int]] = []  # (level, text, page index)

    def new_page(self) -> None:
        if self.pages[-1]:
            self.pages.append([])
        self.y = 0.0

    def room(self) -> float:
        return self.h - self.y

    def text_height(self, text: str, font: str, width: float) -> float:
        from PySide6.QtCore import QRectF, Qt

        r = self.metrics(font).boundingRect(QRectF(0, 0, width, 1e6), int(Qt.TextFlag.TextWordWrap), text)
        return r.height()

    def put_text(self, text: str, font: str, gap_after: float, x: float = 0.0, width: float | None = None) -> None:
        from PySide6.QtCore import Qt

        width = self.w - x if width is None else width
        h = self.text_height(text, font, width)
        if h > self.room():
            self.new_page()
        self.pages[-1].append(_Op("text", (x, self.y, width, h), text, font, int(Qt.TextFlag.TextWordWrap)))
        self.y += h + gap_after

    # ---- blocks --------------------------------------------------------------------------------------
    def min_height(self, block) -> float:
        """What must fit below a heading for the heading to stay on this page."""
        if isinstance(block, Para):
            return min(self.text_height(block.text, "small" if block.small else "body", self.w), 3 * self._line("body"))
        if isinstance(block, Table):
            widths = self._columns(block)
            heights = [self._row_height(r, widths, "th" if i == 0 else "td")
                       for i, r in enumerate([block.header, *block.rows])]
            # a short table is not split (``table``): all of it, or the heading would stay behind alone
            return sum(heights) if sum(heights) <= self.h * 0.6 else sum(heights[:4])
        if isinstance(block, Picture):
            return self._picture_size(block)[1]
        if isinstance(block, Heading):
            return self._line("h2")
        return 0.0

    def _line(self, font: str) -> float:
        return self.metrics(font).lineSpacing()

    def heading(self, b: Heading, following: list) -> None:
        """A heading, on a new page unless what follows it (an introducing paragraph and the start of the
        next table or picture) fits below it."""
        font = "h2" if b.level <= 2 else "h3"
        gap_before = self._line("body") * (1.0 if b.level <= 2 else 0.5)
        kept = following[:2] if following and isinstance(following[0], Para) else following[:1]
        need = gap_before + self.text_height(b.text, font, self.w) + sum(self.min_height(k) for k in kept)
        if self.y > 0 and need > self.room():
            self.new_page()
        elif self.y > 0:
            self.y += gap_before
        if b.level <= 2:
            self.headings.append((b.level, b.text, len(self.pages) - 1))
        self.put_text(b.text, font, self._line("body") * 0.3)
        if b.level <= 2:
            self.pages[-1].append(_Op("rule", (0, self.y - self._line("body") * 0.25, self.w, 1.5), fill="#76b900"))

    def _columns(self, t: Table) -> list[float]:
        pad = 2 * self._pad()
        natural = []
        for c in range(len(t.header)):
            natural.append(max([self.metrics("th").horizontalAdvance(t.header[c])]
                               + [self.metrics("td").horizontalAdvance(str(r[c])) for r in t.rows]) + pad + 1)
        total = sum(natural)
        if total <= self.w:
            return natural
        # shrink the widest columns first: short columns keep their natural width
        widths = list(natural)
        while sum(widths) > self.w + 0.5:
            widest = max(range(len(widths)), key=lambda i: widths[i])
            others = sum(widths) - widths[widest]
            widths[widest] = max(self.w - others, self.w / (2 * len(widths)))
            if sum(widths) > self.w + 0.5:
                widths = [w * self.w / sum(widths) for w in widths]
        return widths

    def _pad(self) -> float:
        return self._line("td") * 0.3

    def _row_height(self, row, widths, font) -> float:
        pad = self._pad()
        return max(self.text_height(str(c), font, w - 2 * pad) for c, w in zip(row, widths)) + 2 * pad

    def table(self, t: Table) -> None:
        from PySide6.QtCore import Qt

        widths = self._columns(t)
        header_h = self._row_height(t.header, widths, "th")
        heights = [self._row_height(r, widths, "td") for r in t.rows]
        total = header_h + sum(heights)
        if total > self.room() and (total <= self.h * 0.6 or header_h + (heights[0] if heights else 0) > self.room()):
            self.new_page()  # a short table is not split; a long one starts where there is room for a row

        def row(cells, h, font, fill):
            x = 0.0
            pad = self._pad()
            for c, (cell, w) in enumerate(zip(cells, widths)):
                self.pages[-1].append(_Op("box", (x, self.y, w, h), fill=fill))
                align = Qt.AlignmentFlag.AlignRight if c in t.numeric and font == "td" else Qt.AlignmentFlag.AlignLeft
                self.pages[-1].append(_Op("text", (x + pad, self.y + pad, w - 2 * pad, h - 2 * pad), str(cell), font,
                                          int(Qt.TextFlag.TextWordWrap) | int(align)))
                x += w
            self.y += h
        row(t.header, header_h, "th", "#eeeeee")
        for cells, h in zip(t.rows, heights):
            if h > self.room():
                self.new_page()
                row(t.header, header_h, "th", "#eeeeee")  # the header again on every page of the table
            row(cells, h, "td", None)
        self.y += self._line("body") * 0.6

    def _picture_size(self, p: Picture) -> tuple[float, float]:
        if not hasattr(p, "_image"):
            p._image = svg_to_image(p.svg, int(self.w))
        img = p._image
        w, h = self.w, self.w * img.height() / max(img.width(), 1)
        if h > self.h * 0.9:
            w, h = w * self.h * 0.9 / h, self.h * 0.9
        return w, h

    def picture(self, p: Picture) -> None:
        w, h = self._picture_size(p)
        if h > self.room():
            self.new_page()
        self.pages[-1].append(_Op("image", ((self.w - w) / 2, self.y, w, h), image=p._image))
        self.y += h + self._line("body") * 0.6

    def flow(self, blocks: list) -> None:
        for i, b in enumerate(blocks):
            if isinstance(b, Heading):
                self.heading(b, blocks[i + 1:i + 3])
            elif isinstance(b, Para):
                self.put_text(b.text, "small" if b.small else "body", self._line("body") * 0.5)
            elif isinstance(b, Table):
                self.table(b)
            elif isinstance(b, Picture):
                self.picture(b)


def write_pdf(data: ReportData, path: str) -> int:
    """Write the report atomically (a temporary file renamed over ``path``); returns the pages."""
    from ..model.atomic import atomic_output

    with atomic_output(path) as tmp:
        pages = _print_pdf(data, tmp)
    return pages


def _print_pdf(data: ReportData, path: str) -> int:
    """Paint the report into ``path``; returns the number of pages."""
    from PySide6.QtCore import QMarginsF, QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPageLayout, QPageSize, QPainter, QPdfWriter, QPen

    _gui()
    writer = QPdfWriter(path)
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    writer.setPageMargins(QMarginsF(MARGIN_MM, MARGIN_MM, MARGIN_MM, MARGIN_MM), QPageLayout.Unit.Millimeter)
    writer.setResolution(DPI)
    writer.setTitle(f"{data.topology.name} — DGX Studio report")
    writer.setCreator("DGX Studio")
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError(f"cannot write {path}")
    try:
        fonts = {"title": QFont("Sans Serif", 24, QFont.Weight.Bold), "h2": QFont("Sans Serif", 14, QFont.Weight.Bold),
                 "h3": QFont("Sans Serif", 11, QFont.Weight.Bold), "body": QFont("Sans Serif", 10),
                 "small": QFont("Sans Serif", 8), "th": QFont("Sans Serif", 8, QFont.Weight.Bold),
                 "td": QFont("Sans Serif", 8), "toc": QFont("Sans Serif", 11)}
        metrics_cache = {k: QFontMetricsF(f, writer) for k, f in fonts.items()}
        width, height = writer.width(), writer.height()
        footer_h = metrics_cache["small"].lineSpacing() * 2
        body_h = height - footer_h

        # the title page: name, byline, summary, and the topology picture when it fits
        title = _Pages(width, body_h, fonts, metrics_cache.__getitem__)
        title.y = body_h * 0.08
        title.put_text(data.topology.name, "title", metrics_cache["body"].lineSpacing())
        title.put_text(f"Design report — {byline(data)}", "small", metrics_cache["body"].lineSpacing() * 1.5)
        if data.topology.description:
            title.put_text(data.topology.description, "body", metrics_cache["body"].lineSpacing())
        title.heading(Heading(2, "Summary"), [])
        title.put_text(summary(data), "body", metrics_cache["body"].lineSpacing())
        note = left_out_note(data)
        if note:
            title.put_text(note, "small", metrics_cache["body"].lineSpacing())
        blocks = build_blocks(data)
        if len(blocks) > 1 and isinstance(blocks[1], Picture):
            pw, ph = title._picture_size(blocks[1])
            room = title.room() - 2 * metrics_cache["body"].lineSpacing()
            if room > body_h * 0.3:  # the design's picture fills the title page, shrunk to fit
                scale = min(1.0, room / ph)
                title.y += metrics_cache["body"].lineSpacing()
                title.pages[-1].append(_Op("image", ((width - pw * scale) / 2, title.y, pw * scale, ph * scale),
                                           image=blocks[1]._image))
                title.y += ph * scale + metrics_cache["body"].lineSpacing() * 0.3
                title.put_text("The design as drawn on the canvas.", "small", 0)
                blocks = blocks[2:]  # the topology is on the title page
        title.pages = title.pages[:1]

        body = _Pages(width, body_h, fonts, metrics_cache.__getitem__)
        body.flow(blocks)

        toc_line = metrics_cache["toc"].lineSpacing() * 1.3
        toc_pages = max(1, -(-int(len(body.headings) * toc_line + metrics_cache["h2"].lineSpacing() * 3) // int(body_h)))
        first_body = 1 + toc_pages
        toc = _Pages(width, body_h, fonts, metrics_cache.__getitem__)
        toc.heading(Heading(1, "Contents"), [])
        for _level, text, page in body.headings:
            if toc.room() < toc_line:
                toc.new_page()
            toc.pages[-1].append(_Op("text", (0, toc.y, width * 0.85, toc_line), text, "toc",
                                     int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)))
            toc.pages[-1].append(_Op("text", (width * 0.85, toc.y, width * 0.15, toc_line), str(first_body + page + 1),
                                     "toc", int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)))
            toc.y += toc_line
        # A short report's contents leave most of the page empty: the key figures fill it when they
        # fit there (never pushing the body's page numbers on).
        figures = key_figures(data)
        need = toc._line("h2") * 2 + sum(toc._row_height(r, toc._columns(figures), "td")
                                         for r in [figures.header, *figures.rows])
        if need < toc.room():
            toc.heading(Heading(2, "Key figures"), [figures])
            toc.headings.pop()  # not a section of the body: no entry of its own in the contents
            toc.table(figures)

        pages = title.pages + toc.pages + body.pages
        total = len(pages)
        for n, ops in enumerate(pages):
            if n:
                writer.newPage()
            for op in ops:
                x, y, w, h = op.rect
                rect = QRectF(x, y, w, h)
                if op.kind == "text":
                    painter.setFont(fonts[op.font])
                    painter.setPen(QColor("#555555") if op.font == "small" else QColor("#1b1b1b"))
                    painter.drawText(rect, op.flags, op.text)
                elif op.kind == "box":
                    painter.setPen(QPen(QColor("#bbbbbb"), 1))
                    painter.setBrush(QColor(op.fill) if op.fill else Qt.BrushStyle.NoBrush)
                    painter.drawRect(rect)
                elif op.kind == "rule":
                    painter.fillRect(rect, QColor(op.fill))
                elif op.kind == "image":
                    painter.drawImage(rect, op.image)
            painter.setFont(fonts["small"])
            painter.setPen(QColor("#555555"))
            foot = QRectF(0, height - footer_h * 0.7, width, footer_h * 0.7)
            painter.drawText(foot, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                             f"{data.topology.name} — DGX Studio report")
            painter.drawText(foot, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), f"page {n + 1} of {total}")
    finally:
        painter.end()
    return total
