"""Robust AI evaluation through maximal lotteries (Khalaf et al., ICML 2026, arXiv 2602.21297), at CPU scale on a
synthetic preference world (LMArena/HUMAINE data are not used).

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):

``margin_matrix(wins)`` — ``M_ij = (W_ij − W_ji)/(W_ij + W_ji)``, 0 for unseen pairs.
``maximal_lottery(M) -> Lottery(p, value, support)`` — Fishburn's maximin LP (HiGHS); value 0.
``robust_lottery(Ms, w0, rho, form="dual"|"vertex") -> Lottery`` — ``max_p min_{TV(w,w₀)≤ρ} min_q pᵀ(Σ w_k M_k)q``
    [secondary objective; the LP is our reconstruction].
``worst_case_value(p, Ms, w0, rho) -> WorstCase(value, weights, opponent)`` — the inner minimum in closed form.
``tv_ball_vertices(w0, rho)`` — the vertices of the TV ball (one greedy point per ordering of the slices).
``guaranteed_win_rate(p, M)`` — ``(1 + min_j (Mᵀp)_j)/2``.
``bradley_terry(wins, *, alpha=0.0)`` — Newton MLE, mean-zero scores (torch, batched).
``preference_world(...)``, ``sample_comparisons(world, per_pair, seed)`` — the synthetic world and its votes.
``random_populations(w0, kappa, n, seed)`` — random test populations ``w ~ Dirichlet(κ·w₀)`` (mean w₀: the gap row);
``shifted_populations(w0, rho, n, seed)`` — test populations uniform in a TV ball (they raise the minority's share:
the gap row's planted control).
Studies (:mod:`.studies`): ``sensitivity_study`` (random heterogeneous worlds), ``tv_direct_search`` (the LP against
a direct worst-case search), ``axiom_checks`` (neutrality, monotonicity, continuity of our LP — against
``robust_winner``, the tie-broken argmax), ``cycling_worlds``/``guarantee_study`` (the maximal lottery fitted on
sampled votes, scored on the true preferences of random worlds with a top cycle; ``guarantee_tolerance`` its
Hoeffding tolerance).
``world_sweep``, ``replicate_study``; the verdict rows and the paper's claims live in :mod:`.verdicts`
(``PAPER_CLAIMS``, ``headline``, ``world_verdicts``, ``replicate_verdicts``, ``seeded_verdicts(seed)``,
``deterministic_verdicts()``); ``CHAPTER_SEEDS``.
Sympy derivations: :mod:`theorybook.robust_lotteries.theory`.
Widget: :func:`theorybook.robust_lotteries.widgets.explorer`.
"""

import numpy as _np
import sympy as _sp

from .experiment import (
    CHAPTER_SEEDS,
    RHOS,
    Comparisons,
    PreferenceWorld,
    ReplicateStudy,
    WorldSweep,
    bradley_terry,
    preference_world,
    random_populations,
    replicate_study,
    sample_comparisons,
    shifted_populations,
    world_sweep,
)
from .lotteries import (
    Lottery,
    WorstCase,
    guaranteed_win_rate,
    margin_matrix,
    maximal_lottery,
    robust_lottery,
    tv_ball_vertices,
    worst_case_value,
)
from .studies import (
    axiom_checks,
    cycling_worlds,
    guarantee_study,
    guarantee_tolerance,
    robust_winner,
    sensitivity_study,
    tv_direct_search,
)
from .verdicts import (
    PAPER_CLAIMS,
    deterministic_verdicts,
    guarantee_verdicts,
    replicate_verdicts,
    seeded_verdicts,
    study_verdicts,
    world_verdicts,
)

