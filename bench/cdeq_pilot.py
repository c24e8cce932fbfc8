"""C-DEQ pilot: the tuning grid and the rows' statistics on pilot seeds 9001–9003 (never the chapter's seed 0).

    python bench/cdeq_pilot.py            # ≈ 5 CPU-minutes on one thread

1. **Tuning** (every trained model on the same grid and budget): on each pilot seed's hard teacher, the training
   images split 1100/300 into train/validation; the student over the step sizes ``LR_GRID`` and explicit
   distillation over ``LR_GRID`` × {SiLU, tanh} (tanh: the teacher's own nonlinearity), each with the student's
   steps, width, batch and schedule, scored by the mean validation distance to z* (the student at 1 NFE). The
   chapter's ``LR``, ``EXPLICIT_LR`` and ``EXPLICIT_ACT`` are the grid points with the least mean over the seeds.
2. **Construction**: the linear readout's distance to z* and Picard's at NFE 8 for the gated hard teacher.
3. **Statistics**: ``theorybook.cdeq.verdicts.statistics`` of the chapter's runs at each pilot seed — the numbers
   the headline rows' bounds were fixed from (``verdicts.PILOT`` copies them; a test checks the copy).

Writes bench/results/cdeq_pilot.json with the machine.
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

from theorybook.cdeq import digits_split, run_experiment, train_teacher
from theorybook.cdeq.evaluation import cdeq_infer
from theorybook.cdeq.experiment import BATCH, GAIN, GATE_SCALE, LR_GRID, S_MIN, START_SHARE, STEPS, WIDTH
from theorybook.cdeq.model import Split, hard_teacher, teacher_labels
from theorybook.cdeq.training import explicit_distillation, linear_readout, readout_features, train_student
from theorybook.cdeq.verdicts import statistics

SEEDS = (9001, 9002, 9003)


def tune(seed: int) -> dict:
    sp = digits_split(seed)
    t = hard_teacher(train_teacher(sp, seed=seed), GAIN, gate_scale=GATE_SCALE, s_min=S_MIN, seed=seed + 1)
    sp = teacher_labels(t, sp)
    tr = Split(sp.x_train[:1100], sp.y_train[:1100], sp.x_train[1100:], sp.y_train[1100:])
    with torch.no_grad():
        zv = t.fixed_point(tr.x_test)

    def rel(z):
        return float(((z.double() - zv).norm(dim=-1) / zv.norm(dim=-1)).mean())

    kw = {"steps": STEPS, "batch": BATCH, "width": WIDTH, "seed": seed}
    out = {"student": {}, "explicit": {}}
    for lr in LR_GRID:
        s, _ = train_student(t, tr, lr=lr, start_share=START_SHARE, **kw)
        out["student"][f"{lr:g}"] = rel(cdeq_infer(s, tr.x_test, 1))
        for act in ("silu", "tanh"):
            m = explicit_distillation(t, tr, lr=lr, act=act, **kw)
            with torch.no_grad():
                out["explicit"][f"{lr:g}/{act}"] = rel(m(tr.x_test))
    with torch.no_grad():
        L = linear_readout(t, tr)
        out["readout_val"] = rel(readout_features(t, tr.x_test) @ L)
        out["picard8_val"] = rel(t.picard(tr.x_test, 8))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(pathlib.Path(__file__).parent / "results" / "cdeq_pilot.json"))
    ap.add_argument("--skip-tune", action="store_true")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    t0 = time.process_time()
    res: dict = {"machine": machine_info(), "seeds": list(SEEDS)}
    if not a.skip_tune:
        res["tuning"] = {str(s): tune(s) for s in SEEDS}
        for who in ("student", "explicit"):
            keys = list(res["tuning"][str(SEEDS[0])][who])
            means = {k: float(np.mean([res["tuning"][str(s)][who][k] for s in SEEDS])) for k in keys}
            res[f"best_{who}"] = min(means, key=means.get)
            res[f"mean_{who}"] = means
        print("tuned:", res["best_student"], res["best_explicit"], file=sys.stderr)
    stats = {}
    for s in SEEDS:
        d = run_experiment(s)
        h = run_experiment(s, teacher="hard", regressor=True, augment=True, base=d.teacher)
        stats[str(s)] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in statistics(d, h).items()}
        print(s, stats[str(s)], file=sys.stderr, flush=True)
    res["statistics"] = stats
    res["cpu_s"] = time.process_time() - t0
    path = pathlib.Path(a.out)
    if a.skip_tune and path.exists():
        old = json.loads(path.read_text())
        res = {**old, **{k: v for k, v in res.items() if k != "tuning"}}
    path.write_text(json.dumps(res, indent=1, default=float) + "\n")


if __name__ == "__main__":
    main()
