"""GDRO-for-GRPO, Eq. 27 with the paper's own adversary: the pilot that tunes the players and fixes the threshold.

    python bench/gdro_grpo_eq27_pilot.py   # ≈ 5 min on a 2-core CPU; writes bench/results/gdro_grpo_eq27_pilot.json

Why (the review of 2026-12-06, issue 57): the chapter's Eq. 27 row played projected OGD against Hedge — textbook
no-regret players in a game of ours — and filed it as the paper's claim. The paper's q-player is Prompt-GDRO's
EMA-debiased EXP3P adversary, ω = exp(η_q·clip(EMA of the losses, −C, C)), which does not accumulate losses; and an
optimistic pair's last iterate converges without any averaging.

Protocol, fixed before any run (the bilinear games of theorybook.gdro_grpo.games, 8 per seed, horizons BILINEAR_T):

* the row's players: projected OGD (θ, fixed-horizon step scaled by s) against the paper's adversary at its code
  defaults β = 0.1, γ = 0.15, C = 5, η_q free; settings (s, η_q) over STEP_GRID × ETA_GRID (7 × 7 = 49);
* the statistic: the least-squares log–log slope of the AVERAGED iterates' duality gap over T, mean over the games;
* tuning: on the tuning seeds 9101–9110 (the seeds the textbook pair was tuned on), each candidate gets the setting
  with its most negative mean slope — the row's averages; the LAST iterate of the same players (same 49 settings);
  optimistic OGD against optimistic Hedge, last iterate, (s_θ, s_q) over STEP_GRID × STEP_GRID (49);
* the threshold: the theory's rate −1/2 plus 3.29 × the sd of the row's statistic over the pilot seeds 9111–9200 at
  the tuned setting (a one-sided false-fail ≤ 5e-4 for a slope that truly is −1/2), rounded up to a multiple of 0.05.
  The controls' statistics on the same pilots are recorded for the notes.
"""

from __future__ import annotations

import json
import math
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from _machine import machine_info  # noqa: E402

from theorybook.gdro_grpo.games import (  # noqa: E402
    BILINEAR_T,
    EQ27_GAMES,
    STEP_GRID,
    TUNING_SEEDS,
    adversary_play,
    bilinear_games,
    gap_slopes,
)

ETA_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
THRESHOLD_SEEDS = tuple(range(9111, 9201))


def main() -> None:
    info = machine_info()
    t0 = time.process_time()
    ema_settings = [(s, e) for s in STEP_GRID for e in ETA_GRID]
    opt_settings = [(a, b) for a in STEP_GRID for b in STEP_GRID]
    avg, last, opt = [], [], []
    for seed in TUNING_SEEDS:
        games = bilinear_games(seed, EQ27_GAMES)
        p = adversary_play(games, BILINEAR_T, ema_settings, adversary="ema")
        avg.append(gap_slopes(p.T, p.avg_gap).mean(-1))
        last.append(gap_slopes(p.T, p.last_gap).mean(-1))
        o = adversary_play(games, BILINEAR_T, opt_settings, adversary="optimistic")
        opt.append(gap_slopes(o.T, o.last_gap).mean(-1))
    avg, last, opt = np.mean(avg, 0), np.mean(last, 0), np.mean(opt, 0)
    best_avg = ema_settings[int(np.argmin(avg))]
    best_last = ema_settings[int(np.argmin(last))]
    best_opt = opt_settings[int(np.argmin(opt))]
    rows = {"avg": [], "last": [], "opt": [], "avg_gap_T_max": [], "opt_gap_T_max": []}
    for seed in THRESHOLD_SEEDS:
        games = bilinear_games(seed, EQ27_GAMES)
        p = adversary_play(games, BILINEAR_T, [best_avg, best_last], adversary="ema")
        o = adversary_play(games, BILINEAR_T, [best_opt], adversary="optimistic")
        rows["avg"].append(float(gap_slopes(p.T, p.avg_gap[:, 0]).mean()))
        rows["last"].append(float(gap_slopes(p.T, p.last_gap[:, 1]).mean()))
        rows["opt"].append(float(gap_slopes(o.T, o.last_gap[:, 0]).mean()))
        rows["avg_gap_T_max"].append(float(p.avg_gap[-1, 0].mean()))
        rows["opt_gap_T_max"].append(float(o.last_gap[-1, 0].mean()))
    sd = float(np.std(rows["avg"], ddof=1))
    threshold = math.ceil((-0.5 + 3.29 * sd) / 0.05) * 0.05
    summary = {k: {"mean": float(np.mean(v)), "sd": float(np.std(v, ddof=1)), "min": float(np.min(v)),
                   "max": float(np.max(v))} for k, v in rows.items()}
    res = {"machine": info, "cpu_seconds": round(time.process_time() - t0, 1),
           "tuning_seeds": list(TUNING_SEEDS), "threshold_seeds": [THRESHOLD_SEEDS[0], THRESHOLD_SEEDS[-1]],
           "step_grid": list(STEP_GRID), "eta_grid": list(ETA_GRID), "games_per_seed": EQ27_GAMES,
           "horizons": list(BILINEAR_T), "adversary_defaults": {"beta": 0.1, "gamma": 0.15, "clip": 5.0},
           "tuning_avg_slope": {f"{s:g},{e:g}": float(x) for (s, e), x in zip(ema_settings, avg, strict=True)},
           "tuning_last_slope": {f"{s:g},{e:g}": float(x) for (s, e), x in zip(ema_settings, last, strict=True)},
           "tuning_opt_last_slope": {f"{a:g},{b:g}": float(x) for (a, b), x in zip(opt_settings, opt, strict=True)},
           "best_avg": list(best_avg), "best_last": list(best_last), "best_opt": list(best_opt),
           "threshold_pilot": summary, "threshold": round(threshold, 2)}
    out = pathlib.Path(__file__).parent / "results" / "gdro_grpo_eq27_pilot.json"
    out.write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps({k: res[k] for k in ("best_avg", "best_last", "best_opt", "threshold_pilot", "threshold",
                                          "cpu_seconds")}, indent=1))


if __name__ == "__main__":
    main()
