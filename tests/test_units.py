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


@pytest.mark.parametrize("text", ["1.5", "2.5", "1.5B", "2.25 b", "1.5e0"])
def test_a_fraction_of_a_byte_is_refused_not_rounded(text):
    # `simulate --size 1.5` ran 2 bytes without a word: a bare number is bytes, and half a byte is no size
    number = text.rstrip("Bb ")
    with pytest.raises(ValueError, match=rf"^'{text}' is not a whole number of bytes.*; did you mean {number}KiB\?"):
        parse_size(text)


def test_whole_bytes_and_fractions_with_a_larger_unit_still_read():
    assert parse_size("2.0") == 2 and parse_size("1.5e1") == 15 and parse_size("1e6") == 10**6
    assert parse_size("1.5GiB") == 3 * 2**29 and parse_size("1.1KiB") == 1126   # rounded to whole bytes, as before
    assert parse_size("1.5KB") == 1500
    for beyond in ("-1.5", "-0.5", "0", "0.0", "0.4e-3KiB", "1.5PiB", "1e400"):   # (out of range before a fraction)
        with pytest.raises(ValueError, match=r"out of range \(1 B \.\. 1 PiB\)"):
            parse_size(beyond)
    # a bare fraction below a byte misses a unit, as any bare fraction does: it was said to be out of range
    for below_a_byte in ("0.5", "0.5B", ".25"):
        with pytest.raises(ValueError, match=rf"^'{below_a_byte}' is not a whole number of bytes.*did you mean "
                                             rf"{below_a_byte.rstrip('B')}KiB\?"):
            parse_size(below_a_byte)


@pytest.mark.parametrize("n", [1, 2, 1.5, 511.5, 1023, 1024, 1025, 1536, 1126, 3 * 2**29, 2**40 + 1, 2**50])
def test_every_size_format_size_shows_reads_back(n):
    # the GUI shows format_size strings (the Chunk box's default among them): each must still parse
    shown = format_size(n)
    assert abs(parse_size(shown) - n) <= 0.005 * n + 0.5, shown
