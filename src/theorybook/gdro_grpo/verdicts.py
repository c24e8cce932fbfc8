"""Every row the GDRO-for-GRPO chapter shows, the paper's claims they test, and the controls.

``deterministic_verdicts()`` — sympy, the numerical checks of Lemma 4.1 / Theorem 4.2, the staircase, the DP and
Eq. 27 on the convex toy; ``simulation_verdicts(runs, ablation)`` — the rows read off the chapter's runs that the
seed-robustness test does not re-run (√-law allocator, surrogate ablation); ``seeded_verdicts(seed, runs)`` — the
stochastic rows (Eq. 27 on bilinear games drawn from the seed, with the paper's adversary; the worst-topic area at
the intermediate and at GRPO's tuned step; the lead–lag gap; the rollout rows), re-run on 20 unseen seeds by
``tests/test_seed_robustness.py``; ``sensitivity_verdicts(scan, knobs)`` — the sensitivity scans (η_q, EMA β,
bins); ``headline(...)`` — the chapter's table (all of them, with ``PAPER_CLAIMS``).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.stats import t as _student

from ..check import Control, PaperClaim, Planted, Scan, Verdicts, z_threshold
from ..validate import integer
from . import theory
from .experiment import (
    BETA_SCAN,
    BINS_SCAN,
    ETA_Q_MID,
    ETA_Q_STAR,
    ETA_SCAN,
    KAPPA_MID,
    LR_MID,
    LR_STAR,
    PILOT_SEEDS,
    SEEDED_RUNS,
    SimResult,
    allocation_check,
    lead_lag,
    lemma_check,
    minimax_toy,
    seeded_runs,
    sqrt_law_check,
    staircase_check,
    tuning_results,
    worst_auc,
)
from .games import (
    BILINEAR_T,
    EQ27_ADV,
    EQ27_ADV_LAST,
    EQ27_ADV_SLOPE,
    EQ27_ETA_GRID,
    EQ27_GAMES,
    EQ27_OPT,
    EQ27_SLOPE,
    EQ27_STEP,
    EQ27_STEP_LAST,
    STEP_GRID,
    TUNING_SEEDS,
    adversary_play,
    bilinear_games,
    gap_slopes,
    no_regret_play,
)

__all__ = ["PAPER_CLAIMS", "HARDTAIL_BOUND", "PAPER_TOY_GAIN", "SENSITIVE_RATIO", "bilinear_plays",
           "deterministic_verdicts", "headline", "seeded_verdicts", "sensitivity_verdicts", "simulation_verdicts"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("pass8", "Prompt-GDRO and Rollout-GDRO raise pass@8 over GRPO (average relative gains +10.6 % and "
               "+10.1 % across Qwen3-1.7B/4B/8B-Base on DAPO-Math)", quoted_only=True, reason_class="language model",
               why="needs LLM training; the chapter's 7-parameter simulated policy is not the paper's setting",
               headline=True),
    PaperClaim("freq", "Prompt-GDRO's EMA-debiased score targets the intensive difficulty margin and upweights "
               "persistently hard groups without frequency bias", quoted_only=True,
               reason_class="underpowered here",
               why="measured, but not certifiable at this chapter's budget: "
                   "bench/gdro_grpo_freq_pilot.py (pilot seeds 9014–9016, 24 runs per arm, lr 3, η_q 30, skew 0, 1, "
                   "2) runs the paper's intensive score against the ablation of the debiasing, the extensive score "
                   "(EMA of the bin's loss mass q̂_b·ℓ̄_b, everything else the same), and measures the partial rank "
                   "correlation, within each step over the pool's bins, of ω with the bin's share given its exact "
                   "failure rate (experiment.frequency_tracking). The intensive score's is negative at every skew "
                   "and seed (means −0.22 to −0.32: no bias toward frequent bins), the extensive score's positive "
                   "(+0.17 to +0.46: frequent bins dominate), so the claim is not true by construction for every "
                   "reasonable score. But a row must certify ρ_share ≤ 0 at false alarm ≤ 1e-3 and hold on 20 "
                   "unseen seeds: its upper bound reached +0.054 at skew 2 on pilot seed 9016 with 24 runs (9014 and "
                   "9015 passed), so such a row would fail seeds by power alone; more runs would add ≳ 30 s to a "
                   "chapter near its time limit (bench/results/gdro_grpo_freq_pilot.json)"),
    PaperClaim("hardtail", "Prompt-GDRO raises worst-group accuracy over GRPO by upweighting persistently hard groups "
               "(toy study on MATH: worst-group pass@1 33.92 % for GRPO, 39.6 % for EMA-debiased GDRO)",
               where="§5 (toy study on MATH)"),
    PaperClaim("sensitivity", "GDRO shows low sensitivity to several key hyperparameters",
               regime="three of them, one at a time at lr 0.3, the others at their defaults: the adversary's step "
                      f"η_q ∈ {{{', '.join(f'{x:g}' for x in ETA_SCAN)}}}, the EMA β ∈ "
                      f"{{{', '.join(f'{x:g}' for x in BETA_SCAN)}}}, the number of bins ∈ "
                      f"{{{', '.join(f'{x:d}' for x in BINS_SCAN)}}}"),
    PaperClaim("curriculum", "the adversary over online difficulty bins acts as an emergent curriculum: weight leads "
               "the data (Δµ = µ_weight − µ_data positive early, then decays)", where="§5, Fig. 1"),
    PaperClaim("wse", "Rollout-GDRO lowers the weighted SE proxy by 37.1 % / 22.6 % / 33.4 % at equal budget",
               where="§5"),
    PaperClaim("L4.1", "entropic GDRO: max_q {Σ q L + H(q)/η} = (1/η) log Σ e^(ηL), softmax maximiser, "
               "max L ≤ R_η ≤ max L + log B/η", where="Lemma 4.1"),
    PaperClaim("T4.2", "square-root (Neyman) law n*_b = n̄ √v_b / Σ q √v minimises Σ q v/n at budget n̄ (Theorem 4.2)",
               where="abstract"),
    PaperClaim("eq27", "no-regret guarantees: the duality gap of the averaged players ≤ (Regret_θ + Regret_q)/T "
               "(Eq. 27)", where="abstract", regime="horizon T"),
)

#: The toy study's worst-group gain (EMA-debiased GDRO 39.6 % − GRPO 33.92 %), the paper's size for the hard-tail rows.
PAPER_TOY_GAIN = 0.396 - 0.3392
#: The inconclusive hard-tail row's bound: we measure less than half the paper's gain.
HARDTAIL_BOUND = PAPER_TOY_GAIN / 2

# Tolerances fixed on the pilot seeds PILOT_SEEDS before the chapter's seed was run (see the notes).
SENSITIVE_RATIO = 0.5
_TUNE = ("bench/gdro_grpo_tuning.py on pilot seeds 9001–9003, criterion the area under the worst-topic pass@8 curve: "
         "GRPO's lr over {0.3, 1, 3, 10, 30}; at the matched lr, η_q and the rival's κ each over the same 5 values")
_PILOT = (f"pilot: seeds 9001–9003 (theorybook.check.PILOT_SEEDS; the chapter's first pilot used "
          f"{PILOT_SEEDS[0]}–{PILOT_SEEDS[-1]}), disjoint from the chapter seed 28 and the robustness seeds 7001–7040")


def _t_crit(n: int) -> float:
    """Two-sided Student-t threshold at 1e-3 for a mean of ``n`` paired runs (``n − 1`` degrees of freedom)."""
    return float(_student.ppf(1.0 - 1e-3 / 2.0, n - 1))


def _lcb(d: np.ndarray) -> float:
    """Lower confidence bound ``mean − t·s.e.`` of paired differences (false alarm ≤ 5e-4 one-sided)."""
    return float(d.mean() - _t_crit(d.size) * d.std(ddof=1) / math.sqrt(d.size))


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    def rank(a: np.ndarray) -> np.ndarray:
        order = np.argsort(a, kind="stable")
        rk = np.empty(a.size)
        rk[order] = np.arange(a.size)
        _, inv, cnt = np.unique(a, return_inverse=True, return_counts=True)  # average ranks over ties
        sums = np.bincount(inv, rk)
        return sums[inv] / cnt[inv]
    rx, ry = rank(x), rank(y)
    if rx.std() == 0 or ry.std() == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def deterministic_verdicts() -> Verdicts:
    """The rows without randomness (fixed numpy seeds 0, 1, 2 for the random instances)."""
    v = Verdicts("GDRO for GRPO — exact and numerical rows", display=False)
    lem = theory.derive_entropic_lemma()
    v.equal("Lemma 4.1 (sympy, B = 3): Lagrange stationarity gives the softmax; value = log-sum-exp/η; "
            "∇R = q; concave", (lem.softmax_gap, lem.value_gap, lem.gradient_gap, lem.concave), (0, 0, 0, True),
            kind="consistency", source="derived", note="exact symbolic")
    lc = lemma_check()
    v.less("Lemma 4.1: numerical maximiser (scipy SLSQP) attains (1/η) log Σ e^(ηL) (max |Δ|, 200 random L)",
           lc.gap, 1e-9, kind="reproduces", source="paper", tests="L4.1",
           control=[Control("the softmax-weighted loss Σ_b softmax(ηL)_b L_b (the maximiser's value without H/η)",
                            lc.softmax_mean_gap,
                            why="a sceptic's closed form: the entropic risk as the softmax-weighted group loss, the "
                                "quantity GDRO's gradient weights suggest",
                            tuned="none needed: a closed form with no parameter, on the same 200 instances"),
                    Control("the hard max max_b L_b (no entropy term)", lc.hard_max_gap,
                            why="plain GDRO's value, the η → ∞ limit",
                            tuned="none needed: no parameter",
                            weak="differs from R_η by the entropy bonus at every finite η, by construction")],
           basis="model: SLSQP with ftol 1e-15 on a smooth strictly concave problem — 1e-9 is its attainable "
                 "accuracy", note="the controls are the values the lemma would have without the entropy bonus")
    v.greater("Lemma 4.1: max L ≤ R_η ≤ max L + log B/η (smallest slack of either bound, 200 random L)",
              min(lc.slack_lo, lc.slack_hi), -1e-12, kind="consistency", source="paper",
              basis="model: float64 log-sum-exp rounding ≤ 1e-12 at these magnitudes",
              note="an inequality of our implementation of the closed form (entropy in [0, log B])")
    sq = theory.derive_sqrt_law()
    v.equal("Theorem 4.2 (sympy): KKT allocation = n̄√v/Σq√v, budget met, VarProxy = (Σq√v)²/n̄, gain over uniform "
            "= a variance", (sq.allocation_gap, sq.budget_gap, sq.varproxy_gap, sq.as_variance), (0, 0, 0, 0),
            kind="consistency", source="derived", note="exact symbolic (B = 3)")
    sc = sqrt_law_check()
    v.less("Theorem 4.2: closed form = scipy SLSQP minimiser (max relative |Δ|, 50 random instances)", sc.gap, 1e-6,
           kind="reproduces", source="paper", tests="T4.2",
           control=[Control("the rival law n_b ∝ v_b (allocation by variance, same budget)", sc.proportional_gap,
                            why="the natural rival of the √-law: give rollouts in proportion to the variance to be "
                                "reduced rather than to its square root",
                            tuned="none needed: a closed form at the same budget n̄ on the same 50 instances"),
                    Control("uniform n_b = n̄ (the do-nothing allocation)", sc.uniform_gap,
                            why="what GRPO does", tuned="none needed: no parameter",
                            weak="differs from the optimum on every instance with unequal variances, by "
                                 "construction")],
           basis="model: SLSQP in log-coordinates with ftol 1e-16; its KKT residual leaves ≲ 1e-8 relative error",
           note="independent numerical solve")
    st = theory.derive_staircase()
    ok = staircase_check()
    v.true("Staircase: the discrete best response steps from n to n+1 at μ = v/(n(n+1))",
           st.threshold_gap == 0 and ok, kind="consistency", source="derived",
           measured=f"sympy gap {st.threshold_gap}, numeric {ok}")
    zs = theory.derive_zero_sum_advantage(4)
    v.equal("Σ_j A_ij = 0 for symbolic rewards (n = 4)", zs.sum_of_advantages, 0, kind="consistency",
            source="reconstruction", note="why the on-policy surrogate gives the adversary no signal")
    v.less("Integer allocation: DP objective = brute-force optimum (max |Δ|, 30 instances)", allocation_check(),
           1e-12, kind="consistency", source="reconstruction", basis="model: float64 rounding of 3-term sums",
           note="two algorithms, same integer problem")
    toy = minimax_toy(B=5, d=2, T=400, seed=0)
    v.less("Eq. 27 bookkeeping: duality gap − (Regret_θ + Regret_q)/T, largest over T = 2..400",
           float(np.max(toy.gap[1:] - toy.bound[1:])), 1e-12, kind="consistency", source="paper",
           basis="model: float64 rounding",
           note="holds for ANY sequence of iterates once the regrets use the best fixed comparators (random θ and "
                "q satisfy it too), so this checks our gap and regret computations, not OGD or Hedge")
    return v


def _check_runs(runs: dict[str, SimResult], ablation: SimResult) -> None:
    if not isinstance(runs, dict) or not isinstance(runs.get("sqrt_law"), SimResult):
        raise TypeError("Invalid runs: must be run_methods(...)'s dict with a 'sqrt_law' SimResult")
    if not isinstance(ablation, SimResult):
        raise TypeError(f"Invalid ablation: {type(ablation).__name__} (must be a SimResult)")


def simulation_verdicts(runs: dict[str, SimResult], ablation: SimResult) -> Verdicts:
    """Rows read off the chapter's runs (``run_methods(seed)``) and the surrogate ablation."""
    _check_runs(runs, ablation)
    sl = runs["sqrt_law"]
    v = Verdicts("GDRO for GRPO — simulation invariants", display=False)
    v.less("Surrogate-loss ablation: Prompt-GDRO's weights stay uniform (max |q_b − 1/B| over runs and steps)",
           float(np.abs(ablation.weight - 1 / ablation.weight.shape[2]).max()), 1e-12, kind="consistency",
           source="reconstruction", basis="model: Σ_j A_ij = 0 up to float64 rounding ⇒ scores stay ≈ 0")
    v.true("√-law allocator (integer DP): VarProxy ≤ uniform n̄ at every step of every run",
           bool(np.all(sl.varproxy <= sl.varproxy_uniform + 1e-12)), kind="consistency", source="paper",
           measured=f"{np.mean(sl.varproxy <= sl.varproxy_uniform + 1e-12):.0%} of steps",
           note="the DP minimises VarProxy and uniform n̄ is feasible")
    v.true("Continuous √-law: WSE ≤ uniform at every step of every run (Jensen)",
           bool(np.all(sl.wse_continuous <= sl.wse_uniform + 1e-12)), kind="consistency", source="derived",
           measured=f"{np.mean(sl.wse_continuous <= sl.wse_uniform + 1e-12):.0%} of steps",
           note="WSE(n*) = E_q[v^{1/4}]·(E_q[v^{1/2}])^{1/2}/√n̄ ≤ E_q[v^{1/2}]/√n̄ = WSE(n̄) (Jensen)")
    return v


