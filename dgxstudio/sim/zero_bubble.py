"""Zero-bubble pipeline schedules: the per-stage order of F, B and W passes.

Qi, Wan, Huang and Lin, "Zero Bubble (Almost) Pipeline Parallelism" (ICLR 2024, arXiv 2401.10241)
split each backward pass into B (the gradient of the stage's input, which the previous stage waits
for) and W (the gradient of its weights, which nothing waits for), so W can fill the idle time.

- ZB-H1 keeps 1F1B's memory: stage s (from 0) holds at most p - s micro-batches waiting for B and p
  in all (the paper's (p - i + 1) M_B + (i - 1) M_W on device i = s + 1). Bubble (p-1)(T_F + T_B - T_W).
- ZB-H2 trades memory for the warm-up: 2(p - s) - 1 forward passes before the first B on stage s,
  (2p - 2i + 1) M_B + (2i - 2) M_W on device i, peak (2p - 1) M_B. Bubble (p-1)(T_F + T_B - 2 T_W),
  zero when T_F = T_B = T_W.
- ZB-V (section 6 of the arXiv version) cuts the model into 2p chunks placed in a V, stage s holding
  chunks s and 2p - 1 - s, so a micro-batch's forward goes down the stages and back up, and its
  backward the same way. Peak memory p M_B (1F1B's); zero bubble when T_F = T_B = T_W.

The paper's bubble is measured per stage, from the stage's first pass to its last, so the skew of
the parallelogram (the last stage starting (p - 1) T_F after the first) is not counted: it overlaps
the next iteration once the optimizer step does not synchronise the stages (the paper's
post-validation). ``stage_bubble`` measures that; a single iteration's makespan includes the skew.

Orders are planned on the stage times with the transfers between stages free (the paper plans on
profiled times). The engine then runs them with the real transfers.

ZB-H1 and ZB-H2 are the paper's handcrafted orders: the warm-up above, then B, W and F in turn with
each stage's W held back just enough to keep its memory at the cap. ZB-V follows the construction of
the authors' V scheduler (github.com/sail-sg/zero-bubble-pipeline-parallelism, zbv.py, restated
here): a warm-up that fills each stage with first-chunk forwards while its second-chunk forward is
on its way, then rounds of one B and one F per stage in which a W goes into a wait at least as long
as itself or into a wait that would make this stage's bubble the largest, every leftover W at the
end; of a few variants (fill waits before B, before F) the one with the smallest largest bubble.
"""

from __future__ import annotations

from collections import deque

Order = list[tuple[str, int, int]]  # (kind "F"/"B"/"W", model chunk, micro-batch) in the order a stage runs them


class ZeroBubbleError(ValueError):
    """A zero-bubble schedule that cannot be planned; the message says why."""


# In-flight micro-batches a stage may hold in all (F done, W not yet): ZB-H1 1F1B's p, ZB-H2 2p - 1.
def memory_cap(schedule: str, p: int) -> int:
    return {"zb-h1": p, "zb-h2": 2 * p - 1}[schedule]


def warm_up_forwards(schedule: str, p: int, s: int) -> int:
    """Forward passes stage s runs before its first B: 1F1B's p - s, or ZB-H2's 2(p - s) - 1."""
    return p - s if schedule == "zb-h1" else 2 * (p - s) - 1


def paper_bubble(schedule: str, p: int, tf: float, tb: float, tw: float) -> float:
    """The paper's bubble per stage (Table 2; ZB-V in section 6 under T_F = T_B = T_W): the time a stage
    idles between its first pass and its last, stage times T_F, T_B, T_W for a whole stage."""
    if schedule in ("gpipe", "1f1b"):
        return (p - 1) * (tf + tb + tw)
    if schedule == "zb-h1":
        return (p - 1) * (tf + tb - tw)
    if schedule == "zb-h2":
        return max((p - 1) * (tf + tb - 2 * tw), 0.0)
    raise ZeroBubbleError(f"the paper gives no closed form for {schedule!r}")


