"""The rules a topology file's values obey, shared by the native reader and writer (fileio) and by
every edit that must stay saveable: limits, the one error type naming the JSON path, text and
property checks, and the typed reader of decoded JSON."""

from __future__ import annotations

import math
import re

FORMAT_TAG = "dgxstudio-topology"
SCHEMA_VERSION = 1
FILE_EXTENSION = ".dgxs"
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_ITEMS = 2_000_000
MAX_LINK_COUNT = 1024
MAX_ID_LENGTH = 200
MAX_TEXT_LENGTH = 10_000
MAX_INT_DIGITS = 30            # checked on the digits before Python turns them into a number
MAX_PROPERTY_DEPTH = 16
MAX_PROPERTY_ITEMS = 10_000

SURROGATE = _SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_CONTROL_NOT_SPACE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


class TopologyFileError(ValueError):
    """A file that cannot be read as a topology; ``path`` is the JSON path at fault, if any."""

    def __init__(self, message: str, path: str = "", filename: str = ""):
        self.path = path
        self.filename = filename
        self.detail = message
        where = f"{path}: " if path else ""
        prefix = f"{filename}: " if filename else ""
        super().__init__(f"{prefix}{where}{message}")



def check_text(value: str, path: str, *, names: bool) -> None:
    """Text every format can carry: no lone surrogates; in ids and names no control characters
    (SVG, GraphML and DOT cannot hold them); elsewhere tab and line breaks only."""
    if value.isascii() and (value.isprintable() or not names and not _CONTROL_NOT_SPACE.search(value)):
        return  # the common case, at C speed
    if _SURROGATE.search(value):
        raise TopologyFileError("holds a lone surrogate, which no UTF-8 file can store", path)
    bad = (_CONTROL if names else _CONTROL_NOT_SPACE).search(value)
    if bad:
        raise TopologyFileError(f"holds the control character U+{ord(bad.group()):04X}", path)


def check_properties(value, path: str) -> dict:
    """Free-form properties: JSON values only, finite numbers, bounded depth and size (checked
    without recursion, so no nesting can exhaust the stack)."""
    if not isinstance(value, dict):
        raise TopologyFileError(f"expected an object, got {_type_name(value)}", path)
    stack = [(value, path, 1)]
    count = 0
    while stack:
        item, where, depth = stack.pop()
        count += 1
        if count > MAX_PROPERTY_ITEMS:
            raise TopologyFileError(f"more than {MAX_PROPERTY_ITEMS} values", path)
        if isinstance(item, dict):
            if depth > MAX_PROPERTY_DEPTH:
                raise TopologyFileError(f"nested deeper than {MAX_PROPERTY_DEPTH} levels", where)
            for k, v in item.items():
                if not isinstance(k, str):
                    raise TopologyFileError("keys must be text", where)
                check_text(k, f"{where}.{k}", names=True)
                stack.append((v, f"{where}.{k}", depth + 1))
        elif isinstance(item, list):
            if depth > MAX_PROPERTY_DEPTH:
                raise TopologyFileError(f"nested deeper than {MAX_PROPERTY_DEPTH} levels", where)
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(item))
        elif isinstance(item, str):
            if len(item) > MAX_TEXT_LENGTH:
                raise TopologyFileError(f"text of {len(item)} characters is longer than the limit of {MAX_TEXT_LENGTH}", where)
            check_text(item, where, names=False)
        elif isinstance(item, bool) or item is None:
            pass
        elif isinstance(item, int):
            if abs(item) >= 10**MAX_INT_DIGITS:
                raise TopologyFileError(f"a whole number longer than {MAX_INT_DIGITS} digits", where)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise TopologyFileError(f"{item!r} is not a number a file can hold", where)
        else:
            raise TopologyFileError(f"{type(item).__name__} is not a JSON value", where)
    return value


class _Reader:
    """Typed access to decoded JSON that reports the JSON path of anything wrong."""

    @staticmethod
    def obj(value, path: str) -> dict:
        if not isinstance(value, dict):
            raise TopologyFileError(f"expected an object, got {_type_name(value)}", path)
        return value

    @staticmethod
    def lst(value, path: str, limit: int = MAX_ITEMS) -> list:
        if not isinstance(value, list):
            raise TopologyFileError(f"expected a list, got {_type_name(value)}", path)
        if len(value) > limit:
            raise TopologyFileError(f"{len(value)} entries is more than the limit of {limit}", path)
        return value

    @staticmethod
    def text(value, path: str, *, limit: int = MAX_TEXT_LENGTH, empty: bool = True, names: bool = False) -> str:
        if not isinstance(value, str):
            raise TopologyFileError(f"expected text, got {_type_name(value)}", path)
        if len(value) > limit:
            raise TopologyFileError(f"text of {len(value)} characters is longer than the limit of {limit}", path)
        if not empty and not value:
            raise TopologyFileError("must not be empty", path)
        check_text(value, path, names=names)
        return value

    @classmethod
    def ident(cls, value, path: str) -> str:
        if type(value) is str and 0 < len(value) <= MAX_ID_LENGTH and value.isascii() and value.isprintable():
            return value  # the common case without the general checks (large files load linearly and fast)
        return cls.text(value, path, limit=MAX_ID_LENGTH, empty=False, names=True)

    @classmethod
    def name(cls, value, path: str) -> str:
        text = cls.text(value, path, names=True)
        if not text.strip():  # the inspector's rule too (field_problem): a name labels the drawing, finds and reports
            raise TopologyFileError("a name cannot be blank", path)
        return text

    @staticmethod
    def integer(value, path: str, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TopologyFileError(f"expected a whole number, got {_type_name(value)}", path)
        if not lo <= value <= hi:
            raise TopologyFileError(f"{value} is out of range {lo}..{hi}", path)
        return value

    @staticmethod
    def positive(value, path: str, *, zero_ok: bool = False, hi: float = 1e18) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TopologyFileError(f"expected a number, got {_type_name(value)}", path)
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok) or value > hi:
            raise TopologyFileError(f"{value!r} is out of range", path)
        return float(value)

    @staticmethod
    def props(value, path: str) -> dict:
        return check_properties(value, path)


def _type_name(value) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true/false", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _unknown_keys(entry: dict, allowed: set[str], path: str) -> None:
    for k in entry:
        if k not in allowed:
            raise TopologyFileError(f"unknown field {k!r}", path)
