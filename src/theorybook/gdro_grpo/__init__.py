"""Group-DRO for GRPO: an adversary over difficulty bins turns GRPO into a curriculum (Panaganti et al., ICML 2026,
arXiv 2601.19280), on a simulated 7-parameter policy (no LLM).

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):

``entropic_risk(L, eta)``, ``entropic_weights(L, eta)`` — Lemma 4.1's log-sum-exp value and softmax maximiser.
``exp3p_weights(scores, *, eta_q, gamma, clip) -> (omega, q)`` — Prompt-GDRO's EXP3P adversary.
``neyman_allocation(q, v, n_bar)`` — Theorem 4.2's square-root law; ``allocate_rollouts(counts, v, n_bar, arms)``
its integer version at the exact budget (DP); ``best_response_arm(v, mu, arms)`` the shadow-price staircase.
``pass_at_k(p, k)`` — ``1 − (1 − p)^k``.
``simulate(method, ...)`` — GRPO / Prompt-GDRO / Rollout-GDRO (EXP3P + DP) / √-law allocator / the sceptic's
per-prompt difficulty weighting, batched over seeds; ``worst_auc(r)`` (area under the worst-topic pass@8 curve) and
``lead_lag(r, weight)`` (Δµ̃ with the weight restricted to the batch's non-empty bins).
``minimax_toy(...)`` — Eq. 27 on a convex toy (OGD vs Hedge); ``bilinear_games(seed)``, ``no_regret_play(games, T,
scales)``, ``duality_gap(games, θ, q)``, ``gap_slopes(T, y)``, ``step_tuning()`` — Eq. 27 on bilinear games, where
only the averaged iterates of the textbook pair converge, and ``adversary_play(games, T, settings, adversary=)`` —
the paper's EMA adversary against OGD, or the optimistic pair (:mod:`.games`); ``lemma_check()``, ``sqrt_law_check()``,
``staircase_check()``, ``allocation_check()`` — the numerical checks of the statements.
:mod:`theorybook.gdro_grpo.verdicts` — every row the chapter shows: ``PAPER_CLAIMS``, ``deterministic_verdicts()``,
``seeded_verdicts(seed)``, ``sensitivity_verdicts(scan, knobs)``, ``headline(...)``; ``CHAPTER_SEEDS``.
Sympy derivations: :mod:`theorybook.gdro_grpo.theory`. Widget: :func:`theorybook.gdro_grpo.widgets.explorer`.
"""

from .experiment import (
    CHAPTER_SEEDS,
    ETA_SCAN,
    LR_STAR,
    METHODS,
    PILOT_SEEDS,
    MinimaxToy,
    SimResult,
    allocation_check,
    eta_scan,
    knob_scan,
    lead_lag,
    lemma_check,
    minimax_toy,
    run_methods,
    seeded_runs,
    simulate,
    sqrt_law_check,
    staircase_check,
    worst_auc,
)
from .games import (
    BILINEAR_T,
    EQ27_STEP,
    EQ27_STEP_LAST,
    STEP_GRID,
    adversary_play,
    bilinear_games,
    duality_gap,
    gap_slopes,
    no_regret_play,
    step_tuning,
)
from .theory import (
    allocate_rollouts,
    best_response_arm,
    entropic_risk,
    entropic_weights,
    exp3p_weights,
    neyman_allocation,
    pass_at_k,
)
from .verdicts import PAPER_CLAIMS, deterministic_verdicts, seeded_verdicts, sensitivity_verdicts

__all__ = [
    "CHAPTER_SEEDS", "ETA_SCAN", "LR_STAR", "METHODS", "PAPER_CLAIMS", "PILOT_SEEDS", "MinimaxToy", "SimResult",
    "allocate_rollouts",
    "allocation_check", "best_response_arm", "deterministic_verdicts", "entropic_risk", "entropic_weights",
    "exp3p_weights", "lemma_check", "minimax_toy", "neyman_allocation", "pass_at_k", "run_methods",
    "seeded_verdicts", "simulate", "sqrt_law_check", "staircase_check", "eta_scan", "seeded_runs",
    "sensitivity_verdicts", "BILINEAR_T", "EQ27_STEP", "EQ27_STEP_LAST", "STEP_GRID", "bilinear_games", "duality_gap",
    "gap_slopes", "no_regret_play", "step_tuning", "adversary_play", "knob_scan", "lead_lag", "worst_auc",
]

#: Cheap valid arguments for tests/test_api_fuzz.py (the other parameters keep their defaults).
FUZZ_BASE = {
    "entropic_risk": {"L": [0.1, 0.5, 0.2], "eta": 2.0},
    "entropic_weights": {"L": [0.1, 0.5, 0.2], "eta": 2.0},
    "exp3p_weights": {"scores": [0.1, 0.5, 0.2]},
    "neyman_allocation": {"q": [0.5, 0.3, 0.2], "v": [0.1, 0.2, 0.05], "n_bar": 4},
    "allocate_rollouts": {"counts": [3, 2, 1], "v": [0.1, 0.2, 0.05], "n_bar": 4},
    "best_response_arm": {"v": [0.1, 0.2], "mu": 0.01},
    "pass_at_k": {"p": [0.1, 0.5], "k": 8},
    "simulate": {"method": "prompt_gdro", "steps": 3, "batch": 8, "seeds": 2, "n_prompts": 50, "curves": False},
    "run_methods": {"seed": 0, "steps": 2, "batch": 8, "seeds": 1, "n_prompts": 30},
    "seeded_verdicts": {"seed": 0},
    "knob_scan": {"seed": 0, "steps": 2, "batch": 8, "seeds": 1, "n_prompts": 30},
    "worst_auc": {"r": simulate("grpo", steps=2, batch=8, seeds=1, n_prompts=30)},
    "lead_lag": {"r": simulate("prompt_gdro", steps=2, batch=8, seeds=1, n_prompts=30)},
    "adversary_play": {"games": bilinear_games(0, 2), "T": (10, 20, 40)},
    "eta_scan": {"seed": 0, "etas": (0.1, 1.0, 3.0), "steps": 2, "batch": 8, "seeds": 1, "n_prompts": 30},
    "seeded_runs": {"seed": 0, "steps": 2, "batch": 8, "seeds": 1, "n_prompts": 30},
    "sensitivity_verdicts": {"scan": {"eta_q": (0.1, 1.0, 3.0), "gain": [0.1, 0.2, 0.3],
                                      "planted_gain": [0.3, 0.3, 0.3]},
                             "knobs": {"beta": (0.1, 0.3, 1.0), "beta_gain": [0.1, 0.1, 0.1], "bins": (3, 6, 10),
                                       "bins_gain": [0.1, 0.1, 0.1], "rival_gain": 0.2}},
    "minimax_toy": {"T": 20},
    "derive_zero_sum_advantage": {"n": 2},
    "bilinear_games": {"seed": 0, "n_games": 2},
    "no_regret_play": {"games": bilinear_games(0, 2), "T": (10, 20, 40)},
    "duality_gap": {"games": bilinear_games(0, 2), "theta": [[0.0] * 4] * 2, "q": [[0.2] * 5] * 2},
    "gap_slopes": {"T": (10, 100, 1000), "y": [1.0, 0.5, 0.2]},
    "step_tuning": {"seeds": (1,), "grid": (1.0, 3.0), "n_games": 2, "T": (10, 20, 40)},
}

