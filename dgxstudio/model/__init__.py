"""The topology document and everything it needs: catalog, validation, file I/O. No Qt here."""

from .catalog import Catalog, CatalogError, default_catalog, load_catalog
from .fileio import TopologyFileError, load, loads, save, dumps
from .topology import Device, Group, Layout, Link, ModelError, Topology
from .validation import Finding, validate

__all__ = [
    "Catalog", "CatalogError", "default_catalog", "load_catalog", "TopologyFileError", "load", "loads",
    "save", "dumps", "Device", "Group", "Layout", "Link", "ModelError", "Topology", "Finding", "validate",
]
