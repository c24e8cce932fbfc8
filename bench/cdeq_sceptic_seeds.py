"""C-DEQ, the sceptic's review: the hard-teacher rows' statistics on seeds never used for tuning.

    python bench/cdeq_sceptic_seeds.py 9000 9004 1 2 3 4 5 6 7 8     # ≈ 45 s a seed on one thread

Per seed: the digits teacher, the gated hard teacher, the consistency student and the student with the paper's
augmentation at the chapter's scale; A1's ratio for C-DEQ, the linear readout and the quasi-Newton step; A2's
(max, last/first); A4's re-jump ratio with and without the augmentation, the refine ratio (jump + Picard steps) and
the chord iteration's; S1's least NFE. Writes bench/results/cdeq_sceptic_seeds.json (the committed one: seeds
9000, 9004, 1–7; the run was stopped after 9 seeds by the review's time budget).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import torch

from theorybook.cdeq import digits_split, hard_teacher, teacher_labels, train_teacher
from theorybook.cdeq.evaluation import cdeq_infer, evaluate, from_states, refine_curve, rejump_curve
from theorybook.cdeq.experiment import AUGMENT, BATCH, GAIN, GATE_SCALE, LR, S_MIN, START_SHARE, STEPS, WIDTH
from theorybook.cdeq.training import linear_readout, qn_step, quasi_newton, readout_features, train_student


def ratio(best, e):
    e = np.asarray(e)
    return float(np.min(np.where(e > 0, best / np.where(e > 0, e, 1), np.inf)))


def least(cv, tgt):
    h = np.nonzero(np.asarray(cv.rel_error) <= tgt)[0]
    return int(cv.nfe[h[0]]) if h.size else 10**6


def one_seed(s: int) -> dict:
    t0 = time.time()
    sp = digits_split(s)
    T = hard_teacher(train_teacher(sp, seed=s), GAIN, gate_scale=GATE_SCALE, s_min=S_MIN, seed=s + 1)
    sp = teacher_labels(T, sp)
    kw = dict(steps=STEPS, lr=LR, batch=BATCH, seed=s, width=WIDTH, start_share=START_SHARE)
    stu, _ = train_student(T, sp, **kw)
    aug, _ = train_student(T, sp, augment=AUGMENT, **kw)
    x, y = sp.x_test, sp.y_test
    c = evaluate(T, stu, x, y, nfe_max=128, solver_max=48)
    with torch.no_grad():
        L, M = linear_readout(T, sp), quasi_newton(T, sp)
        c["readout"] = refine_curve(T, readout_features(T, x) @ L, x, y, 128)
        c["qn"] = refine_curve(T, qn_step(T, M, torch.zeros_like(T.injection(x)), x), x, y, 128)
        zs = T.fixed_point(x)

        def rel(z):
            return float(((z.double() - zs).norm(dim=-1) / zs.norm(dim=-1)).mean())

        ar = [rel(cdeq_infer(aug, x, n, mode="refine")) for n in (1, 4)]
        z, ch = torch.zeros_like(zs), []
        for _ in range(4):
            z = qn_step(T, M, z, x)
            ch.append(rel(z))
    rj, rj0 = rejump_curve(aug, x, y, 4), rejump_curve(stu, x, y, 4)
    e = from_states(stu, x, y).rel_error
    best = np.min([1 - c[m].accuracy[:8] for m in ("picard", "anderson", "broyden")], axis=0)
    return dict(a1=ratio(best, 1 - c["cdeq-refine"].accuracy[:8]), a1_ro=ratio(best, 1 - c["readout"].accuracy[:8]),
                a1_qn=ratio(best, 1 - c["qn"].accuracy[:8]), a2=(float(e.max()), float(e[-1] / e[0])),
                a4=float(rj.rel_error[3] / rj.rel_error[0]), a4_plain=float(rj0.rel_error[3] / rj0.rel_error[0]),
                a4_refine=ar[1] / ar[0], chord=ch[3] / ch[0], s1=least(c["cdeq-refine"], 0.1),
                s1sol=[least(c[m], 0.1) for m in ("picard", "anderson", "broyden")], s1ro=least(c["readout"], 0.1),
                sec=time.time() - t0)


if __name__ == "__main__":
    torch.set_num_threads(1)
    res = {}
    for s in map(int, sys.argv[1:]):
        res[s] = one_seed(s)
        print(s, res[s], flush=True)
        with open("bench/results/cdeq_sceptic_seeds.json", "w") as fh:
            json.dump({"script": "bench/cdeq_sceptic_seeds.py", "seeds": res}, fh, indent=1)
