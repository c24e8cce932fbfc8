"""Pilot runs for the flat-minima chapter's claim-4 stand-in at a radius where the ascent step acts (issue 57), on
pilot seeds only.

    python bench/flat_minima_stability_pilot.py    # writes bench/results/flat_minima_stability_pilot.json

The review found that at the chapter's ρ = 0.05 SA-GD's and SAM's replace-one divergence equals GD's (the ascent
step is invisible), so the stand-in's 1/n rows say nothing about the ascent step. The design, fixed before this ran:
the same least-squares stand-in (d = 20, η = 0.5, T = 200, 20 replacements, n = 50 … 800) at ρ = 1, the radius
where the review's scan first showed SA-GD's divergence well above GD's. The band of each method's log–log slope is
its pilot mean ± z·sd with z = z_threshold(1e-3) = 3.29 (false alarm 1e-3 per row, Gaussian model of the slope),
rounded outward to three decimals. The ratio δ_SA-GD/δ_GD and δ_SAM/δ_GD at n = 200 over ρ ∈ {0.05, 0.5, 1, 2}
is recorded as well (shown in the chapter, not tested).

Pilot seeds 9051–9090 (theorybook.check.PILOT_SEEDS; disjoint from the chapter's 2026, the robustness seeds
7001–7040 and the chapter's other pilots 9001–9050).
"""

from __future__ import annotations

import json
import math
import pathlib
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.check import z_threshold  # noqa: E402
from theorybook.fit import loglog_slope  # noqa: E402
from theorybook.flat_minima import stability  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
SEEDS = tuple(range(9051, 9091))
RHO = 1.0
SCAN = (0.05, 0.5, 1.0, 2.0)


def main() -> None:
    t0 = time.time()
    slopes: dict[str, list[float]] = {"gd": [], "sa-gd": [], "sam": []}
    ratios: dict[str, dict[str, list[float]]] = {a: {f"{r:g}": [] for r in SCAN} for a in ("sa-gd", "sam")}
    for seed in SEEDS:
        for res in stability(("gd", "sa-gd", "sam"), rho=RHO, seed=seed, device="cpu"):
            slopes[res.algorithm].append(float(loglog_slope(res.n, res.delta).slope))
        for r in SCAN:
            gd, sg, sm = stability(("gd", "sa-gd", "sam"), n=(200,), rho=r, seed=seed, device="cpu")
            ratios["sa-gd"][f"{r:g}"].append(float(sg.delta[0] / gd.delta[0]))
            ratios["sam"][f"{r:g}"].append(float(sm.delta[0] / gd.delta[0]))
    z = z_threshold(1e-3)
    bands = {}
    for alg, xs in slopes.items():
        m, s = float(np.mean(xs)), float(np.std(xs, ddof=1))
        bands[alg] = {"mean": m, "sd": s, "band": [math.floor((m - z * s) * 1000) / 1000,
                                                   math.ceil((m + z * s) * 1000) / 1000]}
    out = {
        "what": "claim-4 stand-in at ρ = 1: log-log slope of the replace-one divergence per method (band = mean ± "
                "3.29 sd over the pilot seeds), and δ/δ_GD at n = 200 over a ρ-scan",
        "seeds": list(SEEDS),
        "rho": RHO,
        "z": z,
        "slopes": slopes,
        "bands": bands,
        "ratio_at_n200": {a: {r: {"median": float(np.median(v)), "min": float(np.min(v)), "max": float(np.max(v))}
                              for r, v in d.items()} for a, d in ratios.items()},
        "seconds": round(time.time() - t0, 1),
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip(),
        "machine": machine_info(),
    }
    path = ROOT / "bench" / "results" / "flat_minima_stability_pilot.json"
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({"bands": bands, "ratio_at_n200": out["ratio_at_n200"]}, indent=1))


if __name__ == "__main__":
    main()
