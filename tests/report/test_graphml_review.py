"""GraphML import of a hand-edited file: a value that is not a number names the edge or node it is on."""

import pytest

from dgxstudio.model.presets import load_preset
from dgxstudio.report.formats import from_graphml, to_graphml


def _count_key(text):
    import re
    return re.search(r'<key id="(\w+)" for="edge" attr.name="count"', text).group(1)


def test_a_count_that_is_not_a_number_names_its_edge():
    text = to_graphml(load_preset("dgx-h100"))
    key = _count_key(text)
    bad = text.replace(f'<data key="{key}">5</data>', f'<data key="{key}">five</data>', 1)
    with pytest.raises(ValueError, match=r"<edge 'gpu0' -> 'nvswitch0'>: count 'five' is not a whole number"):
        from_graphml(bad)
    bad = text.replace(f'<data key="{key}">4</data>', f'<data key="{key}">4.5</data>', 1)
    with pytest.raises(ValueError, match=r"<edge 'gpu0' -> 'nvswitch1'>: count '4.5' is not a whole number"):
        from_graphml(bad)
    assert len(from_graphml(text).links) == len(load_preset("dgx-h100").links)
