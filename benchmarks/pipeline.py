"""Times issue 5's targets on the 124-system fat tree (each under 2 s on the 2-core machine):
- 1F1B, 8 stages (one GPU in each of 8 systems, so every boundary crosses InfiniBand), 64 micro-batches;
- one iteration of dp=124, tp=8 (GPT-3 XL defaults).
Run: python benchmarks/pipeline.py
"""

import time

from dgxstudio.model.presets import load_preset
from dgxstudio.sim.pipeline import PipelineSpec, run_pipeline
from dgxstudio.sim.training import ModelSpec, train_iteration


def main():
    topo = load_preset("dgx1-fat-tree-124")
    model = ModelSpec()
    stage_gpus = [f"s{i:03d}.gpu0" for i in range(1, 9)]
    t0 = time.perf_counter()
    spec = PipelineSpec("1f1b", 8, 64, stage_gpus, [2e-3] * 8, [4e-3] * 8, model.activation_bytes())
    r = run_pipeline(topo, spec)
    dt = time.perf_counter() - t0
    print(f"1F1B 8 stages x 64 micro-batches over IB   {dt * 1e3:8.1f} ms (target 2000)  makespan {r.makespan_s * 1e3:.2f} ms,"
          f" bubble {100 * r.bubble_fraction:.1f}% [{len(r.sim.groups)} groups]")
    t0 = time.perf_counter()
    tr = train_iteration(topo, [d.id for d in topo.gpus()], 124, 8, 1, model)
    dt = time.perf_counter() - t0
    print(f"train iteration dp=124 tp=8                {dt * 1e3:8.1f} ms (target 2000)  iteration {tr.iteration_s * 1e3:.1f} ms,"
          f" {tr.samples_per_s:,.0f} samples/s")


if __name__ == "__main__":
    main()
