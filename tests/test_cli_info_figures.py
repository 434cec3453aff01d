"""``dgxstudio info``'s NVLink figures looked up once per distinct link (issue #16: a 59 MB file in
seconds) equal those of asking the topology link by link."""

import pytest

from dgxstudio.cli.topology import topology_info
from dgxstudio.model.presets import build_preset
from dgxstudio.model.topology import Link


def _nvlink_per_gpu_link_by_link(topo):
    """The figures as computed before the shortcut: every link's type and bandwidth asked of the topology."""
    nvlink_of = dict.fromkeys((g.id for g in topo.gpus()), 0.0)
    for lk in topo.links.values():
        if lk.a not in nvlink_of and lk.b not in nvlink_of:
            continue
        lt = topo.link_type_of(lk)
        if lt is not None and lt.family == "nvlink":
            bw = topo.link_bandwidth_per_direction_Bps(lk)
            for end in {lk.a, lk.b} & nvlink_of.keys():
                nvlink_of[end] += bw
    per_gpu = [2 * v for v in nvlink_of.values()]
    return (max(per_gpu) if per_gpu else 0.0), (min(per_gpu) if per_gpu else 0.0)


def _odd(topo):
    """Links the shortcut must not lump together: overrides, other counts and widths, an unknown
    type, a GPU joined to itself and to another GPU directly."""
    gpus = [g.id for g in topo.gpus()]
    nv = [lk for lk in topo.links.values() if lk.a in gpus or lk.b in gpus]
    nv[0].bandwidth_per_direction_Bps = 1.5e9
    nv[1].count += 3
    nv[2].type = "no-such-link-type"
    nv[3].width = 4
    topo.links["self"] = Link("self", gpus[0], gpus[0], nv[4].type)
    topo.links["direct"] = Link("direct", gpus[1], gpus[2], nv[4].type, count=2, bandwidth_per_direction_Bps=7e9)
    topo._links_by_device = None
    return topo


@pytest.mark.parametrize("name", ["dgx1-v100", "dgx-a100", "dgx-h100", "gb200-nvl72", "pcie-8gpu", "dgx1-fat-tree-124"])
def test_info_nvlink_figures_equal_link_by_link(name):
    topo = build_preset(name)
    for edited in (False, True):
        if edited:
            topo = _odd(topo)
        info = topology_info(topo)
        assert (info["nvlink_bw_per_gpu_bidir_Bps"], info["nvlink_bw_per_gpu_min_bidir_Bps"]) == \
            _nvlink_per_gpu_link_by_link(topo)
