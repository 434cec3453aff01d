"""The native file format (``.dgxs``): JSON with a format tag and schema version.

Loading treats the file as hostile: size is checked before parsing, nothing is executed, and every
problem becomes one ``TopologyFileError`` whose message names the JSON path at fault. Saving is
atomic, and the output is canonical so save -> load -> save gives identical bytes.
"""

from __future__ import annotations

import json
import math
import os
import re

from ..heap import paused_gc
from .atomic import atomic_write_bytes, atomic_write_text  # noqa: F401 - the shared writers
from .catalog import DEVICE_KINDS, Catalog
from .file_rules import (FILE_EXTENSION, FORMAT_TAG, MAX_FILE_BYTES, MAX_ID_LENGTH, MAX_INT_DIGITS, MAX_ITEMS,
                         MAX_LINK_COUNT, MAX_TEXT_LENGTH, SCHEMA_VERSION, SURROGATE, TopologyFileError, _Reader,
                         _unknown_keys, check_properties)  # noqa: F401 - FILE_EXTENSION, SURROGATE: re-exported
from .topology import Device, Group, Link, Topology

# ---- writing -------------------------------------------------------------------------------------

def _clean_float(x: float) -> float | int:
    """Whole numbers are written as integers, so files stay readable and stable."""
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


def topology_to_dict(topo: Topology) -> dict:
    devices = []
    for d in topo.devices.values():
        entry = {"id": d.id, "kind": d.kind, "part": d.part, "name": d.name}
        if d.properties:
            entry["properties"] = d.properties
        devices.append(entry)
    links = []
    for lk in topo.links.values():
        entry = {"id": lk.id, "a": lk.a, "b": lk.b, "type": lk.type, "count": lk.count}
        if lk.a_port is not None:
            entry["a_port"] = lk.a_port
        if lk.b_port is not None:
            entry["b_port"] = lk.b_port
        if lk.width is not None:
            entry["width"] = lk.width
        if lk.bandwidth_per_direction_Bps is not None:
            entry["bandwidth_per_direction_Bps"] = _clean_float(lk.bandwidth_per_direction_Bps)
        if lk.latency_s is not None:
            entry["latency_s"] = _clean_float(lk.latency_s)
        links.append(entry)
    groups = []
    for g in topo.groups.values():
        entry = {"id": g.id, "name": g.name, "kind": g.kind}
        if g.parent is not None:
            entry["parent"] = g.parent
        entry["devices"] = list(g.devices)
        if g.properties:
            entry["properties"] = g.properties
        groups.append(entry)
    positions = {k: [_clean_float(round(v[0], 3)), _clean_float(round(v[1], 3))]
                 for k, v in topo.layout.positions.items()}
    return {
        "format": FORMAT_TAG,
        "schema_version": SCHEMA_VERSION,
        "name": topo.name,
        "description": topo.description,
        "devices": devices,
        "links": links,
        "groups": groups,
        "layout": {"positions": positions, "collapsed": sorted(topo.layout.collapsed)},
    }


def dumps(topo: Topology, doc: dict | None = None) -> str:
    """Canonical text: one device, link or group per line, so diffs of a topology stay readable.
    ``doc``: ``topology_to_dict(topo)`` if the caller made it (to free it a little at a time after)."""
    doc = topology_to_dict(topo) if doc is None else doc

    def one(x) -> str:
        return json.dumps(x, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)

    out = ["{"]
    keys = list(doc)
    for i, key in enumerate(keys):
        value = doc[key]
        comma = "," if i < len(keys) - 1 else ""
        if key in ("devices", "links", "groups"):
            if not value:
                out.append(f' "{key}": []{comma}')
                continue
            out.append(f' "{key}": [')
            out.extend(f"  {one(item)}{',' if j < len(value) - 1 else ''}" for j, item in enumerate(value))
            out.append(f" ]{comma}")
        elif key == "layout":
            pos = value["positions"]
            out.append(' "layout": {')
            if pos:
                out.append('  "positions": {')
                items = list(pos.items())
                out.extend(f"   {one(k)}: {one(v)}{',' if j < len(items) - 1 else ''}" for j, (k, v) in enumerate(items))
                out.append("  },")
            else:
                out.append('  "positions": {},')
            out.append(f'  "collapsed": {one(value["collapsed"])}')
            out.append(f" }}{comma}")
        else:
            out.append(f" {one(key)}: {one(value)}{comma}")
    out.append("}")
    return "\n".join(out) + "\n"


