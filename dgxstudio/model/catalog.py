"""The hardware catalog: parts (GPUs, switches, NICs, CPUs) and link types, loaded from data.

Hardware facts live in ``resources/catalog.json``, not in code. A user catalog in the user's
config directory may add or override parts and link types; if it is broken the built-in catalog
still loads and the problem is reported as a message, never an exception.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

DEVICE_KINDS = ("gpu", "nvswitch", "nic", "ib_switch", "eth_switch", "pcie_switch", "cpu")
KIND_LABELS = {
    "gpu": "GPU",
    "nvswitch": "NVSwitch",
    "nic": "NIC",
    "ib_switch": "InfiniBand switch",
    "eth_switch": "Ethernet switch",
    "pcie_switch": "PCIe switch",
    "cpu": "CPU",
}


def with_article(noun: str) -> str:
    """The noun with its indefinite article as it is read aloud: 'an InfiniBand switch', 'an NVSwitch'
    (en-vee), 'a NIC', 'a ConnectX-7'."""
    return ("an " if noun[:1] in ("A", "E", "I", "O", "U") or noun.startswith("NV") else "a ") + noun


SWITCH_KINDS = frozenset({"nvswitch", "ib_switch", "eth_switch", "pcie_switch"})
LINK_FAMILIES = ("nvlink", "pcie", "infiniband", "ethernet", "cpu")
NETWORK_FAMILIES = frozenset({"infiniband", "ethernet"})
# A PCIe link runs from an endpoint (GPU, NIC) to a hub: a PCIe switch or a CPU's root port.
PCIE_HUB_KINDS = frozenset({"pcie_switch", "cpu"})

CATALOG_FORMAT = "dgxstudio-catalog"
USER_CATALOG_NAME = "catalog.json"


class CatalogError(ValueError):
    """A catalog file that cannot be used; the message names the file and the entry at fault."""


@dataclass(frozen=True)
class LinkType:
    id: str
    family: str
    label: str
    rate_bps_per_direction: float
    encoding_efficiency: float = 1.0
    latency_s: float = 0.0
    achievable_efficiency: float = 1.0
    per_lane: bool = False
    default_width: int | None = None
    source: str = ""
    extra: dict = field(default_factory=dict, compare=False)
    achievable_efficiency_source: str = ""

    def bandwidth_per_direction_Bps(self, width: int | None = None) -> float:
        """Data bandwidth of one link of this type in one direction, in bytes/s."""
        lanes = (width or self.default_width or 1) if self.per_lane else 1
        return self.rate_bps_per_direction * self.encoding_efficiency / 8.0 * lanes


@dataclass(frozen=True)
class PortGroup:
    name: str
    count: int
    accepts: tuple[str, ...]
    max_width: int | None = None


@dataclass(frozen=True)
class Part:
    id: str
    kind: str
    label: str
    ports: tuple[PortGroup, ...]
    hop_latency_s: float = 0.0
    specs: dict = field(default_factory=dict, compare=False)
    source: str = ""
    extra: dict = field(default_factory=dict, compare=False)

    def port_group(self, name: str) -> PortGroup | None:
        return next((p for p in self.ports if p.name == name), None)

    def port_group_for(self, link_type: str) -> PortGroup | None:
        """The first port group that accepts a link type, or None."""
        return next((p for p in self.ports if link_type in p.accepts), None)


class Catalog:
    """Parts and link types by id, plus where they came from and any load problems."""

    def __init__(self, parts: dict[str, Part], link_types: dict[str, LinkType], version: str,
                 messages: list[str] | None = None):
        self.parts = parts
        self.link_types = link_types
        self.version = version
        self.messages = list(messages or [])

    def part(self, part_id: str) -> Part | None:
        return self.parts.get(part_id)

    def link_type(self, type_id: str) -> LinkType | None:
        return self.link_types.get(type_id)

    def parts_of_kind(self, kind: str) -> list[Part]:
        return [p for p in self.parts.values() if p.kind == kind]


class LinkFamilies(dict):
    """Link type id -> its family ("nvlink", "pcie", ...; None for a type the catalog lacks), each
    type looked up once: for walks over many links that ask each link's family."""

    def __init__(self, catalog: Catalog):
        super().__init__()
        self._catalog = catalog

    def __missing__(self, type_id: str) -> str | None:
        lt = self._catalog.link_type(type_id)
        family = self[type_id] = lt.family if lt is not None else None
        return family