@lru_cache(maxsize=2)
def bilinear_plays(seed: int) -> tuple:
    """The plays behind the Eq. 27 rows for ``seed`` (cached: the chapter's figure and its rows share them):
    ``(games, textbook, paper, optimistic)`` — the games, OGD vs Hedge at ``(EQ27_STEP, EQ27_STEP_LAST)``, OGD vs the
    paper's EMA adversary at ``(EQ27_ADV, EQ27_ADV_LAST)``, and the optimistic pair at ``EQ27_OPT``."""
    s = integer("seed", seed, 0)
    games = bilinear_games(s, EQ27_GAMES)
    return (games, no_regret_play(games, BILINEAR_T, (EQ27_STEP, EQ27_STEP_LAST)),
            adversary_play(games, BILINEAR_T, (EQ27_ADV, EQ27_ADV_LAST), adversary="ema"),
            adversary_play(games, BILINEAR_T, (EQ27_OPT,), adversary="optimistic"))


def _eq27_rows(v: Verdicts, seed: int) -> None:
    """Eq. 27 where the last iterate of the textbook pair does not converge: bilinear games drawn from ``seed``
    (:mod:`.games`) — the paper's players (OGD against the EMA-debiased EXP3P adversary) for the paper's claim, the
    textbook pair (OGD against Hedge) as a check of our reconstruction."""
    _, play, pp, op = bilinear_plays(seed)
    T = ", ".join(f"{t:g}" for t in BILINEAR_T)
    grid = "{" + ", ".join(f"{x:g}" for x in STEP_GRID) + "}"
    egrid = "{" + ", ".join(f"{x:g}" for x in EQ27_ETA_GRID) + "}"
    avg = float(gap_slopes(pp.T, pp.avg_gap[:, 0]).mean())
    last = float(gap_slopes(pp.T, pp.last_gap[:, 1]).mean())
    opt = float(gap_slopes(op.T, op.last_gap[:, 0]).mean())
    tune = (f"bench/gdro_grpo_eq27_pilot.py: pilot seeds {TUNING_SEEDS[0]}–{TUNING_SEEDS[-1]} × {EQ27_GAMES} games, "
            f"criterion the row's statistic (the most negative mean slope) over 49 settings")
    v.less(f"Eq. 27 with the paper's players on bilinear group-DRO games: projected OGD (s = {EQ27_ADV[0]:g}) against "
           f"Prompt-GDRO's EMA-debiased EXP3P adversary (η_q = {EQ27_ADV[1]:g}, β 0.1, γ 0.15, C 5) — fitted log–log "
           f"slope of the AVERAGED players' duality gap over T ∈ {{{T}}}, mean over {EQ27_GAMES} games",
           avg, EQ27_ADV_SLOPE, kind="not_specific", source="paper", tests="eq27",
           control=[Control(f"optimistic OGD against optimistic Hedge, LAST iterate (s_θ = {EQ27_OPT[0]:g}, "
                            f"s_q = {EQ27_OPT[1]:g})", opt,
                            why="the sceptic's rival to averaging no-regret players: the standard optimistic pair, "
                                "whose last iterate converges in bilinear games without any average",
                            tuned=f"{tune}: (s_θ, s_q) over {grid} × {grid}, by its own last-iterate slope"),
                    Control(f"the LAST iterate of the paper's players (s = {EQ27_ADV_LAST[0]:g}, "
                            f"η_q = {EQ27_ADV_LAST[1]:g})", last,
                            why="is averaging needed? The last iterate is what a practitioner keeps",
                            tuned=f"{tune}: the same 49 settings (s, η_q) ∈ {grid} × {egrid}, by its own "
                                  "last-iterate slope")],
           scan=Scan("horizon T", BILINEAR_T, tuple(round(float(x), 5) for x in pp.avg_gap[:, 0].mean(-1))),
           basis=f"pilot: the theory's rate −1/2 plus 3.29 × the sd of this 8-game mean slope over pilot seeds "
                 f"9111–9200 at the tuned setting, rounded up to a multiple of 0.05 = {EQ27_ADV_SLOPE:g} "
                 f"(bench/results/gdro_grpo_eq27_pilot.json)",
           note=f"the paper's adversary does not accumulate its losses (an EMA, not a sum), so it has no regret "
                f"guarantee of its own: at the code default η_q = 0.1 its averaged gap does not fall; tuned over "
                f"η_q ∈ {egrid} it does. From T = {BILINEAR_T[0]} to {BILINEAR_T[-1]} the averages' gap goes from "
                f"{pp.avg_gap[0, 0].mean():.3f} to {pp.avg_gap[-1, 0].mean():.4f}, the optimistic pair's last "
                f"iterate from {op.last_gap[0, 0].mean():.3f} to {op.last_gap[-1, 0].mean():.4f}, the paper's players' "
                f"last iterate from {pp.last_gap[0, 1].mean():.3f} to {pp.last_gap[-1, 1].mean():.4f}. Games of ours "
                f"[reconstruction] with exact losses, not the paper's stochastic, clipped players on a language model")
    h_avg = float(gap_slopes(play.T, play.avg_gap[:, 0]).mean())
    h_last_same = float(gap_slopes(play.T, play.last_gap[:, 0]).mean())
    h_last_tuned = float(gap_slopes(play.T, play.last_gap[:, 1]).mean())
    htune = (f"pilot seeds {TUNING_SEEDS[0]}–{TUNING_SEEDS[-1]} × {EQ27_GAMES} games, step scale s over {grid} "
             f"(games.step_tuning), criterion the most negative mean slope")
    v.less(f"our reconstruction: the textbook no-regret pair (projected OGD vs Hedge, s = {EQ27_STEP:g}) on the same "
           f"games — log–log slope of the AVERAGED players' gap over T ∈ {{{T}}}, mean over {EQ27_GAMES} games",
           h_avg, EQ27_SLOPE, kind="consistency", source="reconstruction",
           control=[Control(f"its last iterate at its own tuned step s = {EQ27_STEP_LAST:g}", h_last_tuned,
                            why="shows that these games make the pair cycle, so that only its averages converge",
                            tuned=f"{htune}: s = {EQ27_STEP_LAST:g}"),
                    Control(f"its last iterate on the same runs (s = {EQ27_STEP:g})", h_last_same,
                            why="the same runs without the average", tuned=f"the pair's step ({htune})")],
           basis="pilot: the theory's rate −1/2 plus 3.29 × 0.0215, the sd of this 8-game mean slope over pilot seeds "
                 "9111–9200, = −0.43, rounded up to −0.4",
           note="checks our games and players against the textbook theorem (both players have O(√T) regret, so the "
                "averages' gap falls as T^(−1/2)); it is not the paper's adversary (row above)")
    bound = (play.regret_theta + play.regret_q) / np.asarray(play.T, dtype=float)[:, None, None]
    v.less("Eq. 27 on the bilinear games: |gap(θ̄_T, q̄_T) − (Regret_θ + Regret_q)/T|, largest over horizons, steps "
           "and games (an equality when f is linear in each player)", float(np.abs(play.avg_gap - bound).max()), 1e-9,
           kind="consistency", source="derived",
           basis="model: float64 rounding of sums of ≤ 10⁴ losses of size ≲ 10, divided by T: ≲ 1e-12",
           note="checks our gap and regret computations; the identity holds for any iterates, so it tests no player")


