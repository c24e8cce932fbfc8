"""Every row the GDRO-for-GRPO chapter shows, the paper's claims they test, and the controls.

``deterministic_verdicts()`` — sympy, the numerical checks of Lemma 4.1 / Theorem 4.2, the staircase, the DP and
Eq. 27 on the convex toy; ``simulation_verdicts(runs, ablation)`` — the rows read off the chapter's runs that the
seed-robustness test does not re-run (√-law allocator, surrogate ablation); ``seeded_verdicts(seed, runs)`` — the
stochastic rows (with Eq. 27 on bilinear games drawn from the seed), re-run on 20 unseen seeds by
``tests/test_seed_robustness.py``; ``headline(runs, ablation)`` — the chapter's table (all of them, with
``PAPER_CLAIMS``).
"""

from __future__ import annotations

import math

import numpy as np

from ..check import Control, PaperClaim, Planted, Scan, Verdicts, z_threshold
from ..validate import integer
from . import theory
from .experiment import (
    LR_STAR,
    PILOT_SEEDS,
    SimResult,
    allocation_check,
    lemma_check,
    minimax_toy,
    seeded_runs,
    sqrt_law_check,
    staircase_check,
    tuning_results,
)
from .games import (
    BILINEAR_T,
    EQ27_GAMES,
    EQ27_SLOPE,
    EQ27_STEP,
    EQ27_STEP_LAST,
    STEP_GRID,
    TUNING_SEEDS,
    bilinear_games,
    gap_slopes,
    no_regret_play,
)

