"""The Simulator's refusal of a design with errors quotes them as every other refusal does
(``validation.first_errors_words``: the first three, and how many more)."""

import pytest

from dgxstudio.model.presets import load_preset
from dgxstudio.model.validation import errors, first_errors_words
from dgxstudio.sim.results import SimulationError
from dgxstudio.sim.run import Simulator


def test_a_design_with_errors_is_refused_quoting_the_first_three_and_the_count():
    topo = load_preset("dgx-h100")
    for k in range(4):
        topo.devices[f"gpu{k}"].part = "h100-bogus"
    found = errors(topo)
    assert len(found) == 4
    with pytest.raises(SimulationError) as refused:
        Simulator(topo, [d.id for d in topo.gpus()])
    assert str(refused.value) == f"the topology has errors; fix them first: {first_errors_words(found)}"
    assert str(refused.value).endswith("unknown part 'h100-bogus' (and 1 more)")
