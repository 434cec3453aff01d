"""What a report says, as a list of blocks (headings, paragraphs, tables, pictures) that the HTML and
PDF writers lay out each in their own way. Names are shown, not ids; every run is one of this
document's runs (see provenance)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone

from .. import __version__
from ..model.catalog import KIND_LABELS, NETWORK_FAMILIES
from ..model.names import device_words, ends_words, ring_words
from ..model.systems import power_text
from ..model.topology import Topology
from ..sim.latency_bound import limit_words
from ..sim.ring_bound_note import rings_alone_words
from .provenance import document_ref, ran_on
from .svg import gantt_chart, line_chart, topology_svg


@dataclass
class ReportData:
    """One document and its runs. Runs that record another document (name and content hash) are
    left out and counted in ``left_out``: a report belongs to one topology."""

    topology: Topology
    analysis: dict
    runs: list = field(default_factory=list)        # CollectiveResult
    sweeps: list = field(default_factory=list)      # lists of CollectiveResult
    pipelines: list = field(default_factory=list)   # PipelineResult
    document: dict = field(default_factory=dict)
    left_out: int = 0
    trainings: list = field(default_factory=list)   # TrainResult (sim/training.py)

    def __post_init__(self) -> None:
        self.document = document_ref(self.topology)
        mine = self.document["sha256"]
        for name in ("runs", "sweeps", "pipelines", "trainings"):
            kept = [r for r in getattr(self, name) if (ran_on(r) or {}).get("sha256", mine) == mine]
            self.left_out += len(getattr(self, name)) - len(kept)
            setattr(self, name, kept)


@dataclass
class Heading:
    level: int
    text: str


@dataclass
class Para:
    text: str
    small: bool = False


@dataclass
class Table:
    header: list[str]
    rows: list[list]
    numeric: set[int] = field(default_factory=set)


@dataclass
class Picture:
    name: str
    svg: str


def gbs(x: float) -> str:
    return f"{x / 1e9:,.2f}"


def size_label(v: float) -> str:
    for unit, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if v >= f:
            return f"{v / f:g} {unit}"
    return f"{v:g} B"


def _name(topo: Topology, obj_id: str) -> str:
    return device_words(topo, obj_id)


def _link_name(topo: Topology, link_id: str) -> str:
    lk = topo.links.get(link_id)
    if lk is None:
        return link_id
    return ends_words(topo, lk.a, lk.b, "–")


def bottleneck_rows(topo: Topology, items: list[dict]) -> list[list]:
    return [[", ".join(_link_name(topo, lid) for lid in b["links"]), ends_words(topo, b['from'], b['to']),
             f"{100 * b['utilization']:.1f}%", gbs(b["capacity_per_direction_Bps"]),
             gbs(b.get("link_capacity_per_direction_Bps", b["capacity_per_direction_Bps"]))] for b in items]


def network_per_gpu(topo: Topology, analysis: dict) -> str:
    """The network bandwidth per GPU, or why there is none (NICs present but not cabled)."""
    bw = analysis["network_bw_per_gpu_bidir_Bps"]
    if bw > 0:
        return f"{gbs(bw)} GB/s"
    nics = [d for d in topo.devices.values() if d.kind == "nic"]
    if not nics:
        return "none (no NICs)"
    cabled = sum(1 for d in nics for lk in topo.links_of(d.id)
                 if (lt := topo.link_type_of(lk)) is not None and lt.family in NETWORK_FAMILIES)
    if cabled == 0:
        ports = ", ".join(f"{p['count']} x {p['rate_bps_per_direction'] / 1e9:,.0f} Gb/s"
                          for p in analysis.get("compute_nic_ports_first_system", []))
        return (f"not cabled: {len(nics)} NICs without network links"
                + (f" ({ports} compute ports per system)" if ports else "") + " (add switches or a cluster to use them)")
    return "0.00 GB/s"


def summary(data: ReportData) -> str:
    """One paragraph: what was designed, the headline figures, the bottleneck."""
    topo, a = data.topology, data.analysis
    kinds = Counter(d.kind for d in topo.devices.values())
    systems = sum(1 for g in topo.groups.values() if g.kind == "system")
    gpu_parts = Counter(topo.catalog.part(d.part).label if topo.catalog.part(d.part) else d.part for d in topo.gpus())
    what = ", ".join(f"{n} {label}" for label, n in gpu_parts.most_common()) or "no GPUs"
    counts = [(kinds.get("nvswitch", 0), "NVSwitch", "NVSwitches"), (kinds.get("nic", 0), "NIC", "NICs"),
              (kinds.get("ib_switch", 0) + kinds.get("eth_switch", 0), "network switch", "network switches"),
              (sum(lk.count for lk in topo.links.values()), "physical link", "physical links")]
    listed = [f"{n:,} {one if n == 1 else many}" for n, one, many in counts if n]
    parts = [f"{topo.name} is a design of {what}"
             + (f" in {systems:,} system{'s' if systems != 1 else ''}" if systems else "")
             + (", with " + ", ".join(listed[:-1]) + (" and " if len(listed) > 1 else "") + listed[-1] if listed else "")
             + "."]
    r = a["rings"]
    parts.append(f"Its bisection bandwidth is {gbs(a['bisection']['bidir_Bps'])} GB/s bidirectional"
                 f"{'' if a['bisection']['exact'] else ' (upper bound)'}, and ring all-reduce can reach at most "
                 f"{gbs(r['allreduce_busbw_bound_Bps'])} GB/s bus bandwidth over {_rings_over(r['fabric'], systems, r['count'])} "
                 f"at the catalog's peak link figures.")
    best = max(data.runs, key=lambda run: run.busbw_Bps, default=None)
    if best is not None:
        parts.append(f"The best of {len(data.runs)} simulated run{'s' if len(data.runs) != 1 else ''}, "
                     f"{best.collective} with {best.algorithm} on {len(best.gpus)} GPUs at {size_label(best.size_bytes)}, "
                     f"reached {gbs(best.busbw_Bps)} GB/s bus bandwidth, {100 * best.fraction_of_bound:.0f}% of the "
                     f"topology bound at the link figures it ran with ({'achievable' if best.options.achievable else 'peak'})"
                     + (f", above the ring bound: {best.algorithm} is not a ring and is held only to the topology bound"
                        f" of {gbs(best.bound_busbw_Bps)} GB/s" if best.busbw_Bps > r["allreduce_busbw_bound_Bps"] * (1 + 1e-9)
                        and "ring" not in best.algorithm
                        else "")
                     + ".")
        top = best.sim.bottlenecks(1)
        if limit_words(best.sim) is not None:
            parts.append(f"It was {limit_words(best.sim)}.")
        elif top:
            b = bottleneck_rows(topo, top)[0]
            parts.append(f"Its bottleneck was {b[0]} ({b[1]}), busy {b[2]} of the run.")
    else:
        parts.append("No collective was simulated for this report, so the bottleneck shown is the topology's bound.")
    return " ".join(parts)


def _rings_over(fabric: str, systems: int, count: int) -> str:
    """'3 NVLink rings', '4 rings across systems' (the analysis calls the fabric 'nvlink', 'all', ...);
    a PCIe server's ring (every link, one system) crosses no system."""
    rings = "ring" if count == 1 else "rings"
    across = f"{rings} across systems" if systems > 1 else f"{rings} not on NVLink alone"
    return f"{count} " + {"nvlink": f"NVLink {rings}", "all": across}.get(fabric, f"{rings} over {fabric}")


