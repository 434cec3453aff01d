"""The fast paths that keep a 59 MB file linear (issue #16) give the same answers as the general ones.

Loading reads devices, links and group members in the common shape without building JSON paths;
validation checks each distinct link shape once and counts ports in one pass. Here both ways run on
the same inputs, valid and broken, and must agree: the same topology or the same message, and the
same findings in the same order.
"""

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dgxstudio.model import fileio, validation
from dgxstudio.model.presets import build_preset, preset_names
from dgxstudio.model.topology import Device, Link, Topology
from dgxstudio.model.validation import WARNING, Finding, validate

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VALID = fileio.topology_to_dict(build_preset("dgx-h100"))


def _outcome(doc):
    try:
        return fileio.topology_to_dict(fileio.topology_from_dict(copy.deepcopy(doc)))
    except fileio.TopologyFileError as exc:
        return ("error", str(exc))


def _general_outcome(doc, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(fileio, "_fast_device", lambda raw: None)
        m.setattr(fileio, "_fast_link", lambda raw, devices, plain: None)
        m.setattr(fileio, "_fast_members", lambda raw, devices, member_of: None)
        return _outcome(doc)


odd_values = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 40), st.sampled_from([0.5, 1e19, float("nan"), -1.0, 3601.0]),
    st.sampled_from(["", "x" * 201, "gpu\x01", "caf\u00e9", "s0001.gpu0", "nvlink", "NVLink4", "h100-sxm5-80gb",
                     "gpu", "nic", "\ud800"]),
    st.lists(st.sampled_from(["s0001.gpu0", "s0001.gpu1", "nope"]), max_size=3),
    st.dictionaries(st.sampled_from(["k", "\x02"]), st.integers(0, 3) | st.floats(allow_nan=True), max_size=2),
)
FIELDS = {
    "devices": ["id", "kind", "part", "name", "properties", "extra"],
    "links": ["id", "a", "b", "type", "count", "a_port", "b_port", "width", "bandwidth_per_direction_Bps",
              "latency_s", "extra"],
    "groups": ["id", "devices", "name", "kind", "parent"],
}


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(sorted(FIELDS)), st.integers(0, 400), st.data()), min_size=1, max_size=3))
def test_loading_fast_and_general_agree_on_mutated_files(edits):
    doc = copy.deepcopy(VALID)
    for section, index, data in edits:
        entries = doc[section]
        entry = entries[index % len(entries)]
        field = data.draw(st.sampled_from(FIELDS[section]))
        if data.draw(st.booleans()) and field in entry:
            del entry[field]
        else:
            entry[field] = data.draw(odd_values)
    mp = pytest.MonkeyPatch()
    try:
        assert _outcome(doc) == _general_outcome(doc, mp)
    finally:
        mp.undo()


ODD = [None, True, 0, 1, 33, -1, 0.5, 1e19, float("nan"), float("inf"), -1.0, 3601.0, 10**40, "", "x" * 201,
       "y" * 10_001, "gpu\x01", "tab\there", "caf\u00e9", "\ud800", "s0001.gpu0", "nvlink", "NVLink4", "gpu",
       "h100-sxm5-80gb", [], ["s0001.gpu0"], ["s0001.gpu0", "s0001.gpu0"], ["nope"], {}, {"k": 1}, {"\x02": 1},
       {"k": float("nan")}]


