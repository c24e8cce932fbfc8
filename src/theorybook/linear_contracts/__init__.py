"""Pricing a linear contract from O(ln(1/δ)/ε²) agents, whatever the action space (Høgsgaard, ICML 2026,
arXiv 2601.01496). The paper is pure theory; its constants and lemma numbering are known only from two
third-party reviews [secondary]; the type family and every experiment here are ours [reconstruction].

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):

:mod:`.engine` — ``ContractTypes(F, costs, rewards, weights=None)``; ``random_types(n_types, n_actions, n_outcomes,
    seed)`` (idle action + Dirichlet(1) actions with convex costs κ_θR² + U(0, 0.02)); ``flat_types`` (the n = 2 law
    plus n − 2 dominated actions: s* cannot depend on n); brute force
    ``best_response``, ``expected_reward``, ``principal_utility``; the exact engine ``kinks``, ``reward_at_kinks``,
    ``engine_utility``, ``optimal_contract``, ``eum``, ``sup_deviation``, ``sample_complexity_sweep``.
:mod:`.brute_force` — ``brute_force_parity``; ``monotonicity_gap`` (``quantity="utility"`` for the lemma's
    control), ``attainment_gap``.
:mod:`.experiment` — the chapter's populations and sweeps; ``required_samples`` (s* at fixed (ε, δ)),
    ``nindep_study`` (the headline: s*(n) over n = 2 … 2,000, its growth ratio ``growth_ratio`` and slope, and the
    per-action-mean alternative), ``flat_sweeps`` (the same on the flat family), ``bernoulli_deviations`` (the
    generic alternative of the rate and Corollary 1.2 rows),
    ``confidence_study`` (Corollary 1.2: s*(δ) over three decades of δ, each law's ``law_misfit``).
:mod:`.verdicts` — every row the chapter shows: ``PAPER_CLAIMS``, ``seeded_verdicts(seed)``,
    ``deterministic_verdicts()``, ``headline(...)``.
:mod:`.theory` — sympy derivations; ``uniform_convergence_samples(eps, delta, constant=3456)``.
Widget: :func:`widgets.explorer`.
"""

from __future__ import annotations

from .brute_force import attainment_gap, brute_force_parity, monotonicity_gap
from .engine import (
    TIES,
    ContractTypes,
    EUMResult,
    Kinks,
    SweepResult,
    best_response,
    engine_utility,
    eum,
    expected_reward,
    flat_types,
    kinks,
    optimal_contract,
    principal_utility,
    quantile_band,
    random_types,
    reward_at_kinks,
    sample_complexity_sweep,
    sample_types,
    sup_deviation,
)
from .experiment import (
    ACTIONS,
    BERNOULLI_P,
    CONFIDENCE_LAWS,
    COR_ACTIONS,
    COR_BERNOULLI_EPS,
    COR_DELTAS,
    COR_EPS,
    COR_REPS,
    COR_S_VALUES,
    DELTA,
    EPS,
    FLAT_POP_SEED,
    MONO_ACTIONS,
    N_OUTCOMES,
    N_TYPES,
    POP_SEED,
    REPS,
    S_VALUES,
    ConfidenceStudy,
    NIndepStudy,
    bernoulli_deviations,
    chapter_population,
    chapter_sweeps,
    confidence_study,
    flat_population,
    flat_sweeps,
    growth_ratio,
    growth_slope,
    law_misfit,
    nindep_study,
    required_samples,
)
from .theory import (
    COR12_PROOF,
    COR12_STATED,
    THM11_CONSTANT,
    derive_chaining_integral,
    derive_constants,
    derive_eum_decomposition,
    derive_exchange_argument,
    derive_indifference_point,
    derive_piece_deviation,
    deviation_bound,
    eum_samples,
    uniform_convergence_samples,
)
from .verdicts import PAPER_CLAIMS, deterministic_verdicts, seeded_verdicts

__all__ = [
    "TIES", "ContractTypes", "EUMResult", "Kinks", "SweepResult", "attainment_gap", "best_response",
    "brute_force_parity", "engine_utility", "eum", "expected_reward", "kinks", "monotonicity_gap",
    "optimal_contract", "principal_utility", "quantile_band", "random_types", "reward_at_kinks",
    "sample_complexity_sweep", "sample_types", "sup_deviation", "COR12_PROOF", "COR12_STATED", "THM11_CONSTANT",
    "derive_chaining_integral", "derive_constants", "derive_eum_decomposition", "derive_exchange_argument",
    "derive_indifference_point", "derive_piece_deviation", "deviation_bound", "eum_samples",
    "uniform_convergence_samples", "chapter_population", "chapter_sweeps", "required_samples", "nindep_study",
    "growth_slope", "NIndepStudy", "seeded_verdicts", "deterministic_verdicts", "PAPER_CLAIMS", "N_TYPES",
    "N_OUTCOMES", "ACTIONS", "MONO_ACTIONS", "S_VALUES", "REPS", "DELTA", "EPS", "POP_SEED", "CHAPTER_SEEDS",
    "ConfidenceStudy", "confidence_study", "law_misfit", "CONFIDENCE_LAWS", "COR_ACTIONS", "COR_DELTAS", "COR_EPS",
    "COR_REPS", "COR_S_VALUES", "flat_types", "flat_population", "flat_sweeps", "growth_ratio",
    "bernoulli_deviations", "BERNOULLI_P", "COR_BERNOULLI_EPS", "FLAT_POP_SEED",
]

CHAPTER_SEEDS = (2026, 2027)  # 2026: the sweep and verdicts; 2027: the second sample of the first figure

#: Cheap valid arguments for tests/test_api_fuzz.py (the other parameters keep their defaults).
FUZZ_BASE = {
    "chapter_sweeps": {"seed": 0, "reps": 4, "s_values": (50, 100), "actions": (2, 20)},
    "flat_sweeps": {"seed": 0, "reps": 4, "s_values": (50, 100), "actions": (2, 20)},
    "flat_population": {"n_actions": 3, "n_types": 50},
    "bernoulli_deviations": {"seed": 0, "reps": 4, "s_values": (10, 20)},
    "nindep_study": {"sweeps": None},
    "seeded_verdicts": {"sweeps": "not a sweep"},  # the full rows run in tests/test_seed_robustness.py
    "headline": {"sweeps": "not a sweep"},
    "confidence_study": {"seed": 0, "reps": 40, "s_values": (24, 96, 384, 1536), "eps": 0.05},
}