def protocol_label(result) -> str:
    """NCCL's protocol as nccl-tests users name it (LL, LL128, Simple); '-' for algorithms without one."""
    from ..sim.tuning import PROTOCOL_LABELS

    return PROTOCOL_LABELS.get(result.protocol, result.protocol) if result.protocol else "-"


def channels_label(result) -> str:
    return str(result.channels) if result.channels else "-"


def key_figures(data: ReportData, runs: int = 8) -> Table:
    """The headline numbers on one table: the design's bounds and each run's result and bottleneck."""
    topo, a = data.topology, data.analysis
    rows = [["GPUs", f"{a['gpus']:,}"],
            ["bisection bandwidth (bidirectional)", f"{gbs(a['bisection']['bidir_Bps'])} GB/s"],
            ["ring all-reduce bound (bus bandwidth, peak link figures)", f"{gbs(a['rings']['allreduce_busbw_bound_Bps'])} GB/s"],
            ["network per GPU (bidirectional)", network_per_gpu(topo, a)],
            ["published power", power_text(a["power"]["published_W"], a["power"]["without_published_figure"])]]
    for i, run in enumerate(data.runs[:runs]):
        top = run.sim.bottlenecks(1)
        why = limit_words(run.sim)
        neck = (f"; {why.split(':')[0]}" if why is not None
                else f"; bottleneck {bottleneck_rows(topo, top)[0][0]}" if top else "")
        rows.append([f"simulation {i + 1}: {run.collective} with {run.algorithm}, {size_label(run.size_bytes)}",
                     f"{gbs(run.busbw_Bps)} GB/s bus bandwidth, {100 * run.fraction_of_bound:.0f}% of bound{neck}"])
    if len(data.runs) > runs:
        rows.append([f"… {len(data.runs) - runs} more simulations", "in their sections"])
    for i, sweep in enumerate(data.sweeps[:runs]):
        if not sweep:
            continue
        best = max(sweep, key=lambda r: r.busbw_Bps)
        half = next((r for r in sweep if r.busbw_Bps >= best.busbw_Bps / 2), best)
        rows.append([f"sweep {i + 1}: {sweep[0].collective}, {size_label(sweep[0].size_bytes)} to "
                     f"{size_label(sweep[-1].size_bytes)}",
                     f"best {gbs(best.busbw_Bps)} GB/s bus bandwidth at {size_label(best.size_bytes)}; "
                     f"half of that from {size_label(half.size_bytes)}"])
    for i, p in enumerate(data.pipelines[:runs]):
        rows.append([f"pipeline {i + 1}: {p.spec.schedule}, {p.spec.stages} stages",
                     f"{p.makespan_s * 1e3:.3f} ms an iteration, {100 * p.bubble_fraction:.0f}% bubble"])
    for i, t in enumerate(data.trainings[:runs]):
        rows.append([f"training {i + 1}: {training_grid(t)}",
                     f"{t.iteration_s * 1e3:.3f} ms an iteration, {t.samples_per_s:,.1f} samples/s; "
                     f"critical resource {t.details['critical_resource']}"])
    return Table(["figure", "value"], rows)


