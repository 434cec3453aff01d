"""A compute NIC cabled to an Ethernet (RoCE) fabric is named as an Ethernet port ("ETH3"), not "IB3";
its id stays ``ib3``, which links, rails and saved files refer to."""

from dgxstudio.model.fabrics import build_fat_tree


def _compute_nics(topo, system_prefix="s1."):
    return [d for d in topo.devices.values()
            if d.kind == "nic" and d.properties.get("role") == "compute" and d.id.startswith(system_prefix)]


def test_roce_nics_are_named_as_ethernet_ports_with_their_ids_kept():
    topo = build_fat_tree(2, "dgx-h100", nic="connectx-7-ndr", switch="eth-switch-400g-128")
    nics = _compute_nics(topo)
    assert [d.id for d in nics] == [f"s1.ib{k}" for k in range(8)]
    assert [d.name for d in nics] == [f"DGX H100 #1 ETH{k}" for k in range(8)]
    cabled = {lk.a for lk in topo.links.values() if lk.type == "Eth-400G"}
    assert {d.id for d in nics} <= cabled
    # storage NICs are not renamed
    assert topo.devices["s1.storage0"].name == "DGX H100 #1 Storage0"


def test_800g_roce_cluster_and_infiniband_cluster():
    roce = build_fat_tree(2, "dgx-b200", nic="connectx-8-xdr", switch="eth-switch-800g-64")
    assert [d.name for d in _compute_nics(roce)][:2] == ["DGX B200 #1 ETH0", "DGX B200 #1 ETH1"]
    ib = build_fat_tree(2, "dgx-h100")
    assert [d.name for d in _compute_nics(ib)][:2] == ["DGX H100 #1 IB0", "DGX H100 #1 IB1"]
