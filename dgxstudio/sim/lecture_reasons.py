"""The reasons the lecture's three all-reduces carry (text and JSON ``reason``), as NCCL's algorithms
carry what its model picked: what each does and what limits it on the drawn topology. Hierarchical goes
through one leader GPU per system, whose ring across systems leaves through the leader's NIC only
(without it, 7% of the bound on 4 DGX A100 went unexplained: one of each system's 8 NICs carries the
network stage; NCCL's ring and tree use them all); a parameter server's links carry every buffer in and
out; decentralized sends every whole buffer to every other GPU, one round after another. They said only
"<algorithm> as requested", which ``simulate`` does not print. Reasons hold no brackets: the report
prints a reason in brackets after the algorithm's name."""

from __future__ import annotations

from ..analysis.channels import cabled_compute_nics
from ..model.names import device_words


def cabled_nics(router, gpu: str) -> int | None:
    """How many compute NICs of the system of ``gpu`` are cabled to the network (None: the GPU is in no
    system). An uncabled one (``generate fat-tree --nics-per-system 2``) is not one the run could use."""
    sid = router.system_of.get(gpu)
    if sid is None:
        return None
    return sum(1 for _ in cabled_compute_nics(router.topo, router.fabric, router.system_devices(sid)))


def hierarchical_reason(router, leaders: list[str]) -> str:
    """``leaders``: each system's leader GPU (``sched.meta["leaders"]``, from ``collectives.hierarchical``)."""
    head = "hierarchical as requested: the lecture's hierarchical all-reduce through one leader GPU per system"
    if len(leaders) <= 1:
        return f"{head}; one system here, so a reduce to its leader and a broadcast back, with no network stage"
    counts = {cabled_nics(router, leader) for leader in leaders}
    steps = (f" - each system reduces to its leader, the {len(leaders)} leaders run a ring across systems, "
             f"each leader broadcasts back")
    if None in counts or 0 in counts:
        return head + steps
    lo, hi = min(counts), max(counts)
    if hi == 1:
        return head + steps + " - so its network stage runs over each system's one NIC"
    of = f"{lo}" if lo == hi else f"{lo} to {hi}"
    return (head + steps + f" - so its network stage runs over one NIC per system, of its {of} cabled ones, "
            f"where NCCL's ring and tree use them all")


def parameter_server_reason(router, server: str, gpus: list[str]) -> str:
    """``server``: the device ``collectives.parameter_server`` was given (a GPU, or a CPU)."""
    kind = "GPU" if router.topo.devices[server].kind == "gpu" else "CPU"
    workers = sum(1 for g in gpus if g != server)
    head = f"parameter-server as requested: the lecture's parameter server on {device_words(router.topo, server)}"
    if not workers:
        return f"{head}; no other GPU here, so nothing to send"
    other = "other " if workers < len(gpus) else ""
    some = "buffer" if workers == 1 else "buffers"
    return (f"{head} - each of the {workers} {other}GPUs sends it its whole buffer and it sends the sum back to "
            f"each - so that {kind}'s links carry {workers} {some} in and {workers} out, where each sending GPU's "
            f"carry one each way")


def decentralized_reason(router, gpus: list[str]) -> str:
    """``gpus`` in the order ``collectives.one_by_one`` was given them (round r sends GPU i's buffer to GPU i + r)."""
    p = len(gpus)
    head = "decentralized as requested: the lecture's decentralized all-reduce, one by one"
    if p <= 1:
        return f"{head}; one GPU here, so nothing to send"
    rounds = p - 1
    steps = (f" - in round r of {rounds} every GPU sends its whole buffer to the GPU r places on, and a round "
             f"starts when the one before ends - so each GPU sends {rounds} whole "
             f"{'buffer' if rounds == 1 else 'buffers'}, where NCCL's ring sends under 2, and each round lasts as long "
             f"as its slowest transfer")
    system = [router.system_of.get(g) for g in gpus]
    if len(set(system)) <= 1:
        return head + steps
    crossing = sum(1 for r in range(1, p) if any(system[i] != system[(i + r) % p] for i in range(p)))
    if not crossing:
        return head + steps
    some = f"all {rounds}" if crossing == rounds else f"{crossing} of the {rounds}"
    return head + steps + f": in {some} rounds some cross the network between systems"


def lecture_reason(router, algorithm: str, sched, gpus: list[str]) -> str:
    """The reason a run of ``algorithm`` not NCCL's carries; a bare "<algorithm> as requested" but for the
    lecture's three."""
    if algorithm == "hierarchical":
        return hierarchical_reason(router, sched.meta["leaders"])
    if algorithm == "parameter-server":
        return parameter_server_reason(router, sched.meta["server"], gpus)
    if algorithm == "decentralized":
        return decentralized_reason(router, gpus)
    return f"{algorithm} as requested"
