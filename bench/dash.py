"""DASH benchmark: Distributed-Shampoo-style per-block loops vs stacked (batched) inverse-root solvers.

    python bench/dash.py            # N ∈ {8, 32, 64} × B ∈ {64, 128} and (N, B) = (8, 256): ≈ 2–3 min, 2-core CPU
    python bench/dash.py --full     # adds (32, 256) and (64, 256): the issue's whole grid, ≈ 5+ min
    python bench/dash.py --quick    # a few seconds: N ∈ {4, 8} × B ∈ {32, 64}

For each block size B the iteration count of each iterative solver is first set to the smallest that reaches
``--target`` relative Frobenius error vs float64 EVD (on 4 blocks, float32, eigenvalues logspace(0, −log₁₀κ));
then, for each stack N × B × B, the solvers are timed side by side in one run (medians of warm repeats):
the DS-style loop (one call per block: CN with Frobenius scaling, and EVD) and the stacked calls (CN, NDB with
multi-vector power-iteration scaling, EVD). Ratios are set against the paper's 8×H100 numbers (4.83× / 5.6×
headline; 4.47× CN-fp32 like-for-like). Writes bench/results/dash.json.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import platform
import sys
import time

import torch

from theorybook.dash_shampoo import reference_root, spd_stack
from theorybook.dash_shampoo.experiment import iterations_to_target, median_time, solve_loop, solve_stacked
from theorybook.dash_shampoo.theory import paper_ratios


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny grid, smoke run of a few seconds")
    ap.add_argument("--full", action="store_true", help="also N ∈ {32, 64} at B = 256 (several minutes)")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats per cell (default 5, 3 for big)")
    ap.add_argument("--target", type=float, default=1e-3, help="relative error target vs float64 EVD")
    ap.add_argument("--kappa", type=float, default=1e4, help="condition number of the test blocks")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 = stable on a shared CPU)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", default=str(pathlib.Path(__file__).parent / "results" / "dash.json"))
    return ap.parse_args(argv)


def calibrate(B: int, target: float, kappa: float, device) -> dict[str, dict]:
    """Smallest iteration count per solver reaching ``target`` on 4 blocks of size B."""
    A = spd_stack(4, B, kappa, seed=1, dtype=torch.float32, device=device)
    ref = reference_root(A, 4)
    out = {}
    for name, method, scaling in (("CN-fro", "cn", "fro"), ("NDB-pim", "ndb", "pim"), ("NDB-fro", "ndb", "fro"),
                                  ("Chebyshev-pim", "chebyshev", "pim"), ("EVD", "evd", "fro")):
        n, err = iterations_to_target(A, ref, method, target, scaling=scaling, max_iters=30)
        out[name] = {"iters": n, "error": err}
    return out


def main(argv=None) -> int:
    args = parse(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    Ns, Bs = ((4, 8), (32, 64)) if args.quick else ((8, 32, 64), (64, 128, 256))
    # Cells above 64·128³ entries·B take minutes each on 2 cores; only --full times them.
    cap = math.inf if (args.full or args.quick) else 64 * 128**3
    t_start = time.perf_counter()
    print(f"DASH bench — torch {torch.__version__}, {device}, {args.threads} thread(s), float32, "
          f"κ = {args.kappa:g}, target error {args.target:g}")
    cal = {B: calibrate(B, args.target, args.kappa, device) for B in Bs}
    print("\nIterations (degree for Chebyshev) to reach the target, per block size:")
    print(f"{'B':>5} " + " ".join(f"{k:>16}" for k in cal[Bs[0]]))
    for B in Bs:
        cells = [f"{c['iters']:>4} ({c['error']:.1e})" if c["iters"] > 0 else f"  no ({c['error']:.1e})"
                 for c in cal[B].values()]
        print(f"{B:>5} " + " ".join(f"{c:>16}" for c in cells))

    rows = []
    header = ("N", "B", "loop CN", "loop EVD", "stk CN", "stk NDB", "stk EVD",
              "CN loop/stk", "EVD loop/stk", "loopCN/stkNDB", "bestDS/bestDASH")
    print("\nms per inverse-root refresh of the whole stack (median of warm repeats):")
    print(" ".join(f"{h:>13}" for h in header))
    for B in Bs:
        n_cn = cal[B]["CN-fro"]["iters"] if cal[B]["CN-fro"]["iters"] > 0 else 30
        n_ndb = cal[B]["NDB-pim"]["iters"] if cal[B]["NDB-pim"]["iters"] > 0 else 30
        cn = dict(method="cn", iters=n_cn, scaling="fro")
        ndb = dict(method="ndb", iters=n_ndb, scaling="pim")
        evd = dict(method="evd", eps=1e-10)
        for N in Ns:
            if N * B**3 > cap:
                continue
            A = spd_stack(N, B, args.kappa, seed=2, dtype=torch.float32, device=device)
            big = N * B**3 > 32 * 128**3
            reps = args.repeats or (3 if big else 5)
            warm = A[:2]
            for kw in (cn, ndb, evd):  # warm the allocator and thread pool at this block size
                solve_stacked(warm, **kw)
                solve_loop(warm, **kw)
            plan = {"loop CN": (solve_loop, cn), "loop EVD": (solve_loop, evd), "stk CN": (solve_stacked, cn),
                    "stk NDB": (solve_stacked, ndb), "stk EVD": (solve_stacked, evd)}
            t = {name: median_time(lambda f=f, kw=kw, A=A: f(A, **kw), reps, warmup=0)
                 for name, (f, kw) in plan.items()}
            ratios = {
                "CN loop/stk": t["loop CN"] / t["stk CN"],
                "EVD loop/stk": t["loop EVD"] / t["stk EVD"],
                "loopCN/stkNDB": t["loop CN"] / t["stk NDB"],
                "bestDS/bestDASH": min(t["loop CN"], t["loop EVD"]) / min(t["stk CN"], t["stk NDB"], t["stk EVD"]),
            }
            ms = {k: 1e3 * v for k, v in t.items()}
            rows.append({"N": N, "B": B, "repeats": reps, "iters_cn": n_cn, "iters_ndb": n_ndb, "ms": ms,
                         "ratios": ratios})
            cells = [f"{N:>13}", f"{B:>13}"] + [f"{ms[k]:>13.1f}" for k in ms] + [f"{r:>12.2f}×" for r in
                                                                                  ratios.values()]
            print(" ".join(cells))
            sys.stdout.flush()

    paper = paper_ratios()
    best = max(rows, key=lambda r: r["ratios"]["CN loop/stk"])
    print("\nPaper (8×H100, B = 1024, full optimizer step) vs this run (inverse roots only):")
    for k, v in paper.items():
        print(f"  paper {k:<42} {v:5.2f}×")
    geo = math.exp(sum(math.log(r["ratios"]["CN loop/stk"]) for r in rows) / len(rows))
    print(f"  here  CN loop/stacked, best cell (N={best['N']}, B={best['B']})    "
          f"{best['ratios']['CN loop/stk']:5.2f}×")
    print(f"  here  CN loop/stacked, geometric mean over cells        {geo:5.2f}×")
    print(f"  here  best DS-style / best stacked, best cell           "
          f"{max(r['ratios']['bestDS/bestDASH'] for r in rows):5.2f}×")
    elapsed = time.perf_counter() - t_start
    print(f"\nwall time {elapsed:.1f} s")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "config": {"quick": args.quick, "target": args.target, "kappa": args.kappa, "threads": args.threads,
                   "device": str(device), "torch": torch.__version__, "machine": platform.machine(),
                   "dtype": "float32"},
        "calibration": {str(B): c for B, c in cal.items()}, "rows": rows, "paper_ratios": paper,
        "wall_s": elapsed}, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
