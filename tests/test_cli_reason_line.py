"""`simulate`'s text says how a run was made, as the GUI's results do: the protocol NCCL's model chose
for an algorithm asked for, or a parameter server simulated by symmetry class. Only auto's reason was
printed; JSON had the others as `reason`."""

import json
from types import SimpleNamespace

from dgxstudio.cli import main


def _out(capsys, *argv):
    assert main(["simulate", *argv]) == 0
    return capsys.readouterr().out


def test_the_protocol_chosen_for_a_requested_algorithm_is_said(capsys):
    out = _out(capsys, "--preset", "dgx1-v100", "--algorithm", "ring", "--size", "256MiB")
    assert "\n  ring as requested; Simple: NCCL's cost model's choice for this size\n" in out


def test_a_parameter_server_by_class_says_so(capsys, tmp_path):
    path = str(tmp_path / "four.dgxs")
    assert main(["generate", "fat-tree", "--systems", "4", "--system", "dgx-h100", "--rail-optimized", "-o", path]) == 0
    capsys.readouterr()
    out = _out(capsys, path, "--algorithm", "parameter-server", "--size", "1MiB")
    assert "carry one each way; simulated as" in out and "symmetry classes" in out


def test_a_bare_as_requested_is_not_repeated(capsys):
    # (hierarchical, then decentralized were the example here until they said what limits them, below)
    out = _out(capsys, "--preset", "dgx1-v100", "--algorithm", "single-ring", "--size", "1MiB")
    assert "single-ring as requested" not in out


def test_hierarchical_says_it_crosses_the_network_through_one_nic_per_system(capsys, tmp_path):
    # it printed no reason line, and its 7% of the bound on 4 DGX A100 was left unexplained
    path = str(tmp_path / "four.dgxs")
    assert main(["generate", "fat-tree", "--systems", "4", "--system", "dgx-a100", "-o", path]) == 0
    capsys.readouterr()
    said = ("hierarchical as requested: the lecture's hierarchical all-reduce through one leader GPU per system - "
            "each system reduces to its leader, the 4 leaders run a ring across systems, each leader broadcasts "
            "back - so its network stage runs over one NIC per system, of its 8 cabled ones, where NCCL's ring and "
            "tree use them all")
    assert f"\n  {said}\n" in _out(capsys, path, "--algorithm", "hierarchical", "--size", "256MiB")
    assert json.loads(_out(capsys, path, "--algorithm", "hierarchical", "--size", "256MiB", "--json"))["reason"] == said
    # NICs left uncabled are not counted (--nics-per-system 2 cables 2 of the 8)
    two = str(tmp_path / "two_nics.dgxs")
    assert main(["generate", "fat-tree", "--systems", "4", "--system", "dgx-a100", "--nics-per-system", "2", "-o", two]) == 0
    capsys.readouterr()
    assert "one NIC per system, of its 2 cabled ones" in _out(capsys, two, "--algorithm", "hierarchical", "--size", "1MiB")


def test_hierarchical_on_one_system_says_it_has_no_network_stage(capsys):
    out = _out(capsys, "--preset", "dgx-a100", "--algorithm", "hierarchical", "--size", "256MiB")
    assert ("\n  hierarchical as requested: the lecture's hierarchical all-reduce through one leader GPU per system; "
            "one system here, so a reduce to its leader and a broadcast back, with no network stage\n") in out


def test_a_parameter_server_says_its_server_s_links_carry_every_buffer(capsys, tmp_path):
    # it said only "parameter-server as requested; simulated as ..." and named no server
    path = str(tmp_path / "four.dgxs")
    assert main(["generate", "fat-tree", "--systems", "4", "--system", "dgx-h100", "--rail-optimized", "-o", path]) == 0
    capsys.readouterr()
    said = ("parameter-server as requested: the lecture's parameter server on DGX H100 #1 GPU0 - each of the 31 "
            "other GPUs sends it its whole buffer and it sends the sum back to each - so that GPU's links carry 31 "
            "buffers in and 31 out, where each sending GPU's carry one each way; simulated as ")
    assert f"\n  {said}" in _out(capsys, path, "--algorithm", "parameter-server", "--size", "1MiB")
    assert json.loads(_out(capsys, path, "--algorithm", "parameter-server", "--size", "1MiB", "--json")
                      )["reason"].startswith(said)
    # a CPU as the server: all 8 GPUs send to it, named as the canvas names it
    out = _out(capsys, "--preset", "dgx1-v100", "--algorithm", "parameter-server", "--server", "cpu0", "--size", "1MiB")
    assert ("\n  parameter-server as requested: the lecture's parameter server on CPU0 - each of the 8 GPUs sends it "
            "its whole buffer and it sends the sum back to each - so that CPU's links carry 8 buffers in and 8 out, "
            "where each sending GPU's carry one each way\n") in out


def test_decentralized_says_each_gpu_sends_every_whole_buffer_one_round_after_another(capsys, tmp_path):
    said = ("decentralized as requested: the lecture's decentralized all-reduce, one by one - in round r of 7 every "
            "GPU sends its whole buffer to the GPU r places on, and a round starts when the one before ends - so each "
            "GPU sends 7 whole buffers, where NCCL's ring sends under 2, and each round lasts as long as its slowest "
            "transfer")
    assert f"\n  {said}\n" in _out(capsys, "--preset", "dgx1-v100", "--algorithm", "decentralized", "--size", "1MiB")
    assert json.loads(_out(capsys, "--preset", "dgx1-v100", "--algorithm", "decentralized", "--size", "1MiB",
                           "--json"))["reason"] == said
    path = str(tmp_path / "two.dgxs")
    assert main(["generate", "fat-tree", "--systems", "2", "--system", "dgx-a100", "-o", path]) == 0
    capsys.readouterr()
    out = _out(capsys, path, "--algorithm", "decentralized", "--size", "1MiB")
    assert ("so each GPU sends 15 whole buffers, where NCCL's ring sends under 2, and each round lasts as long as its "
            "slowest transfer: in all 15 rounds some cross the network between systems\n") in out


def test_decentralized_counts_only_the_rounds_that_cross_systems():
    from dgxstudio.sim.lecture_reasons import decentralized_reason

    # GPUs of two systems taken in turn: round 2 sends each GPU's buffer to the other GPU of its own system
    router = SimpleNamespace(system_of={"a0": "a", "a1": "a", "b0": "b", "b1": "b"})
    assert decentralized_reason(router, ["a0", "b0", "a1", "b1"]).endswith(
        ": in 2 of the 3 rounds some cross the network between systems")
    assert decentralized_reason(router, ["a0", "a1"]).endswith("each round lasts as long as its slowest transfer")