def _number(value, where: str, *, minimum: float = 0.0, allow_equal: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CatalogError(f"{where}: expected a finite number, got {value!r}")
    if value < minimum or (not allow_equal and value == minimum):
        raise CatalogError(f"{where}: {value!r} is out of range")
    return float(value)


def _text(value, where: str) -> str:
    if not isinstance(value, str):
        raise CatalogError(f"{where}: expected text, got {type(value).__name__}")
    return value


# Extra fields other modules read, with the type they must have (a user catalog is untrusted).
_EXTRA_TYPES = {"nccl_sm": int, "nccl_speed_mbps": int, "nccl_link_speed": str, "nccl_cpu": dict,
                "nccl_stands_in_for": dict}
MAX_CATALOG_BYTES = 16 * 1024 * 1024


def _checked_extra(raw: dict, known: set[str], where: str) -> dict:
    from .fileio import TopologyFileError, check_properties

    extra = {k: v for k, v in raw.items() if k not in known}
    for key, typ in _EXTRA_TYPES.items():
        if key in extra:
            v = extra[key]
            if isinstance(v, bool) or not isinstance(v, typ) or (typ is int and not 0 <= v <= 10**9):
                raise CatalogError(f"{where}.{key}: expected {'a whole number' if typ is int else typ.__name__}, "
                                   f"got {v!r}"[:200])
    try:
        check_properties(extra, where)
    except TopologyFileError as exc:
        raise CatalogError(str(exc)) from None
    return extra


def _checked_specs(specs: dict, where: str) -> dict:
    """JSON values within the file rules; figures other modules compute with must be numbers."""
    from .fileio import TopologyFileError, check_properties

    try:
        check_properties(specs, f"{where}.specs")
    except TopologyFileError as exc:
        raise CatalogError(str(exc)) from None
    for k, v in specs.items():
        numeric = "flops" in k or k.endswith(("_W", "_Bps", "_bytes", "_s"))
        if numeric and v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
            raise CatalogError(f"{where}.specs.{k}: expected a non-negative number, got {v!r}"[:200])
    return specs


_LINK_KEYS = {"family", "label", "rate_bps_per_direction", "encoding_efficiency", "latency_s",
              "achievable_efficiency", "per_lane", "default_width", "source", "achievable_efficiency_source"}
_PART_KEYS = {"kind", "label", "ports", "hop_latency_s", "specs", "source"}


def _parse_link_type(tid: str, raw, where: str) -> LinkType:
    if not isinstance(raw, dict):
        raise CatalogError(f"{where}: expected an object")
    family = _text(raw.get("family"), f"{where}.family")
    if family not in LINK_FAMILIES:
        raise CatalogError(f"{where}.family: unknown family {family!r} (one of {', '.join(LINK_FAMILIES)})")
    width = raw.get("default_width")
    if width is not None and (isinstance(width, bool) or not isinstance(width, int) or not 1 <= width <= 32):
        raise CatalogError(f"{where}.default_width: expected a lane count 1..32")
    eff = _number(raw.get("achievable_efficiency", 1.0), f"{where}.achievable_efficiency", allow_equal=False)
    enc = _number(raw.get("encoding_efficiency", 1.0), f"{where}.encoding_efficiency", allow_equal=False)
    if eff > 1.0 or enc > 1.0:
        raise CatalogError(f"{where}: efficiencies are fractions in (0, 1]")
    return LinkType(
        id=tid, family=family, label=_text(raw.get("label", tid), f"{where}.label"),
        rate_bps_per_direction=_number(raw.get("rate_bps_per_direction"), f"{where}.rate_bps_per_direction",
                                       allow_equal=False),
        encoding_efficiency=enc,
        latency_s=_number(raw.get("latency_s", 0.0), f"{where}.latency_s"),
        achievable_efficiency=eff, per_lane=bool(raw.get("per_lane", False)), default_width=width,
        source=_text(raw.get("source", ""), f"{where}.source"),
        extra=_checked_extra(raw, _LINK_KEYS, where),
        achievable_efficiency_source=_text(raw.get("achievable_efficiency_source", ""),
                                           f"{where}.achievable_efficiency_source"),
    )


def _parse_part(pid: str, raw, where: str, link_types: dict[str, LinkType]) -> Part:
    if not isinstance(raw, dict):
        raise CatalogError(f"{where}: expected an object")
    kind = _text(raw.get("kind"), f"{where}.kind")
    if kind not in DEVICE_KINDS:
        raise CatalogError(f"{where}.kind: unknown kind {kind!r} (one of {', '.join(DEVICE_KINDS)})")
    raw_ports = raw.get("ports")
    if not isinstance(raw_ports, list):
        raise CatalogError(f"{where}.ports: expected a list")
    groups = []
    for i, rp in enumerate(raw_ports):
        pw = f"{where}.ports[{i}]"
        if not isinstance(rp, dict):
            raise CatalogError(f"{pw}: expected an object")
        count = rp.get("count")
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 4096:
            raise CatalogError(f"{pw}.count: expected a port count 1..4096")
        accepts = rp.get("accepts")
        if not isinstance(accepts, list) or not accepts or not all(isinstance(a, str) for a in accepts):
            raise CatalogError(f"{pw}.accepts: expected a list of link type ids")
        for a in accepts:
            if a not in link_types:
                raise CatalogError(f"{pw}.accepts: unknown link type {a!r}")
        mw = rp.get("max_width")
        if mw is not None and (isinstance(mw, bool) or not isinstance(mw, int) or not 1 <= mw <= 32):
            raise CatalogError(f"{pw}.max_width: expected a lane count 1..32")
        groups.append(PortGroup(_text(rp.get("name"), f"{pw}.name"), count, tuple(accepts), mw))
    specs = raw.get("specs", {})
    if not isinstance(specs, dict):
        raise CatalogError(f"{where}.specs: expected an object")
    return Part(id=pid, kind=kind, label=_text(raw.get("label", pid), f"{where}.label"), ports=tuple(groups),
                hop_latency_s=_number(raw.get("hop_latency_s", 0.0), f"{where}.hop_latency_s"),
                specs=_checked_specs(specs, where), source=_text(raw.get("source", ""), f"{where}.source"),
                extra=_checked_extra(raw, _PART_KEYS, where))


def parse_catalog(data, name: str, base: Catalog | None = None) -> Catalog:
    """Build a catalog from decoded JSON, on top of ``base`` (entries in ``data`` win)."""
    if not isinstance(data, dict):
        raise CatalogError(f"{name}: expected a JSON object")
    if data.get("format") != CATALOG_FORMAT:
        raise CatalogError(f"{name}: not a DGX Studio catalog (format must be {CATALOG_FORMAT!r})")
    link_types = dict(base.link_types) if base else {}
    raw_links = data.get("link_types", {})
    if not isinstance(raw_links, dict):
        raise CatalogError(f"{name}: link_types: expected an object")
    for tid, raw in raw_links.items():
        link_types[tid] = _parse_link_type(tid, raw, f"{name}: link_types.{tid}")
    parts = dict(base.parts) if base else {}
    raw_parts = data.get("parts", {})
    if not isinstance(raw_parts, dict):
        raise CatalogError(f"{name}: parts: expected an object")
    for pid, raw in raw_parts.items():
        parts[pid] = _parse_part(pid, raw, f"{name}: parts.{pid}", link_types)
    version = str(data.get("catalog_version", base.version if base else "unknown"))
    if base and "catalog_version" in data:
        version = f"{base.version}+user:{version}"
    return Catalog(parts, link_types, version, base.messages if base else [])


def builtin_catalog_path():
    return files("dgxstudio.resources").joinpath("catalog.json")


def user_config_dir() -> Path:
    """Where the user's catalog and settings live (``DGXSTUDIO_CONFIG_DIR`` overrides, for tests)."""
    override = os.environ.get("DGXSTUDIO_CONFIG_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "dgxstudio"


def load_catalog(user_path: Path | None = None, *, include_user: bool = True) -> Catalog:
    """The built-in catalog merged with the user's; problems with the user's file become messages."""
    builtin = parse_catalog(json.loads(builtin_catalog_path().read_text(encoding="utf-8")), "built-in catalog")
    if not include_user:
        return builtin
    path = user_path or user_config_dir() / USER_CATALOG_NAME
    if not path.is_file():
        return builtin
    from .fileio import parse_json

    try:
        size = path.stat().st_size
        if size > MAX_CATALOG_BYTES:
            raise CatalogError(f"{path}: {size} bytes, over the limit of {MAX_CATALOG_BYTES}")
        text = path.read_bytes().decode("utf-8")
        raw = parse_json(text)  # the file rules: no NaN/inf, no endless numbers
        merged = parse_catalog(raw, str(path), base=builtin)
    except RecursionError:
        builtin.messages.append(f"user catalog ignored, built-in catalog used: {path}: nested too deeply")
        return builtin
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        # ValueError covers CatalogError, JSON and UTF-8 errors and the shared file rules
        detail = str(exc) if str(path) in str(exc) else f"{path}: {exc}"
        builtin.messages.append(f"user catalog ignored, built-in catalog used: {detail}"[:500])
        return builtin
    return merged


_default: Catalog | None = None


def default_catalog() -> Catalog:
    """The process-wide catalog (built-in plus user), loaded once."""
    global _default
    if _default is None:
        _default = load_catalog()
    return _default


def set_default_catalog(catalog: Catalog | None) -> None:
    """Replace (or, with None, reset) the process-wide catalog; tests and the UI's reload use it."""
    global _default
    _default = catalog