def checked_text(topo: Topology) -> str:
    """The file text of ``topo``, proven to load again: what cannot be reopened is never written.

    Raises ``TopologyFileError`` naming the JSON path and the rule (a lone surrogate in a name, a
    number JSON cannot hold, properties nested too deeply, ...)."""
    text = encoded_text(topo)
    try:
        topology_from_dict(_parse_topology_json(text), topo.catalog)
    except TopologyFileError as exc:
        raise TopologyFileError(f"cannot be saved: {exc.detail}", exc.path) from None
    except (ValueError, RecursionError) as exc:
        raise TopologyFileError(f"cannot be saved: {exc}") from None
    return text


def encoded_text(topo: Topology, doc: dict | None = None) -> str:
    """The file text of ``topo`` with the checks that come before loading it again (properties, the
    encoder, the size limit); ``checked_text`` then proves it loads (``reopen`` does that in a
    process of its own). ``doc`` as for ``dumps``."""
    for where, items in (("devices", topo.devices), ("groups", topo.groups)):
        for i, item in enumerate(items.values()):
            if item.properties:  # before encoding: deep nesting must not reach the JSON encoder
                try:
                    check_properties(item.properties, f"{where}[{i}].properties")
                except TopologyFileError as exc:
                    raise TopologyFileError(f"cannot be saved: {exc.detail}", exc.path) from None
    try:
        text = dumps(topo, doc)
    except (ValueError, TypeError, RecursionError) as exc:
        raise TopologyFileError(f"cannot be saved: {exc}") from None
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_FILE_BYTES:
        raise TopologyFileError(f"cannot be saved: the file would be {size:,} bytes, over the limit of "
                                f"{MAX_FILE_BYTES:,} that opening a file accepts")
    return text


def field_problem(attribute: str, value) -> str | None:
    """Why an edited attribute (inspector, scripts) breaks the file rules, or None if it is fine:
    the same rules the loader applies, so an edit can always be saved and reopened."""
    try:
        if attribute == "name":
            _Reader.name(value, attribute)
        elif attribute in ("bandwidth_per_direction_Bps", "latency_s"):
            if value is not None:
                _Reader.positive(value, attribute, zero_ok=attribute == "latency_s",
                                 hi=3600.0 if attribute == "latency_s" else 1e18)
        elif attribute == "properties":
            check_properties(value, attribute)
    except TopologyFileError as exc:
        return exc.detail
    return None


def validated(topo: Topology, filename: str = "") -> Topology:
    """The one validation path for topologies that did not come from a native file (imports,
    paste, edits): what it passes, save and reload accept. Raises ``TopologyFileError``."""
    try:
        checked_text(topo)
    except TopologyFileError as exc:
        detail = exc.detail.removeprefix("cannot be saved: ")
        raise TopologyFileError(detail, exc.path, filename) from None
    return topo


def save(topo: Topology, path: str | os.PathLike) -> None:
    """Check that the file will reopen, then write it atomically (symlinks followed)."""
    text = checked_text(topo)
    atomic_write_text(path, text)


# ---- reading -------------------------------------------------------------------------------------

def _reject_constant(name: str):
    raise TopologyFileError(f"{name} is not a number JSON allows")


def _parse_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise TopologyFileError(f"a whole number of {len(digits)} digits is longer than the limit of {MAX_INT_DIGITS}")
    return int(digits)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise TopologyFileError(f"the number {text[:40]} is beyond what a double can hold")
    return value


def parse_json(text: str):
    """JSON with the limits every loader shares: no NaN/Infinity, no overflowing or endless numbers
    (each number checked as it is read, before Python builds it)."""
    return json.loads(text, parse_constant=_reject_constant, parse_int=_parse_int, parse_float=_parse_float)


