"""DASH benchmark: Distributed-Shampoo-style per-block loops vs stacked (batched) inverse-root solvers.

    python bench/dash.py            # the whole grid N ∈ {8, 32, 64} × B ∈ {64, 128, 256}: ≈ 5–8 min, 2-core CPU
    python bench/dash.py --full     # the same (kept for old command lines)
    python bench/dash.py --quick    # a few seconds: N ∈ {4, 8} × B ∈ {32, 64}
    python bench/dash.py --blocks 8,32 --sizes 64,128   # any sub-grid (e.g. a short run on a loaded machine)
    python bench/dash.py --peer-only                    # only the optimizer-step comparison with the PyPI peer

Every cell is timed at torch's default thread count and at one thread (``--threads``), methods interleaved
round-robin (one call of each per round, after one warm call each), medians over the rounds. At one thread the
ratios use the calling thread's CPU time (torch computes on that thread, so other processes on a shared machine
do not inflate it); the wall clock is recorded too. The JSON records the machine (CPU model, cores, load average
before and after) so that a reader can judge the numbers.

For each block size B the iteration count of each iterative solver is first set to the smallest that reaches
``--target`` relative Frobenius error vs float64 EVD (on 4 blocks, float32, eigenvalues logspace(0, −log₁₀κ));
then, for each stack N × B × B, the solvers are timed side by side in one run (medians of warm repeats):
the per-block loop (one call per block, Distributed Shampoo's layout: CN with Frobenius scaling, NDB and
Chebyshev with multi-vector power-iteration scaling, EVD) and the same four solvers stacked (one call per
stack). Ratios are set against the paper's 8×H100 numbers (4.83× / 5.6×
headline; 4.47× CN-fp32 like-for-like).

Peer, side by side (``peer`` in the JSON): the per-step time (forward, backward, optimizer step) of an MLP
(3 layers of 256×256, batch 128) under our ``Shampoo`` (stacked and per-block loop, NDB and EVD roots) and under
``pytorch_optimizer.ScalableShampoo`` (a PyPI Shampoo that installs without CUDA; the ``bench`` extra) at the same
block size 64 and root frequency, plus ``torch.optim.Adam`` as the floor; default threads and one thread,
interleaved, medians. The peer grafts SGD and we graft Adam, so the step's arithmetic is not identical: the
comparison is of cost at equal block size and root frequency, not of the training curve. Skipped with a message
when the peer is not installed. Writes bench/results/dash.json.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import math
import os
import pathlib
import sys
import time

import torch
from _machine import interleaved_medians, machine_info  # bench/ is on sys.path when a bench script runs

from theorybook.dash_shampoo import reference_root, spd_stack
from theorybook.dash_shampoo.experiment import iterations_to_target, solve_loop, solve_stacked
from theorybook.dash_shampoo.theory import paper_ratios


def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny grid, smoke run of a few seconds")
    ap.add_argument("--full", action="store_true", help="the whole grid (the default; kept for old command lines)")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats per cell (default 5, 3 for big)")
    ap.add_argument("--target", type=float, default=1e-3, help="relative error target vs float64 EVD")
    ap.add_argument("--kappa", type=float, default=1e4, help="condition number of the test blocks")
    ap.add_argument("--threads", default="default,1",
                    help="comma-separated torch thread counts to time; 'default' = torch's default")
    ap.add_argument("--blocks", default=None, help="comma-separated N (blocks per stack), overrides the grid")
    ap.add_argument("--sizes", default=None, help="comma-separated B (block sizes), overrides the grid")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--peer-only", action="store_true", help="only the optimizer-step comparison with the PyPI peer")
    ap.add_argument("--peer-steps", type=int, default=None, help="timed steps per optimizer and thread count")
    ap.add_argument("--defaults-only", action="store_true",
                    help="only the defaults-vs-defaults race to a target loss (and the grid that picks our defaults)")
    ap.add_argument("--race-repeats", type=int, default=3, help="interleaved repeats of each run of the race")
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


LOSS_STEPS = 50  # the loss each optimizer reaches on the peer MLP (same data, same initialisation)


def peer_compare(thread_list: list[int], freqs=(1, 10), repeats: int = 5, steps: int = 10,
                 device: str | torch.device = "cpu") -> dict:
    """Per-step ms of our Shampoo vs ``pytorch_optimizer.ScalableShampoo`` and ``pytorch_optimizer.DASH`` (and Adam)
    on one MLP, interleaved, and the training loss each reaches after :data:`LOSS_STEPS` steps."""
    try:
        import pytorch_optimizer
    except ImportError:
        print("pytorch-optimizer not installed (pip install -e '.[bench]'): the PyPI Shampoo peer is skipped")
        return {"skipped": "pytorch-optimizer not installed"}
    from theorybook.dash_shampoo import Shampoo

    device = torch.device(device)
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(128, 256, generator=gen).to(device)
    Y = torch.randn(128, 256, generator=gen).to(device)

    def model():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.Tanh(), torch.nn.Linear(256, 256),
                                   torch.nn.Tanh(), torch.nn.Linear(256, 256)).to(device)

    def _loss_after(make_opt, n: int) -> float:
        net = model()
        opt = make_opt(net.parameters())
        for _ in range(n):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(net(X), Y)
            loss.backward()
            opt.step()
        with torch.no_grad():
            return float(torch.nn.functional.mse_loss(net(X), Y))

    def makers(f: int) -> dict:
        return {
            "ours stacked NDB": lambda p: Shampoo(p, lr=1e-3, block_size=64, inv_root_freq=f, method="ndb", iters=10),
            "pytorch_optimizer ScalableShampoo": lambda p: pytorch_optimizer.ScalableShampoo(
                p, lr=1e-3, block_size=64, preconditioning_compute_steps=f, start_preconditioning_step=1,
                statistics_compute_steps=1),
            "pytorch_optimizer DASH": lambda p: pytorch_optimizer.DASH(
                p, lr=1e-3, block_size=64, precondition_frequency=f, start_preconditioning_step=1,
                inverse_root_method="newton_db", newton_steps=10),
            "torch.optim.Adam": lambda p: torch.optim.Adam(p, lr=1e-3),
        }

    def runner(make_opt):
        net = model()
        opt = make_opt(net.parameters())

        def run():
            for _ in range(steps):
                opt.zero_grad(set_to_none=True)
                loss = torch.nn.functional.mse_loss(net(X), Y)
                loss.backward()
                opt.step()
            return loss.item()

        run()  # past the first step (statistics allocated, first roots)
        return run

    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    out = {"model": "MLP 3 × Linear(256, 256), batch 128, MSE", "block_size": 64, "steps_per_call": steps,
           "peer": f"pytorch_optimizer {importlib.metadata.version('pytorch-optimizer')} ScalableShampoo and DASH",
           "rows": []}
    default_threads = torch.get_num_threads()
    for threads in thread_list:
        torch.set_num_threads(threads)
        for f in freqs:
            plan = {
                "ours stacked NDB": runner(lambda p, f=f: Shampoo(p, lr=1e-3, block_size=64, inv_root_freq=f,
                                                                  method="ndb", iters=10)),
                "ours stacked EVD": runner(lambda p, f=f: Shampoo(p, lr=1e-3, block_size=64, inv_root_freq=f,
                                                                  method="evd")),
                "ours per-block loop NDB": runner(lambda p, f=f: Shampoo(p, lr=1e-3, block_size=64, inv_root_freq=f,
                                                                         method="ndb", iters=10, stacked=False)),
                "pytorch_optimizer ScalableShampoo": runner(lambda p, f=f: pytorch_optimizer.ScalableShampoo(
                    p, lr=1e-3, block_size=64, preconditioning_compute_steps=f, start_preconditioning_step=1,
                    statistics_compute_steps=1)),
                "pytorch_optimizer DASH": runner(lambda p, f=f: pytorch_optimizer.DASH(
                    p, lr=1e-3, block_size=64, precondition_frequency=f, start_preconditioning_step=1,
                    inverse_root_method="newton_db", newton_steps=10)),
                "torch.optim.Adam": runner(lambda p: torch.optim.Adam(p, lr=1e-3)),
            }
            wall, cpu = interleaved_medians(plan, repeats, sync)
            t = cpu if threads == 1 and device.type == "cpu" else wall
            ms = {k: 1e3 * v / steps for k, v in t.items()}
            peer = ms["pytorch_optimizer ScalableShampoo"]
            losses = {k: _loss_after(make, LOSS_STEPS) for k, make in makers(f).items()} if threads == thread_list[0] \
                else None
            row = {"threads": threads, "inv_root_freq": f, "ms_per_step": ms,
                   "loss_after_steps": losses, "loss_steps": LOSS_STEPS,
                   "clock": "thread CPU time" if t is cpu else "wall",
                   "peer_over_ours_stacked_ndb": peer / ms["ours stacked NDB"],
                   "peer_over_ours_stacked_evd": peer / ms["ours stacked EVD"],
                   "pypi_dash_over_ours_stacked_ndb": ms["pytorch_optimizer DASH"] / ms["ours stacked NDB"]}
            out["rows"].append(row)
            print(f"threads {threads}, roots every {f:>2} steps: " + ", ".join(f"{k} {v:.2f} ms" for k, v in ms.items())
                  + f"  → peer/ours(NDB) {row['peer_over_ours_stacked_ndb']:.2f}×")
            sys.stdout.flush()
    torch.set_num_threads(default_threads)
    return out


#: The race: training loss ≤ RACE_TARGET on the peer MLP, at most RACE_MAX_STEPS steps, one thread.
RACE_TARGET, RACE_MAX_STEPS = 1e-2, 600
#: The grid that chooses our defaults (root method × root frequency × block size); the chosen cell is the default.
#: (A first pass over evd/ndb × {1, 5, 10, 20} × {64, 256}, one round, picked evd every 10 steps at B = 64; the
#: committed run keeps the cells around it and the paper's ndb-every-step setting.)
RACE_GRID = [("evd", 1, 64), ("evd", 5, 64), ("evd", 20, 64), ("evd", 10, 256), ("ndb", 1, 64), ("ndb", 10, 64)]


def race_to_target(repeats: int = 3, target: float = RACE_TARGET, max_steps: int = RACE_MAX_STEPS,
                   problems: tuple[str, ...] = ("mlp-random", "mlp-teacher")) -> dict:
    """Time to a target training loss at *defaults*: our ``Shampoo()`` (whatever its defaults are now), the grid
    :data:`RACE_GRID` of our root method, frequency and block size (lr and betas at their defaults), and the PyPI
    peers at theirs (``pytorch_optimizer.DASH``, ``pytorch_optimizer.ScalableShampoo``, ``torch.optim.Adam``, each
    with only ``params``). One thread; the calling thread's CPU time of the whole loop (forward, backward, step) until
    the step whose loss is ≤ ``target``; runs interleaved round-robin, ``repeats`` times, medians. Steps to target
    are deterministic (same data, same initialisation). Two problems: the peer MLP on random targets
    (``mlp-random``, the per-step comparison's problem) and the same MLP fitting a random teacher MLP of the same
    shape (``mlp-teacher``)."""
    import statistics

    from theorybook.dash_shampoo import Shampoo
    from theorybook.dash_shampoo.optimizer import DEFAULTS, PAPER_SETTINGS

    try:
        import pytorch_optimizer
    except ImportError:
        print("pytorch-optimizer not installed (pip install -e '.[bench]'): the race is skipped")
        return {"skipped": "pytorch-optimizer not installed"}
    torch.set_num_threads(1)

    def mlp(seed: int):
        torch.manual_seed(seed)
        return torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.Tanh(), torch.nn.Linear(256, 256),
                                   torch.nn.Tanh(), torch.nn.Linear(256, 256))

    data = {}
    gen = torch.Generator().manual_seed(0)
    data["mlp-random"] = (torch.randn(128, 256, generator=gen), torch.randn(128, 256, generator=gen))
    X = torch.randn(512, 256, generator=gen)
    with torch.no_grad():
        teacher = mlp(99)
        Y = teacher(X)
        Y = Y / Y.std()
    data["mlp-teacher"] = (X, Y)

    makers = {"ours at defaults": lambda p: Shampoo(p),
              "ours at the paper's settings (ndb every step, B 1024)": lambda p: Shampoo(p, **PAPER_SETTINGS["ndb"]),
              "pytorch_optimizer.DASH at defaults": lambda p: pytorch_optimizer.DASH(p),
              "pytorch_optimizer.ScalableShampoo at defaults": lambda p: pytorch_optimizer.ScalableShampoo(p),
              "torch.optim.Adam at defaults": lambda p: torch.optim.Adam(p)}
    for m, f, b in RACE_GRID:
        makers[f"ours {m} freq {f} B {b}"] = lambda p, m=m, f=f, b=b: Shampoo(p, method=m, inv_root_freq=f,
                                                                               block_size=b)

    def run(name: str, problem: str) -> tuple[int | None, float, float]:
        Xd, Yd = data[problem]
        net = mlp(0)
        opt = makers[name](net.parameters())
        c0 = time.thread_time()
        loss = math.inf
        for t in range(1, max_steps + 1):
            opt.zero_grad(set_to_none=True)
            loss_t = torch.nn.functional.mse_loss(net(Xd), Yd)
            loss_t.backward()
            loss = float(loss_t.detach())
            if loss <= target:
                return t, time.thread_time() - c0, loss
            opt.step()
        return None, time.thread_time() - c0, loss

    out = {"target_loss": target, "max_steps": max_steps, "threads": 1, "repeats": repeats,
           "clock": "calling thread's CPU time of the whole loop (forward, backward, step)",
           "our_defaults": {k: (str(v) if isinstance(v, torch.dtype) else v) for k, v in DEFAULTS.items()},
           "peer": f"pytorch_optimizer {importlib.metadata.version('pytorch-optimizer')}", "problems": {}}
    for problem in problems:
        times: dict[str, list[float]] = {k: [] for k in makers}
        steps: dict[str, int | None] = {}
        final: dict[str, float] = {}
        for _ in range(repeats):
            for name in makers:  # interleaved: one run of each per round
                s, sec, loss = run(name, problem)
                steps[name], final[name] = s, loss
                times[name].append(sec)
        rows = {k: {"steps": steps[k], "seconds": statistics.median(v) if steps[k] else None,
                    "final_loss": final[k]} for k, v in times.items()}
        out["problems"][problem] = rows
        print(f"\n{problem}: time to training loss ≤ {target:g} (1 thread, median of {repeats} interleaved runs)")
        for k, r in rows.items():
            sec = (f"{r['seconds']:.3f} s" if r["seconds"]
                   else f"not reached in {max_steps} (loss {r['final_loss']:.3g})")
            print(f"  {k:<54} steps {str(r['steps']):>5}  {sec}")
        sys.stdout.flush()
    return out


def main(argv=None) -> int:
    args = parse(argv)
    default_threads = torch.get_num_threads()
    thread_list = [default_threads if t.strip() == "default" else int(t) for t in args.threads.split(",")]
    thread_list = list(dict.fromkeys(thread_list))
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    if args.defaults_only:
        out = pathlib.Path(args.out)
        prev = json.loads(out.read_text()) if out.exists() else {}
        machine = machine_info()
        prev["race"] = race_to_target(repeats=args.race_repeats)
        machine["load_avg_1_5_15_end"] = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
        prev["race_machine"] = machine
        out.write_text(json.dumps(prev, indent=1))
        print(f"wrote {out} (race section)")
        return 0
    if args.peer_only:
        out = pathlib.Path(args.out)
        prev = json.loads(out.read_text()) if out.exists() else {}
        prev["peer"] = peer_compare(thread_list, repeats=args.repeats or 5, steps=args.peer_steps or 10,
                                    device=device)
        prev["peer_machine"] = machine_info()
        out.write_text(json.dumps(prev, indent=1))
        print(f"wrote {out} (peer section)")
        return 0
    Ns, Bs = ((4, 8), (32, 64)) if args.quick else ((8, 32, 64), (64, 128, 256))
    if args.blocks:
        Ns = tuple(int(x) for x in args.blocks.split(","))
    if args.sizes:
        Bs = tuple(int(x) for x in args.sizes.split(","))
    # The whole grid by default: a shorter run trims the sizes (--sizes), never cells of a size.
    cap = math.inf
    machine = machine_info()
    t_start = time.perf_counter()
    print(f"DASH bench — torch {torch.__version__}, {device}, threads {thread_list}, float32, "
          f"κ = {args.kappa:g}, target error {args.target:g}\nmachine: {machine['cpu']}, {machine['cores']} cores, "
          f"load average {machine['load_avg_1_5_15_start']}")
    cal = {B: calibrate(B, args.target, args.kappa, device) for B in Bs}
    print("\nIterations (degree for Chebyshev) to reach the target, per block size:")
    print(f"{'B':>5} " + " ".join(f"{k:>16}" for k in cal[Bs[0]]))
    for B in Bs:
        cells = [f"{c['iters']:>4} ({c['error']:.1e})" if c["iters"] > 0 else f"  no ({c['error']:.1e})"
                 for c in cal[B].values()]
        print(f"{B:>5} " + " ".join(f"{c:>16}" for c in cells))

    rows = []
    header = ("thr", "N", "B", "loop CN", "loop NDB", "loop Cheb", "loop EVD", "stk CN", "stk NDB", "stk Cheb",
              "stk EVD", "CN loop/stk", "NDB loop/stk", "Cheb loop/stk", "EVD loop/stk", "bestDS/bestDASH")
    print("\nms per inverse-root refresh of the whole stack (median of interleaved warm repeats):")
    print(" ".join(f"{h:>12}" for h in header))
    for threads in thread_list:
        torch.set_num_threads(threads)
        for B in Bs:
            n_cn = cal[B]["CN-fro"]["iters"] if cal[B]["CN-fro"]["iters"] > 0 else 30
            n_ndb = cal[B]["NDB-pim"]["iters"] if cal[B]["NDB-pim"]["iters"] > 0 else 30
            cn = dict(method="cn", iters=n_cn, scaling="fro")
            ndb = dict(method="ndb", iters=n_ndb, scaling="pim")
            n_ch = cal[B]["Chebyshev-pim"]["iters"] if cal[B]["Chebyshev-pim"]["iters"] > 0 else 60
            cheb = dict(method="chebyshev", degree=n_ch, scaling="pim")
            evd = dict(method="evd", eps=1e-10)
            for N in Ns:
                if N * B**3 > cap:
                    continue
                A = spd_stack(N, B, args.kappa, seed=2, dtype=torch.float32, device=device)
                big = N * B**3 > 32 * 128**3
                reps = args.repeats or (3 if big else 5)
                plan = {"loop CN": (solve_loop, cn), "loop NDB": (solve_loop, ndb), "loop Cheb": (solve_loop, cheb),
                        "loop EVD": (solve_loop, evd), "stk CN": (solve_stacked, cn), "stk NDB": (solve_stacked, ndb),
                        "stk Cheb": (solve_stacked, cheb), "stk EVD": (solve_stacked, evd)}
                t_wall, t_cpu = interleaved_medians(
                    {k: (lambda f=f, kw=kw, A=A: f(A, **kw)) for k, (f, kw) in plan.items()}, reps, sync)
                # one thread: the calling thread's CPU time (robust to a loaded machine); else the wall clock
                t = t_cpu if threads == 1 and device.type == "cpu" else t_wall
                ratios = {
                    "CN loop/stk": t["loop CN"] / t["stk CN"],
                    "NDB loop/stk": t["loop NDB"] / t["stk NDB"],
                    "Cheb loop/stk": t["loop Cheb"] / t["stk Cheb"],
                    "EVD loop/stk": t["loop EVD"] / t["stk EVD"],
                    "bestDS/bestDASH": min(t["loop CN"], t["loop EVD"]) / min(t["stk CN"], t["stk NDB"],
                                                                              t["stk Cheb"], t["stk EVD"]),
                }
                ms = {k: 1e3 * v for k, v in t.items()}
                rows.append({"threads": threads, "N": N, "B": B, "repeats": reps, "iters_cn": n_cn,
                             "iters_ndb": n_ndb, "degree_chebyshev": n_ch,
                             "clock": "thread CPU time" if t is t_cpu else "wall",
                             "ms": ms, "ms_wall": {k: 1e3 * v for k, v in t_wall.items()}, "ratios": ratios})
                cells = [f"{threads:>12}", f"{N:>12}", f"{B:>12}"] + [f"{ms[k]:>12.1f}" for k in ms] + [
                    f"{r:>11.2f}×" for r in ratios.values()]
                print(" ".join(cells))
                sys.stdout.flush()
    torch.set_num_threads(default_threads)

    paper = paper_ratios()
    print("\nPaper (8×H100, B = 1024, full optimizer step) vs this run (inverse roots only):")
    for k, v in paper.items():
        print(f"  paper {k:<42} {v:5.2f}×")
    summary = {}
    for threads in thread_list:
        for B in Bs:
            sel = [r for r in rows if r["threads"] == threads and r["B"] == B]
            if not sel:
                continue
            summary[f"threads={threads},B={B}"] = {
                k: [min(r["ratios"][k] for r in sel), max(r["ratios"][k] for r in sel)] for k in sel[0]["ratios"]}
    for key, rng in summary.items():
        print(f"  here  {key:<18} " + ", ".join(f"{k} {lo:.2f}–{hi:.2f}×" for k, (lo, hi) in rng.items()))
    print("\nPer optimizer step vs the PyPI peer (same MLP, block size 64, same root frequency):")
    peer = peer_compare(thread_list, repeats=3 if args.quick else 5, steps=args.peer_steps or (3 if args.quick else 10),
                        device=device)
    elapsed = time.perf_counter() - t_start
    machine["load_avg_1_5_15_end"] = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    print(f"\nwall time {elapsed:.1f} s")
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "machine": machine,
        "config": {"quick": args.quick, "full": args.full, "blocks": list(Ns), "sizes": list(Bs),
                   "target": args.target, "kappa": args.kappa, "threads": thread_list, "device": str(device),
                   "dtype": "float32", "timing": "median of interleaved warm repeats (one warm call each)"},
        "calibration": {str(B): c for B, c in cal.items()}, "rows": rows, "summary": summary, "paper_ratios": paper,
        "peer": peer, "wall_s": elapsed}, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
