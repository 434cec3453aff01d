"""The named presets: which builder call makes each, and where its generated file lives.

The files in ``presets/`` are generated from these builders (``python -m dgxstudio.model.presets``)
and a test regenerates them to prove they have not drifted.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from .builders import build_fat_tree, build_system
from .catalog import Catalog, load_catalog
from .fileio import FILE_EXTENSION, atomic_write_text, dumps, loads
from .topology import Topology

DEFAULT_PRESET = "dgx1-v100"

PRESETS: dict[str, tuple[str, Callable[[Catalog | None], Topology]]] = {
    "dgx1-p100": ("DGX-1 with 8 Tesla P100: hybrid cube-mesh, 4 NVLinks per GPU",
                  lambda cat: build_system("dgx1-p100", cat)),
    "dgx1-v100": ("DGX-1 with 8 Tesla V100: hybrid cube-mesh, 6 NVLinks per GPU",
                  lambda cat: build_system("dgx1-v100", cat)),
    "dgx-a100": ("DGX A100: 8 A100 on 6 NVSwitches, 8+1 HDR NICs",
                 lambda cat: build_system("dgx-a100", cat)),
    "pcie-8gpu": ("Off-the-shelf 8-GPU PCIe server (V100 PCIe), no NVLink",
                  lambda cat: build_system("pcie-server", cat)),
    "pcie-8gpu-p100": ("Off-the-shelf 8-GPU PCIe server with Tesla P100 PCIe (seed 003's baseline), no NVLink",
                       lambda cat: build_system("pcie-server-p100", cat)),
    "dgx1-fat-tree-124": ("124 DGX-1 V100 on a two-level EDR fat tree (31 leaves, 16 spines)",
                          lambda cat: build_fat_tree(124, "dgx1-v100", catalog=cat)),
    "dgx-h100": ("DGX H100: 8 H100 on 4 NVSwitch gen3 (5/4/4/5 NVLinks), 8 ConnectX-7 NDR + 2 storage",
                 lambda cat: build_system("dgx-h100", cat)),
    "dgx-h200": ("DGX H200: 8 H200 141GB on 4 NVSwitch gen3, 8 ConnectX-7 NDR + 2 storage",
                 lambda cat: build_system("dgx-h200", cat)),
    "hgx-h800": ("HGX H800: 8 H800 with 8 NVLinks each (400 GB/s) on 4 NVSwitch gen3",
                 lambda cat: build_system("hgx-h800", cat)),
    "hgx-a800": ("HGX A800: the A100 design with NVLink limited to 400 GB/s per GPU",
                 lambda cat: build_system("hgx-a800", cat)),
    "dgx-b200": ("DGX B200: 8 B200 on 2 NVSwitch gen4 (NVLink5, 1.8 TB/s per GPU), 8 ConnectX-7 NDR",
                 lambda cat: build_system("dgx-b200", cat)),
    "gb200-nvl72": ("GB200 NVL72 rack: 72 B200 + 36 Grace in 18 compute trays, 9 NVLink switch trays",
                    lambda cat: build_system("gb200-nvl72", cat)),
    "dgx-a100-superpod": ("DGX A100 SuperPOD: 140 systems, 7 scalable units of 20, 8 HDR rails, three tiers "
                          "(switch counts not checked against RA-09950, which could not be read)",
                          lambda cat: _superpod("dgx-a100-superpod", "DGX A100 SuperPOD (140 systems)", cat,
                                                systems=140, tiers=3)),
    "dgx-h100-superpod": ("DGX H100 SuperPOD as published: 127 systems in 4 scalable units of 32 (one slot holds the "
                          "UFM), 8 NDR rails, 32 leaves, 16 spines",
                          lambda cat: _superpod("dgx-h100-superpod", "DGX H100 SuperPOD (127 systems)", cat)),
}


@lru_cache(maxsize=1)
def reference_clusters() -> dict:
    """The published SuperPOD switch and cable counts (resources/reference_clusters.json), by key."""
    raw = json.loads(files("dgxstudio.resources").joinpath("reference_clusters.json").read_text(encoding="utf-8"))
    return raw["clusters"]


def _superpod(key: str, name: str, catalog: Catalog | None, systems: int | None = None,
              tiers: int | None = None) -> Topology:
    """A reference cluster built from its data: the largest published row's node count unless given."""
    ref = reference_clusters()[key]
    topo = build_fat_tree(systems or ref["rows"][-1]["nodes"], ref["system"], per_leaf=ref["systems_per_su"],
                          rail_optimized=ref["rail_optimized"], tiers=tiers, switch=ref["switch_part"],
                          catalog=catalog, name=name)
    topo.description += (f". Counts as published in {ref['source']}" if ref["source"]
                         else ". Switch counts not checked against a published table (see resources/reference_clusters.json)")
    return topo


def preset_names() -> list[str]:
    return list(PRESETS)


def _check(name: str) -> None:
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r} (one of {', '.join(PRESETS)})")


def build_preset(name: str, catalog: Catalog | None = None) -> Topology:
    """Run the preset's builder (what the generated file must equal)."""
    _check(name)
    return PRESETS[name][1](catalog)


def preset_file(name: str):
    _check(name)
    return files("dgxstudio.presets").joinpath(name + FILE_EXTENSION)


def load_preset(name: str, catalog: Catalog | None = None) -> Topology:
    """Open the generated preset file, as the user would open any file."""
    return loads(preset_file(name).read_bytes(), catalog, filename=f"preset {name}")


def generate_all(folder: Path) -> list[Path]:
    """Write every preset with the built-in catalog only, so a user catalog cannot change them."""
    catalog = load_catalog(include_user=False)
    written = []
    for name in PRESETS:
        path = folder / (name + FILE_EXTENSION)
        atomic_write_text(path, dumps(build_preset(name, catalog)))
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "presets"
    for p in generate_all(target):
        print(p)
