"""The named presets: which builder call makes each, and where its generated file lives.

The files in ``presets/`` are generated from these builders (``python -m dgxstudio.model.presets``)
and a test regenerates them to prove they have not drifted.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

from .builders import build_fat_tree, build_system
from .catalog import Catalog, load_catalog
from .fileio import FILE_EXTENSION, dumps, loads
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
    "dgx1-fat-tree-124": ("124 DGX-1 V100 on a two-level EDR fat tree (31 leaves, 16 spines)",
                          lambda cat: build_fat_tree(124, "dgx1-v100", catalog=cat)),
}


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
        path.write_text(dumps(build_preset(name, catalog)), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "presets"
    for p in generate_all(target):
        print(p)