@pytest.mark.parametrize("section", sorted(FIELDS))
def test_loading_fast_and_general_agree_on_every_odd_field(section, monkeypatch):
    """Every field of a device, a link and a group, set to each odd value or left out."""
    for field in FIELDS[section]:
        for value in ODD + ["<missing>"]:
            doc = copy.deepcopy(VALID)
            entry = doc[section][len(doc[section]) // 2]
            if value == "<missing>":
                entry.pop(field, None)
            else:
                entry[field] = value
            assert _outcome(doc) == _general_outcome(doc, monkeypatch), (section, field, value)


@pytest.mark.parametrize("name", preset_names())
def test_loading_fast_and_general_agree_on_every_preset(name, monkeypatch):
    doc = fileio.topology_to_dict(build_preset(name))
    assert _outcome(doc) == _general_outcome(doc, monkeypatch)


def test_duplicates_are_named_the_same_both_ways(monkeypatch):
    doc = copy.deepcopy(VALID)
    doc["links"].append(dict(doc["links"][3]))                # a link id used twice
    assert _outcome(doc) == _general_outcome(doc, monkeypatch)
    assert "duplicate id" in _outcome(doc)[1]
    doc = copy.deepcopy(VALID)
    doc["groups"][0]["devices"].append(doc["groups"][0]["devices"][0])   # a device listed twice in its group
    assert _outcome(doc) == _general_outcome(doc, monkeypatch)
    assert "already in group" in _outcome(doc)[1]


# ---- validation ---------------------------------------------------------------------------------

def _general_findings(topo):
    """The checks without what the fast paths remember or count in one pass: each link checked in a
    view holding that link alone, each device's ports counted from its own links alone."""
    out = list(validation._check_ids(topo))
    out += validation._check_devices(topo)
    for lk in topo.links.values():
        out += validation._check_links(_view(topo, topo.devices, [lk]))
    for dev in topo.devices.values():
        out += validation._check_ports(_view(topo, {dev.id: dev}, topo.links_of(dev.id)))
    out += validation._check_groups(topo)
    out += [Finding(WARNING, "isolated-gpu", f"{d.name} ({d.id}) has no links", (d.id,))
            for d in topo.gpus() if not topo.links_of(d.id)]
    for lk in topo.links.values():
        out += validation._check_negotiated_speed(_view(topo, topo.devices, [lk]))
    return out


def _view(topo, devices, links):
    """The topology seen through some of its devices and links (same objects, same catalog)."""
    t = Topology(topo.name, topo.catalog)
    t.devices = devices
    t.links = {lk.id: lk for lk in links}
    return t


def _random_edits(topo, data):
    cat = topo.catalog
    devices = list(topo.devices)
    links = list(topo.links)
    parts = sorted(cat.parts)
    types = sorted(cat.link_types) + ["no-such-type"]
    ports = sorted({g.name for p in cat.parts.values() for g in p.ports}) + [None, "nowhere"]
    for _ in range(data.draw(st.integers(1, 6))):
        what = data.draw(st.sampled_from(["type", "a_port", "b_port", "width", "part", "kind", "copy", "remove",
                                          "self", "dangling"]))
        lk = topo.links[data.draw(st.sampled_from(links))]
        if what == "type":
            lk.type = data.draw(st.sampled_from(types))
        elif what in ("a_port", "b_port"):
            setattr(lk, what, data.draw(st.sampled_from(ports)))
        elif what == "width":
            lk.width = data.draw(st.sampled_from([None, 1, 4, 16, 32]))
        elif what in ("part", "kind"):
            dev = topo.devices.get(data.draw(st.sampled_from(devices)))
            if dev is not None and what == "part":
                dev.part = data.draw(st.sampled_from(parts + ["no-part"]))
            elif dev is not None:
                dev.kind = data.draw(st.sampled_from(["gpu", "nic", "cpu", "pcie_switch"]))
        elif what == "copy":  # the same shape again, many times: each copy must be reported if the shape is wrong
            for k in range(data.draw(st.integers(1, 12))):
                new_id = f"{lk.id}.copy{k}.{len(topo.links)}"
                topo.links[new_id] = Link(new_id, lk.a, lk.b, lk.type, lk.count, lk.a_port, lk.b_port, lk.width)
        elif what == "remove":
            topo.devices.pop(data.draw(st.sampled_from(devices)), None)
        elif what == "self":
            lk.b = lk.a
        elif what == "dangling":
            lk.a = "missing-device"
    topo._invalidate()


@pytest.mark.parametrize("name", preset_names())
def test_validation_fast_and_general_agree_on_every_preset(name):
    topo = build_preset(name)
    assert validate(topo) == _general_findings(topo)


@SETTINGS
@given(st.sampled_from(["dgx1-v100", "dgx-a100", "pcie-8gpu", "dgx-h100", "dgx1-fat-tree-124"]), st.data())
def test_validation_fast_and_general_agree_on_broken_topologies(name, data):
    topo = build_preset(name)
    _random_edits(topo, data)
    assert validate(topo) == _general_findings(topo)


def test_a_wrong_link_shape_is_reported_on_every_link_that_has_it():
    topo = build_preset("dgx-h100")
    nvlinks = [lk for lk in topo.links.values() if lk.type.startswith("NVLink")][:3]
    for lk in nvlinks:
        lk.a_port = "pcie"  # a GPU's PCIe port cannot take NVLink
    found = [f for f in validate(topo) if f.code == "incompatible-link"]
    assert sorted(f.links[0] for f in found) == sorted(lk.id for lk in nvlinks)


def test_ports_counted_in_one_pass_include_a_link_from_a_device_to_itself():
    topo = build_preset("dgx-h100")
    gpu = topo.gpus()[0]
    before = topo.used_ports(gpu.id)["nvlink"]
    topo.links["loop"] = Link("loop", gpu.id, gpu.id, "NVLink4", 1, "nvlink", "nvlink")
    topo._invalidate()
    assert validate(topo) == _general_findings(topo)
    over = [f for f in validate(topo) if f.code == "ports-over-budget" and f.devices == (gpu.id,)]
    assert len(over) == 1 and f"uses {before + 2} nvlink ports" in over[0].message  # both ends of the loop


def test_file_roundtrip_of_odd_but_legal_entries_takes_the_same_path():
    topo = build_preset("dgx-a100")
    dev = next(iter(topo.devices.values()))
    topo.devices[dev.id] = Device(dev.id, dev.kind, dev.part, "caf\u00e9 \u2013 GPU", {"rack": "A1", "slot": [1, 2]})
    text = fileio.dumps(topo)
    doc = json.loads(text)
    mp = pytest.MonkeyPatch()
    try:
        assert _outcome(doc) == _general_outcome(doc, mp)
    finally:
        mp.undo()


@pytest.mark.parametrize("reuse, where", [
    (lambda d: d["devices"].append(dict(d["devices"][5])), ("devices", 5)),        # a device id twice
    (lambda d: d["links"].append(dict(d["links"][7])), ("links", 7)),              # a link id twice
    (lambda d: d["links"][9].update(id=d["devices"][2]["id"]), ("devices", 2)),     # a link named as a device
    (lambda d: d["groups"][0].update(id=d["links"][4]["id"]), ("links", 4)),        # a group named as a link
    (lambda d: d["groups"].append(dict(d["groups"][0], devices=[])), ("groups", 0)),  # a group id twice
])
def test_a_reused_id_names_its_first_use(reuse, where, monkeypatch):
    """Ids are claimed through the tables they are filed in (no table of first uses kept for every
    item): a reused id still names the entry that used it first, both ways."""
    doc = copy.deepcopy(VALID)
    reuse(doc)
    section, index = where
    item_id = doc[section][index]["id"]
    kind, message = _outcome(doc)
    assert kind == "error" and f"duplicate id {item_id!r} (first used at {section}[{index}].id)" in message
    assert _outcome(doc) == _general_outcome(doc, monkeypatch)


def _crowded(name):
    """A preset with some ports over budget: links copied onto a few devices, in and out of port order."""
    topo = build_preset(name)
    links = list(topo.links.values())
    for lk in links[::max(1, len(links) // 5)]:
        for k in range(40):
            new_id = f"{lk.id}.again{k}"
            topo.links[new_id] = Link(new_id, lk.a, lk.b, lk.type, lk.count, lk.a_port, lk.b_port, lk.width)
    topo._invalidate()
    return topo


@pytest.mark.parametrize("name", ["dgx-h100", "dgx1-v100", "gb200-nvl72", "dgx-a100"])
def test_ports_read_from_the_pairs_in_use_equal_device_by_device(name):
    """_check_ports looks only at the (device, port) pairs in use and sorts what is over budget; the
    same findings in the same order as walking every device's port groups, and a device filed under
    another id still goes device by device."""
    from collections import Counter
    topo = _crowded(name)
    ends = Counter()
    for lk in topo.links.values():
        ends[(lk.a, lk.a_port or "?")] += lk.count
        ends[(lk.b, lk.b_port or "?")] += lk.count
    fast = validation._check_ports(topo)
    assert len(fast) >= 2 and fast == validation._ports_device_by_device(topo, ends)
    first = next(iter(topo.devices))
    topo.devices["filed-elsewhere"] = topo.devices.pop(first)
    assert validation._check_ports(topo) == validation._ports_device_by_device(topo, ends)
