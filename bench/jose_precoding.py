"""JoSE downstream experiment (issues 34, 57): CEM reaching on the MuJoCo finger in the full 16-D activation space vs
the JoSE-4 latent, with the PCA-4 latent (SAR proxy), a random 4-D latent (ablation) and a second full-space run (the
null) as controls, at a matched evaluation budget, over the seeds ``BENCH_CEM`` names — 100, fixed by the pilot
(``bench/jose_precoding_pilot.py``) so that the paired t sees a 2× speed-up planted in the JoSE arm.

    python bench/jose_precoding.py            # 100 seeds (200–299), 15 CEM iterations × 16 candidates × 2 targets
    python bench/jose_precoding.py --quick    # 4 seeds, for a smoke test (does not overwrite the results)

The design and the tests are fixed in :mod:`theorybook.jose_precoding.downstream` (written before this ran). Writes
bench/results/jose_precoding.json: the per-seed learning curves of every arm, the configuration and the machine
context (bench/_machine.py); the chapter reads it and re-runs one of the seeds to check that it reproduces.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.device import one_thread  # noqa: E402
from theorybook.jose_precoding.downstream import ARMS, cem_reaching, learning_speed  # noqa: E402
from theorybook.jose_precoding.experiment import BENCH_CEM  # noqa: E402

OUT = pathlib.Path(__file__).parent / "results" / "jose_precoding.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    cfg = dict(BENCH_CEM)
    seeds = tuple(cfg.pop("seeds"))[: 4 if args.quick else None]
    info = machine_info()
    t0 = time.perf_counter()
    with one_thread():
        res = cem_reaching(seeds, arms=ARMS, **cfg)
    secs = time.perf_counter() - t0
    speed = learning_speed(res)
    out = {"machine": info, "seconds": round(secs, 1), "config": {"seeds": list(seeds), **cfg, "arms": list(ARMS)},
           "rollouts": res.rollouts.tolist(), "curves": {a: c.tolist() for a, c in res.curves.items()},
           "summary": {a: {"t_vs_full": s.t, "mean_auc_diff": s.mean_diff, "speedup": s.speedup,
                           "median_final": float(sorted(s.final)[len(s.final) // 2])} for a, s in speed.items()}}
    print(json.dumps(out["summary"], indent=1))
    print(f"{secs:.0f} s on {info['cpu']} ({info['cores']} cores)")
    if not args.quick:
        OUT.write_text(json.dumps(out, indent=1) + "\n")
        print("wrote", OUT)


if __name__ == "__main__":
    main()