__all__ = ["PAPER_CLAIMS", "MATCHED_GAIN_BOUND", "SENSITIVE_RATIO", "deterministic_verdicts", "headline",
           "seeded_verdicts", "sensitivity_verdicts", "simulation_verdicts"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("pass8", "Prompt-GDRO and Rollout-GDRO raise pass@8 over GRPO (+9–13 % on Qwen3-1.7B/4B/8B-Base, "
               "DAPO-Math)", quoted_only=True, reason_class="language model",
               why="needs LLM training; the chapter's 7-parameter simulated policy is not the paper's setting"),
    PaperClaim("sensitivity", "GDRO shows low sensitivity to several key hyperparameters", regime="η_q"),
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

# Tolerances fixed on the pilot seeds PILOT_SEEDS before the chapter's seed was run (see the notes).
MATCHED_GAIN_BOUND = 0.05
SENSITIVE_RATIO = 0.5
_TUNE = ("pilot: bench/gdro_grpo_tuning.py on PILOT seeds 9001–9003 — GRPO's lr over {0.1, 0.3, 1, 3}, the grid η_q "
         "got; lr 3 best (worst-topic pass@8 0.99 vs 0.30 at lr 0.3)")
_PILOT = (f"pilot: seeds 9001–9003 (theorybook.check.PILOT_SEEDS; the chapter's first pilot used "
          f"{PILOT_SEEDS[0]}–{PILOT_SEEDS[-1]}), disjoint from the chapter seed 28 and the robustness seeds 7001–7040")


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
    v.less("Theorem 4.2: Σ q n* = n̄ (max |error|)", sc.budget, 1e-12, kind="consistency", source="paper",
           basis="model: float64 rounding of a 6-term sum")
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


def _eq27_rows(v: Verdicts, seed: int) -> None:
    """Eq. 27 where the last iterate does not converge: bilinear games drawn from ``seed`` (:mod:`.games`)."""
    play = no_regret_play(bilinear_games(seed, EQ27_GAMES), BILINEAR_T, (EQ27_STEP, EQ27_STEP_LAST))
    avg = float(gap_slopes(play.T, play.avg_gap[:, 0]).mean())
    last_same = float(gap_slopes(play.T, play.last_gap[:, 0]).mean())
    last_tuned = float(gap_slopes(play.T, play.last_gap[:, 1]).mean())
    grid = "{" + ", ".join(f"{x:g}" for x in STEP_GRID) + "}"
    tune = (f"pilot seeds {TUNING_SEEDS[0]}–{TUNING_SEEDS[-1]} × {EQ27_GAMES} games, step scale s over {grid} "
            f"(games.step_tuning), criterion the row's statistic (the most negative mean slope)")
    T = ", ".join(f"{t:g}" for t in BILINEAR_T)
    v.less(f"Eq. 27 on bilinear group-DRO games (ours; OGD vs Hedge, fixed-horizon steps, s = {EQ27_STEP:g}): fitted "
           f"log–log slope of the AVERAGED players' duality gap over T ∈ {{{T}}}, mean over {EQ27_GAMES} games",
           avg, EQ27_SLOPE, kind="reproduces", source="paper", tests="eq27",
           control=[Control(f"the last iterate (θ_T, q_T) at its own tuned step s = {EQ27_STEP_LAST:g}", last_tuned,
                            why="the sceptic's question — is averaging needed? The last iterate is what a practitioner "
                                "keeps, and on the chapter's strongly convex toy it converges faster than the average",
                            tuned=f"{tune}: s = {EQ27_STEP_LAST:g} for the last iterate (mean slope −0.133), "
                                  f"s = {EQ27_STEP:g} for the averages (−0.546)"),
                    Control(f"the last iterate of the same runs (s = {EQ27_STEP:g})", last_same,
                            why="the same players and runs without the averaging step",
                            tuned=f"the method's step s = {EQ27_STEP:g} ({tune})")],
           scan=Scan("horizon T", BILINEAR_T, tuple(round(float(x), 5) for x in play.avg_gap[:, 0].mean(-1))),
           basis="pilot: the theory's rate −1/2 plus 3.29 × 0.0215, the sd of this 8-game mean slope over pilot "
                 "seeds 9111–9200 (mean −0.540, never above −0.481), = −0.43, rounded up to −0.4; on the same pilots "
                 "the tuned last iterate gave −0.109 ± 0.028 (never below −0.168), 10 sd above the threshold",
           note=f"a game of ours [reconstruction], linear in θ on a box with a planted interior equilibrium, so "
                f"simultaneous play cycles: from T = {BILINEAR_T[0]} to {BILINEAR_T[-1]} the averages' gap falls from "
                f"{play.avg_gap[0, 0].mean():.3f} to {play.avg_gap[-1, 0].mean():.4f}, the last iterate's from "
                f"{play.last_gap[0, 1].mean():.2f} to {play.last_gap[-1, 1].mean():.2f} (s = {EQ27_STEP_LAST:g}) and "
                f"from {play.last_gap[0, 0].mean():.2f} to {play.last_gap[-1, 0].mean():.2f} (s = {EQ27_STEP:g})")
    bound = (play.regret_theta + play.regret_q) / np.asarray(play.T, dtype=float)[:, None, None]
    v.less("Eq. 27 on the bilinear games: |gap(θ̄_T, q̄_T) − (Regret_θ + Regret_q)/T|, largest over horizons, steps "
           "and games (an equality when f is linear in each player)", float(np.abs(play.avg_gap - bound).max()), 1e-9,
           kind="consistency", source="derived",
           basis="model: float64 rounding of sums of ≤ 10⁴ losses of size ≲ 10, divided by T: ≲ 1e-12",
           note="checks our gap and regret computations; the identity holds for any iterates, so it tests no player")


def seeded_verdicts(seed: int, runs: dict[str, SimResult] | None = None) -> Verdicts:
    """The stochastic rows the chapter shows (8 runs of 60 steps per method, all from ``seed``): GRPO and Prompt-GDRO
    at the tuned, matched step size ``LR_STAR``; Rollout-GDRO at the default lr (its rows concern the allocation)."""
    s = integer("seed", seed, 0)
    need = ("grpo", "prompt_gdro", "rollout_gdro")
    if runs is not None and (not isinstance(runs, dict) or any(not isinstance(runs.get(k), SimResult) for k in need)):
        raise TypeError(f"Invalid runs: must be None or a dict from seeded_runs with SimResult values for {need}")
    if runs is None:
        runs = seeded_runs(s)
    g, pg, ro = runs["grpo"], runs["prompt_gdro"], runs["rollout_gdro"]
    v = Verdicts("GDRO for GRPO — simulated policy (stochastic rows)", display=False)
    _eq27_rows(v, s)
    d = pg.topic_pass8[:, -1].min(1) - g.topic_pass8[:, -1].min(1)
    se = d.std(ddof=1) / math.sqrt(d.size)
    z = z_threshold(1e-3)
    v.less(f"simulated policy at matched, tuned step sizes (lr = {LR_STAR:g} for both): Prompt-GDRO's (η_q = 3) gain "
           f"in worst-topic pass@8 over GRPO at 60 steps, mean over {d.size} paired runs",
           d.mean(), MATCHED_GAIN_BOUND, kind="consistency", source="derived",
           basis=_TUNE + f": at lr = {LR_STAR:g} the 8-run mean gain was 0.009–0.015 (s.e. ≤ 0.0045); the bound "
                 f"{MATCHED_GAIN_BOUND:g} is a third of the untuned gain (0.12–0.15 at lr 0.3). (An upper confidence "
                 "bound, mean + 3.29 s.e., reached 0.049 on the robustness seeds, so the row tests the mean)",
           note=f"our simulator, not the paper's LLM claim: the large gain the chapter once reported "
                f"(≈ 0.13 at lr 0.3) "
                f"came from an untuned GRPO baseline; tuned with the budget η_q got, GRPO reaches worst-topic pass@8 "
                f"≈ 0.99 and leaves Prompt-GDRO {d.mean():.4f} (s.e. {se:.4f}) to gain")
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

    def leadlag(dm: np.ndarray) -> float:
        dd = np.abs(dm[:, :10]).mean(1) - np.abs(dm[:, -10:]).mean(1)
        return float(dd.mean() + z * dd.std(ddof=1) / math.sqrt(dd.size))

    v.less(f"Prompt-GDRO lead–lag: |Δµ| over the first 10 steps − over the last 10 (mean over runs, plus {z:.2f} "
           "s.e.): the gap GROWS here", leadlag(pg.delta_mu), 0.0, kind="differs", source="paper", tests="curriculum",
           paper=0.1, paper_shown="Δµ(t) positive early, then decays: early − late > 0 (Fig. 1 gives no size; a "
                                  "tenth of a bin stands for 'positive')",
           planted=Planted("the same runs' Δµ(t) reversed in time", leadlag(pg.delta_mu[:, ::-1]),
                           effect="a lead that decays, at our runs' own magnitude: the row sees it"),
           basis="model: one-sided upper confidence bound at α = 1e-3 from the runs' paired spread",
           note="from our instance, not a contradiction of the paper: the data never catch up with the weights in 60 "
                "steps. Sign depends on the bin convention (here bin 0 = lowest accuracy), so the row compares "
                "magnitudes")
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


def sensitivity_verdicts(scan: dict) -> Verdicts:
    """The η_q-sensitivity row from :func:`~.experiment.eta_scan` (run by the chapter, not per seed)."""
    if not isinstance(scan, dict) or not {"eta_q", "gain", "planted_gain"} <= set(scan):
        raise TypeError("Invalid scan: must be eta_scan(...)'s dict (keys eta_q, gain, planted_gain)")
    v = Verdicts("GDRO for GRPO — sensitivity to η_q", display=False)
    gain, pl = np.asarray(scan["gain"], dtype=float), np.asarray(scan["planted_gain"], dtype=float)

    def spread(x: np.ndarray) -> float:
        return float(x.min() / x.max()) if x.max() > 0 else 0.0

    v.less(f"sensitivity to η_q: smallest / largest Prompt-GDRO gain in worst-topic pass@8 over GRPO across the scan "
           f"η_q ∈ {{{', '.join(f'{e:g}' for e in scan['eta_q'])}}} (lr 0.3, 8 runs per point)", spread(gain),
           SENSITIVE_RATIO, kind="differs", source="paper", tests="sensitivity", paper=1.0,
           paper_shown="low sensitivity: about the same gain across the scan (ratio ≈ 1)",
           planted=Planted("the same scan with η_q frozen at 3 (four independent seed sets)", spread(pl),
                           effect=f"a hyperparameter without effect by construction: gains "
                                  f"{', '.join(f'{x:.3f}' for x in pl)}"),
           scan=Scan("η_q", tuple(scan["eta_q"]), tuple(round(float(x), 4) for x in gain)),
           basis="model: a ratio below ½ means the gain changes by more than 2× across the scan; each gain is an "
                 "8-run mean with s.e. ≈ 0.01 (pilot), so a flat gain of ≥ 0.1 gives a ratio above 0.8",
           note=f"gains {', '.join(f'{x:.3f}' for x in gain)}: the effect needs η_q ≳ 1 at lr 0.3. At the tuned lr "
                f"{LR_STAR:g} every η_q gives ≤ {tuning_results()['tuned_gain_max']:.3f} on the pilots "
                "(bench/results/gdro_grpo_tuning.json) — insensitive, because tuned GRPO leaves little to gain")
    return v


def headline(runs: dict[str, SimResult], ablation: SimResult, scan: dict, seed: int = 28, *,
             tuned: dict[str, SimResult] | None = None) -> Verdicts:
    """The chapter's table: every row above, with ``PAPER_CLAIMS`` (shown by the chapter). The arguments are
    checked before any row is computed."""
    _check_runs(runs, ablation)
    integer("seed", seed, 0)
    v = Verdicts("GDRO for GRPO — headline claims", claims=PAPER_CLAIMS)
    v.extend(deterministic_verdicts())
    v.extend(simulation_verdicts(runs, ablation))
    v.extend(sensitivity_verdicts(scan))
    v.extend(seeded_verdicts(seed, tuned))
    return v
