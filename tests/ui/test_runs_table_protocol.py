"""The runs table says which protocol each NCCL run used (issue #17's review): "all-reduce ring 4 MiB on
16 GPUs" read the same for a run with LL and one with LL128, and auto's row said "→ tree" without the
LL128 NCCL's model picked with it (the CLI's table has a protocol column)."""

from dgxstudio.model.fabrics import build_fat_tree


def _row(w, qtbot, algorithm, protocol):
    p = w.sim_panel
    p.collective.setCurrentText("all-reduce")
    p.algorithm.setCurrentText(algorithm)
    p.protocol.setCurrentText(protocol)
    p.size.setText("4MiB")
    with qtbot.waitSignal(p.resultReady, timeout=60000) as blocker:
        p.run()
    _request, result = blocker.args
    return w.results.table.item(w.results.table.rowCount() - 1, 0).text(), result


def test_each_run_row_names_its_protocol(make_window, qtbot):
    w = make_window(None, topology=build_fat_tree(2, "dgx-a100"))
    text, r = _row(w, qtbot, "auto", "auto")
    assert (r.algorithm, r.protocol) == ("tree", "ll128")
    assert text.endswith("→ tree/LL128"), text              # what auto ran, algorithm and protocol
    text, _ = _row(w, qtbot, "ring", "auto")
    assert text.startswith("all-reduce ring 4 MiB") and text.endswith("→ LL128"), text   # what auto chose
    ll, _ = _row(w, qtbot, "ring", "ll")
    ll128, _ = _row(w, qtbot, "ring", "ll128")
    assert ll.startswith("all-reduce ring/LL 4 MiB") and ll128.startswith("all-reduce ring/LL128 4 MiB"), (ll, ll128)
    assert "→" not in ll128                                  # nothing left to NCCL's choice
    text, _ = _row(w, qtbot, "hierarchical", "ll128")        # (the box is off: no protocol to name)
    assert text.startswith("all-reduce hierarchical 4 MiB") and "LL" not in text, text