def warm_up_bound(schedule: str, p: int, m: int, tf: float, tb: float) -> float:
    """Idle time stage 0 cannot avoid before its first B: that B waits for the first micro-batch's
    forward through all p stages and its B back through p - 1 (p T_F + (p - 1) T_B), while stage 0
    may only run its warm-up forwards meanwhile (no W exists yet). Table 2's formulas assume this is
    smaller, which holds when T_W <= T_F (and m >= 2p - 1 for ZB-H2)."""
    return max(p * tf + (p - 1) * tb - min(m, warm_up_forwards(schedule, p, 0)) * tf, 0.0)


def expected_bubble(schedule: str, p: int, m: int, tf: float, tb: float, tw: float) -> float | None:
    """The bubble per stage ZB-H1 and ZB-H2 reach: Table 2's, or the warm-up bound where that is larger
    (T_W > T_F). None with too few micro-batches for the schedule's warm-up (m < p for ZB-H1, m < 2p - 1
    for ZB-H2), where the paper gives no formula."""
    if m < warm_up_forwards(schedule, p, 0):
        return None
    return max(paper_bubble(schedule, p, tf, tb, tw), warm_up_bound(schedule, p, m, tf, tb))


def paper_peak_memory(schedule: str, p: int, s: int) -> tuple[int, int]:
    """(micro-batches waiting for B, micro-batches waiting for W only) on stage s at the paper's peak:
    ZB-H1 (p - s, s), ZB-H2 (2(p - s) - 1, 2s); the total is the memory cap."""
    if schedule == "zb-h1":
        return p - s, s
    if schedule == "zb-h2":
        return 2 * (p - s) - 1, 2 * s
    raise ZeroBubbleError(f"no per-stage memory formula for {schedule!r}")


def handcrafted(schedule: str, p: int, m: int) -> list[Order]:
    """ZB-H1 or ZB-H2 as the paper draws them (Figure 3): stage s runs its warm-up forwards, then
    B, W, F in turn with each W held back by s (ZB-H1) or 2s (ZB-H2) micro-batches, so every stage
    keeps the same number of micro-batches in flight (p, or 2p - 1); the held-back Ws end the stage."""
    orders = []
    for s in range(p):
        defer = s if schedule == "zb-h1" else 2 * s
        nf = min(warm_up_forwards(schedule, p, s), m)
        order: Order = [("F", 0, i) for i in range(nf)]
        nb = nw = 0
        while nb < m:
            order.append(("B", 0, nb))
            nb += 1
            if nb > defer:
                order.append(("W", 0, nw))
                nw += 1
            if nf < m:
                order.append(("F", 0, nf))
                nf += 1
        orders.append(order + [("W", 0, i) for i in range(nw, m)])
    return orders


# ---- ZB-V ---------------------------------------------------------------------------------------
# A pass travels two legs: leg 0 down the stages (0 -> p-1), leg 1 back up (p-1 -> 0). The forward's
# leg 0 is model chunk 0 and leg 1 chunk 1; the backward starts at the model's end, so its leg 0 is
# chunk 1 and its leg 1 chunk 0. W of a chunk follows that chunk's B on the same stage.

_KINDS = ("F", "B", "W")


