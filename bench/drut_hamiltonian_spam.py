"""D-RUT: the pilot behind the SPAM rows' scans (readout flip δ and ancilla phase offset ε at the J = 12 budget).

    python bench/drut_hamiltonian_spam.py      # pilot seeds 9001–9040 (≈ 3 min on 2 loaded cores)

For each pilot seed, :func:`theorybook.drut_hamiltonian.spam_study` on the flip grid (0.05, 0.1, 0.15, 0.2) and the
offset grid ``SPAM_OFFSETS``, and each estimator's RMSE of C divided by the row's bound at each value — 3·CRB/(1 − 2δ)
for a flip, ε/2^J + 3·CRB for an offset (the efficiency band's upper end, :data:`~theorybook.drut_hamiltonian.
verdicts.EFFICIENCY`). Reports, per estimator (RPE, Ramsey atan2, Ramsey arccos, RPE's schedule read by arccos, RPE with
uniform shots at the same total time; flips at ``FLIP_REPS`` = 512 replicates, offsets at 64) and
value, the largest and smallest ratio over the seeds, how many seeds exceed the bound, and the worst ratio over the
rows' scans (``SPAM_FLIPS``, ``SPAM_OFFSETS``). Writes bench/results/drut_hamiltonian_spam.json.
"""

from __future__ import annotations

import json
import pathlib
import time

import numpy as np
import torch
from _machine import machine_info  # bench/ is on sys.path when a bench script runs

from theorybook.check import PILOT_SEEDS
from theorybook.drut_hamiltonian import crb, rpe_schedule, spam_study
from theorybook.drut_hamiltonian.experiment import SPAM_FLIPS, SPAM_OFFSETS
from theorybook.drut_hamiltonian.verdicts import EFFICIENCY

OUT = pathlib.Path(__file__).parent / "results" / "drut_hamiltonian_spam.json"
PILOT = tuple(PILOT_SEEDS)[:40]
FLIPS = (*SPAM_FLIPS, 0.2)
ESTIMATORS = ("rpe", "ramsey_atan2", "ramsey_arccos", "rpe_schedule_arccos", "rpe_uniform_shots")


def main() -> None:
    torch.set_num_threads(1)
    t0 = time.process_time()
    c = EFFICIENCY[1] * crb(rpe_schedule(12), 12)
    bf = c / (1 - 2 * np.asarray(FLIPS))
    bo = np.asarray(SPAM_OFFSETS) / 2**12 + c
    rf, ro = [], []
    for s in PILOT:
        st = spam_study(s, flips=FLIPS, offsets=SPAM_OFFSETS)
        rf.append(st.rms_flip / bf)
        ro.append(st.rms_offset / bo)
    rf, ro = np.array(rf), np.array(ro)  # (seeds, estimator, value)
    scan_f = rf[:, :, : len(SPAM_FLIPS)].max(-1)  # the flip row's statistic: worst ratio over its scan
    scan_o = ro.max(-1)
    out = {"machine": machine_info(), "seeds": [PILOT[0], PILOT[-1]], "bound_3crb": c,
           "flip": {"values": list(FLIPS), "scan": list(SPAM_FLIPS)},
           "offset": {"values": list(SPAM_OFFSETS), "scan": list(SPAM_OFFSETS)}}
    for kind, r, scan in (("flip", rf, scan_f), ("offset", ro, scan_o)):
        for i, e in enumerate(ESTIMATORS):
            out[kind][e] = {"ratio_max": r[:, i].max(0).tolist(), "ratio_min": r[:, i].min(0).tolist(),
                            "seeds_above_bound": (r[:, i] > 1).sum(0).tolist(),
                            "scan_worst_max": float(scan[:, i].max()), "scan_worst_min": float(scan[:, i].min())}
            print(kind, e, {k: (np.round(v, 3).tolist() if isinstance(v, list) else round(v, 3))
                            for k, v in out[kind][e].items()})
    out["cpu_s"] = time.process_time() - t0
    OUT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
