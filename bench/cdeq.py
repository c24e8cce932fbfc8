"""C-DEQ benchmark: one student call vs the classical solvers at the NFE that matches its error, in milliseconds.

    python bench/cdeq.py                 # 20 warm repeats (≈ 1–2 min on a 2-core CPU, training included)
    python bench/cdeq.py --repeats 5     # a shorter run on a loaded machine

One run of the chapter's experiment (seed 0, digits teacher: teacher, student) at one torch thread. On two input
sets — the 397 test images and 4096 inputs tiled from them — it times C-DEQ at NFE 1, 2 and 4 ("refine": jump, then
Picard steps of f), Picard, Anderson and Broyden (theorybook.cdeq.solvers) at the least NFE — counted exactly, every
NFE from 1 — whose mean relative error ‖ẑ − z*‖/‖z*‖ on the test set matches C-DEQ's at NFE 1, and the exact solve
(one LU solve). Methods are interleaved round-robin (one call of each per round, after one warm call each); medians
of the calling thread's CPU time (one thread: torch computes on it, so other processes do not inflate it) and of the
wall clock. Reported: ms, the time ratio to C-DEQ at NFE 1, and the NFE ratio — how much of the NFE saving survives
once a student call, which costs far more arithmetic than one call of this tiny f, is timed. Writes
bench/results/cdeq.json with the machine and its load average.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import time

import torch
from _machine import machine_info  # bench/ is on sys.path when a bench script runs

from theorybook.cdeq import cdeq_infer, nfe_to_match, rel_error, run_experiment, solve


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=20, help="timed warm repeats per method (default 20)")
    ap.add_argument("--tiled", type=int, default=4096, help="size of the tiled input set")
    ap.add_argument("--out", default=str(pathlib.Path(__file__).parent / "results" / "cdeq.json"))
    return ap.parse_args(argv)


def least_nfe(run, method: str, target: float) -> tuple[int, float]:
    """Least NFE (exact: the curves hold every NFE from 1) with mean relative error ≤ target, and that error
    (−1 and the last error if none)."""
    c = run.curves[method]
    n = nfe_to_match(c, target)
    return n, float(c.rel_error[n - 1] if n > 0 else c.rel_error[-1])


def interleaved(plan: dict, reps: int) -> tuple[dict[str, float], dict[str, float]]:
    for fn in plan.values():
        fn()
    wall = {k: [] for k in plan}
    cpu = {k: [] for k in plan}
    for _ in range(reps):
        for k, fn in plan.items():
            t0, c0 = time.perf_counter(), time.thread_time()
            fn()
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.thread_time() - c0)
    return ({k: 1e3 * statistics.median(v) for k, v in wall.items()},
            {k: 1e3 * statistics.median(v) for k, v in cpu.items()})


def main(argv=None) -> int:
    args = parse(argv)
    machine = machine_info()
    torch.set_num_threads(1)
    t_start = time.perf_counter()
    print(f"C-DEQ bench — torch {torch.__version__}, 1 thread, {args.repeats} repeats; machine {machine['cpu']}, "
          f"{machine['cores']} cores, load average {machine['load_avg_1_5_15_start']}")
    run = run_experiment(0)
    teacher, student = run.teacher, run.student
    x_test = run.split.x_test
    with torch.no_grad():
        zs_test = teacher.fixed_point(x_test)
        e1 = float(rel_error(cdeq_infer(student, x_test, 1), zs_test).mean())
        match = {m: least_nfe(run, m, e1) for m in ("picard", "anderson", "broyden")}
    print(f"C-DEQ 1-NFE relative error {e1:.4f}; NFE to match: "
          + ", ".join(f"{m} {n} ({e:.4f})" for m, (n, e) in match.items()))
    reps = x_test.repeat((args.tiled + x_test.shape[0] - 1) // x_test.shape[0], 1)[: args.tiled]
    sets = {"test (397)": x_test, f"tiled ({args.tiled})": reps}
    rows = {}
    for set_name, x in sets.items():
        plan = {f"C-DEQ NFE {n}": (lambda n=n, x=x: cdeq_infer(student, x, n)) for n in (1, 2, 4)}
        for m, (n, _) in match.items():
            if n > 0:
                plan[f"{m} NFE {n}"] = (lambda m=m, n=n, x=x: solve(teacher, x, n, m))
        plan["exact solve"] = lambda x=x: solve(teacher, x, 1, "exact")
        with torch.no_grad():
            wall, cpu = interleaved(plan, args.repeats)
        base = cpu["C-DEQ NFE 1"]
        nfe_of = {k: (int(k.split("NFE ")[1]) if "NFE" in k else None) for k in plan}
        rows[set_name] = {k: {"ms_cpu": cpu[k], "ms_wall": wall[k], "nfe": nfe_of[k],
                              "time_ratio_vs_cdeq1": cpu[k] / base,
                              "nfe_ratio_vs_cdeq1": (nfe_of[k] / 1 if nfe_of[k] else None)} for k in plan}
        print(f"\n{set_name}: ms per call (median thread CPU time; wall in brackets), ratio to C-DEQ NFE 1")
        for k, r in rows[set_name].items():
            nr = f"NFE ratio {r['nfe_ratio_vs_cdeq1']:.0f}×" if r["nfe_ratio_vs_cdeq1"] else ""
            print(f"  {k:<22} {r['ms_cpu']:9.3f} ms  [{r['ms_wall']:8.3f}]   "
                  f"time ratio {r['time_ratio_vs_cdeq1']:7.2f}×"
                  f"   {nr}")
    # one student call in units of one call of f (the same batch): what an NFE of C-DEQ costs
    with torch.no_grad():
        Wt, u = teacher.W_bar().T, teacher.injection(x_test)  # as inside the solvers: u computed once per solve
        f_call = interleaved({"f": lambda: zs_test @ Wt + u,
                              "student": lambda: student(zs_test.float(), 1.0, x_test)}, args.repeats)[1]
    cost = f_call["student"] / f_call["f"]
    print(f"\none student call = {cost:.1f} calls of f (test batch, thread CPU time)")
    machine["load_avg_1_5_15_end"] = [round(v, 2) for v in os.getloadavg()]
    elapsed = time.perf_counter() - t_start
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "machine": machine,
        "config": {"repeats": args.repeats, "threads": 1, "tiled": args.tiled, "seed": 0, **run.config,
                   "timing": "median of interleaved warm repeats; thread CPU time (wall also recorded)"},
        "cdeq_rel_error_nfe1": e1, "nfe_to_match": {m: {"nfe": n, "rel_error": e} for m, (n, e) in match.items()},
        "student_call_in_f_calls": cost, "rows": rows, "wall_s": elapsed}, indent=1))
    print(f"wall time {elapsed:.1f} s; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