__all__ = [
    "CHAPTER_SEEDS", "PAPER_CLAIMS", "RHOS", "Comparisons", "Lottery", "PreferenceWorld", "ReplicateStudy",
    "WorldSweep", "WorstCase", "bradley_terry", "deterministic_verdicts", "guaranteed_win_rate", "margin_matrix",
    "maximal_lottery", "preference_world", "random_populations", "replicate_study", "replicate_verdicts",
    "robust_lottery", "sample_comparisons", "seeded_verdicts", "shifted_populations", "study_verdicts",
    "tv_ball_vertices", "world_sweep", "world_verdicts", "worst_case_value", "axiom_checks", "sensitivity_study",
    "tv_direct_search", "cycling_worlds", "guarantee_study", "guarantee_tolerance", "guarantee_verdicts",
    "robust_winner",
]

_M2 = _np.array([[[0.0, 0.5], [-0.5, 0.0]], [[0.0, -0.25], [0.25, 0.0]]])
#: Cheap valid arguments for tests/test_api_fuzz.py (the other parameters keep their defaults).
FUZZ_BASE = {
    "margin_matrix": {"wins": _np.array([[0, 3], [1, 0]])},
    "maximal_lottery": {"M": _M2[0]},
    "robust_lottery": {"Ms": _M2, "w0": [0.5, 0.5], "rho": 0.2},
    "worst_case_value": {"p": [0.5, 0.5], "Ms": _M2, "w0": [0.5, 0.5], "rho": 0.2},
    "tv_ball_vertices": {"w0": [0.5, 0.3, 0.2], "rho": 0.2},
    "guaranteed_win_rate": {"p": [0.5, 0.5], "M": _M2[0]},
    "bradley_terry": {"wins": _np.array([[0, 3], [1, 0]])},
    "sample_comparisons": {"world": preference_world(4, (0.5, 0.5), device="cpu"), "per_pair": 5, "seed": 0},
    "replicate_study": {"world": preference_world(4, (0.5, 0.5), device="cpu"), "per_pair": 5, "replicates": 2,
                        "with_choix": False, "test_mixes": 2, "mild_replicates": 2},
    "random_populations": {"w0": [0.5, 0.3, 0.2], "kappa": 10.0, "n": 3, "seed": 0},
    "bt_misfit": {"world": preference_world(4, (0.5, 0.5), device="cpu")},
    "sensitivity_study": {"sigmas": (0.3,), "n": 2},
    "random_worlds": {"sigma": 0.3, "n": 2},
    "group_guarantee": {"P": _np.full((2, 3, 3), 0.5)},
    "tv_direct_search": {"world": preference_world(4, (0.5, 0.3, 0.2), device="cpu"), "h": 0.05, "n_search": 10},
    "axiom_checks": {"world": preference_world(4, (0.5, 0.3, 0.2), device="cpu"), "n_perm": 1, "n_dir": 0,
                     "cont_eps": (1e-3,)},
    "cycling_worlds": {"n": 2, "m": 4},
    "guarantee_study": {"per_pairs": (5,), "n": 2, "m": 4},
    "guarantee_tolerance": {"shares": [0.5, 0.3, 0.2], "per_pair": 10},
    "condorcet_winner": {"M": _M2},
    "robust_winner": {"Ms": _M2, "w0": [0.5, 0.5], "rho": 0.2},
    "guarantee_verdicts": {"gs": None},
    "study_verdicts": {"sens": None, "tvs": None, "ax": None},
    "shifted_populations": {"w0": [0.5, 0.3, 0.2], "rho": 0.2, "n": 3, "seed": 0},
    "bt_loses_somewhere": {"world": preference_world(4, (0.5, 0.5), device="cpu")},
    "world_sweep": {"world": preference_world(4, (0.5, 0.5), device="cpu"), "rhos": (0.0, 0.3)},
    "derive_inner_tv_dual": {"n_random": 1},
    "tv_worst_case_exact": {"c": [1, 0], "w0": [0.5, 0.5], "rho": 0.25},
    "robust_lp_exact": {"Ms": [_sp.Matrix([[0, _sp.Rational(1, 2)], [-_sp.Rational(1, 2), 0]])], "w0": [1],
                        "rho": 0},
}
