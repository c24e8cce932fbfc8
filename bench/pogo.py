"""Benchmark: POGO vs QR, Cayley, Landing and geoopt's Riemannian Adam and SGD on batched orthogonal problems.

Two measurements, side by side, ratios taken within one run:

1. **Optimiser-step time** (loss and gradient excluded): median of warm repeats of one step on a fixed gradient,
   methods interleaved round-robin,
   for b matrices of size p × p (Procrustes stacks, float32), b ∈ {100, 1000, 5000}, p ∈ {16, 32, 64}.
2. **Time to gap ≤ 1e-3** (cumulative optimiser-step time, the loss/gradient excluded) on Procrustes stacks and on
   PCA with condition number 1000 (n = 500, p = 300), with each method's peak and final ‖XXᵀ − I‖_F.

Run ``python bench/pogo.py`` (default, a few minutes on a 2-core CPU), ``--quick`` (seconds) or ``--full``;
``--grid 100x16,1000x32`` times any cells, ``--skip-target`` leaves out part 2. Writes ``bench/results/pogo.json``
with the machine (CPU model, cores, load average before and after). Step times are taken at torch's default
thread count and at one thread (``--threads default,1``): on a shared CPU, OpenMP threads waiting for each other
distort batched LAPACK calls far more than products, so both are reported; part 2 runs at the first count. At one
thread the ratios use the calling thread's CPU time (robust to other processes); the wall clock is kept too.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

import torch
from _machine import machine_info  # bench/ is on sys.path when a bench script runs

from theorybook import pogo_orthogonal as po
from theorybook.device import resolve_device

STEP_METHODS = ("pogo", "landing", "qr", "cayley", "radam-geoopt", "rsgd-geoopt")


def _stepper(method: str, X: torch.Tensor, G: torch.Tensor, lr: float):
    """A zero-argument callable doing one optimiser step from a fixed gradient (state kept between calls)."""
    if method == "pogo":
        param = torch.nn.Parameter(X.clone())
        opt = po.POGO([param], lr)

        def step():
            param.grad = G
            opt.step()
        return step
    if method in ("radam-geoopt", "rsgd-geoopt"):
        import geoopt

        param = geoopt.ManifoldParameter(X.mT.contiguous(), manifold=geoopt.EuclideanStiefel())
        opt = (geoopt.optim.RiemannianAdam([param], lr=lr) if method == "radam-geoopt"
               else geoopt.optim.RiemannianSGD([param], lr=lr))
        Gc = G.mT.contiguous()

        def step():
            param.grad = Gc
            opt.step()
        return step
    fn = {"landing": po.landing_step, "qr": po.qr_retraction, "cayley": po.cayley_step}[method]
    state = {"X": X.clone()}

    def step():
        state["X"] = fn(state["X"], G, lr)
    return step


def step_times(b: int, p: int, *, device, warmup: int = 2, budget_s: float = 2.0, min_reps: int = 5,
               max_reps: int = 25) -> tuple[dict[str, float], dict[str, float], str]:
    """Median seconds of one warm optimiser step for every method. Methods are timed round-robin (one step
    each per round) so that load from other processes on a shared machine hits all of them alike; rounds
    continue until ``budget_s`` is spent, within the rep bounds."""
    prob = po.procrustes_problem(b, p, 0, dtype=torch.float32, device=device)
    G = prob.grad(prob.X0)
    lr = 0.1 / prob.lipschitz
    steps = {m: _stepper(m, prob.X0, G, lr) for m in STEP_METHODS}
    sync = torch.cuda.synchronize if prob.X0.is_cuda else (lambda: None)
    for step in steps.values():
        for _ in range(warmup):
            step()
    sync()
    times: dict[str, list[float]] = {m: [] for m in STEP_METHODS}
    cpu: dict[str, list[float]] = {m: [] for m in STEP_METHODS}
    start = time.perf_counter()
    rounds = 0
    while rounds < max_reps and (rounds < min_reps or time.perf_counter() - start < budget_s):
        for m, step in steps.items():
            t0, c0 = time.perf_counter(), time.thread_time()
            step()
            sync()
            times[m].append(time.perf_counter() - t0)
            cpu[m].append(time.thread_time() - c0)
        rounds += 1
    wall_med = {m: statistics.median(v) for m, v in times.items()}
    cpu_med = {m: statistics.median(v) for m, v in cpu.items()}
    # one intra-op thread on the CPU: torch computes on the calling thread, so its CPU time is the step's own cost
    # and is not inflated by other processes on a shared machine; otherwise only the wall clock means anything
    one = torch.get_num_threads() == 1 and not prob.X0.is_cuda
    return (cpu_med if one else wall_med), wall_med, ("thread CPU time" if one else "wall")


def _rsgd_geoopt(problem, lr: float, steps: int, target: float, momentum: float = 0.0) -> dict:
    """geoopt's RiemannianSGD (EuclideanStiefel, QR-free projection + retraction) timed like ``po.run_method``."""
    import geoopt

    X = problem.X0
    flip = X.shape[-2] <= X.shape[-1]  # geoopt stores column-orthonormal matrices
    P = geoopt.ManifoldParameter((X.mT if flip else X).contiguous(), manifold=geoopt.EuclideanStiefel())
    opt = geoopt.optim.RiemannianSGD([P], lr=lr, momentum=momentum)
    sync = torch.cuda.synchronize if X.is_cuda else (lambda: None)
    elapsed, hit, gap = 0.0, None, problem.gap(X)
    peak = final = float(po.infeasibility(X).max())
    ran = 0
    for t in range(1, steps + 1):
        cur = P.detach().mT if flip else P.detach()
        G = problem.grad(cur)
        P.grad = (G.mT if flip else G).contiguous()
        sync()
        t0 = time.perf_counter()
        opt.step()
        sync()
        elapsed += time.perf_counter() - t0
        cur = P.detach().mT if flip else P.detach()
        gap, final, ran = problem.gap(cur), float(po.infeasibility(cur).max()), t
        peak = max(peak, final)
        if gap <= target:
            hit = (t, elapsed)
            break
    return {"steps": hit[0] if hit else None, "seconds": hit[1] if hit else None, "final_gap": gap,
            "peak_infeas": peak, "final_infeas": final, "ran": ran, "diverged": not math.isfinite(gap)}


