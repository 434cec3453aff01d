"""A NIC faster than its PCIe host link is a warning that says which NICs and both rates."""

from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.validation import WARNING, validate


def test_an_800g_nic_behind_pcie_gen5_is_named_with_both_rates():
    # DGX B200 with ConnectX-8 (XDR, 100 GB/s per direction) on the system's PCIe Gen5 x16 (63 GB/s): the
    # simulator's rings stopped at 504 GB/s with a topology bound of 1,457 GB/s and no word why
    topo = build_fat_tree(2, "dgx-b200", nic="connectx-8-xdr", rail_optimized=True)
    (found,) = [f for f in validate(topo) if f.code == "nic-host-bound"]
    assert found.severity == WARNING and len(found.devices) == 16
    assert "16 NICs such as" in found.message and "ConnectX-8 SuperNIC 800G" in found.message
    assert "carry 100 GB/s per direction, the PCIe Gen5 x16 host link 63.0 GB/s" in found.message


def test_nics_within_their_host_link_say_nothing():
    for system in ("dgx-h100", "dgx-a100", "dgx-b200"):
        assert not [f for f in validate(build_fat_tree(2, system)) if f.code == "nic-host-bound"]
