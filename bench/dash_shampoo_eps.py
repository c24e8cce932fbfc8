"""The ε scan behind the DASH chapter's held-out rows, at matched damping: NDB-fro and CN-fro at ε, and EVD at ε/2
— Distributed Shampoo's EVD (ours too) adds ε twice (eigh(A + εI), then + ε − min(λ_min, 0)), so EVD at ε/2
computes (A + εI)^(−1/4), the root NDB and CN compute at ε. EVD at ε (the damping applied twice, the earlier
version of this scan) is kept alongside, to show what the mismatch did. ε ∈ {0, 1e-8, 1e-6, 1e-4, 1e-2} (at ε = 0
EVD runs at the paper's 1e-10, which no NDB/CN setting matches); pilot seeds 9001–9010 (disjoint from the chapter's
and the robustness seeds), 80 steps of the chapter's held-out runs without the three constant pixels; plus NDB and
CN at ε = 0 with all 64 pixels (the earlier setting). Writes bench/results/dash_shampoo_eps.json: the paired mean
held-out loss ratio − 1 (%), its standard error and the per-seed values per comparison and ε. About 5 minutes on
one CPU core.

    OMP_NUM_THREADS=1 .venv/bin/python bench/dash_shampoo_eps.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info  # noqa: E402

from theorybook.dash_shampoo.experiment import heldout_comparison  # noqa: E402

EPS = (0.0, 1e-8, 1e-6, 1e-4, 1e-2)
SEEDS = tuple(range(9001, 9011))
KW = dict(steps=80, eval_every=10, lr=1e-3, hidden=64, batch=128, holdout=597)


def _stat(a, b) -> dict:
    r = np.array([100.0 * (np.mean(np.asarray(x.heldout[1:]) / np.asarray(y.heldout[1:])) - 1.0)
                  for x, y in zip(a, b, strict=True)])
    return {"mean": float(r.mean()), "se": float(r.std(ddof=1) / np.sqrt(len(r))), "per_seed": r.round(4).tolist()}


def main() -> None:
    torch.set_num_threads(1)
    out = {"machine": machine_info(), "seeds": [SEEDS[0], SEEDS[-1]], "settings": KW, "eps": list(EPS),
           "matched": "EVD at ε/2 (its root is (A + εI)^(−1/4), as NDB's and CN's at ε); at ε = 0 EVD at 1e-10",
           "scan": []}
    for eps in EPS:
        evd_matched = eps / 2 if eps > 0 else 1e-10
        configs = [("ndb", "fro", eps), ("cn", "fro", eps), ("evd", "fro", evd_matched)]
        if eps > 0:
            configs.append(("evd", "fro", eps))  # the damping applied twice: the earlier, mismatched comparison
        r = list(heldout_comparison(tuple(configs), SEEDS, **KW).values())
        ndb, cn, evd = r[:3]
        row = {"eps": eps, "evd_eps": evd_matched, "NDB-CN": _stat(ndb, cn), "NDB-EVD": _stat(ndb, evd),
               "EVD-CN": _stat(evd, cn)}
        if eps > 0:
            row["NDB-EVD(2ε)"] = _stat(ndb, r[3])
            row["EVD(2ε)-CN"] = _stat(r[3], cn)
        out["scan"].append(row)
        print(json.dumps({k: (v if not isinstance(v, dict) else {q: v[q] for q in ("mean", "se")})
                          for k, v in row.items()}), flush=True)
    r = heldout_comparison((("ndb", "fro", 0.0), ("cn", "fro", 0.0)), SEEDS, drop_constant=False, **KW)
    out["all_pixels_eps0"] = {"NDB-CN": _stat(*r.values())}
    path = Path(__file__).resolve().parent / "results" / "dash_shampoo_eps.json"
    path.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