class _VPlan:
    def __init__(self, p: int, m: int, f: list[float], b: list[float], w: list[float], comm: float,
                 fill_f: bool, fill_b: bool, approved: list[float] | None):
        self.p, self.m, self.comm = p, m, comm
        self.cost = {"F": f, "B": b, "W": w}
        self.cap = 2 * p  # chunk activations held (F done, W not): p micro-batches, 1F1B's memory
        self.fill_f, self.fill_b = fill_f, fill_b
        # ties decide the plan (the authors plan on integer times): compare times with a tolerance
        self.eps = 1e-9 * max(max(f), max(b), max(w), comm)
        self.approved = approved or [-1.0] * p
        self.max_approved = max(self.approved)
        self.count = [{(k, leg): 0 for k in _KINDS for leg in (0, 1)} for _ in range(p)]
        self.end: dict[tuple[str, int, int, int], float] = {}  # (kind, leg, stage, micro) -> end time
        self.cur = [0.0] * p
        self.mem = [0] * p
        self.bubble = [0.0] * p
        self.pending_w: list[deque[int]] = [deque() for _ in range(p)]  # legs of B done, W not
        self.order: list[list[tuple[str, int, int]]] = [[] for _ in range(p)]  # (kind, leg, micro)

    def max_bubble(self, stage: int = -1) -> float:
        out = max(self.bubble)
        if stage >= 0:
            out = max(out, self.max_approved - self.approved[stage])
        return out

    def dep(self, kind: str, leg: int, s: int, i: int) -> tuple[str, int, int, int] | None:
        """The pass on another stage this one waits for (None: only passes on its own stage)."""
        if kind == "W":
            return None
        if leg == 0:
            return (kind, 0, s - 1, i) if s > 0 else None
        return (kind, 1, s + 1, i) if s < self.p - 1 else None

    def put(self, kind: str, leg: int, s: int) -> None:
        i = self.count[s][(kind, leg)]
        if i >= self.m:
            raise ZeroBubbleError("ZB-V planned more passes than micro-batches")
        if kind == "F" and self.mem[s] + 1 > self.cap:
            raise ZeroBubbleError("ZB-V exceeded its activation memory")
        # passes on the same stage that must come first (their time is already in cur)
        local = {("F", 1): ("F", 0), ("B", 1): ("B", 0), ("W", 0): ("B", 0), ("W", 1): ("B", 1)}.get((kind, leg))
        if kind == "B" and leg == 0 and s == 0:
            local = ("F", 1)
        if kind == "F" and leg == 1 and s == self.p - 1:
            local = ("F", 0)
        if local and (local[0], local[1], s, i) not in self.end:
            raise ZeroBubbleError(f"ZB-V order broke a dependency on stage {s}")
        no_wait = self.cur[s] + self.cost[kind][s]
        t = no_wait
        d = self.dep(kind, leg, s, i)
        if d is not None:
            if d not in self.end:
                raise ZeroBubbleError(f"ZB-V order broke a dependency on stage {s}")
            t = max(t, self.end[d] + self.comm + self.cost[kind][s])
        if self.count[s][("F", 0)] > 0 and t - no_wait > self.eps:
            self.bubble[s] += t - no_wait
        self.end[(kind, leg, s, i)] = t
        self.cur[s] = t
        self.mem[s] += {"F": 1, "B": 0, "W": -1}[kind]
        self.order[s].append((kind, leg, i))
        if kind == "B":
            self.pending_w[s].append(leg)
        self.count[s][(kind, leg)] += 1

    def put_w(self, s: int) -> None:
        self.put("W", self.pending_w[s].popleft(), s)

    def fill(self, s: int, d: tuple[str, int, int, int] | None, allow: bool) -> None:
        """Before a pass that waits for ``d``: W into a wait at least as long as W, and one more W if
        this stage's bubble would otherwise become the largest (the authors' balancing rule)."""
        if d is None or d not in self.end:
            return
        ready = self.end[d] + self.comm
        while self.pending_w[s] and ready >= self.cur[s] + self.cost["W"][s] - self.eps:
            self.put_w(s)
        if allow and self.pending_w[s] and ready - self.cur[s] > self.max_bubble(s) - self.bubble[s] + self.eps:
            self.put_w(s)

    def run(self) -> None:
        p, m = self.p, self.m
        c = self.count
        # Warm-up: chunk 0's first forward on every stage, then, from the last stage back, first-chunk
        # forwards on the stages above while the second-chunk forward travels back to this stage.
        for s in range(p):
            self.put("F", 0, s)
        for s in range(p - 1, -1, -1):
            if s < p - 1:
                arrive = self.end[("F", 1, s + 1, 0)] + self.comm
                while (self.mem[s] + 2 + 2 * s <= self.cap and self.cur[s] + self.cost["F"][s] <= arrive + self.eps
                       and c[s][("F", 0)] < m):
                    for j in range(s + 1):
                        self.put("F", 0, j)
            self.put("F", 1, s)
        leg = 0
        for s in range(1, p):
            while (c[s][("F", 0)] + c[s][("F", 1)] < c[s - 1][("F", 0)] + c[s - 1][("F", 1)]
                   or c[s][("F", 1)] <= c[s - 1][("F", 1)] < m):
                for j in range(p - 1, s - 1, -1):
                    if c[j][("F", leg)] < m:
                        self.put("F", leg, j)
                leg = 1 - leg
        # Steady state: each round, one B then one F per stage.
        for _ in range(2 * m):
            firsts, seconds = [], []
            for s in range(p):
                if c[s][("B", 1)] >= c[s][("B", 0)]:
                    firsts.append(s)
                elif s == p - 1:
                    seconds.append(s)
                elif (("B", 1, s + 1, c[s][("B", 1)]) in self.end) or c[s][("B", 0)] >= m:
                    seconds.append(s)
                else:
                    firsts.append(s)
            for s, bleg in [(s, 1) for s in reversed(seconds)] + [(s, 0) for s in firsts]:
                if c[s][("B", bleg)] >= m:
                    continue
                self.fill(s, self.dep("B", bleg, s, c[s][("B", bleg)]), bleg == 1 or self.fill_b)
                self.put("B", bleg, s)
            for s in range(p):
                if c[s][("F", 1)] >= m:
                    continue
                item = None
                if c[s][("F", 1)] >= c[s][("F", 0)]:
                    item = 0
                elif s == p - 1:
                    item = 1
                elif ("F", 1, s + 1, c[s][("F", 1)]) in self.end:
                    item = 1
                elif c[s][("F", 0)] < m and (s == 0 or ("F", 0, s - 1, c[s][("F", 0)]) in self.end):
                    item = 0
                if item is None:
                    continue
                while self.mem[s] + 1 > self.cap:
                    if not self.pending_w[s]:
                        raise ZeroBubbleError("ZB-V ran out of activation memory")
                    self.put_w(s)
                self.fill(s, self.dep("F", item, s, c[s][("F", item)]), self.fill_f)
                self.put("F", item, s)
        for s in range(p):
            while self.pending_w[s]:
                self.put_w(s)
        if any(len(o) != 6 * m for o in self.order):
            raise ZeroBubbleError("ZB-V could not place every pass")


