"""CoLoRA against the federated-LoRA baselines run as federated algorithms, at most CoLoRA's message per round.

    python bench/colora_fl.py --pilot     # pilot seeds 9001–9010: the basis of the row (≈ 25 CPU-minutes, one thread)
    python bench/colora_fl.py --chapter   # the chapter's seed: the row's numbers (≈ 3 CPU-minutes)
    python bench/colora_fl.py --robust    # the 20 unseen robustness seeds 7001–7020 (≈ 15 CPU-minutes)
    python bench/colora_fl.py --budget    # the round budget: errors after 50…300 rounds, pilot seeds 9001–9002

Every method — federated CoLoRA (shared A, B averaged, personal cores R_i), FedAvg-LoRA, FFA-LoRA (rank 2r, the
down-projection frozen), the personalised FedSA-LoRA (shared U averaged, personal V_i, at CoLoRA's rank r) and
per-client LoRA — runs ``FL_ROUNDS`` rounds of ``LOCAL_STEPS`` local full-batch gradient steps from the same
initialisation, the server averaging the shared block each round; each method's step size is chosen per replicate
from ``FL_GRID`` by its own validation MSE on ``N_VAL`` held-out samples per client
(:func:`theorybook.colora.federated.fl_cell`). Cells: ``FL_CELLS`` (the claim's world and the two control worlds).

The chapter's seed gives the row's numbers; the pilot seeds give its basis; the robustness seeds are the 20 unseen
seeds ``tests/verdict_runs.py`` gives the chapter (7001–7040 less the chapter's own, the first 20) — this row is
too costly for the test suite to re-run (≈ 2.5 CPU-minutes a seed), so this script runs them and
``tests/test_colora.py`` checks the committed results. Each mode updates its part of bench/results/colora_fl.json
and records the machine.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np
import torch
from _machine import machine_info  # bench/ is on sys.path when a bench script runs

from theorybook.check import PILOT_SEEDS
from theorybook.colora import CHAPTER_SEEDS
from theorybook.colora.experiment import ITERS, RANK, SIGMA, D, K, _batch_eta
from theorybook.colora.federated import (
    FL_CELLS,
    FL_GRID,
    FL_METHODS,
    FL_ROUNDS,
    LOCAL_STEPS,
    N_VAL,
    _fl_rounds,
    fl_cell,
    fl_ratio,
)
from theorybook.device import to_numpy

OUT = pathlib.Path(__file__).parent / "results" / "colora_fl.json"
PILOT = tuple(PILOT_SEEDS)[:10]
ROBUST = tuple(s for s in range(7001, 7041) if s not in CHAPTER_SEEDS)[:20]


def _summary(cell: dict) -> dict:
    """A cell without the validation curves (what the pilot and robustness entries keep)."""
    out = {k: v for k, v in cell.items() if not isinstance(v, dict)}
    for m in (*FL_METHODS, "colora_als"):
        out[m] = {k: v for k, v in cell[m].items() if k != "val"}
    return out


def _run(seed: int, full: bool) -> dict:
    cells = {}
    for name, (eta, tau, n) in FL_CELLS.items():
        c = fl_cell(eta, tau, n, seed=seed)
        cells[name] = c if full else _summary(c)
        print(seed, name, {m: [round(e, 4) for e in c[m]["error"]] for m in (*FL_METHODS, "colora_als")},
              round(fl_ratio(c), 4), file=sys.stderr, flush=True)
    return cells


CHECKPOINTS = (50, 100, 150, 200, 250, 300)


def budget(seed: int, reps: int = 3) -> dict:
    """The claim's world at ``seed``: every method at every step size of the grid for 300 rounds; after each of
    :data:`CHECKPOINTS` rounds, the median-over-clients error of each replicate at each step size and at the step
    size its validation MSE picks then — does the budget let each method reach its plateau?"""
    eta, tau, n = FL_CELLS["heterogeneous"]
    Bt = _batch_eta(K, D, RANK, n + N_VAL, tau, SIGMA, seed, reps, eta, "cpu")
    X, y, Xv, yv = Bt.X[:, :, :n], Bt.y[:, :, :n], Bt.X[:, :, n:], Bt.y[:, :, n:]
    g = len(FL_GRID)
    lr = torch.tensor(FL_GRID, dtype=X.dtype).repeat_interleave(reps)
    Mv = Xv.reshape(reps, K, -1, D * D)
    rep = lambda T: T.repeat(g, *([1] * (T.ndim - 1)))  # noqa: E731
    out: dict = {"checkpoints": list(CHECKPOINTS), "grid": list(FL_GRID), "budget": FL_ROUNDS, "iters_als": ITERS}
    for m in FL_METHODS:
        rows = {}
        for t, Mh in enumerate(_fl_rounds(m, X, y, RANK, lr, CHECKPOINTS[-1], LOCAL_STEPS), start=1):
            if t not in CHECKPOINTS:
                continue
            pred = (rep(Mv) @ Mh.reshape(g * reps, K, D * D, 1)).squeeze(-1)
            val = to_numpy(((pred - rep(yv)) ** 2).mean(dim=(1, 2)).reshape(g, reps)).T
            err = to_numpy((torch.linalg.matrix_norm(Mh.reshape(g, reps, K, D, D) - Bt.M)
                            / torch.linalg.matrix_norm(Bt.M)).median(-1).values).T  # (reps, g)
            val = np.where(np.isfinite(val), val, np.inf)
            pick = val.argmin(1)
            rows[t] = {"error": err.tolist(), "picked": [float(err[j, pick[j]]) for j in range(reps)]}
            print(seed, m, t, [round(x, 4) for x in rows[t]["picked"]], file=sys.stderr, flush=True)
        out[m] = rows
    return out


def _save(res: dict, out: pathlib.Path) -> None:
    out.write_text(json.dumps(res, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pilot", action="store_true")
    ap.add_argument("--chapter", action="store_true")
    ap.add_argument("--robust", action="store_true")
    ap.add_argument("--budget", action="store_true")
    ap.add_argument("--seeds", default=None, help="comma-separated subset of the pilot or robustness seeds to run")
    ap.add_argument("--out", default=str(OUT), help="the JSON to update (default bench/results/colora_fl.json)")
    ap.add_argument("--merge", default=None, help="copy the pilot/chapter/robustness parts of this JSON into --out")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    if a.merge:  # two modes run at once write two files; this joins them
        res = json.loads(out.read_text()) if out.is_file() else {}
        src = json.loads(pathlib.Path(a.merge).read_text())
        for key in ("cells", "budget"):
            if key in src:
                res[key] = src[key]
        for key in ("pilot", "robustness"):  # per-seed parts: join
            if key in src:
                res.setdefault(key, {}).update(src[key])
                res[key] = dict(sorted(res[key].items()))
        res.setdefault("machine", {}).update(src.get("machine", {}))
        for mode, cpu in src.get("cpu_s", {}).items():  # parts of one mode run at once: their CPU time adds up
            res.setdefault("cpu_s", {})[mode] = res["cpu_s"].get(mode, 0.0) + cpu if mode in (
                "pilot", "robustness") else cpu
        _save(res, out)
        return
    if not (a.pilot or a.chapter or a.robust or a.budget):
        a.pilot = a.chapter = a.robust = True
    torch.set_num_threads(1)
    res = json.loads(out.read_text()) if out.is_file() else {}
    if "cpu" in res.get("machine", {}):  # the format before the pilot/chapter/robustness split: start afresh
        res = {}
    res.setdefault("machine", {})
    res.setdefault("cpu_s", {})
    if a.budget:
        t0 = time.process_time()
        res["machine"]["budget"] = machine_info()
        res["budget"] = {str(s): budget(s) for s in PILOT[:2]}
        res["cpu_s"]["budget"] = time.process_time() - t0
        _save(res, out)
    for mode, seeds, full in (("pilot", PILOT, False), ("chapter", CHAPTER_SEEDS[:1], True),
                              ("robustness", ROBUST, False)):
        if not getattr(a, {"robustness": "robust"}.get(mode, mode)):
            continue
        t0 = time.process_time()
        res["machine"][mode] = machine_info()
        if mode == "chapter":
            res["cells"] = _run(seeds[0], full)
        else:
            if a.seeds:
                keep = {int(x) for x in a.seeds.split(",")}
                if not keep <= set(seeds):
                    raise SystemExit(f"--seeds {sorted(keep - set(seeds))} are not {mode} seeds")
                seeds = tuple(s for s in seeds if s in keep)
            res[mode] = {}
            for s in seeds:
                res[mode][str(s)] = _run(s, full)
                _save(res, out)
        res["cpu_s"][mode] = time.process_time() - t0
        _save(res, out)


if __name__ == "__main__":
    main()
