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
