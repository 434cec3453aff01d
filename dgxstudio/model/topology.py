"""The topology document: devices, port-level links, nested groups and, kept apart, the canvas layout.

The document stores what the user said (part ids, link types, overrides); derived figures such as a
link's capacity come from the catalog when asked for, so a catalog update flows through.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field

from ..heap import paused_gc
from .catalog import Catalog, LinkType, Part, default_catalog
from .events import EventEmitter, ModelEvent
from .nodes import loose_system


class ModelError(ValueError):
    """An edit the model refuses (an id already in use, a link to a device that does not exist)."""


@dataclass
class Device:
    id: str
    kind: str
    part: str
    name: str
    properties: dict = field(default_factory=dict)


@dataclass
class Link:
    """A connection between two devices; ``count`` parallel physical links of one type.

    ``a_port``/``b_port`` name the port group used on each end; ``width`` is the lane count of a
    PCIe link. The two overrides, when set, replace the catalog's per-link figures.
    """

    id: str
    a: str
    b: str
    type: str
    count: int = 1
    a_port: str | None = None
    b_port: str | None = None
    width: int | None = None
    bandwidth_per_direction_Bps: float | None = None
    latency_s: float | None = None

    def other(self, device_id: str) -> str:
        return self.b if device_id == self.a else self.a


@dataclass
class Group:
    """A named container (system, rack, pod). ``devices`` lists the devices directly inside it."""

    id: str
    name: str
    kind: str = "system"
    parent: str | None = None
    devices: list[str] = field(default_factory=list)
    properties: dict = field(default_factory=dict)


@dataclass
class Layout:
    """Where things are drawn; no meaning for analysis or simulation."""

    positions: dict[str, tuple[float, float]] = field(default_factory=dict)
    collapsed: set[str] = field(default_factory=set)


def _clone(obj, lists: tuple[str, ...] = ()):
    """A copy of a Device, Link or Group: its fields are text, numbers or None, which an edit replaces
    but never changes in place, so they are shared; the properties are copied deeply (when there are
    any) and so are the fields named in ``lists`` (a group's device list, which edits change in place)."""
    new = object.__new__(type(obj))
    fields = new.__dict__
    fields.update(obj.__dict__)
    props = fields.get("properties")
    if props is not None:
        fields["properties"] = copy.deepcopy(props) if props else {}
    for name in lists:
        fields[name] = list(fields[name])
    return new


class Topology:
    def __init__(self, name: str = "Untitled", catalog: Catalog | None = None):
        self.name = name
        self.description = ""
        self.devices: dict[str, Device] = {}
        self.links: dict[str, Link] = {}
        self.groups: dict[str, Group] = {}
        self.layout = Layout()
        self.catalog = catalog or default_catalog()
        self.events = EventEmitter()
        self._links_by_device: dict[str, list[str]] | None = None
        self._group_by_device: dict[str, str] | None = None
        self._frozen: tuple[tuple, "Topology"] | None = None
        self._pending: "PendingCopy | None" = None    # the frozen copy being built for the current state
        self._copying: list["PendingCopy"] = []     # copies still reading this document's objects
        self._shallow: tuple[tuple, "Topology"] | None = None  # the last shallow snapshot and its state

    # ---- look-ups ---------------------------------------------------------------------------
    def part_of(self, device_id: str) -> Part | None:
        dev = self.devices.get(device_id)
        return self.catalog.part(dev.part) if dev else None

    def link_type_of(self, link: Link) -> LinkType | None:
        return self.catalog.link_type(link.type)

    def links_of(self, device_id: str) -> list[Link]:
        if self._links_by_device is None:
            index: dict[str, list[str]] = {}
            get = index.get
            for lk in self.links.values():  # (no empty list made per call as setdefault would)
                a, b, lid = lk.a, lk.b, lk.id
                mine = get(a)
                if mine is None:
                    index[a] = [lid]
                else:
                    mine.append(lid)
                if b != a:
                    mine = get(b)
                    if mine is None:
                        index[b] = [lid]
                    else:
                        mine.append(lid)
            self._links_by_device = index
        return [self.links[i] for i in self._links_by_device.get(device_id, ())]

    def devices_of_kind(self, kind: str) -> list[Device]:
        return [d for d in self.devices.values() if d.kind == kind]

    def gpus(self) -> list[Device]:
        return self.devices_of_kind("gpu")

    def link_bandwidth_per_direction_Bps(self, link: Link, achievable: bool = False) -> float:
        """Capacity of all ``count`` links together in one direction (0 when the type is unknown)."""
        lt = self.link_type_of(link)
        if link.bandwidth_per_direction_Bps is not None:
            per_link = link.bandwidth_per_direction_Bps
        elif lt is None:
            return 0.0
        else:
            per_link = lt.bandwidth_per_direction_Bps(link.width)
        eff = lt.achievable_efficiency if (achievable and lt is not None) else 1.0
        return per_link * link.count * eff

    def link_latency_s(self, link: Link) -> float:
        if link.latency_s is not None:
            return link.latency_s
        lt = self.link_type_of(link)
        return lt.latency_s if lt else 0.0

    def device_hop_latency_s(self, device_id: str) -> float:
        part = self.part_of(device_id)
        return part.hop_latency_s if part else 0.0

    def group_of(self, device_id: str) -> Group | None:
        """The innermost group that lists the device."""
        index = self._group_by_device
        stale = index is not None and device_id in index and (
            index[device_id] not in self.groups or device_id not in self.groups[index[device_id]].devices)
        if index is None or stale:
            index = {}
            for g in self.groups.values():
                for d in g.devices:
                    index.setdefault(d, g.id)
            self._group_by_device = index
        gid = index.get(device_id)
        return self.groups.get(gid) if gid is not None else None

    def group_chain(self, group_id: str) -> list[Group]:
        """The group and its ancestors, innermost first (stops on a cycle)."""
        chain, seen = [], set()
        gid = group_id
        while gid is not None and gid in self.groups and gid not in seen:
            seen.add(gid)
            chain.append(self.groups[gid])
            gid = self.groups[gid].parent
        return chain

    def devices_in_group(self, group_id: str) -> list[str]:
        """Every device inside the group, at any depth, in document order."""
        wanted = {group_id}
        changed = True
        while changed:
            changed = False
            for g in self.groups.values():
                if g.parent in wanted and g.id not in wanted:
                    wanted.add(g.id)
                    changed = True
        inside = {d for gid in wanted for d in self.groups[gid].devices}
        return [d for d in self.devices if d in inside]

    def frame_of(self, device_id: str) -> str | None:
        """The id of the nearest enclosing group of kind ``system`` (the drawn frame), or None."""
        g = self.group_of(device_id)
        if g is None:
            return None
        for grp in self.group_chain(g.id):
            if grp.kind == "system":
                return grp.id
        return None

    def system_of(self, device_id: str) -> str | None:
        """The system (NCCL's node) a device is in: its frame (``frame_of``); outside every frame,
        the system its NVLink/PCIe/CPU links reach (``model.nodes``: its first GPU's id, not a
        group's), None when it reaches no GPU that way (a network switch)."""
        frame = self.frame_of(device_id)
        if frame is not None or device_id not in self.devices:
            return frame
        return loose_system(self, device_id, lambda d: self.frame_of(d) is None)

    def used_ports(self, device_id: str) -> dict[str, int]:
        """Ports in use per port group of a device, counting a link of count k as k ports."""
        used: dict[str, int] = {}
        for lk in self.links_of(device_id):
            ends = []
            if lk.a == device_id:
                ends.append(lk.a_port)
            if lk.b == device_id:
                ends.append(lk.b_port)
            for port in ends:
                key = port or "?"
                used[key] = used.get(key, 0) + lk.count
        return used

    def free_ports(self, device_id: str) -> dict[str, int]:
        part = self.part_of(device_id)
        if part is None:
            return {}
        used = self.used_ports(device_id)
        return {p.name: p.count - used.get(p.name, 0) for p in part.ports}

    # ---- edits (each emits an event; the UI's undo commands call these) ----------------------
    def _invalidate(self) -> None:
        self._links_by_device = None
        self._group_by_device = None

    def _index_link(self, link: Link, add: bool) -> None:
        """Keep the links-by-device index (when built) in step with one link added or removed, rather
        than dropping it: rebuilding it costs a pass over every link of a large cluster. Each device's
        list stays in the order of ``links``, since an added link is the last of both."""
        index = self._links_by_device
        if index is None:
            return
        for end in {link.a, link.b}:
            mine = index.get(end)
            if add:
                if mine is None:
                    index[end] = [link.id]
                else:
                    mine.append(link.id)
            elif mine is not None and link.id in mine:
                mine.remove(link.id)

    def _check_new_id(self, new_id: str) -> None:
        if not isinstance(new_id, str) or not new_id:
            raise ModelError("an id must be a non-empty string")
        if new_id in self.devices or new_id in self.links or new_id in self.groups:
            raise ModelError(f"id {new_id!r} is already in use")

    def new_id(self, prefix: str) -> str:
        n = 0
        while True:
            candidate = f"{prefix}{n}"
            if candidate not in self.devices and candidate not in self.links and candidate not in self.groups:
                return candidate
            n += 1

    def add_device(self, device: Device, position: tuple[float, float] | None = None,
                   group: str | None = None) -> Device:
        self._check_new_id(device.id)
        if group is not None and group not in self.groups:
            raise ModelError(f"no group {group!r}")
        self.devices[device.id] = device
        if position is not None:
            self.layout.positions[device.id] = (float(position[0]), float(position[1]))
        if group is not None:
            self.groups[group].devices.append(device.id)
            if self._group_by_device is not None:
                self._group_by_device.setdefault(device.id, group)
        self.events.emit(ModelEvent("device_added", (device.id,)))
        return device

    def remove_device(self, device_id: str) -> tuple[Device, list[Link], str | None]:
        """Remove a device with its links; returns what is needed to put it back."""
        dev = self.devices.get(device_id)
        if dev is None:
            raise ModelError(f"no device {device_id!r}")
        removed_links = [self.remove_link(lk.id) for lk in list(self.links_of(device_id))]
        grp = self.group_of(device_id)
        if grp is not None:
            grp.devices.remove(device_id)
        del self.devices[device_id]
        self.layout.positions.pop(device_id, None)
        if self._links_by_device is not None:
            self._links_by_device.pop(device_id, None)
        if self._group_by_device is not None:
            self._group_by_device.pop(device_id, None)
        self.events.emit(ModelEvent("device_removed", (device_id,)))
        return dev, removed_links, grp.id if grp else None

    def add_link(self, link: Link) -> Link:
        self._check_new_id(link.id)
        for end in (link.a, link.b):
            if end not in self.devices:
                raise ModelError(f"link {link.id}: no device {end!r}")
        if link.a_port is None:
            pa = self.part_of(link.a)
            pg = pa.port_group_for(link.type) if pa else None
            link.a_port = pg.name if pg else None
        if link.b_port is None:
            pb = self.part_of(link.b)
            pg = pb.port_group_for(link.type) if pb else None
            link.b_port = pg.name if pg else None
        self.links[link.id] = link
        self._index_link(link, True)
        self.events.emit(ModelEvent("link_added", (link.id,)))
        return link

    def remove_link(self, link_id: str) -> Link:
        link = self.links.pop(link_id, None)
        if link is None:
            raise ModelError(f"no link {link_id!r}")
        self._index_link(link, False)
        self.events.emit(ModelEvent("link_removed", (link_id,)))
        return link

    def add_group(self, group: Group) -> Group:
        self._check_new_id(group.id)
        if group.parent is not None and group.parent not in self.groups:
            raise ModelError(f"group {group.id}: no parent group {group.parent!r}")
        for d in group.devices:
            if d not in self.devices:
                raise ModelError(f"group {group.id}: no device {d!r}")
        self.groups[group.id] = group
        self._group_by_device = None
        self.events.emit(ModelEvent("group_added", (group.id,)))
        return group

    def remove_group(self, group_id: str) -> Group:
        """Remove a group; its devices and child groups move up to its parent."""
        grp = self.groups.pop(group_id, None)
        if grp is None:
            raise ModelError(f"no group {group_id!r}")
        parent = self.groups.get(grp.parent) if grp.parent else None
        if parent is not None:
            parent.devices.extend(grp.devices)
        for g in self.groups.values():
            if g.parent == group_id:
                g.parent = grp.parent
        self.layout.collapsed.discard(group_id)
        index = self._group_by_device   # its members now belong to the parent (the links do not change)
        if index is not None:
            for d in grp.devices:
                if index.get(d) == group_id:
                    if parent is not None:
                        index[d] = parent.id
                    else:
                        index.pop(d, None)
        self.events.emit(ModelEvent("group_removed", (group_id,)))
        return grp

    def set_attribute(self, obj_id: str, attribute: str, value) -> object:
        """Change one attribute of a device, link or group; returns the old value (for undo)."""
        obj = self.devices.get(obj_id) or self.links.get(obj_id) or self.groups.get(obj_id)
        if obj is None:
            raise ModelError(f"no device, link or group {obj_id!r}")
        if attribute == "id" or not hasattr(obj, attribute):
            raise ModelError(f"{obj_id}: attribute {attribute!r} cannot be set")
        old = getattr(obj, attribute)
        for pending in self._copying:  # a copy being built elsewhere keeps the object as it was
            pending.before_change(obj)
        setattr(obj, attribute, value)
        if (isinstance(obj, Link) and attribute in ("a", "b")) or (isinstance(obj, Group) and attribute == "devices"):
            self._invalidate()
        self.events.emit(ModelEvent("changed", (obj_id,), {"attribute": attribute}))
        return old

    def move(self, positions: dict[str, tuple[float, float] | None]) -> dict[str, tuple[float, float] | None]:
        """Set (or, with None, forget) canvas positions; returns the old ones (for undo)."""
        old = {k: self.layout.positions.get(k) for k in positions}
        for k, v in positions.items():
            if v is None:
                self.layout.positions.pop(k, None)
            else:
                self.layout.positions[k] = (float(v[0]), float(v[1]))
        self.events.emit(ModelEvent("moved", tuple(positions)))
        return old

    def set_collapsed(self, group_id: str, collapsed: bool) -> bool:
        if group_id not in self.groups:
            raise ModelError(f"no group {group_id!r}")
        was = group_id in self.layout.collapsed
        if collapsed:
            self.layout.collapsed.add(group_id)
        else:
            self.layout.collapsed.discard(group_id)
        self.events.emit(ModelEvent("collapsed", (group_id,), {"collapsed": collapsed}))
        return was

    def state_key(self) -> tuple:
        """Moves with every edit (each emits an event), a rename or a new description included."""
        return (self.events.revision, self.name, self.description, len(self.devices), len(self.links), len(self.groups))

    def frozen_copy(self) -> "Topology":
        """A copy for work off the GUI thread, which only reads it: taken once per state of the document
        and shared by every run until the next edit (each edit emits an event, which makes it stale).
        Pressing Run again on an unchanged design costs nothing; nobody may edit the copy."""
        key = self.state_key()
        pending = self._pending
        if pending is not None and pending.key == key and not pending.failed and (self._frozen or (None,))[0] != key:
            pending.wait()  # being built on its own thread: wait for it rather than copy twice
        if self._frozen is None or self._frozen[0] != key:
            self._frozen = (key, self.copy())
        return self._frozen[1]

    def frozen_copy_later(self, derive: dict | None = None) -> "PendingCopy":
        """The frozen copy of this state, built on a thread of its own: what a Run takes on the GUI
        thread. Costs a shallow snapshot (pointer copies, tens of milliseconds on a 59 MB cluster)
        instead of the copy itself (about a second); the copy then holds the state of this moment even
        if the document is edited while it is being built (see ``PendingCopy``). Taken once per state
        and shared, like ``frozen_copy``. ``derive`` names functions of the copy (the provenance hash)
        that the same thread works out once the copy is built, kept in ``PendingCopy.derived``."""
        key = self.state_key()
        if self._pending is not None and self._pending.key == key and not self._pending.failed:
            return self._pending
        if self._frozen is not None and self._frozen[0] == key:
            return PendingCopy.ready(key, self._frozen[1])
        self._copying = [c for c in self._copying if c.reading]
        pending = PendingCopy(self, key, derive)
        self._pending = pending
        self._copying.append(pending)
        pending.start()
        return pending

    def current_frozen_copy(self) -> "Topology | None":
        """The frozen copy if one was taken of this very state, else None (nothing is copied)."""
        return self._frozen[1] if self._frozen is not None and self._frozen[0] == self.state_key() else None

    def shallow_snapshot(self) -> "Topology":
        """A topology sharing this one's device and link objects, with tables, groups and layout of its
        own: pointer copies, no deep copy. Edits change shared objects in place, so another thread
        reading it sees this state only as long as ``state_key()`` has not moved meanwhile (which the
        editing thread checks afterwards); nobody may edit the snapshot. Taken once per state: the
        findings' check after an edit and the Run pressed next share one (tens of milliseconds each
        on a 59 MB cluster, on the GUI thread)."""
        key = self.state_key()
        if self._shallow is not None and self._shallow[0] == key:
            return self._shallow[1]
        other = self.loose_snapshot()
        self._shallow = (key, other)
        return other

    def loose_snapshot(self) -> "Topology":
        """A shallow snapshot that another thread may take while this one is being edited: not kept.

        The taker reads ``state_key()`` on the editing thread before it starts, and uses what it made
        only if the key has not moved when it looks again on that thread (every edit moves it, and an
        edit runs from start to end on the editing thread): then no edit happened meanwhile and the
        snapshot is this state's. An edit that lands while the tables are read may make this raise
        (``RuntimeError``: a table changed size) or read a half-made edit; either way the key moved.
        ``keep_snapshot`` hands a snapshot that proved good back to be shared (see ``shallow_snapshot``)."""
        other = Topology(self.name, self.catalog)
        other.description = self.description
        with paused_gc():  # thousands of new groups would start full collections of a large heap
            self._shallow_tables(other)
        return other

    def keep_snapshot(self, key: tuple, snapshot: "Topology") -> None:
        """On the editing thread: a ``loose_snapshot`` taken at ``key``, which is still the state now,
        becomes the one ``shallow_snapshot`` shares (a Run pressed next needs no snapshot of its own)."""
        if key == self.state_key() and (self._shallow is None or self._shallow[0] != key):
            self._shallow = (key, snapshot)

    def _shallow_tables(self, other: "Topology") -> None:
        other.devices = dict(self.devices)
        other.links = dict(self.links)
        other.groups = {k: Group(g.id, g.name, g.kind, g.parent, list(g.devices), g.properties)
                        for k, g in self.groups.items()}
        other.layout = Layout(dict(self.layout.positions), set(self.layout.collapsed))

    def copy(self) -> "Topology":
        """A deep copy of the document (the catalog is shared, listeners are not).

        Object by object rather than through ``copy.deepcopy`` (see ``_clone``): 10 s become about 1 s
        on a 59 MB cluster, so a Run after an edit does not hold the GUI thread that long."""
        other = Topology(self.name, self.catalog)
        other.description = self.description
        with paused_gc():  # hundreds of thousands of new objects, no cycles (see dgxstudio/heap.py)
            other.devices = {k: _clone(d) for k, d in self.devices.items()}
            other.links = {k: _clone(lk) for k, lk in self.links.items()}
            other.groups = {k: _clone(g, ("devices",)) for k, g in self.groups.items()}
        other.layout = Layout(dict(self.layout.positions), set(self.layout.collapsed))
        return other


class PendingCopy:
    """A deep copy of a document's state, taken on the GUI thread in a few tens of milliseconds and
    built on a thread of its own.

    The GUI thread takes a shallow snapshot (own tables, groups and layout; device and link objects
    shared). A daemon thread clones the shared objects. Edits meanwhile replace entries of the live
    tables, which the snapshot does not see, or change a device or link in place, which only
    ``Topology.set_attribute`` does: it calls ``before_change`` first, and the object as it was is
    kept here and replaces whatever the clone read. Once every object is cloned the copy stops
    listening (under a lock, so an edit either is seen before that or changes nothing of the copy).
    """

    def __init__(self, live: "Topology | None", key: tuple, derive: dict | None = None):
        self.key = key
        self._live = live
        self._snapshot = live.shallow_snapshot() if live is not None else None
        self._lock = threading.Lock()
        self._kept: dict[tuple[str, str], object] = {}
        self.reading = live is not None   # still reading objects the document shares
        self._done = threading.Event()
        self._copy: Topology | None = None
        self._error: BaseException | None = None
        self._derive = dict(derive or {})
        self.derived: dict = {}
        self.built_on: str | None = None  # name of the thread that built the copy (for tests)

    @classmethod
    def ready(cls, key: tuple, topo: "Topology") -> "PendingCopy":
        done = cls(None, key)
        done._copy = topo
        done._done.set()
        return done

    def start(self) -> None:
        threading.Thread(target=self._build, name="dgxstudio-frozen-copy", daemon=True).start()

    def before_change(self, obj) -> None:
        """On the editing thread, before ``obj`` (a device or link) changes in place."""
        with self._lock:
            if not self.reading:
                return
            snap = self._snapshot
            table = "devices" if isinstance(obj, Device) else "links" if isinstance(obj, Link) else None
            if table is not None and getattr(snap, table).get(obj.id) is obj:
                self._kept.setdefault((table, obj.id), _clone(obj))

    def _build(self) -> None:
        try:
            self.built_on = threading.current_thread().name
            other = self._snapshot.copy()
            with self._lock:
                self.reading = False
                kept, self._kept = self._kept, {}
            for (table, oid), obj in kept.items():
                getattr(other, table)[oid] = obj
            for name, make in self._derive.items():
                self.derived[name] = make(other)
            self._copy = other
            live = self._live
            if live is not None and live._pending is self:
                live._frozen = (self.key, other)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for the copy
            self._error = exc
        finally:
            with self._lock:
                self.reading = False
            self._snapshot = self._live = None
            self._done.set()

    @property
    def failed(self) -> bool:
        return self._error is not None

    def wait(self, timeout: float | None = None) -> "Topology | None":
        """The copy once it is built (None if ``timeout`` passed first); raises what building raised."""
        if not self._done.wait(timeout):
            return None
        if self._error is not None:
            raise self._error
        return self._copy
