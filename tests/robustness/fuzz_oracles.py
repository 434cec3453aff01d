"""What every loader and exporter must do with any input, shared by the quick hypothesis tests and
``benchmarks/fuzz.py``: give a topology or one clean error, and never write a file that does not load.

Each ``check_*`` returns a short outcome word ("loaded", "refused", ...) and raises ``Broken`` when a
promise is broken (a file written that does not reload, a name that did not survive); any other
exception escaping a check is a crash.
"""

from __future__ import annotations

import copy
import json
import random
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from dgxstudio.model import catalog as cat
from dgxstudio.model import fileio
from dgxstudio.model.presets import load_preset
from dgxstudio.model.validation import validate
from dgxstudio.report import formats
from dgxstudio.report.exports import export_text
from dgxstudio.report.nccl_xml import NcclXmlError, from_nccl_xml, to_nccl_xml


class Broken(AssertionError):
    """A promise broken without a crash: a written file that does not reload, a name altered."""


TEXT_FORMATS = ("native", "graphml", "dot", "nccl-xml", "ns3", "astra-yaml", "svg")


def check_exports(topo) -> None:
    """Every text export either refuses with ExportError or writes something its reader accepts."""
    for fmt in TEXT_FORMATS:
        try:
            text = export_text(topo, fmt, next(iter(g for g in topo.groups if topo.groups[g].kind == "system"), None)
                               if fmt == "nccl-xml" else None)
        except formats.ExportError:
            continue
        if fmt == "native":
            try:
                back = fileio.loads(text)
            except fileio.TopologyFileError as exc:
                raise Broken(f"native export does not reload: {exc}") from None
            if fileio.dumps(back) != text:
                raise Broken("native save -> load -> save is not stable")
        elif fmt == "graphml":
            try:
                back = formats.from_graphml(text)
            except ValueError as exc:
                raise Broken(f"GraphML export does not reimport: {exc}") from None
            for did, d in topo.devices.items():
                if back.devices[did].name != d.name:
                    raise Broken(f"GraphML changed the name of {did!r}: {d.name!r} -> {back.devices[did].name!r}")
        elif fmt in ("svg",):
            try:
                ET.fromstring(text)
            except ET.ParseError as exc:
                raise Broken(f"SVG export is not XML: {exc}") from None
        elif fmt == "nccl-xml":
            try:
                from_nccl_xml(text)
            except (NcclXmlError, fileio.TopologyFileError) as exc:
                raise Broken(f"NCCL XML export does not reimport: {exc}") from None


def check_native(data: bytes | str, exports: bool = True) -> str:
    try:
        topo = fileio.loads(data)
    except fileio.TopologyFileError as exc:
        assert str(exc)
        return "refused"
    validate(topo)
    try:
        text = fileio.checked_text(topo)
    except fileio.TopologyFileError as exc:
        raise Broken(f"a file that opens cannot be saved: {exc}") from None
    fileio.loads(text)
    if exports:
        check_exports(topo)
    return "loaded"


def _imported(topo) -> str:
    try:
        text = fileio.checked_text(topo)
    except fileio.TopologyFileError as exc:
        raise Broken(f"an import that succeeded cannot be saved: {exc}") from None
    try:
        fileio.loads(text)
    except fileio.TopologyFileError as exc:
        raise Broken(f"an imported file does not reopen: {exc}") from None
    return "loaded"


def check_nccl(text: str) -> str:
    try:
        topo, _ = from_nccl_xml(text)
    except (NcclXmlError, fileio.TopologyFileError) as exc:
        assert str(exc)
        return "refused"
    return _imported(topo)


def check_graphml(text: str) -> str:
    try:
        topo = formats.from_graphml(text)
    except (formats.GraphmlError, fileio.TopologyFileError) as exc:
        assert str(exc)
        return "refused"
    return _imported(topo)


_CATALOG_DIR = Path(tempfile.mkdtemp(prefix="dgxstudio-fuzz-catalog-"))


def check_catalog(data: bytes) -> str:
    path = _CATALOG_DIR / "catalog.json"
    path.write_bytes(data)
    c = cat.load_catalog(path)
    if not c.parts_of_kind("gpu"):
        raise Broken("a user catalog left no GPUs")
    return "refused" if c.messages else "loaded"


# ---- inputs ----------------------------------------------------------------------------------------

VALID_TOPOLOGY = load_preset("dgx1-p100")
VALID_DOC = fileio.topology_to_dict(VALID_TOPOLOGY)
VALID_NCCL = to_nccl_xml(VALID_TOPOLOGY)
VALID_GRAPHML = formats.to_graphml(VALID_TOPOLOGY)
VALID_CATALOG = json.loads(cat.builtin_catalog_path().read_text(encoding="utf-8"))

# Values an attacker or an unlucky user tries: the ones that broke DGX Studio before (issue 16).
EVIL_TEXT = ["", " ", "\x00", "a\x00b", "\r", "x\r\ny", "trailing\\", "\\", '"', "<script>", "&amp;", "]]>",
             "\ud800", "lone\udfff", "\u202e", "\x7f", "\x85", "\t", "é", "😀", "a" * 10_000, "a" * 10_001,
             "%s%n", "{}", "[]", "0x10", "-1", "nan", "inf", "1e400"]
EVIL_NUMBERS = [0, -1, 1, 2**31, 2**53 + 1, 2**63, 10**30, 10**31, -10**40, 1e308, -1e308, 1e-320, 0.5, 1e18,
                1e19, 32, 33, 1024, 1025, 100_000]
RAW_NUMBERS = ["1e400", "-1e400", "NaN", "Infinity", "-Infinity", "9" * 5000, "-" + "9" * 4301, "1" * 31,
               "1" * 30, "0.0000000001e-400", "1E+99999"]