def training_grid(t) -> str:
    """A training run's grid as `train` takes it: dp, tp, pp (and ep with its experts), the schedule."""
    d = t.details
    ep = d.get("ep") or 1
    return (f"dp={t.dp} tp={t.tp} pp={t.pp}" + (f" ep={ep}" if ep > 1 else "")
            + (f", {d['experts']} experts (top-{d['top_k']})" if d.get("experts") else "")
            + (f", {d['schedule']} schedule" if d.get("schedule") else ""))


def training_blocks(i: int, t) -> list:
    """One training iteration: its time, its breakdown with each part's bottleneck, the critical resource
    with its reason, the verdicts and how busy each link class was (as the CLI and the Results dock say)."""
    from ..sim.training_words import (breakdown_rows, critical_headline, critical_reason, data_parallel_words,
                                      memory_words, pipeline_words)

    d = t.details
    out: list = [Heading(2, f"Training {i + 1}: {training_grid(t)}, {t.microbatches} micro-batches")]
    out.append(Table(["figure", "value"], [
        ["GPUs", d["gpus_used"]], ["iteration", f"{t.iteration_s * 1e3:.3f} ms"],
        ["samples per second", f"{t.samples_per_s:,.1f}"], ["link figures", d["figures"]],
        ["model", f"{d['parameters'] / 1e9:,.2f} B parameters, {d['precision']} at {100 * d['efficiency']:g}% of the "
                  f"GPU's peak"]]))
    out.append(Table(["part of the iteration", "time", "bottleneck"], [list(row) for row in breakdown_rows(t)], {1}))
    # two sentences: both say "critical resource: X" and the reason often has a colon of its own
    head, why = critical_headline(t), critical_reason(t)
    out.append(Para(f"{head[:1].upper() + head[1:]}. {why[:1].upper() + why[1:]}."))
    given = d.get("verdicts") or {}
    verdicts = [[k, v["limit"], f"{v['offered_ratio']:.2f}x", f"{v['required_ratio']:.2f}x", v["basis"]]
                for k, v in given.items() if isinstance(v, dict)]
    if verdicts:
        out.append(Table(["basis", "limit", "NVLink offers", "tensor traffic needs", "how"], verdicts))
    if given.get("why_they_differ"):   # (rated and achievable disagree: the CLI's and the Results dock's "why")
        out.append(Para(f"Why the rated and achievable verdicts differ: {given['why_they_differ']}.", small=True))
    busy = d.get("busy_fraction") or {}
    if busy:
        out.append(Para("Busy fraction per link class: " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in busy.items())
                        + "."))
    for what, words in (("Pipeline", pipeline_words(t)), ("Data parallel", data_parallel_words(t)),
                        ("Memory", memory_words(t, "split the model over more GPUs or shorten the micro-batch"))):
        if words:
            out.append(Para(f"{what}: {words}.", small=True))
    return out


