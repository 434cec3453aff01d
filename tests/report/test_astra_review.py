"""ASTRA-sim analytical network files: what a review of the export found."""

import pytest

from dgxstudio.model.presets import load_preset
from dgxstudio.report.formats import ExportError, to_astra_yaml


def test_a_pcie_server_is_refused_for_what_it_is_not_as_a_dgx1():
    # the refusal named "an irregular graph such as the DGX-1 hybrid cube-mesh" for a server without NVLink
    with pytest.raises(ExportError) as exc:
        to_astra_yaml(load_preset("pcie-8gpu"))
    assert "no NVLink" in str(exc.value) and "cube-mesh" not in str(exc.value)
    with pytest.raises(ExportError, match="hybrid cube-mesh"):
        to_astra_yaml(load_preset("dgx1-v100"))
