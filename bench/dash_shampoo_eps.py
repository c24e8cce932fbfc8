"""The ε scan behind the DASH chapter's held-out rows: NDB-fro, CN-fro and EVD at ε ∈ {0, 1e-8, 1e-6, 1e-4, 1e-2}
(EVD at the paper's 1e-10 where ε = 0), on pilot seeds 9001–9010 (disjoint from the chapter's and the robustness
seeds), 80 steps of the chapter's held-out runs without the three constant pixels; plus NDB and CN at ε = 0 with
all 64 pixels (the earlier setting). Writes bench/results/dash_shampoo_eps.json: the paired mean held-out loss
ratio − 1 (%) and its standard error per comparison and ε. About 10 minutes on one CPU core.

    OMP_NUM_THREADS=1 .venv/bin/python bench/dash_shampoo_eps.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine_info  # noqa: E402

from theorybook.dash_shampoo.experiment import heldout_comparison  # noqa: E402

EPS = (0.0, 1e-8, 1e-6, 1e-4, 1e-2)
SEEDS = tuple(range(9001, 9011))
KW = dict(steps=80, eval_every=10, lr=1e-3, hidden=64, batch=128, holdout=597)


def _stat(a, b) -> dict:
    r = np.array([100.0 * (np.mean(np.asarray(x.heldout[1:]) / np.asarray(y.heldout[1:])) - 1.0)
                  for x, y in zip(a, b, strict=True)])
    return {"mean": float(r.mean()), "se": float(r.std(ddof=1) / np.sqrt(len(r)))}


def main() -> None:
    out = {"machine": machine_info(), "seeds": [SEEDS[0], SEEDS[-1]], "settings": KW, "eps": list(EPS), "scan": []}
    for eps in EPS:
        r = heldout_comparison((("ndb", "fro", eps), ("cn", "fro", eps), ("evd", "fro", eps if eps > 0 else 1e-10)),
                               SEEDS, **KW)
        ndb, cn, evd = (r[k] for k in r)
        out["scan"].append({"eps": eps, "NDB-CN": _stat(ndb, cn), "NDB-EVD": _stat(ndb, evd),
                            "EVD-CN": _stat(evd, cn)})
    r = heldout_comparison((("ndb", "fro", 0.0), ("cn", "fro", 0.0)), SEEDS, drop_constant=False, **KW)
    out["all_pixels_eps0"] = {"NDB-CN": _stat(*r.values())}
    path = Path(__file__).resolve().parent / "results" / "dash_shampoo_eps.json"
    path.write_text(json.dumps(out, indent=1))
    print(json.dumps(out["scan"], indent=1))


if __name__ == "__main__":
    main()