def _v_attempt(p, m, f, b, w, comm, fill_f, fill_b, approved=None) -> _VPlan:
    plan = _VPlan(p, m, f, b, w, comm, fill_f, fill_b, approved)
    plan.run()
    worst = plan.max_bubble()
    # The authors iterate: plan again accepting each stage's bubble of this plan, keep what improves.
    if approved is None or worst < max(approved) - plan.eps:
        again = _v_attempt(p, m, f, b, w, comm, fill_f, fill_b, list(plan.bubble))
        if again.max_bubble() < worst - plan.eps:
            return again
    return plan


def v_shape(p: int, m: int, f: list[float], b: list[float], w: list[float], comm: float = 0.0) -> list[Order]:
    """ZB-V's per-stage orders; ``f``, ``b``, ``w`` are per-stage times of one chunk's pass."""
    best = None
    errors = []
    for fill_b in (True, False):
        for fill_f in (True, False):
            try:
                plan = _v_attempt(p, m, f, b, w, comm, fill_f, fill_b)
            except ZeroBubbleError as exc:
                errors.append(str(exc))
                continue
            if best is None or plan.max_bubble() < best.max_bubble() - plan.eps:
                best = plan
    if best is None:
        raise ZeroBubbleError(errors[0] if errors else "ZB-V could not be planned")
    # model chunk of each pass: forward legs are chunks 0, 1; backward (and W) legs are chunks 1, 0
    return [[(kind, leg if kind == "F" else 1 - leg, i) for kind, leg, i in order] for order in best.order]


def stage_bubble(timeline: list[dict], stages: int) -> list[float]:
    """Per stage, the idle time between its first pass's start and its last pass's end (the paper's
    measure: the parallelogram's skew between stages is not idle time of any stage)."""
    out = []
    for s in range(stages):
        ev = [e for e in timeline if e["stage"] == s]
        if not ev:
            out.append(0.0)
            continue
        span = max(e["end_s"] for e in ev) - min(e["start_s"] for e in ev)
        out.append(max(span - sum(e["end_s"] - e["start_s"] for e in ev), 0.0))
    return out
