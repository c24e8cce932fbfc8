"""Pilot of the frequency-bias claim (gdro_grpo): pilot seeds 9014–9016, FREQ_RUNS runs per (skew, score).

For Prompt-GDRO at lr LR_MID, η_q ETA_Q_MID, the paper's intensive EMA score and the extensive ablation (the EMA of
the bin's loss mass), at each skew of FREQ_SKEWS: the mean over runs of the within-step partial rank correlations of ω
with the bin's failure rate (given its share) and with its share (given its failure rate), with the Student-t bounds
at two-sided 1e-3. Writes bench/results/gdro_grpo_freq_pilot.json.
"""

import json
import math
from pathlib import Path

from scipy.stats import t as student

from theorybook.gdro_grpo.experiment import FREQ_RUNS, frequency_runs, frequency_tracking

SEEDS = (9014, 9015, 9016)


def main() -> None:
    tc = float(student.ppf(1 - 5e-4, FREQ_RUNS - 1))
    out = {"runs": FREQ_RUNS, "t": tc, "seeds": {}}
    for seed in SEEDS:
        rows = {}
        for (skew, score), r in frequency_runs(seed).items():
            ft = frequency_tracking(r)
            m, se = ft.mean(0), ft.std(0, ddof=1) / math.sqrt(ft.shape[0])
            rows[f"{score} skew {skew:g}"] = {"rho_fail": round(float(m[0]), 4),
                                              "lcb_fail": round(float(m[0] - tc * se[0]), 4),
                                              "rho_share": round(float(m[1]), 4),
                                              "ucb_share": round(float(m[1] + tc * se[1]), 4)}
        out["seeds"][str(seed)] = rows
        print(seed, json.dumps(rows), flush=True)
    path = Path(__file__).parent / "results" / "gdro_grpo_freq_pilot.json"
    path.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