def build_blocks(data: ReportData) -> list:
    """The body of the report (without title and summary), in order."""
    topo, a = data.topology, data.analysis
    out: list = [Heading(2, "Topology"), Picture("topology", topology_svg(topo))]

    kinds = Counter((d.kind, d.part) for d in topo.devices.values())
    rows = []
    for (kind, part_id), n in sorted(kinds.items()):
        part = topo.catalog.part(part_id)
        rows.append([KIND_LABELS.get(kind, kind), part.label if part else part_id, n])
    out += [Heading(2, "Inventory"), Table(["kind", "part", "count"], rows, {2})]
    links, bw = Counter(), Counter()
    for lk in topo.links.values():
        lt = topo.link_type_of(lk)
        label = lt.label if lt else lk.type
        links[label] += lk.count
        bw[label] += topo.link_bandwidth_per_direction_Bps(lk)
    out.append(Table(["link type", "physical links", "total GB/s per direction"],
                     [[t, n, gbs(bw[t])] for t, n in sorted(links.items())], {1, 2}))

    r, lat = a["rings"], a["latency"]
    out += [Heading(2, "Analysis"), Table(["figure", "value"], [
        ["GPUs", a["gpus"]],
        ["bisection bandwidth (bidirectional)", f"{gbs(a['bisection']['bidir_Bps'])} GB/s"
         f" ({'exact' if a['bisection']['exact'] else 'upper bound'})"],
        ["rings", f"{r['count']} over {r['fabric']} ({r['method']})"],
        ["ring all-reduce bus-bandwidth bound (peak link figures)", f"{gbs(r['allreduce_busbw_bound_Bps'])} GB/s"],
        ["NVLink per GPU (bidirectional)", f"{gbs(a['nvlink_bw_per_gpu_bidir_Bps'])} GB/s"],
        ["NVLink of all GPUs (bidirectional)", f"{gbs(a['aggregate_nvlink_bw_bidir_Bps'])} GB/s"],
        ["PCIe per GPU (bidirectional)", f"{gbs(a['pcie_bw_per_gpu_bidir_Bps'])} GB/s"],
        ["network per GPU (bidirectional)", network_per_gpu(topo, a)],
        ["published power", power_text(a["power"]["published_W"], a["power"]["without_published_figure"]) + "".join(
            f"; {note}" for note in a["power"].get("basis", []))],
        ["worst system-to-system latency", f"{lat['max_system_to_system_s'] * 1e6:.2f} us" if lat["max_system_to_system_s"]
         else "one system"],
    ])]
    if r["rings"]:
        out.append(Table(["ring", "GPU order", "GB/s (bidirectional)"],
                         [[i, ring_words(topo, ring), gbs(r["ring_bidir_Bps"][i])] for i, ring in enumerate(r["rings"][:12])],
                         {2}))

    for i, run in enumerate(data.runs):
        out.append(Heading(2, f"Simulation {i + 1}: {run.collective} with {run.algorithm}"))
        out.append(Table(["parameter", "value"], [
            ["collective", run.collective], ["algorithm", f"{run.algorithm} ({run.reason})"], ["GPUs", len(run.gpus)],
            ["size", f"{run.size_bytes:,.0f} bytes"], ["chunk", f"{run.options.chunk:,.0f} bytes" if run.chunk_used
                                                                   else f"not used: {run.algorithm} pipelines in NCCL's own slices"],
            ["link figures", "achievable" if run.options.achievable else "peak"]]))
        out.append(Table(["result", "value"], [
            ["time", f"{run.time_s * 1e3:.4f} ms"], ["algorithm bandwidth", f"{gbs(run.algbw_Bps)} GB/s"],
            ["bus bandwidth", f"{gbs(run.busbw_Bps)} GB/s"], ["topology bound", f"{gbs(run.bound_busbw_Bps)} GB/s{rings_alone_words(run.rings_alone_Bps)}"],
            ["share of the bound", f"{100 * run.fraction_of_bound:.1f}%"]]))
        if limit_words(run.sim) is not None:
            out += [Heading(3, "Busiest links"), Para(f"The run was {limit_words(run.sim)}.")]
        else:
            out.append(Heading(3, "Bottleneck links"))
        # usable: the link's figure times the protocol's or tree's efficiency (what the run could use)
        out.append(Table(["links", "direction", "busy", "usable GB/s per direction", "link's GB/s per direction"],
                         bottleneck_rows(topo, run.sim.bottlenecks(8)), {2, 3, 4}))
        t = [p[0] * 1e3 for p in run.sim.delivered]
        out.append(Picture(f"delivered{i}", line_chart([("delivered", t, [p[1] / 1e9 for p in run.sim.delivered])],
                                                       "Bytes delivered over time", "simulated time (ms)", "GB")))
    for i, rows in enumerate(data.sweeps):
        first = rows[0]
        out.append(Heading(2, f"Sweep {i + 1}: {first.collective}, {first.requested_algorithm}"))
        out.append(Picture(f"sweep{i}", line_chart(
            [(first.requested_algorithm, [r.size_bytes for r in rows], [r.busbw_Bps / 1e9 for r in rows])],
            "Bus bandwidth vs message size", "message size", "GB/s", log_x=True,
            hline=(f"bound {first.bound_busbw_Bps / 1e9:.1f} GB/s", first.bound_busbw_Bps / 1e9),
            x_format=size_label)))
        out.append(Table(["size (bytes)", "algorithm", "protocol", "channels", "time (us)", "algbw GB/s", "busbw GB/s"],
                         [[f"{r.size_bytes:,.0f}", r.algorithm, protocol_label(r), channels_label(r),
                           f"{r.time_s * 1e6:.2f}", gbs(r.algbw_Bps), gbs(r.busbw_Bps)] for r in rows], {0, 3, 4, 5, 6}))
    for i, p in enumerate(data.pipelines):
        out.append(Heading(2, f"Pipeline {i + 1}: {p.spec.schedule}, {p.spec.stages} stages, "
                              f"{p.spec.microbatches} micro-batches"))
        out.append(Table(["figure", "value"], [["makespan", f"{p.makespan_s * 1e3:.3f} ms"],
                                               ["bubble", f"{100 * p.bubble_fraction:.1f}%"],
                                               ["micro-batches whose activations a stage holds at most", p.peak_inflight]]))
        timeline = [{**e, "device": _name(topo, e["device"])} for e in p.timeline]
        out.append(Picture(f"gantt{i}", gantt_chart(timeline, f"{p.spec.schedule} schedule")))
    for i, t in enumerate(data.trainings):
        out += training_blocks(i, t)

    rows = []
    for t in sorted({lk.type for lk in topo.links.values()}):
        lt = topo.catalog.link_type(t)
        if lt:
            rows.append([lt.label, f"{lt.bandwidth_per_direction_Bps() / 1e9:.3f} GB/s per direction"
                         + (" per lane" if lt.per_lane else ""), f"{lt.latency_s * 1e6:.3f} us",
                         f"{lt.achievable_efficiency:.3f}", lt.source])
    out += [Heading(2, "Assumptions"), Para("Catalog figures used (peak unless a run says achievable):"),
            Table(["link type", "bandwidth", "latency", "achievable efficiency", "source"], rows)]
    prow = []
    for pid in sorted({d.part for d in topo.devices.values()}):
        part = topo.catalog.part(pid)
        if part:
            prow.append([part.label, f"{part.hop_latency_s * 1e6:.3f} us", part.source])
    out.append(Table(["part", "traversal latency", "source"], prow))
    out.append(Para("Flow-level simulation: max-min fair sharing of every link direction, latency paid after "
                    "transmission; reductions free unless a run says otherwise.", small=True))
    return out


def byline(data: ReportData) -> str:
    topo = data.topology
    return (f"DGX Studio {__version__}, hardware catalog {topo.catalog.version}, "
            f"{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; document {data.document['name']} "
            f"(content sha256 {data.document['sha256'][:12]})")


def left_out_note(data: ReportData) -> str | None:
    if not data.left_out:
        return None
    return (f"{data.left_out} run{'s' if data.left_out != 1 else ''} of this session ran on another document or an "
            "earlier version of this one and are not part of this report.")
