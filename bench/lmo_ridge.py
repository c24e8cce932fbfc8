"""The LMO batch-scaling ridge α*(τ) on a fine α grid: is it a diagonal (α* ∝ τ) before it saturates?

    python bench/lmo_ridge.py             # every pilot and evaluation seed (two worker processes, one thread each)
    python bench/lmo_ridge.py --quick     # the first pilot seed only, printed (does not write the results)

The design is fixed in :data:`theorybook.lmo_batch_scaling.experiment.RIDGE` (written before this ran): the chapter's
ℓ2 measurement (normalised SGD-M, least squares n = 1024, d = 16, samples to ε with 8 runs per map, 2·best
censoring) with 4 α per octave, 8 γ per decade and ε = 0.1·‖∇f(x₀)‖_* (half the chapter's). One map per seed, for
the pilot seeds (which fix the fit range and the tolerance) and the evaluation seeds. Writes
bench/results/lmo_ridge.json — every map's α*(τ), N*(τ), best-over-γ counts and full counts, the commit, the
machine and the thread count; the chapter reads it in :func:`theorybook.lmo_batch_scaling.verdicts.ridge_verdicts`
and re-runs one cell block of the first evaluation seed to check that the committed numbers come from this code.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info, provenance  # noqa: E402

from theorybook.lmo_batch_scaling.experiment import RIDGE, RIDGE_RESULTS, ridge_map, ridge_record  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _one(seed: int) -> dict:
    t = time.perf_counter()
    rec = ridge_record(seed, ridge_map(seed))
    print(f"seed {seed}: α* = {rec['alpha_star']} ({time.perf_counter() - t:.0f} s)", flush=True)
    return rec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=2, help="worker processes (one torch thread each)")
    ap.add_argument("--out", type=str, default="", help="write here instead of bench/results/lmo_ridge.json")
    args = ap.parse_args()
    info = machine_info()
    t0 = time.perf_counter()
    if args.quick:
        _one(RIDGE["pilot_seeds"][0])
        return
    seeds = list(RIDGE["pilot_seeds"]) + list(RIDGE["eval_seeds"])
    with ProcessPoolExecutor(max_workers=args.workers) as ex:
        recs = dict(zip(seeds, ex.map(_one, seeds), strict=True))
    head, dirty = provenance(ROOT, "src/theorybook/lmo_batch_scaling")
    out = {"benchmark": "lmo_ridge", "commit": head, "chapter_code_uncommitted": dirty,
           "design": {k: list(v) if isinstance(v, tuple) else v for k, v in RIDGE.items()},
           "pilot": [recs[s] for s in RIDGE["pilot_seeds"]], "eval": [recs[s] for s in RIDGE["eval_seeds"]],
           "machine": {**info, "workers": args.workers, "torch_threads_per_worker": 1,
                       "wall_s": round(time.perf_counter() - t0, 1)}}
    dest = pathlib.Path(args.out) if args.out else RIDGE_RESULTS
    dest.write_text(json.dumps(out) + "\n")
    print("wrote", dest, f"({out['machine']['wall_s']} s)")


if __name__ == "__main__":
    main()
