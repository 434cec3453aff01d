"""``Router.channel_links`` made channel by channel when read: the same tuples as the list of every
channel's links, read by index (negative and numpy ones too), slice or iteration; a copy is that list."""

import copy
import pickle

import numpy as np
import pytest

from dgxstudio.analysis.routing import Router
from dgxstudio.model.fabrics import build_fat_tree


def test_channel_links_read_one_by_one_equal_the_list_of_them():
    router = Router(build_fat_tree(4, "dgx-h100", rail_optimized=True))
    bundles = list(router.fabric.bundles.values())
    whole = [tuple(b.links) for b in bundles for _ in (0, 1)]
    links = router.channel_links
    assert len(links) == len(whole) == router.n_channels
    # read one by one before anything walks them all (each made when read), then after
    for _ in range(2):
        assert all(links[c] == whole[c] for c in range(len(whole)))
        assert all(links[-c] == whole[-c] for c in range(1, len(whole) + 1))
        assert links[np.int64(5)] == whole[5] and links[3:11:3] == whole[3:11:3]
        for bad in (len(whole), -len(whole) - 1):
            with pytest.raises(IndexError):
                links[bad]
        assert list(links) == whole and links == whole
    assert copy.copy(links) == whole and type(copy.deepcopy(links)) is list
    assert pickle.loads(pickle.dumps(links)) == whole
    # each channel's links are its bundle's: the two ways of bundle i are channels 2i and 2i + 1
    i = len(bundles) // 2
    assert links[2 * i] == links[2 * i + 1] == tuple(bundles[i].links)
