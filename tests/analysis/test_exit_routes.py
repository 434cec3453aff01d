"""Routes between a system's device and a switch, read from a system wired alike (``ExitRoutes``),
are the routes the search gives, path for path, channel for channel, both ways; and a system whose
surroundings offer a cheaper way out is searched, not renamed."""

import random

import pytest

from dgxstudio.analysis.routing import LazyRoute, Router
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.topology import Link


def _shortcut():
    """Rail-optimized DGX H100 where the leaves of two rails of one group of systems are joined by a
    link so fast that it costs nothing within the search's tie tolerance: those systems' GPU 0
    reaches rail 1's leaf through its own NIC and that link as cheaply as through its PCIe switch's
    second NIC (a tie, two paths), where the first system's GPU 0 has one path. Returns the
    cluster and the two requests, the first system's first."""
    topo = build_fat_tree(16, "dgx-h100", rail_optimized=True, per_leaf=4)
    router = Router(topo)
    rails = router._rails()
    (own,), (other,) = rails["s09.gpu0"][1], rails["s09.gpu1"][1]
    ib = next(lk.type for lk in topo.links.values() if own in (lk.a, lk.b))
    topo.add_link(Link("no-cost", own, other, ib, bandwidth_per_direction_Bps=1e20))
    return topo, [("s01.gpu0", next(iter(rails["s01.gpu1"][1]))), ("s09.gpu0", other)]


def _faster_nic():
    """Four GB200 NVL72 racks (drawn as trays: the rack's group holds its trays, not its devices) on
    XDR switches, rack 3's second NIC a ConnectX-8 at XDR: its GPU 0 reaches rail 0's leaf through
    its own NDR NIC (cost 20) as cheaply as through that XDR NIC, rail 1's leaf and either spine
    (10 + 5 + 5: two XDR links to each of the 2 spines), three paths, where rack 1's GPU 0 has one. The exits of a rack were read from its
    group's own devices (none), so no way out could tie and rack 1's one path was renamed."""
    topo = build_fat_tree(4, "gb200-nvl72", rail_optimized=True, switch="ib-switch-xdr-144")
    topo.devices["s3.ib1"].part = "connectx-8-xdr"
    for lk in topo.links.values():
        if "s3.ib1" in (lk.a, lk.b) and lk.type == "IB-NDR":
            lk.type, lk.a_port, lk.b_port = "IB-XDR", None, None
    leaf = next(lk.b for lk in topo.links.values() if lk.a == "s1.ib0")
    return topo, [("s1.gpu0", leaf), ("s3.gpu0", leaf)]


def _plain(router, src, dst):
    """The route the search gives (between a system's device and a switch it keeps nothing)."""
    return router._route(*router._search(src, dst))


def _same(a, b):
    assert a.paths == b.paths
    assert a.channels.tolist() == b.channels.tolist() and a.weights.tolist() == b.weights.tolist()
    assert a.latency_s == b.latency_s


FABRICS = {
    "h100-3-tiers": lambda: (build_fat_tree(40, "dgx-h100", rail_optimized=True, tiers=3), None),
    "a100-oversubscribed": lambda: (build_fat_tree(12, "dgx-a100", per_leaf=2, oversubscription=2.0), None),
    "h100-uneven": lambda: (build_fat_tree(37, "dgx-h100", rail_optimized=True, tiers=3, per_leaf=4), None),
    "dgx1-tree": lambda: (build_fat_tree(9, per_leaf=3), None),
    "h100-shortcut": _shortcut,
    "gb200-faster-nic": _faster_nic,
    # racks drawn as trays: their GPUs' own NICs (rails) were read from the rack's group (none), so the
    # routes below were never asked for and the count went unchecked
    "gb200": lambda: (build_fat_tree(4, "gb200-nvl72", rail_optimized=True, switch="ib-switch-xdr-144"), None),
}


@pytest.mark.parametrize("name", list(FABRICS))
def test_routes_to_and_from_switches_are_the_searched_ones(name):
    topo, special = FABRICS[name]()
    router, plain = Router(topo), Router(topo)
    kind = router.fabric.kind
    switches = sorted(d for d, k in kind.items() if k in ("ib_switch", "eth_switch"))
    gpus = [d.id for d in topo.gpus()]
    rnd = random.Random(17)
    pairs = [(g, s) for g in rnd.sample(gpus, min(len(gpus), 40)) for s in rnd.sample(switches, 3)]
    for g in gpus:  # each GPU and the switches its system is joined to (the renamed ones)
        sid = router._system[g]
        pairs += [(g, s) for s in switches if any(router._system.get(v) == sid for v in router.fabric.adj[s])][:4]
    pairs = (special or []) + pairs
    for g, s in pairs:
        for src, dst in ((g, s), (s, g)):
            _same(router.routes(src, dst), _plain(plain, src, dst))
    if special is not None:  # (the tie: one path leaves through the other leaf)
        gpu, leaf = special[-1]
        assert any(router._system.get(d) is None and d != leaf for p in router.routes(gpu, leaf).paths for d in p)
    # each GPU and its own NIC's switch (CollNet's heads and leaves): searched once per class
    router = Router(topo)
    own = [(g, leaf) for g, (nic, leaves) in sorted(router._rails().items()) for leaf in sorted(leaves)]
    searched = 0
    real = router._search

    def counting(src, dst):
        nonlocal searched
        searched += 1
        return real(src, dst)

    router._search = counting
    lazy = 0
    for g, leaf in own:
        for src, dst in ((g, leaf), (leaf, g)):
            got = router.routes(src, dst)
            if isinstance(got, LazyRoute):  # (renamed without its paths: its channels compared first)
                lazy += 1
                want = _plain(plain, src, dst)
                assert got.channels.tolist() == want.channels.tolist() and got.weights.tolist() == want.weights.tolist()
                assert got._paths is None and got.latency_s == want.latency_s
            _same(got, _plain(plain, src, dst))
    if name == "gb200":
        assert len(own) == 4 * 72, "each GPU of the 4 racks has its own NIC and leaf"
    # (a link costing nothing: no floor above the tie; rack 3's faster NIC: its 2 GPUs' routes searched)
    if name not in ("dgx1-tree", "h100-shortcut", "gb200-faster-nic"):
        assert own and searched <= len(own) // 2, "the routes were searched, not read from a system alike"
        assert lazy >= len(own), "the renamed routes were built path by path"
