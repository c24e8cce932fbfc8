"""Every row the GDRO-for-GRPO chapter shows, the paper's claims they test, and the controls.

``deterministic_verdicts()`` — sympy, the numerical checks of Lemma 4.1 / Theorem 4.2, the staircase, the DP and
Eq. 27 on the convex toy; ``simulation_verdicts(runs, ablation)`` — the rows read off the chapter's runs that the
seed-robustness test does not re-run (√-law allocator, surrogate ablation); ``seeded_verdicts(seed, runs)`` — the
stochastic rows, re-run on 20 unseen seeds by ``tests/test_seed_robustness.py``; ``headline(runs, ablation)`` —
the chapter's table (all of them, with ``PAPER_CLAIMS``).
"""

from __future__ import annotations

import math

import numpy as np

from ..check import Control, PaperClaim, Verdicts, z_threshold
from ..validate import integer
from . import theory
from .experiment import (
    PILOT_SEEDS,
    SimResult,
    allocation_check,
    lemma_check,
    minimax_toy,
    run_methods,
    sqrt_law_check,
    staircase_check,
)

__all__ = ["PAPER_CLAIMS", "WORST_GAIN_BOUND", "deterministic_verdicts", "headline", "seeded_verdicts",
           "simulation_verdicts"]

PAPER_CLAIMS: tuple[PaperClaim, ...] = (
    PaperClaim("pass8", "Prompt-GDRO and Rollout-GDRO raise pass@8 over GRPO (+9–13 % on Qwen3-1.7B/4B/8B-Base, "
               "DAPO-Math)", quoted_only=True,
               why="needs LLM training; the chapter's 7-parameter simulated policy is not the paper's setting"),
    PaperClaim("curriculum", "the adversary over online difficulty bins acts as an emergent curriculum: weight leads "
               "the data (Δµ = µ_weight − µ_data positive early, then decays)", where="abstract, Fig. 1"),
    PaperClaim("wse", "Rollout-GDRO lowers the weighted SE proxy by 37.1 % / 22.6 % / 33.4 % at equal budget",
               where="§5"),
    PaperClaim("L4.1", "entropic GDRO: max_q {Σ q L + H(q)/η} = (1/η) log Σ e^(ηL), softmax maximiser, "
               "max L ≤ R_η ≤ max L + log B/η", where="Lemma 4.1"),
    PaperClaim("T4.2", "square-root (Neyman) law n*_b = n̄ √v_b / Σ q √v minimises Σ q v/n at budget n̄",
               where="Theorem 4.2"),
    PaperClaim("eq27", "no-regret players: duality gap of the averages ≤ (Regret_θ + Regret_q)/T", where="Eq. 27",
               quoted_only=True,
               why="the inequality holds for any sequence of iterates once the regrets are computed against the best "
                   "fixed comparators, so a numerical check cannot test it; shown as a consistency check"),
)

# Tolerances fixed on the pilot seeds PILOT_SEEDS before the chapter's seed was run (see the notes).
WORST_GAIN_BOUND = 0.08
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
           control=Control("the hard max max_b L_b (no entropy term)", lc.hard_max_gap),
           basis="model: SLSQP with ftol 1e-15 on a smooth strictly concave problem — 1e-9 is its attainable "
                 "accuracy", note="the control is the value the lemma would have without the entropy bonus")
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
           control=Control("uniform n_b = n̄ (the do-nothing allocation)", sc.uniform_gap),
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