def _parse_topology_json(text: str):
    """The topology file's JSON at the decoder's own speed: NaN/Infinity are refused here; numbers
    are then checked field by field (ranges, finiteness, digits in properties) by
    ``topology_from_dict``, which names the JSON path; Python itself refuses integers of more than
    4300 digits before building them."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            raise TopologyFileError("a whole number of more than 4300 digits") from None
        raise



def topology_from_dict(doc, catalog: Catalog | None = None) -> Topology:
    R = _Reader
    doc = R.obj(doc, "$")
    tag = doc.get("format")
    if tag != FORMAT_TAG:
        raise TopologyFileError(f"not a DGX Studio topology (format is {tag!r}, expected {FORMAT_TAG!r})", "format")
    version = doc.get("schema_version")
    R.integer(version, "schema_version", 1, 10**6)
    if version > SCHEMA_VERSION:
        raise TopologyFileError(
            f"schema version {version} is newer than this DGX Studio understands ({SCHEMA_VERSION}); "
            "update DGX Studio to open it", "schema_version")
    _unknown_keys(doc, {"format", "schema_version", "name", "description", "devices", "links", "groups", "layout"}, "$")
    topo = Topology(R.name(doc.get("name", "Untitled"), "name"), catalog)
    topo.description = R.text(doc.get("description", ""), "description")

    devices, links, groups = topo.devices, topo.links, topo.groups
    sections = {"devices": doc.get("devices", []), "links": doc.get("links", []), "groups": doc.get("groups", [])}

    def claim(new_id: str, path: str) -> None:
        """An id is taken once it is filed (devices, then links, then groups, each in file order),
        so the tables say whether it is taken; where it was first used is looked up only to name it."""
        if new_id in devices or new_id in links or new_id in groups:
            raise TopologyFileError(f"duplicate id {new_id!r} (first used at {_first_use(sections, new_id)})", path)

    texts: dict[str, str] = {}  # a device's kind and part as one copy each (see _fast_link)
    for i, raw in enumerate(R.lst(sections["devices"], "devices")):
        dev = _fast_device(raw)
        if dev is not None and dev.id not in devices:
            dev.kind, dev.part = texts.setdefault(dev.kind, dev.kind), texts.setdefault(dev.part, dev.part)
            devices[dev.id] = dev
            continue
        p = f"devices[{i}]"  # the general path, which names what is wrong
        R.obj(raw, p)
        _unknown_keys(raw, {"id", "kind", "part", "name", "properties"}, p)
        did = R.ident(raw.get("id"), f"{p}.id")
        claim(did, f"{p}.id")
        kind = R.text(raw.get("kind"), f"{p}.kind")
        if kind not in DEVICE_KINDS:
            raise TopologyFileError(f"unknown device kind {kind!r} (one of {', '.join(DEVICE_KINDS)})", f"{p}.kind")
        topo.devices[did] = Device(did, kind, R.ident(raw.get("part"), f"{p}.part"),
                                   R.name(raw.get("name", did), f"{p}.name"),
                                   dict(R.props(raw.get("properties", {}), f"{p}.properties")))

    plain: dict = {}  # (type, a_port, b_port) triples already checked, each to its first copy
    for i, raw in enumerate(R.lst(sections["links"], "links")):
        link = _fast_link(raw, devices, plain)
        if link is not None and link.id not in links and link.id not in devices:
            links[link.id] = link
            continue
        p = f"links[{i}]"  # the general path, which names what is wrong
        R.obj(raw, p)
        _unknown_keys(raw, {"id", "a", "b", "type", "count", "a_port", "b_port", "width",
                            "bandwidth_per_direction_Bps", "latency_s"}, p)
        lid = R.ident(raw.get("id"), f"{p}.id")
        claim(lid, f"{p}.id")
        ends = {}
        for end in ("a", "b"):
            dev = R.ident(raw.get(end), f"{p}.{end}")
            if dev not in topo.devices:
                raise TopologyFileError(f"no device {dev!r}", f"{p}.{end}")
            ends[end] = dev
        link = Link(
            id=lid, a=ends["a"], b=ends["b"], type=R.ident(raw.get("type"), f"{p}.type"),
            count=R.integer(raw.get("count", 1), f"{p}.count", 1, MAX_LINK_COUNT),
            a_port=R.ident(raw["a_port"], f"{p}.a_port") if raw.get("a_port") is not None else None,
            b_port=R.ident(raw["b_port"], f"{p}.b_port") if raw.get("b_port") is not None else None,
            width=R.integer(raw["width"], f"{p}.width", 1, 32) if raw.get("width") is not None else None,
            bandwidth_per_direction_Bps=(R.positive(raw["bandwidth_per_direction_Bps"], f"{p}.bandwidth_per_direction_Bps")
                                         if raw.get("bandwidth_per_direction_Bps") is not None else None),
            latency_s=(R.positive(raw["latency_s"], f"{p}.latency_s", zero_ok=True, hi=3600.0)
                       if raw.get("latency_s") is not None else None),
        )
        topo.links[lid] = link

    member_of: dict[str, str] = {}
    for i, raw in enumerate(R.lst(sections["groups"], "groups")):
        p = f"groups[{i}]"
        R.obj(raw, p)
        _unknown_keys(raw, {"id", "name", "kind", "parent", "devices", "properties"}, p)
        gid = R.ident(raw.get("id"), f"{p}.id")
        claim(gid, f"{p}.id")
        members = _fast_members(raw, devices, member_of)
        if members is None:
            members = _group_members(raw, p, devices, member_of)
        member_of.update(dict.fromkeys(members, gid))
        parent = raw.get("parent")
        topo.groups[gid] = Group(gid, R.name(raw.get("name", gid), f"{p}.name"),
                                 R.ident(raw.get("kind", "system"), f"{p}.kind"),
                                 R.ident(parent, f"{p}.parent") if parent is not None else None,
                                 members, dict(R.props(raw.get("properties", {}), f"{p}.properties")))
    for i, g in enumerate(topo.groups.values()):
        if g.parent is not None and g.parent not in topo.groups:
            raise TopologyFileError(f"no group {g.parent!r}", f"groups[{i}].parent")
    for i, g in enumerate(topo.groups.values()):
        seen, cur = {g.id}, g.parent
        while cur is not None:
            if cur in seen:
                raise TopologyFileError(f"group {g.id!r} is inside itself (parent cycle)", f"groups[{i}].parent")
            seen.add(cur)
            cur = topo.groups[cur].parent

    layout = R.obj(doc.get("layout", {}), "layout")
    _unknown_keys(layout, {"positions", "collapsed"}, "layout")
    positions, groups = topo.layout.positions, topo.groups
    for key, xy in R.obj(layout.get("positions", {}), "layout.positions").items():
        if type(xy) is list and len(xy) == 2 and (key in devices or key in groups):
            x, y = xy
            # the common case: plain numbers within range (NaN fails the comparison, bool is not int)
            if (type(x) is float or type(x) is int) and (type(y) is float or type(y) is int) \
                    and -_MAX_COORDINATE <= x <= _MAX_COORDINATE and -_MAX_COORDINATE <= y <= _MAX_COORDINATE:
                positions[key] = (float(x), float(y))
                continue
        p = f"layout.positions.{key}"
        if key not in topo.devices and key not in topo.groups:
            raise TopologyFileError(f"no device or group {key!r}", p)
        if not (isinstance(xy, list) and len(xy) == 2):
            raise TopologyFileError("expected [x, y]", p)
        x, y = (_coordinate(v, p) for v in xy)
        topo.layout.positions[key] = (x, y)
    for j, gid in enumerate(R.lst(layout.get("collapsed", []), "layout.collapsed")):
        gid = R.ident(gid, f"layout.collapsed[{j}]")
        if gid not in topo.groups:
            raise TopologyFileError(f"no group {gid!r}", f"layout.collapsed[{j}]")
        topo.layout.collapsed.add(gid)
    return topo


def _first_use(sections: dict[str, list], item_id: str) -> str:
    """The JSON path of the first entry filed under ``item_id`` (devices, links, groups, in file order):
    every entry before the one that reuses it was read and filed, so the first with that id is it."""
    for section, entries in sections.items():
        for i, raw in enumerate(entries):
            if type(raw) is dict and raw.get("id") == item_id:
                return f"{section}[{i}].id"
    return "?"


def _fast_members(raw: dict, devices: dict, member_of: dict) -> list[str] | None:
    """A group's device list in the common case (known devices, each listed once and in no other
    group); None sends it through the general reader."""
    members = raw.get("devices", [])
    if (type(members) is list and len(members) <= MAX_ITEMS
            and all(type(d) is str and d in devices and d not in member_of for d in members)
            and len(set(members)) == len(members)):
        return [devices[d].id for d in members]  # (equal texts, the devices' own: see _fast_link)
    return None


def _group_members(raw: dict, p: str, devices: dict, member_of: dict) -> list[str]:
    """A group's device list by the general rules, naming the entry at fault."""
    R = _Reader
    members: list[str] = []
    mine: set[str] = set()
    for j, d in enumerate(R.lst(raw.get("devices", []), f"{p}.devices")):
        d = R.ident(d, f"{p}.devices[{j}]")
        if d not in devices:
            raise TopologyFileError(f"no device {d!r}", f"{p}.devices[{j}]")
        if d in member_of or d in mine:
            owner = member_of.get(d) or raw.get("id")
            raise TopologyFileError(f"device {d!r} is already in group {owner!r}", f"{p}.devices[{j}]")
        mine.add(d)
        members.append(d)
    return members


