"""JoSE precoding: the Monte-Carlo row's pilot — the deviation of the bias-corrected plug-in MI from the closed form
on pilot seeds 9001–9020 (theorybook.check.PILOT_SEEDS), with the bootstrap s.e. the row's band is built from.

    python bench/jose_precoding_mc_pilot.py        # ≈ 1 s a seed

Writes bench/results/jose_precoding_mc_pilot.json: per seed the deviation and the s.e., their mean, standard
deviation, the count below 0 and the mean s.e. (the chapter glues these; the row's basis quotes them).
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

from theorybook.check import PILOT_SEEDS
from theorybook.jose_precoding.experiment import monte_carlo_mi, plugin_bias

OUT = pathlib.Path(__file__).parent / "results" / "jose_precoding_mc_pilot.json"


def main() -> dict:
    seeds = tuple(PILOT_SEEDS)[:20]
    per = {}
    for s in seeds:
        mc = monte_carlo_mi(s)
        per[str(s)] = {"dev": float(mc.mi - plugin_bias(mc.k, 4, mc.n) - mc.closed_form), "se": float(mc.se)}
        print(s, per[str(s)], flush=True)
    dev = np.array([v["dev"] for v in per.values()])
    out = {"script": "bench/jose_precoding_mc_pilot.py", "seeds": [seeds[0], seeds[-1]], "per_seed": per,
           "mean": float(dev.mean()), "sd": float(dev.std(ddof=1)), "below": int((dev < 0).sum()), "n": len(dev),
           "se_mean": float(np.mean([v["se"] for v in per.values()]))}
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print({k: out[k] for k in ("mean", "sd", "below", "n", "se_mean")})
    return out


if __name__ == "__main__":
    main()