def deep(n: int, leaf=1):
    v = leaf
    for _ in range(n):
        v = {"a": v}
    return v


def evil_value(rng: random.Random):
    r = rng.random()
    if r < 0.3:
        return rng.choice(EVIL_TEXT)
    if r < 0.55:
        return rng.choice(EVIL_NUMBERS)
    if r < 0.65:
        return f"DEEP{rng.choice([5, 16, 17, 100, 990, 5000])}"  # expanded as text after encoding
    if r < 0.75:
        return rng.choice([None, True, False, [], {}, [1, 2], {"x": "y"}])
    if r < 0.85:
        return {rng.choice(EVIL_TEXT): rng.choice(EVIL_NUMBERS + EVIL_TEXT)}
    return f"RAW{rng.randrange(len(RAW_NUMBERS))}"  # replaced by a raw number literal after encoding


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


def mutate_doc(doc, rng: random.Random, paths=None, n: int | None = None):
    doc = copy.deepcopy(doc)
    paths = paths or [p for p in _paths(doc) if p]
    for _ in range(n or rng.randint(1, 4)):
        path = rng.choice(paths)
        node = doc
        try:
            for key in path[:-1]:
                node = node[key]
            action = rng.random()
            if action < 0.15 and isinstance(node, (dict, list)):
                del node[path[-1]]
            elif action < 0.25 and isinstance(node, dict):
                node[rng.choice(EVIL_TEXT)] = evil_value(rng)
            elif action < 0.35 and isinstance(node, list):
                node.append(copy.deepcopy(node[path[-1]]))  # a duplicate
            else:
                node[path[-1]] = evil_value(rng)
        except (KeyError, IndexError, TypeError):
            continue
    return doc


def encode(doc) -> str:
    text = json.dumps(doc, ensure_ascii=True)
    for i, raw in enumerate(RAW_NUMBERS):
        text = text.replace(f'"RAW{i}"', raw)
    for n in (5, 16, 17, 100, 990, 5000):
        text = text.replace(f'"DEEP{n}"', '{"a": ' * n + "1" + "}" * n)
    return text


_NATIVE_PATHS = [p for p in _paths(VALID_DOC) if p]
_CATALOG_PATHS = [p for p in _paths(VALID_CATALOG) if p]


def mutate_text(text: str, rng: random.Random) -> str:
    """Byte-level damage: cut, duplicate, insert evil text, nest deeply."""
    r = rng.random()
    i = rng.randrange(len(text) + 1)
    if r < 0.25:
        return text[:i]
    if r < 0.5:
        j = min(len(text), i + rng.randint(1, 200))
        return text[:i] + text[i:j] * rng.randint(2, 5) + text[j:]
    if r < 0.75:
        return text[:i] + rng.choice(EVIL_TEXT + RAW_NUMBERS) + text[i:]
    return text[:i] + "[" * 5000 + text[i:]


def native_input(rng: random.Random) -> bytes:
    r = rng.random()
    if r < 0.6:
        return encode(mutate_doc(VALID_DOC, rng, _NATIVE_PATHS)).encode("utf-8", "surrogatepass")
    if r < 0.85:
        return mutate_text(fileio.dumps(VALID_TOPOLOGY), rng).encode("utf-8", "surrogatepass")
    return rng.randbytes(rng.randint(0, 300))


def _xml_mutate(text: str, rng: random.Random, elements: list[str]) -> str:
    root = ET.fromstring(text)
    nodes = list(root.iter())
    for _ in range(rng.randint(1, 3)):
        el = rng.choice(nodes)
        r = rng.random()
        if r < 0.5 and el.attrib:
            key = rng.choice(list(el.attrib))
            value = rng.choice(EVIL_TEXT + [str(v) for v in EVIL_NUMBERS] + RAW_NUMBERS)
            el.set(key, value.replace("\x00", "").replace("\ud800", "").replace("\udfff", ""))
        elif r < 0.65:
            el.text = rng.choice(EVIL_TEXT).replace("\x00", "").replace("\ud800", "").replace("\udfff", "")
        elif r < 0.8 and len(el):
            el.append(copy.deepcopy(el[rng.randrange(len(el))]))
        elif r < 0.9:
            child = el
            for _ in range(rng.choice([10, 70, 5000])):
                child = ET.SubElement(child, rng.choice(elements))
        else:
            for c in list(el)[: rng.randint(0, len(el))]:
                el.remove(c)
    try:
        out = ET.tostring(root, encoding="unicode")
    except (ValueError, RecursionError):
        out = text
    return out if rng.random() < 0.85 else mutate_text(out, rng)


def nccl_input(rng: random.Random) -> str:
    return _xml_mutate(VALID_NCCL, rng, ["pci", "cpu", "gpu", "nvlink", "nic", "net"])


def graphml_input(rng: random.Random) -> str:
    return _xml_mutate(VALID_GRAPHML, rng, ["node", "edge", "data", "graph"])


def catalog_input(rng: random.Random) -> bytes:
    r = rng.random()
    if r < 0.8:
        return encode(mutate_doc(VALID_CATALOG, rng, _CATALOG_PATHS)).encode("utf-8", "surrogatepass")
    if r < 0.95:
        return mutate_text(json.dumps(VALID_CATALOG), rng).encode("utf-8", "surrogatepass")
    return rng.randbytes(rng.randint(0, 200))


TARGETS = {
    "native": (native_input, check_native),
    "nccl-xml": (nccl_input, check_nccl),
    "graphml": (graphml_input, check_graphml),
    "catalog": (catalog_input, check_catalog),
}