def to_target(problem, method: str, lr: float, steps: int, target: float, **kw) -> dict:
    if method == "rsgd-geoopt":
        return _rsgd_geoopt(problem, lr, steps, target, **kw)
    tr = po.run_method(problem, method, lr, steps, target=target, **kw)
    s, t = po.time_to_target(tr, target)
    return {"steps": s, "seconds": t, "final_gap": tr.gap[-1], "peak_infeas": tr.max_infeas,
            "final_infeas": tr.infeas[-1], "ran": tr.step[-1], "diverged": tr.diverged}


def fmt_s(x: float | None) -> str:
    return "—" if x is None else (f"{x * 1e3:8.2f} ms" if x < 10 else f"{x:8.1f} s")


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few-second smoke run")
    ap.add_argument("--full", action="store_true", help="the whole grid, including b=5000, p=64 and more targets")
    ap.add_argument("--threads", default="default,1",
                    help="comma-separated torch intra-op thread counts; 'default' = torch's default")
    ap.add_argument("--grid", default=None, help="step-time cells as BxP,BxP,… (overrides the mode's grid)")
    ap.add_argument("--skip-target", action="store_true", help="time steps only (no time-to-target runs)")
    ap.add_argument("--device", default=None, help="cpu or cuda (default: theorybook's default device)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "pogo.json"))
    args = ap.parse_args(argv)
    default_threads = torch.get_num_threads()
    thread_list = list(dict.fromkeys(default_threads if t.strip() == "default" else int(t)
                                     for t in args.threads.split(",")))
    device = resolve_device(args.device)
    machine = machine_info()

    if args.quick:
        grid = [(100, 16)]
        targets = [(100, 16)]  # in the step-time grid, so steps × median is available
        pca_shape, pca_steps, max_steps = (100, 60), 150, 300
    elif args.full:
        grid = [(b, p) for b in (100, 1000, 5000) for p in (16, 32, 64)]
        targets = [(b, p) for b in (100, 1000) for p in (16, 32, 64)]
        pca_shape, pca_steps, max_steps = (500, 300), 300, 400
    else:
        grid = [(b, p) for b in (100, 1000) for p in (16, 32, 64)] + [(5000, 16), (5000, 32)]
        targets = [(100, 32), (1000, 32)]
        pca_shape, pca_steps, max_steps = (500, 300), 200, 300
    if args.grid:
        grid = [tuple(int(v) for v in cell.split("x")) for cell in args.grid.split(",")]

    result: dict = {"machine": machine, "device": str(device), "threads": thread_list, "torch": torch.__version__,
                    "mode": "quick" if args.quick else ("full" if args.full else "default"),
                    "timing": "median of warm repeats, methods interleaved round-robin",
                    "step_time": [], "to_target_procrustes": [], "to_target_pca": {}}
    t_start = time.perf_counter()

    print(f"# POGO benchmark on {device} (threads {thread_list}), float32; medians of interleaved warm repeats")
    print(f"# machine: {machine['cpu']}, {machine['cores']} cores, load average {machine['load_avg_1_5_15_start']}\n")
    print("## Optimiser-step time (gradient fixed, loss/grad excluded); ratio = method ÷ POGO")
    head = f"{'thr':>3} {'b':>5} {'p':>3} | " + " | ".join(f"{m:>21}" for m in STEP_METHODS)
    print(head)
    print("-" * len(head))
    for threads in thread_list:
        torch.set_num_threads(threads)
        for b, p in grid:
            row, row_wall, clock = step_times(b, p, device=device, budget_s=0.5 if args.quick else 2.0)
            base = row["pogo"]
            cells = [f"{fmt_s(row[m])} ({row[m] / base:5.2f}×)" for m in STEP_METHODS]
            print(f"{threads:>3} {b:>5} {p:>3} | " + " | ".join(f"{c:>21}" for c in cells), flush=True)
            result["step_time"].append({"threads": threads, "b": b, "p": p, "clock": clock, "seconds": row,
                                        "seconds_wall": row_wall,
                                        "ratio_to_pogo": {m: row[m] / base for m in STEP_METHODS}})
    result["summary"] = {
        f"threads={t}": {m: [min(r["ratio_to_pogo"][m] for r in result["step_time"] if r["threads"] == t),
                             max(r["ratio_to_pogo"][m] for r in result["step_time"] if r["threads"] == t)]
                         for m in STEP_METHODS}
        for t in thread_list}
    torch.set_num_threads(thread_list[0])
    if args.skip_target:
        targets, pca_shape = [], None

    print("\n## Procrustes: optimiser time to gap ≤ 1e-3 (SGD-type η = 1/L; Adam-type η = 0.5 / 0.3)")
    methods = {"pogo-sgd": None, "pogo-vadam": 0.5, "landing": None, "qr": None, "cayley": None,
               "radam-geoopt": 0.3, "rsgd-geoopt": None}
    print("(time = cumulative in-loop optimiser time of this one run; steps × median = steps × the warm-median step"
          " time above)")
    print(f"{'b':>5} {'p':>3} {'method':>13} | {'steps':>5} | {'time':>11} | {'÷ POGO':>7} | {'steps × median':>14} |"
          f" {'÷ POGO':>7} | {'peak ‖XXᵀ−I‖':>12} | {'final':>8}")
    medians = {(r["b"], r["p"]): r["seconds"] for r in result["step_time"] if r["threads"] == thread_list[0]}
    key = {"pogo-sgd": "pogo", "landing": "landing", "qr": "qr", "cayley": "cayley", "radam-geoopt": "radam-geoopt",
           "rsgd-geoopt": "rsgd-geoopt"}
    for b, p in targets:
        prob = po.procrustes_problem(b, p, 0, dtype=torch.float32, device=device)
        rows = {m: to_target(prob, m, lr if lr else 1.0 / prob.lipschitz, max_steps, 1e-3)
                for m, lr in methods.items()}
        base = rows["pogo-sgd"]["seconds"]
        med = medians.get((b, p), {})
        for m, r in rows.items():
            if r["steps"] is not None and key.get(m) in med:
                r["steps_x_median"] = r["steps"] * med[key[m]]
            ratio = f"{r['seconds'] / base:7.2f}" if r["seconds"] is not None and base else "      —"
            est = r.get("steps_x_median")
            base_est = rows["pogo-sgd"].get("steps_x_median")
            ratio2 = f"{est / base_est:7.2f}" if est and base_est else "      —"
            print(f"{b:>5} {p:>3} {m:>13} | {str(r['steps']):>5} | {fmt_s(r['seconds']):>11} | {ratio} |"
                  f" {fmt_s(est):>14} | {ratio2} | {r['peak_infeas']:12.1e} | {r['final_infeas']:8.1e}", flush=True)
        result["to_target_procrustes"].append({"b": b, "p": p, "runs": rows})

    if pca_shape is not None:
        n, p = pca_shape
        print(f"\n## PCA n={n}, p={p}, κ=1000: optimiser time to gap ≤ 1e-3 (η = 0.25; geoopt η = 0.1)")
        pca = po.pca_problem(n, p, 1000.0, 0, dtype=torch.float32, device=device)
        pca_runs = {"pogo-sgd μ=0.3": ("pogo-sgd", 0.25, {"momentum": 0.3}), "pogo-sgd": ("pogo-sgd", 0.25, {}),
                    "landing": ("landing", 0.25, {}), "qr": ("qr", 0.25, {}), "cayley": ("cayley", 0.25, {}),
                    "radam-geoopt": ("radam-geoopt", 0.1, {}), "rsgd-geoopt": ("rsgd-geoopt", 0.25, {})}
        rows = {k: to_target(pca, m, lr, pca_steps, 1e-3, **kw) for k, (m, lr, kw) in pca_runs.items()}
        base = rows["pogo-sgd μ=0.3"]["seconds"]
        for k, r in rows.items():
            ratio = f"{r['seconds'] / base:7.2f}" if r["seconds"] is not None and base else "      —"
            print(f"{k:>15} | steps {str(r['steps']):>5} | {fmt_s(r['seconds']):>11} | ÷ POGO {ratio} | gap "
                  f"{r['final_gap']:.1e} after {r['ran']} | peak {r['peak_infeas']:.1e} | "
                  f"final {r['final_infeas']:.1e}", flush=True)
        result["to_target_pca"] = {"n": n, "p": p, "runs": rows}
    torch.set_num_threads(default_threads)
    machine["load_avg_1_5_15_end"] = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    result["wall_seconds"] = time.perf_counter() - t_start
    print(f"\nwall time {result['wall_seconds']:.1f} s")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str))
    print(f"wrote {out}")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