_LINK_FIELDS = frozenset({"id", "a", "b", "type", "count", "a_port", "b_port", "width",
                          "bandwidth_per_direction_Bps", "latency_s"})


_DEVICE_FIELDS = frozenset({"id", "kind", "part", "name", "properties"})
_DEVICE_KIND_SET = frozenset(DEVICE_KINDS)


def _fast_device(raw) -> Device | None:
    """A device in the common shape, checked by the same rules as the general reader without building
    error paths; None sends it through the general reader (which then names what is wrong)."""
    if type(raw) is not dict or not raw.keys() <= _DEVICE_FIELDS:
        return None
    did, kind, part = raw.get("id"), raw.get("kind"), raw.get("part")
    name = raw.get("name", did)
    if type(did) is not str or type(kind) is not str or type(part) is not str or type(name) is not str:
        return None
    if kind not in _DEVICE_KIND_SET or not (0 < len(did) <= MAX_ID_LENGTH and 0 < len(part) <= MAX_ID_LENGTH
                                            and 0 < len(name) <= MAX_TEXT_LENGTH and not name.isspace()):
        return None
    both = did + part + name
    if not (both.isascii() and both.isprintable()):
        return None
    props = raw.get("properties")
    if props is None:
        if "properties" in raw:
            return None
        props = {}
    elif type(props) is not dict:
        return None
    elif props:
        try:
            check_properties(props, "")
        except TopologyFileError:
            return None
        props = dict(props)
    else:
        props = {}
    return Device(did, kind, part, name, props)