def seeded_verdicts(seed: int, runs: dict[str, SimResult] | None = None) -> Verdicts:
    """The stochastic rows the chapter shows (8 runs of 60 steps per method, all from ``seed``)."""
    s = integer("seed", seed, 0)
    need = ("grpo", "prompt_gdro", "rollout_gdro")
    if runs is not None and (not isinstance(runs, dict) or any(not isinstance(runs.get(k), SimResult) for k in need)):
        raise TypeError(f"Invalid runs: must be None or a dict from run_methods with SimResult values for {need}")
    if runs is None:
        runs = run_methods(s, methods=need, curves=False)
    g, pg, ro = runs["grpo"], runs["prompt_gdro"], runs["rollout_gdro"]
    v = Verdicts("GDRO for GRPO — simulated policy (stochastic rows)", display=False)
    d = pg.topic_pass8[:, -1].min(1) - g.topic_pass8[:, -1].min(1)
    se = d.std(ddof=1) / math.sqrt(d.size)
    z = z_threshold(1e-3)
    v.greater(f"simulated policy: Prompt-GDRO (η_q = 3) raises worst-topic pass@8 over GRPO at 60 steps (mean gain "
              f"over {d.size} paired runs)", d.mean(), WORST_GAIN_BOUND, kind="consistency", source="derived",
              basis=_PILOT + f": the 8-run mean gain was 0.119–0.148 with a paired run-to-run sd ≤ 0.030, so the "
                    f"mean has sd ≤ 0.0105; threshold = 0.119 − {z:.2f} × 0.0105 = 0.084, rounded down to "
                    f"{WORST_GAIN_BOUND:g} (the first pilot, seeds {PILOT_SEEDS[0]}–{PILOT_SEEDS[-1]}, had used 0.1)",
              note=f"our simulator, not the paper's LLM claim. The gain needs the tuned η_q = 3: at the code default "
                   f"η_q = 0.1 it nearly vanishes (see the chapter). This run's s.e. {se:.3f}")
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
    early = np.abs(pg.delta_mu[:, :10]).mean(1)
    late = np.abs(pg.delta_mu[:, -10:]).mean(1)
    dd = early - late
    sed = dd.std(ddof=1) / math.sqrt(dd.size)
    v.less(f"Prompt-GDRO lead–lag: |Δµ| over the first 10 steps − over the last 10 (mean over runs, plus {z:.2f} "
           "s.e.): the gap GROWS here", dd.mean() + z * sed, 0.0, kind="differs", source="paper", tests="curriculum",
           paper="Δµ(t) = µ_weight − µ_data is positive early and decays",
           basis="model: one-sided upper confidence bound at α = 1e-3 from the runs' paired spread",
           note="from our instance, not a contradiction of the paper: the data never catch up with the weights in 60 "
                "steps. Sign depends on the bin convention (here bin 0 = lowest accuracy), so the row compares "
                "magnitudes. Pilot seeds 9001–9003: early ≈ 1.3, late ≈ 3.1 bins")
    wse_red = 1.0 - ro.wse.mean() / ro.wse_uniform.mean()
    v.between("Rollout-GDRO: weighted SE proxy WSE = Σ_b ĉ_b √v̂_b/√n_b, reduction vs uniform n̄ (mean over steps "
              "and runs)", wse_red, 0.0, 0.10, kind="differs", source="paper", tests="wse", paper=0.226,
              basis=_PILOT + ": 0.018–0.022 (8 runs each); [0, 0.10] leaves ≥ 0.018 below and ≥ 0.078 above, > 8× "
                    "the seed-to-seed spread",
              note="from our instance (6 bins, 7-parameter policy): the paper's 22.6 % (also 37.1 %, 33.4 %) is far "
                   "outside")
    return v


def headline(runs: dict[str, SimResult], ablation: SimResult, seed: int = 28) -> Verdicts:
    """The chapter's table: every row above, with ``PAPER_CLAIMS`` (shown by the chapter). The arguments are
    checked before any row is computed."""
    _check_runs(runs, ablation)
    integer("seed", seed, 0)
    v = Verdicts("GDRO for GRPO — headline claims", claims=PAPER_CLAIMS)
    v.extend(deterministic_verdicts())
    v.extend(simulation_verdicts(runs, ablation))
    v.extend(seeded_verdicts(seed, runs))
    return v
