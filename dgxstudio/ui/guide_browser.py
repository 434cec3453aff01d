"""The user guide's browser (Help > User guide): the guide's pictures are screenshots of a 1280 px
window, and a QTextBrowser shows an image at its own size, so in the 900 px dialog the right third of
each (the legend, the Inspector) sat behind a horizontal scroll bar. Here each picture is drawn at
the browser's width when it is wider, its height in proportion, and again when the dialog is resized."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QImageReader, QTextCursor, QTextImageFormat
from PySide6.QtWidgets import QTextBrowser


class GuideBrowser(QTextBrowser):
    def __init__(self, folder: str):
        super().__init__()
        self.folder = folder
        self.setOpenExternalLinks(False)
        self.setSearchPaths([folder])
        self._sizes: dict[str, QSize] = {}   # each picture's own size, read from its file once

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.fit_images()

    def fit_images(self) -> None:
        """Every picture at most as wide as the page (the viewport less the document's margins)."""
        doc = self.document()
        room = self.viewport().width() - 2 * doc.documentMargin() - 4
        if room <= 0:
            return
        block = doc.begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                fmt = frag.charFormat()
                if fmt.isImageFormat():
                    self._fit(frag, fmt.toImageFormat(), room)
                it += 1
            block = block.next()

    def _fit(self, frag, image: QTextImageFormat, room: float) -> None:
        # (read once: a resize dragged by hand calls this for every width it passes)
        size = self._sizes.get(image.name())
        if size is None:
            size = self._sizes[image.name()] = QImageReader(f"{self.folder}/{image.name()}").size()
        if not size.isValid() or size.width() <= 0:
            return
        width = min(float(size.width()), room)
        if abs(image.width() - width) < 0.5:
            return
        image.setWidth(width)
        image.setHeight(size.height() * width / size.width())
        cursor = QTextCursor(self.document())
        cursor.setPosition(frag.position())
        cursor.setPosition(frag.position() + frag.length(), QTextCursor.MoveMode.KeepAnchor)
        cursor.setCharFormat(image)
