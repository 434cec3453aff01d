"""The copy runs read: taken once per state of the document, a new one after any edit."""

from dgxstudio.model.presets import load_preset
from dgxstudio.model.topology import Device


def test_frozen_copy_is_shared_until_an_edit_and_never_follows_one():
    topo = load_preset("dgx1-v100")
    first = topo.frozen_copy()
    assert topo.frozen_copy() is first and first is not topo
    topo.move({"gpu0": (5.0, 6.0)})  # even a move is an edit
    second = topo.frozen_copy()
    assert second is not first and second.layout.positions["gpu0"] == (5.0, 6.0)
    with topo.events.batch():  # edits held in a batch count too
        topo.add_device(Device("cpu9", "cpu", next(d.part for d in topo.devices.values() if d.kind == "cpu"), "x"))
        assert topo.frozen_copy() is not second
    third = topo.frozen_copy()
    assert "cpu9" in third.devices and "cpu9" not in second.devices and "cpu9" not in first.devices
    topo.name = "renamed"  # a rename emits no event but still gives a new copy
    assert topo.frozen_copy() is not third and topo.frozen_copy().name == "renamed"


def test_a_shallow_snapshot_shares_objects_but_not_tables_groups_or_layout():
    from dgxstudio.model import fileio

    topo = load_preset("dgx-a100")
    snap = topo.shallow_snapshot()
    before = fileio.topology_to_dict(topo)
    assert fileio.topology_to_dict(snap) == before
    assert snap.state_key()[1:] == topo.state_key()[1:]
    gid = next(iter(topo.groups))
    topo.add_device(Device("extra", "gpu", "a100-sxm4-40gb", "extra"), (1.0, 2.0), group=gid)
    topo.remove_link(next(iter(topo.links)))
    topo.set_collapsed(gid, True)
    assert fileio.topology_to_dict(snap) == before  # tables, group lists and layout are its own
    assert all(snap.devices[k] is topo.devices[k] for k in snap.devices if k in topo.devices)  # no deep copy
    assert topo.current_frozen_copy() is None
    frozen = topo.frozen_copy()
    assert topo.current_frozen_copy() is frozen
    topo.set_attribute("extra", "name", "renamed")
    assert topo.current_frozen_copy() is None


def test_a_copy_is_equal_and_independent_of_the_document():
    from dgxstudio.model import fileio
    from dgxstudio.model.topology import Group

    topo = load_preset("dgx-a100")
    gpu = next(iter(topo.gpus()))
    topo.set_attribute(gpu.id, "properties", {"rack": {"row": [1, 2]}, "slot": 3})
    topo.add_group(Group("g-extra", "extra", "rack", None, [], {"tags": ["a"]}))
    copied = topo.copy()
    before = fileio.topology_to_dict(topo)
    assert fileio.topology_to_dict(copied) == before
    assert all(copied.devices[k] is not d for k, d in topo.devices.items())
    assert all(copied.links[k] is not lk for k, lk in topo.links.items())
    # Whatever can change in place is the copy's own: nested properties, group lists, the layout.
    copied.devices[gpu.id].properties["rack"]["row"].append(9)
    copied.groups["g-extra"].properties["tags"].append("b")
    next(iter(copied.groups.values())).devices.append("x")
    copied.layout.positions[gpu.id] = (0.0, 0.0)
    copied.layout.collapsed.add("g-extra")
    copied.devices[next(iter(copied.devices))].properties["new"] = 1
    assert fileio.topology_to_dict(topo) == before
    # and edits of the document do not reach the copy
    topo.set_attribute(gpu.id, "name", "renamed")
    next(iter(topo.groups.values())).devices.append("y")
    assert copied.devices[gpu.id].name != "renamed" and "y" not in next(iter(copied.groups.values())).devices


def test_a_copy_built_later_keeps_the_state_it_was_taken_at_through_edits_in_place():
    """``frozen_copy_later`` snapshots on the caller's thread and clones on its own; an in-place edit
    made while the clone runs (held here until the edit is done) is not seen by the copy."""
    import threading

    from dgxstudio.model import fileio
    from dgxstudio.model.topology import Topology

    topo = load_preset("dgx-a100")
    link = next(iter(topo.links.values()))
    gpu = next(iter(topo.gpus()))
    before = fileio.topology_to_dict(topo)
    started, release = threading.Event(), threading.Event()
    real_copy = Topology.copy
    threads = []

    def held_copy(self):
        threads.append(threading.current_thread())
        started.set()
        release.wait(10)
        return real_copy(self)

    Topology.copy = held_copy
    try:
        pending = topo.frozen_copy_later({"links": lambda t: len(t.links)})
        assert topo.frozen_copy_later() is pending  # one copy per state
        assert started.wait(10) and pending.wait(0.01) is None
        topo.set_attribute(link.id, "count", link.count + 7)    # in place, on objects the copy reads
        topo.set_attribute(gpu.id, "properties", {"rack": 4})
        topo.set_attribute(gpu.id, "name", "renamed")
        topo.remove_link(next(reversed(topo.links)))
        release.set()
        copied = pending.wait(10)
    finally:
        Topology.copy = real_copy
    assert threads and threads[0] is not threading.current_thread()
    assert fileio.topology_to_dict(copied) == before
    assert pending.derived == {"links": len(before["links"])}
    assert copied.links[link.id] is not link and copied.devices[gpu.id] is not gpu
    assert topo.current_frozen_copy() is None  # the document moved on: the copy is of an older state
    assert not pending.reading and topo.frozen_copy_later() is not pending


def test_a_copy_built_later_serves_the_next_run_of_the_same_state():
    topo = load_preset("dgx1-v100")
    pending = topo.frozen_copy_later()
    copied = pending.wait(10)
    assert topo.current_frozen_copy() is copied and topo.frozen_copy() is copied
    assert topo.frozen_copy_later().wait(0) is copied


def test_a_shallow_snapshot_is_taken_once_per_state_and_a_copy_built_later_keeps_it():
    from dgxstudio.model import fileio

    topo = load_preset("dgx-a100")
    snap = topo.shallow_snapshot()
    assert topo.shallow_snapshot() is snap  # the findings' check and the next Run share it
    before = fileio.topology_to_dict(topo)
    pending = topo.frozen_copy_later()
    link = next(iter(topo.links.values()))
    topo.set_attribute(link.id, "count", link.count + 3)  # whether the copy is built yet or not
    assert fileio.topology_to_dict(pending.wait(10)) == before
    assert topo.shallow_snapshot() is not snap and topo.shallow_snapshot().links[link.id].count == link.count