def _fixed_prior(B: int, eta_q: float) -> np.ndarray:
    """The lead–lag control: a fixed difficulty prior ``∝ exp(η_q·(1 − (b + ½)/B))`` — the adversary's weights if
    each bin's score were the failure rate its accuracy interval implies, with no adaptation."""
    return np.exp(eta_q * (1.0 - (np.arange(B) + 0.5) / B))


def seeded_verdicts(seed: int, runs: dict[str, SimResult] | None = None) -> Verdicts:
    """The stochastic rows the chapter shows (8 runs of 60 steps per method, all from ``seed``): Eq. 27 on bilinear
    games; the worst-topic area at the matched steps ``LR_MID`` and ``LR_STAR``; the lead–lag gap at ``LR_MID``; the
    rollout rows at the default lr (``runs``: :func:`~.experiment.seeded_runs`'s dict, or ``None`` to run it)."""
    s = integer("seed", seed, 0)
    if runs is not None and (not isinstance(runs, dict)
                             or any(not isinstance(runs.get(k), SimResult) for k in SEEDED_RUNS)):
        raise TypeError(f"Invalid runs: must be None or seeded_runs(...)'s dict with SimResult values for "
                        f"{SEEDED_RUNS}")
    if runs is None:
        runs = seeded_runs(s)
    ro = runs["rollout_gdro"]
    v = Verdicts("GDRO for GRPO — simulated policy (stochastic rows)", display=False)
    _eq27_rows(v, s)
    z = z_threshold(1e-3)

    # -- the hard tail: worst-topic area, paired over the 8 runs (same worlds)
    g_mid = worst_auc(runs["grpo_mid"])
    d_mid = worst_auc(runs["prompt_mid"]) - g_mid
    r_mid = worst_auc(runs["rival_mid"]) - g_mid
    n = d_mid.size
    tc = _t_crit(n)
    tune = tuning_results()
    v.greater(f"the hard tail at a matched, intermediate step (lr = {LR_MID:g} for every arm): Prompt-GDRO's "
              f"(η_q = {ETA_Q_MID:g}) gain over GRPO in the area under the worst-topic pass@8 curve (mean over steps "
              f"1–60), lower confidence bound mean − t·s.e. over {n} paired runs",
              _lcb(d_mid), 0.0, kind="not_specific", source="paper", tests="hardtail",
              control=Control(f"per-prompt difficulty weighting without bins, EMA or adversary, w_i ∝ exp(κ(1 − "
                              f"acc_i)) capped at ω_max (κ = {KAPPA_MID:g})", _lcb(r_mid),
                              why="the simplest method without the paper's idea: up-weight the prompts the policy "
                                  "fails on, with no groups and no adversary (the ablation of the GDRO game)",
                              tuned=f"{_TUNE}: at lr {LR_MID:g}, κ = {KAPPA_MID:g} "
                                    f"({tune['difficulty_weighted_kappa_at_lr_mid'][str(KAPPA_MID)]:.3f}) and "
                                    f"η_q = {ETA_Q_MID:g} "
                                    f"({tune['prompt_gdro_eta_q_at_lr_mid'][str(ETA_Q_MID)]:.3f})"),
              basis=f"model: paired Student t, {n - 1} degrees of freedom, two-sided 1e-3 (t = {tc:.2f}): a gain "
                    f"that is not there passes with probability ≤ 5e-4",
              note=f"areas: GRPO {g_mid.mean():.3f}, Prompt-GDRO {g_mid.mean() + d_mid.mean():.3f} (gain "
                   f"{d_mid.mean():.3f}), the rival {g_mid.mean() + r_mid.mean():.3f} (gain {r_mid.mean():.3f}). "
                   f"GRPO's lr is not tuned here: the row says what up-weighting buys at a step where learning takes "
                   f"the whole run — and that it is not specific to the GDRO game")
    wg = runs["grpo_star"].topic_pass8[:, 1:].min(2)
    wp = runs["prompt_star"].topic_pass8[:, 1:].min(2)
    gain_star = float((wp.mean(1) - wg.mean(1)).mean())
    planted = float((np.minimum(wp + PAPER_TOY_GAIN, 1.0).mean(1) - wg.mean(1)).mean())
    v.less(f"the hard tail at GRPO's tuned step (lr = {LR_STAR:g}, matched; η_q = {ETA_Q_STAR:g}): Prompt-GDRO's "
           f"gain in the worst-topic area is below half the toy study's gain ({HARDTAIL_BOUND:.4f}), mean over "
           f"{wg.shape[0]} paired runs", gain_star, HARDTAIL_BOUND, kind="inconclusive", source="paper",
           tests="hardtail", paper=PAPER_TOY_GAIN,
           paper_shown=f"+{PAPER_TOY_GAIN:.4f} (worst-group pass@1 33.92 % → 39.6 %, toy study on MATH)",
           planted=Planted("Prompt-GDRO's own worst-topic curve raised by the toy study's gain, capped at pass@8 = 1",
                           planted, effect=f"+{PAPER_TOY_GAIN:.4f} at every step of the method's own arm — the "
                                           "paper's size; the cap leaves only what GRPO has not already reached"),
           basis="paper: half the toy study's worst-group gain (39.6 % − 33.92 %)",
           note=f"a ceiling, not a difference: tuned by the area, GRPO's step goes to the grid's edge, where its area "
                f"is {wg.mean():.4f} and leaves {1 - wg.mean():.4f} of room — less than the paper's gain, so no "
                f"plant at the paper's size can be seen. The world has no cost to a large step (each θ_topic only "
                f"has to grow), so a big enough step solves every topic within a few steps")

    # -- the curriculum: lead–lag with the weight restricted to the batch's non-empty bins
    pm = runs["prompt_mid"]
    B = pm.weight.shape[2]

    def decay(w: np.ndarray | None) -> tuple[float, float, np.ndarray]:
        a = np.abs(lead_lag(pm, w))
        e = a[:, :10].mean(1) - a[:, -10:].mean(1)
        return _lcb(e), float(e.mean()), a

    ll, ll_mean, a_adv = decay(None)
    lp, lp_mean, _ = decay(_fixed_prior(B, ETA_Q_MID))
    lu, lu_mean, _ = decay(np.ones(B))
    v.greater(f"Prompt-GDRO's lead–lag at lr = {LR_MID:g}: |Δµ̃| (weight restricted to the batch's non-empty bins) "
              f"over the first 10 steps minus over the last 10 — the lead decays — lower confidence bound over "
              f"{n} runs", ll, 0.0, kind="not_specific", source="paper", tests="curriculum",
              control=[Control(f"a fixed difficulty prior q_b ∝ exp(η_q(1 − (b + ½)/B)) (η_q = {ETA_Q_MID:g}, no "
                               "adaptation), on the same runs' data", lp, shown=f"{lp:.4g} (mean {lp_mean:.3f})",
                               why="the mechanical explanation: any fixed preference for low-accuracy bins leads the "
                                   "data while they spread over the bins and meets them once they crowd into the "
                                   "solved bin",
                               tuned="none needed: the adversary's own η_q and bins, the same runs"),
                       Control("uniform weight over the batch's non-empty bins, on the same runs' data", lu,
                               shown=f"{lu:.4g} (mean {lu_mean:.3f})",
                               why="the do-nothing adversary, restricted the same way: does the decay come from the "
                                   "restriction to non-empty bins alone?",
                               tuned="none needed: no parameter")],
              basis=f"model: paired Student t over the runs, two-sided 1e-3 (t = {tc:.2f})",
              note=f"early − late {ll_mean:.3f} bins (|Δµ̃| {a_adv[:, :10].mean():.2f} → {a_adv[:, -10:].mean():.2f}). "
                   f"The weight is restricted because an empty bin's EMA score is frozen in our simulator, so weight "
                   f"parked on it says nothing about the data (with it, |Δµ| grows). Bin 0 = lowest accuracy here, so "
                   f"the row compares magnitudes")

    # -- the rollout controller
    last = slice(-20, None)
    x = ro.vhat[:, last].reshape(-1)
    y = ro.arms[:, last].reshape(-1)
    used = ro.alloc_share[:, last].reshape(-1) > 0
    rho = _spearman(x[used], y[used])
    m = int(used.sum())
    v.greater("Rollout-GDRO (EXP3P + DP): arms rise with the bin's v̂ (Spearman ρ lower bound, last 20 steps)",
              rho - z / math.sqrt(max(m - 3, 1)), 0.0, kind="consistency", source="reconstruction",
              basis=f"model: Fisher-z lower bound ρ − z/√(m−3), z = {z:.2f}, m = {m} (run, step, bin) cells",
              note="true by construction of our arm loss v̂/n + μn (its best response is √(v̂/μ)): checks that the "
                   "EXP3P controller and the DP follow their loss, not the paper's multiplier effect")
    v.equal("Rollout-GDRO: realised mean rollouts per prompt = n̄ at every step (all runs)",
            bool(np.all(ro.mean_rollouts == 4.0)), True, kind="consistency", source="paper",
            note="the DP meets Σ_b c_b n_b = n̄ Σ_b c_b exactly; unseen prompts get n̄")
    wse_red = 1.0 - ro.wse.mean() / ro.wse_uniform.mean()
    opt = 1.0 - ro.wse_continuous.mean() / ro.wse_uniform.mean()
    v.between("Rollout-GDRO: weighted SE proxy WSE = Σ_b ĉ_b √v̂_b/√n_b, reduction vs uniform n̄ (mean over steps "
              "and runs)", wse_red, 0.0, 0.10, kind="inconclusive", source="paper", tests="wse", paper=0.226,
              untestable=f"no allocator can reach the paper's 22.6 % in this simulator: the continuous √-law optimum "
                         f"on the same runs reduces WSE by {opt:.3f}, and the worlds tried for a planted control "
                         "(harder, bimodal, impossible common topics) stayed below 0.11 even late in training",
              basis=_PILOT + ": 0.018–0.022 (8 runs each); [0, 0.10] leaves ≥ 0.018 below and ≥ 0.078 above, > 8× "
                    "the seed-to-seed spread",
              note=f"from our instance (6 bins, 7-parameter policy): the paper's 22.6 % (also 37.1 %, 33.4 %) is far "
                   f"outside, but so it is for the optimum ({opt:.3f}), so the row cannot tell a weak allocator from a "
                   "world without variance to exploit")
    return v