def _fast_link(raw, devices, plain: dict) -> Link | None:
    """A link in the common shape, checked by the same rules without building error paths; None
    sends it through the general reader (which then names what is wrong). ``plain`` remembers the
    (type, a_port, b_port) triples already checked, which a large fabric repeats on every link.
    The link keeps the texts it shares with others as one copy each: its ends are the devices' own
    ids and its type and ports those of the first link with them (150,000 links of 2,048 DGX H100
    would otherwise keep 750,000 texts the decoder made for them, about 40 MB)."""
    if type(raw) is not dict or not raw.keys() <= _LINK_FIELDS:
        return None
    lid, a, b = raw.get("id"), raw.get("a"), raw.get("b")
    if type(a) is not str or type(b) is not str or (da := devices.get(a)) is None or (db := devices.get(b)) is None:
        return None  # (device ids were checked when the devices were read)
    a, b = da.id, db.id  # (equal texts, the devices' own)
    # The link's own id: plain printable ASCII within the id length limit.
    if type(lid) is not str or not (0 < len(lid) <= MAX_ID_LENGTH and lid.isascii() and lid.isprintable()):
        return None
    ltype, a_port, b_port = raw.get("type"), raw.get("a_port"), raw.get("b_port")
    if type(ltype) is not str or (a_port is not None and type(a_port) is not str) \
            or (b_port is not None and type(b_port) is not str):
        return None
    ends = (ltype, a_port, b_port)
    first = plain.get(ends)
    if first is None:
        if not all(v is None or 0 < len(v) <= MAX_ID_LENGTH and v.isascii() and v.isprintable() for v in ends):
            return None
        first = plain[ends] = ends
    ltype, a_port, b_port = first
    count = raw.get("count", 1)
    if type(count) is not int or not 1 <= count <= MAX_LINK_COUNT:
        return None
    width = raw.get("width")
    if width is not None and (type(width) is not int or not 1 <= width <= 32):
        return None
    bw, lat = raw.get("bandwidth_per_direction_Bps"), raw.get("latency_s")
    if bw is not None:
        if type(bw) not in (int, float) or not 0 < bw <= 1e18:  # NaN fails the comparison
            return None
        bw = float(bw)
    if lat is not None:
        if type(lat) not in (int, float) or not 0 <= lat <= 3600.0:
            return None
        lat = float(lat)
    return Link(lid, a, b, ltype, count, a_port, b_port, width, bw, lat)


