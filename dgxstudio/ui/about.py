"""The About box text: version, catalog version and the licences of what DGX Studio is built on."""

from __future__ import annotations

from importlib import metadata

from .. import __version__
from ..model.catalog import default_catalog

DEPENDENCIES = [("PySide6-Essentials", "LGPL-3.0"), ("pyqtgraph", "MIT"), ("networkx", "BSD-3-Clause"),
                ("numpy", "BSD-3-Clause")]


def about_text() -> str:
    rows = []
    for name, licence in DEPENDENCIES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "not installed"
        rows.append(f"<tr><td>{name}</td><td>{version}</td><td>{licence}</td></tr>")
    return (f"<h3>DGX Studio {__version__}</h3>"
            f"<p>Design GPU cluster interconnects and watch what they do to collectives and training.</p>"
            f"<p>Hardware catalog version {default_catalog().version}.</p>"
            f"<table><tr><th align=left>Built on</th><th align=left>version</th><th align=left>licence</th></tr>"
            + "".join(rows) + "</table>")
