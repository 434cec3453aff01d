"""Sizes and times shown to the user (dgxstudio/units.py)."""

import pytest

from dgxstudio.units import format_size, parse_size


@pytest.mark.parametrize("n, text", [
    (512, "512 B"), (1024, "1 KiB"), (1536, "1.50 KiB"), (256 * 2**20, "256 MiB"), (16 * 2**30, "16 GiB"),
    (2**40, "1 TiB"), (3 * 2**39, "1.50 TiB"), (2**50, "1 PiB"),
])
def test_format_size_uses_the_largest_unit_up_to_pib(n, text):
    # 1 PiB, the largest size a run takes, read "1048576 GiB" before TiB and PiB were known
    assert format_size(n) == text


@pytest.mark.parametrize("text", ["1 KiB", "1.50 KiB", "256 MiB", "1 TiB", "1.50 TiB", "1 PiB"])
def test_every_shown_size_reads_back(text):
    assert format_size(parse_size(text.replace(" ", ""))) == text
