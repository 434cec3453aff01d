"""The files in presets/ are exactly what the builders make: presets never drift from the code."""

import pytest

from dgxstudio.model.catalog import load_catalog
from dgxstudio.model.fileio import dumps
from dgxstudio.model.presets import build_preset, preset_file, preset_names


@pytest.mark.parametrize("name", preset_names())
def test_preset_file_matches_its_builder(name):
    generated = dumps(build_preset(name, load_catalog(include_user=False)))
    on_disk = preset_file(name).read_text(encoding="utf-8")
    assert on_disk == generated, f"presets/{name}.dgxs is stale: run python -m dgxstudio.model.presets"
