"""CoLoRA: the pilot behind the chapter's bounds, and the heterogeneity sweep of the federated baselines.

    python bench/colora.py              # both (≈ 1–2 min on 2 CPU cores)
    python bench/colora.py --pilot      # only the pilot (seeds 9001–9020 of theorybook.check.PILOT_SEEDS)
    python bench/colora.py --sweep      # only the sweep

Pilot: for each pilot seed, exactly the computations of the chapter's sampled rows
(:func:`theorybook.colora.verdicts.sampled_results`) and the statistics each row and each control measures
(:func:`~theorybook.colora.verdicts.pilot_statistics`), and the contraction rate alone over seeds 9001–9100 (its
slow tail is rare); the summary (max/min over seeds) is what the rows' ``basis``
quotes (``PILOT`` in verdicts.py; ``tests/test_colora.py`` checks the two agree).

Sweep: :func:`theorybook.colora.federated.heterogeneity_sweep` — CoLoRA, FedAvg-LoRA, FFA-LoRA (rank 2r) and
per-client LoRA at equal communicated parameters, **each at the exact minimiser of its pooled objective** (an
idealisation: the federated algorithms themselves are run by ``bench/colora_fl.py``), over core heterogeneity η
(τ = 0) and subspace heterogeneity τ (η = 1), n ∈ {24, 64, 128}, ``--reps`` replicates from the chapter's seed. The
chapter plots it from bench/results/colora.json.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import time

import numpy as np

from theorybook.check import PILOT_SEEDS
from theorybook.colora import CHAPTER_SEEDS, convergence_study
from theorybook.colora.federated import ETAS, FED_METHODS, NS_FED, TAUS_FED, heterogeneity_sweep
from theorybook.colora.verdicts import pilot_statistics, sampled_results

OUT = pathlib.Path(__file__).parent / "results" / "colora.json"
PILOT = tuple(PILOT_SEEDS)[:20]
RATE_PILOT = tuple(PILOT_SEEDS)[:100]  # the contraction rate has a rare slow tail: more seeds, convergence only
# which way each statistic's bound faces: the worst case the pilot must report
_WORST = {"e24_colora": max, "e24_indep": min, "e24_shared": min, "rate": max, "rate_worst": max, "sim": max,
          "sim_ctrl": min}


def pilot() -> dict:
    per_seed = {}
    for s in PILOT:
        per_seed[s] = pilot_statistics(sampled_results(s))
        print(s, {k: round(v, 4) for k, v in per_seed[s].items()})
    keys = per_seed[PILOT[0]].keys()
    summary = {}
    for k in keys:
        vals = [per_seed[s][k] for s in PILOT]
        summary[k] = {"min": min(vals), "max": max(vals), "worst": _WORST.get(k, max)(vals)}
    medians, draws = [], []
    for s in RATE_PILOT:
        c = convergence_study(seed=s)
        rate = (c[:, 10] / c[:, 2]) ** (1 / 8)
        medians.append(float(np.median(rate)))
        draws += [float(x) for x in rate]
    rate = {"seeds": [RATE_PILOT[0], RATE_PILOT[-1]], "median_of_3_max": max(medians), "draws": len(draws),
            "slow_draws_ge_0.95": sum(x >= 0.95 for x in draws), "draw_max": max(draws)}
    print("rate pilot", rate)
    return {"seeds": list(PILOT), "per_seed": {str(s): v for s, v in per_seed.items()}, "summary": summary,
            "rate": rate}


def sweep(reps: int) -> dict:
    sw = heterogeneity_sweep(ETAS, TAUS_FED, NS_FED, reps=reps, seed=CHAPTER_SEEDS[0])
    return {"methods": list(FED_METHODS), "etas": list(sw.etas), "taus": list(sw.taus), "ns": list(sw.ns),
            "reps": reps, "seed": CHAPTER_SEEDS[0],
            "eta_errors": sw.eta_errors.tolist(), "tau_errors": sw.tau_errors.tolist()}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pilot", action="store_true")
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    both = not (args.pilot or args.sweep)
    path = pathlib.Path(args.out)
    out = json.loads(path.read_text()) if path.exists() else {}
    t0 = time.perf_counter()
    if args.pilot or both:
        out["pilot"] = pilot()
    if args.sweep or both:
        out["sweep"] = sweep(args.reps)
    out["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                      "loadavg": os.getloadavg() if hasattr(os, "getloadavg") else None,
                      "seconds": round(time.perf_counter() - t0, 1)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    print(f"wrote {path}")
    return out


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
