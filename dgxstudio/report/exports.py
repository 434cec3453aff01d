"""One entry point for writing a topology in any supported format (the CLI and the GUI use it)."""

from __future__ import annotations

from ..model import fileio
from ..model.topology import Topology
from . import formats
from .nccl_xml import to_nccl_xml
from .svg import topology_svg

EXPORT_FORMATS = {
    "native": ("DGX Studio topology", ".dgxs"),
    "graphml": ("GraphML", ".graphml"),
    "dot": ("Graphviz DOT", ".dot"),
    "nccl-xml": ("NCCL topology XML", ".xml"),
    "ns3": ("ns-3 edge list (ASTRA-sim, SimAI)", ".txt"),
    "astra-yaml": ("ASTRA-sim analytical network YAML", ".yaml"),
    "svg": ("topology picture, SVG", ".svg"),
    "png": ("topology picture, PNG", ".png"),
}


def export_text(topo: Topology, fmt: str, system: str | None = None) -> str:
    writers = {"native": lambda: fileio.dumps(topo), "graphml": lambda: formats.to_graphml(topo),
               "dot": lambda: formats.to_dot(topo), "nccl-xml": lambda: to_nccl_xml(topo, system),
               "ns3": lambda: formats.to_ns3(topo), "astra-yaml": lambda: formats.to_astra_yaml(topo),
               "svg": lambda: topology_svg(topo)}
    if fmt not in writers:
        raise formats.ExportError(f"{fmt} is not a text format")
    return writers[fmt]()


def write_export(topo: Topology, fmt: str, path: str, system: str | None = None) -> None:
    """Write atomically; raises ExportError (the format cannot express it) or OSError."""
    if fmt not in EXPORT_FORMATS:
        raise formats.ExportError(f"unknown format {fmt!r} (one of {', '.join(EXPORT_FORMATS)})")
    if fmt == "png":
        from .pdf import svg_to_png

        svg_to_png(topology_svg(topo, 1600), path, 1600)
        return
    fileio.atomic_write_text(path, export_text(topo, fmt, system))