def _ratio(x: np.ndarray) -> float:
    """Smallest / largest gain across a scan (0 when no gain is positive)."""
    return float(x.min() / x.max()) if x.max() > 0 else 0.0


def sensitivity_verdicts(scan: dict, knobs: dict) -> Verdicts:
    """The sensitivity rows: η_q from :func:`~.experiment.eta_scan` (differs), the EMA β and bins scans of
    :func:`~.experiment.knob_scan` (each against the η_q scan as the knob that must fail the same test); run by the
    chapter at lr 0.3, not per seed."""
    if not isinstance(scan, dict) or not {"eta_q", "gain", "planted_gain"} <= set(scan):
        raise TypeError("Invalid scan: must be eta_scan(...)'s dict (keys eta_q, gain, planted_gain)")
    if not isinstance(knobs, dict) or not {"beta", "beta_gain", "bins", "bins_gain", "rival_gain"} <= set(knobs):
        raise TypeError("Invalid knobs: must be knob_scan(...)'s dict (keys beta, beta_gain, bins, bins_gain, "
                        "rival_gain)")
    v = Verdicts("GDRO for GRPO — sensitivity to hyperparameters", display=False)
    gain, pl = np.asarray(scan["gain"], dtype=float), np.asarray(scan["planted_gain"], dtype=float)
    beta = np.asarray(knobs["beta_gain"], dtype=float)
    bins = np.asarray(knobs["bins_gain"], dtype=float)
    model = ("model: a ratio below ½ means the gain changes by more than 2× across the scan; each gain is an 8-run "
             "mean with s.e. ≈ 0.01 (pilot), so a flat gain of ≥ 0.1 gives a ratio above 0.8")
    v.less(f"sensitivity to η_q (one of the 'several key hyperparameters'): smallest / largest Prompt-GDRO gain in "
           f"worst-topic pass@8 over GRPO after 60 steps across η_q ∈ {{{', '.join(f'{e:g}' for e in scan['eta_q'])}}} "
           f"(lr 0.3, 8 runs per point)", _ratio(gain), SENSITIVE_RATIO, kind="differs", source="paper",
           tests="sensitivity", paper=1.0,
           paper_shown="low sensitivity: about the same gain across the scan (ratio ≈ 1)",
           planted=Planted("the same scan with η_q frozen at 3 (four independent seed sets)", _ratio(pl),
                           effect=f"a hyperparameter without effect by construction: gains "
                                  f"{', '.join(f'{x:.3f}' for x in pl)}"),
           scan=Scan("η_q", tuple(scan["eta_q"]), tuple(round(float(x), 4) for x in gain)),
           basis=model,
           note=f"gains {', '.join(f'{x:.3f}' for x in gain)}: the effect needs η_q ≳ 1 here (the scan starts at the "
                f"code default 0.1, which on failure rates in [0, 1] moves the weights by less than 11 %; from 0.3 the "
                f"ratio is {_ratio(gain[1:]):.3f}). γ never reaches the training (it mixes q, but the advantages are "
                f"scaled by ω), so it has no row. Run at lr 0.3, where GRPO is untuned and there is a gain to be "
                f"sensitive about: at GRPO's tuned step (lr {LR_STAR:g}) every arm sits at the ceiling")
    rival = float(knobs["rival_gain"])
    eta_control = Control(f"the same test on η_q, the adversary's step (the scan of the η_q row: gains "
                          f"{', '.join(f'{x:.3f}' for x in gain)})", _ratio(gain),
                          why="the sceptic's alternative for a 'low sensitivity' row: that this world and this test "
                              "call every knob insensitive — a knob of the same method that moves the weights must "
                              "fail the same test",
                          tuned="none needed: the registered η_q scan, same lr 0.3, worlds, runs and threshold")
    context = (f"The rival without bins, EMA or adversary (per-prompt weights exp(κ(1 − acc_i)), κ = 3 = η_q) gains "
               f"{rival:.3f} at the same lr and worlds — more than Prompt-GDRO at any point of the β and bins scans "
               f"(largest {max(beta.max(), bins.max()):.3f}) — so the low sensitivity is consistent with these knobs "
               f"carrying little of the gain (the hard-tail rows test that gain). Scanned once at the chapter seed, "
               f"registered (BETA_SCAN, BINS_SCAN) before the results")
    v.greater(f"sensitivity to the EMA β (one of the 'several key hyperparameters'): smallest / largest Prompt-GDRO "
              f"gain in worst-topic pass@8 over GRPO after 60 steps across β ∈ "
              f"{{{', '.join(f'{x:g}' for x in knobs['beta'])}}} (lr 0.3, η_q = 3, 6 bins, 8 runs per point)",
              _ratio(beta), SENSITIVE_RATIO, kind="reproduces", source="paper", tests="sensitivity",
              control=eta_control, scan=Scan("EMA β", tuple(knobs["beta"]), tuple(round(float(x), 4) for x in beta)),
              basis=model, note=f"gains {', '.join(f'{x:.3f}' for x in beta)}. {context}")
    v.greater(f"sensitivity to the number of bins (one of the 'several key hyperparameters'): smallest / largest "
              f"Prompt-GDRO gain in worst-topic pass@8 over GRPO after 60 steps across bins ∈ "
              f"{{{', '.join(f'{x:d}' for x in knobs['bins'])}}} (lr 0.3, η_q = 3, β = 0.1, 8 runs per point)",
              _ratio(bins), SENSITIVE_RATIO, kind="reproduces", source="paper", tests="sensitivity",
              control=eta_control, scan=Scan("bins", tuple(knobs["bins"]), tuple(round(float(x), 4) for x in bins)),
              basis=model, note=f"gains {', '.join(f'{x:.3f}' for x in bins)}. {context}")
    return v


def headline(runs: dict[str, SimResult], ablation: SimResult, scan: dict, knobs: dict, seed: int = 28, *,
             seeded: dict[str, SimResult] | None = None) -> Verdicts:
    """The chapter's table: every row above, with ``PAPER_CLAIMS`` (shown by the chapter). The arguments are
    checked before any row is computed."""
    _check_runs(runs, ablation)
    integer("seed", seed, 0)
    v = Verdicts("GDRO for GRPO — headline claims", claims=PAPER_CLAIMS)
    v.extend(deterministic_verdicts())
    v.extend(simulation_verdicts(runs, ablation))
    v.extend(sensitivity_verdicts(scan, knobs))
    v.extend(seeded_verdicts(seed, seeded))
    return v