_MAX_COORDINATE = 1e9


def _coordinate(value, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or abs(value) > _MAX_COORDINATE:
        raise TopologyFileError("expected a coordinate (a finite number)", path)
    return float(value)


def loads(text: str | bytes, catalog: Catalog | None = None, filename: str = "") -> Topology:
    if isinstance(text, bytes):
        if len(text) > MAX_FILE_BYTES:
            raise TopologyFileError(f"file is {len(text)} bytes, over the limit of {MAX_FILE_BYTES}", filename=filename)
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TopologyFileError(f"not UTF-8 text (byte {exc.start})", filename=filename) from None
    if len(text) > MAX_FILE_BYTES:
        raise TopologyFileError(f"file is over the limit of {MAX_FILE_BYTES} bytes", filename=filename)
    with paused_gc():  # 200,000 acyclic objects on a large cluster: see dgxstudio/heap.py
        return _loads(text, catalog, filename)


def _json_words(text: str, exc: json.JSONDecodeError) -> str:
    """Where and why the JSON parser stopped, and whether the text ends before its JSON does (a copy
    or a download cut short): json's "Unterminated string starting at" read "... at at line 33"."""
    where = f"{exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}"
    if exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip()):
        last = text.count("\n") + 1
        return f"not valid JSON: the file ends at line {last} before its JSON does (cut short?): {where}"
    return f"not valid JSON: {where}"


def _loads(text: str, catalog: Catalog | None, filename: str) -> Topology:
    try:
        doc = _parse_topology_json(text)
    except TopologyFileError as exc:
        raise TopologyFileError(exc.detail, filename=filename) from None
    except json.JSONDecodeError as exc:
        if text.isspace() or not text:   # checked only on failure: a file cut to nothing by a crash or `touch`
            raise TopologyFileError("not valid JSON: the file is empty" if not text
                                    else "not valid JSON: the file holds only white space", filename=filename) from None
        raise TopologyFileError(_json_words(text, exc), filename=filename) from None
    except ValueError as exc:
        raise TopologyFileError(f"not valid JSON: {exc}", filename=filename) from None
    except RecursionError:
        raise TopologyFileError("not valid JSON: nested too deeply", filename=filename) from None
    try:
        return topology_from_dict(doc, catalog)
    except TopologyFileError as exc:
        raise TopologyFileError(exc.detail + _whose(doc, exc.path), exc.path, filename) from None


_ENTRY_PATH = re.compile(r"(devices|links|groups)\[(\d+)\]\.(?!id\b)")
_ENTRY_WORD = {"devices": "device", "links": "link", "groups": "group"}


def _whose(doc, path: str) -> str:
    """' (device 'gpu3')' for a fault inside an entry that has a readable id: 'devices[41].part' alone
    sends the reader counting entries. Worked out only once a load has failed."""
    m = _ENTRY_PATH.match(path or "")
    if not m or not isinstance(doc, dict):
        return ""
    entries = doc.get(m.group(1))
    i = int(m.group(2))
    entry = entries[i] if isinstance(entries, list) and i < len(entries) else None
    ident = entry.get("id") if isinstance(entry, dict) else None
    if not isinstance(ident, str) or not ident or len(ident) > 200 or not ident.isprintable():
        return ""
    return f" ({_ENTRY_WORD[m.group(1)]} {ident!r})"


def load(path: str | os.PathLike, catalog: Catalog | None = None) -> Topology:
    name = str(path)
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise TopologyFileError("no such file", filename=name) from None
    except OSError as exc:
        raise TopologyFileError(f"cannot read: {exc.strerror}", filename=name) from None
    if size > MAX_FILE_BYTES:
        raise TopologyFileError(f"file is {size} bytes, over the limit of {MAX_FILE_BYTES}", filename=name)
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except IsADirectoryError:
        raise TopologyFileError("is a folder, not a file", filename=name) from None
    except OSError as exc:
        raise TopologyFileError(f"cannot read: {exc.strerror}", filename=name) from None
    return loads(data, catalog, filename=name)  # (which pauses the collector)
