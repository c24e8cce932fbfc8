"""Benchmark: POGO vs QR retraction, Cayley, Landing and geoopt's Riemannian SGD and Adam, across the regime.

The regime is the number of matrices: b ∈ {1, 64, 1024, 4096} stacked 64 × 32 column-orthonormal matrices (the
Stiefel manifold St(64, 32)), each the batched PCA problem f(X) = −½ Σᵢ tr(XᵢᵀAᵢXᵢ) with Aᵢ = Qᵢ diag(λ) Qᵢᵀ (Haar
Qᵢ; the top 32 eigenvalues spread over [1, 2], the other 32 over [0, ½]: an eigengap of ½, so every method converges
in tens of steps), started at Haar-random Xᵢ. The gap is (F − F*)/|F*| with F* = −½ b Σ_{k ≤ 32} λ_k exact.

Measured, per method and b: the optimiser-step time (loss and gradient excluded) until the gap first reaches
``--target`` (default 1e-4), and the steps it took; one intra-op thread, timed by the calling thread's CPU clock
(torch computes on that thread, so other processes on a shared machine do not inflate it; the wall clock is kept
too). Methods are interleaved round-robin (one run of each per round), ``--repeats`` rounds for b ≤ 64 (default
3) and one round for b ≥ 1024 (to keep the run to a few minutes of CPU on 2 shared cores), medians. Steps to target
are deterministic; only the times vary between rounds. Each method's learning rate is the best of
one grid {0.1, 0.3, 1, 3, 10} on a pilot (b = 64, seed 9001, at most 150 steps: fewest steps to the target, final
‖XXᵀ − I‖_F ≤ 1e-3), the same grid, budget and pilot for every method; the chosen rates are recorded (POGO's
feasibility warnings at the grid's large rates are silenced in the pilot).

    python bench/pogo.py            # the regime: ≈ 7 min of CPU (37 min wall on 2 cores shared at load ≈ 10)
    python bench/pogo.py --quick    # seconds: b ∈ {1, 64}, one round
    python bench/pogo.py --device cuda

Writes bench/results/pogo.json with the machine (CPU model, cores, load average before and after).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch
from _machine import machine_info  # bench/ is on sys.path when a bench script runs

from theorybook import pogo_orthogonal as po
from theorybook.device import resolve_device

#: The methods raced (run_method names).
METHODS = ("pogo-sgd", "pogo-vadam", "qr", "cayley", "landing", "rsgd-geoopt", "radam-geoopt")
LR_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)
PILOT_STEPS = 150
N, P = 64, 32
PILOT = (64, 9001)


def stacked_pca(b: int, seed: int, device) -> po.PCA:
    """b PCA problems on St(64, 32) with an eigengap of ½ (see the module docstring), float32."""
    gen = torch.Generator().manual_seed(seed)
    lam = torch.cat([torch.linspace(2.0, 1.0, P, dtype=torch.float64), torch.linspace(0.5, 0.0, N - P,
                                                                                       dtype=torch.float64)])
    Q = po.random_orthonormal(b, N, N, generator=gen, device="cpu", dtype=torch.float64)
    A = (Q * lam) @ Q.mT
    A = 0.5 * (A + A.mT)
    X0 = po.random_orthonormal(b, P, N, generator=gen, device="cpu", dtype=torch.float64).mT.contiguous()
    f_star = -0.5 * b * float(lam[:P].sum())
    return po.PCA(A.to(device, torch.float32), X0.to(device, torch.float32), f_star, lipschitz=float(lam.max()))


def race(problem: po.PCA, method: str, lr: float, steps: int, target: float, clock) -> dict:
    """One run to the target (po.run_method: only the optimiser step is timed, by ``clock``)."""
    tr = po.run_method(problem, method, lr, steps, target=target, clock=clock)
    s, sec = po.time_to_target(tr, target)
    return {"steps": s, "seconds": sec, "final_gap": tr.gap[-1], "final_infeas": tr.infeas[-1],
            "peak_infeas": tr.max_infeas, "diverged": tr.diverged}


def pilot_rates(target: float, device) -> dict[str, dict]:
    """Each method's best rate of LR_GRID on the pilot problem (fewest steps to target, feasible at the end)."""
    prob = stacked_pca(*PILOT, device)
    out = {}
    for m in METHODS:
        tried = {}
        for lr in LR_GRID:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # POGO's guard at the grid's large rates
                tr = po.run_method(prob, m, lr, PILOT_STEPS, target=target)
            s = po.time_to_target(tr, target)[0]
            ok = s is not None and not tr.diverged and tr.infeas[-1] <= 1e-3
            tried[lr] = s if ok else None
        good = {lr: s for lr, s in tried.items() if s is not None}
        best = min(good, key=lambda lr: (good[lr], lr)) if good else max(LR_GRID)
        out[m] = {"lr": best, "pilot_steps": tried}
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="b ∈ {1, 64}, one round")
    ap.add_argument("--sizes", default=None, help="comma-separated b (default 1,64,1024,4096)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved rounds for b ≤ 64 (b ≥ 1024: one)")
    ap.add_argument("--target", type=float, default=1e-4)
    ap.add_argument("--steps", type=int, default=400, help="step cap per run")
    ap.add_argument("--device", default=None, help="cpu or cuda (default: theorybook's default device)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "pogo.json"))
    args = ap.parse_args(argv)
    device = resolve_device(args.device)
    default_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    sizes = (1, 64) if args.quick else (1, 64, 1024, 4096)
    if args.sizes:
        sizes = tuple(int(x) for x in args.sizes.split(","))
    machine = machine_info()
    t_start = time.perf_counter()
    print(f"# POGO regime benchmark on {device}, 1 thread, float32, St({N}, {P}), target gap {args.target:g}")
    print(f"# machine: {machine['cpu']}, {machine['cores']} cores (shared), load average "
          f"{machine['load_avg_1_5_15_start']}")
    rates = pilot_rates(args.target, device)
    print("# pilot rates (b = 64, seed 9001): " + ", ".join(f"{m} {r['lr']:g}" for m, r in rates.items()))
    cpu_clock = device.type == "cpu"
    clock = time.thread_time if cpu_clock else time.perf_counter
    rows = []
    for b in sizes:
        prob = stacked_pca(b, 0, device)
        reps = 1 if (b >= 1024 or args.quick) else args.repeats
        secs: dict[str, list[float]] = {m: [] for m in METHODS}
        info: dict[str, dict] = {}
        for _ in range(reps):
            for m in METHODS:  # interleaved: one run of each per round
                r = race(prob, m, rates[m]["lr"], args.steps, args.target, clock)
                info[m] = r
                if r["seconds"] is not None:
                    secs[m].append(r["seconds"])
        for m in METHODS:
            info[m]["seconds"] = statistics.median(secs[m]) if secs[m] and info[m]["steps"] else None
            info[m]["ms_per_step"] = (1e3 * info[m]["seconds"] / info[m]["steps"]) if info[m]["seconds"] else None
        done = {m: r["seconds"] for m, r in info.items() if r["seconds"] is not None}
        fastest = min(done, key=done.get) if done else None
        rows.append({"b": b, "repeats": reps, "runs": info, "fastest": fastest,
                     "pogo_over_qr": (info["pogo-sgd"]["seconds"] / info["qr"]["seconds"]
                                      if info["pogo-sgd"]["seconds"] and info["qr"]["seconds"] else None)})
        print(f"\nb = {b} ({reps} round{'s' if reps > 1 else ''}); fastest: {fastest}")
        for m, r in info.items():
            sec = "—" if r["seconds"] is None else f"{1e3 * r['seconds']:10.2f} ms"
            print(f"  {m:>13} η={rates[m]['lr']:<5g} steps {str(r['steps']):>4}  {sec:>13}  final ‖XXᵀ−I‖ "
                  f"{r['final_infeas']:.1e}  peak {r['peak_infeas']:.1e}", flush=True)
    torch.set_num_threads(default_threads)
    machine["load_avg_1_5_15_end"] = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    result = {"machine": machine, "device": str(device), "threads": 1, "shared_machine": True,
              "clock": "calling thread's CPU time around each optimiser step" if cpu_clock else "wall",
              "problem": f"batched PCA on St({N}, {P}), eigengap ½, float32", "target_gap": args.target,
              "step_cap": args.steps, "lr_grid": list(LR_GRID), "pilot": {"b": PILOT[0], "seed": PILOT[1]},
              "rates": rates, "regime": rows, "wall_seconds": time.perf_counter() - t_start,
              "timing": "methods interleaved round-robin; median over rounds; loss and gradient excluded"}
    print(f"\nwall time {result['wall_seconds']:.1f} s")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str))
    print(f"wrote {out}")
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
