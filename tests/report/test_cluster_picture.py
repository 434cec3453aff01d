"""A large cluster's picture in reports and exports is its structure, as the canvas shows it at fit:
tiers as rows of blocks, one bundle per pair of blocks, not a line per device (512 DGX H100 drew an
unreadable 960 x 72 strip of 1.36 MB)."""

import re

from dgxstudio.analysis.cluster_overview import build_overview
from dgxstudio.model.fabrics import build_fat_tree
from dgxstudio.model.presets import load_preset
from dgxstudio.report.svg import topology_svg


def test_a_superpod_is_drawn_as_its_blocks_and_bundles():
    topo = load_preset("dgx-a100-superpod")
    ov = build_overview(topo)
    svg = topology_svg(topo)
    width, height = (float(v) for v in re.search(r'width="(\d+)" height="(\d+)"', svg).groups())
    assert height > 0.5 * width  # a picture, not a strip
    assert len(svg) < 100_000
    # every block with its short name, every bundle as one line with its count and bandwidth
    for block in ov.blocks.values():
        assert f">{block.short}<" in svg or f">{block.label}<" in svg
    assert svg.count("<line ") == len(ov.bundles)
    for bundle in ov.bundles:
        assert bundle.label in svg  # (each line's title: count, type, bandwidth per direction)
    assert "Core switches" in svg and "Spine switches" in svg and ">SU 1<" in svg


def test_long_names_are_cut_to_their_block_and_kept_whole_in_the_title():
    topo = load_preset("dgx-a100-superpod")
    svg = topology_svg(topo)
    assert "InfiniBand HDR switch…" in svg
    summary = next(b.summary for b in build_overview(topo).blocks.values() if b.tier == 3)
    assert f": {summary}</title>" in svg


def test_a_small_topology_keeps_its_drawing_device_by_device():
    topo = load_preset("dgx-h100")
    assert build_overview(topo) is None
    svg = topology_svg(topo)
    assert svg.count("<rect ") > len(topo.devices) // 2 and "GPU0" in svg
    small = build_fat_tree(4, "dgx-h100", rail_optimized=True)
    assert build_overview(small) is None and "<line " in topology_svg(small)
