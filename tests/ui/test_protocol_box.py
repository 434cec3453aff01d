"""The Simulation dock's protocol box is for NCCL's algorithms: with the lecture's algorithms or an
all-to-all it was left enabled, its LL read as used while the run ignored it (the CLI refuses it)."""


def test_the_protocol_box_is_enabled_only_where_a_protocol_is_used(make_window):
    w = make_window("dgx1-v100")
    p = w.sim_panel
    p.collective.setCurrentText("all-reduce")
    for algorithm, used in (("ring", True), ("parameter-server", False), ("tree", True), ("hierarchical", False),
                            ("single-ring", False), ("auto", True)):
        p.algorithm.setCurrentText(algorithm)
        assert p.protocol.isEnabled() == used, algorithm
    p.collective.setCurrentText("all-to-all")
    assert not p.protocol.isEnabled()
    p.collective.setCurrentText("broadcast")
    assert p.protocol.isEnabled()


def test_the_chunk_box_is_enabled_only_where_the_run_cuts_its_data_in_chunks(make_window):
    """NCCL's ring, tree, nvls-tree and collnet pipeline in NCCL's own slices (`simulate --chunk`'s
    help): the chunk box stayed enabled for them, its tooltip saying each ring or tree step moved
    pieces of that size, while a 1 B and a 64 MiB chunk gave the same ring to the last bit."""
    w = make_window("dgx1-v100")
    p = w.sim_panel
    p.collective.setCurrentText("all-reduce")
    for algorithm, used in (("ring", False), ("tree", False), ("nvls-tree", False), ("collnet", False),
                            ("nvls", True), ("hierarchical", True), ("single-ring", True),
                            ("parameter-server", True), ("auto", True)):
        p.algorithm.setCurrentText(algorithm)
        assert p.chunk.isEnabled() == used, algorithm
    p.algorithm.setCurrentText("ring")
    p.collective.setCurrentText("all-to-all")   # runs direct, in chunks
    assert p.chunk.isEnabled()
    assert "NCCL's own slices" in p.chunk.toolTip()


def test_the_protocol_box_tooltip_says_when_ll128_is_refused(make_window):
    # as `simulate --protocol`'s help (tests/test_cli_review_s35.py)
    w = make_window("dgx1-v100")
    tip = w.sim_panel.protocol.toolTip()
    assert "ll128 only where NCCL enables it" in tip and "simple only" in tip, tip
