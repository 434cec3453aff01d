"""A mistyped --nic or --switch lists the catalog's parts of that kind (a new user cannot guess the id of
the 400 GbE RoCE switch)."""

import pytest

from dgxstudio.model.fabrics import build_fat_tree


def test_an_unknown_switch_lists_the_switches():
    with pytest.raises(ValueError) as exc:
        build_fat_tree(2, "dgx-h100", switch="roce-400")
    text = str(exc.value)
    assert text.startswith("--switch roce-400: no such catalog part; the switches: ")
    assert "eth-switch-400g-128 (Ethernet switch Spectrum-4 SN5600 (128 x 400GbE breakout))" in text
    assert "ib-switch-xdr-144" in text and "connectx" not in text


def test_an_unknown_nic_lists_the_nics():
    with pytest.raises(ValueError) as exc:
        build_fat_tree(2, "dgx-h100", nic="cx8")
    text = str(exc.value)
    assert "no such catalog part; the NICs: " in text and "connectx-8-xdr (ConnectX-8 SuperNIC 800G (1 port))" in text
    assert "ib-switch" not in text
