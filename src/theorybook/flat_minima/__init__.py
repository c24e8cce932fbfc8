"""Flat minima and generalisation in stochastic convex optimisation (Schliserman, Vansover-Hager, Koren, ICML 2026,
arXiv 2511.03548), at CPU scale on **our** "unseen coordinates" instance — not the paper's construction, which
could not be read.

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):

``phi(u)`` — ``½ min(u, 0)²``; ``unseen_instance(d, n, seed)`` → ``Instance(Z, a, seen)``;
``empirical_risk(w, Z)``, ``population_risk(w)`` (closed form ``½Σφ``), ``population_risk_mc(w, m, seed)``;
``rho_sharpness(w, Z, rho)`` (exact on the orthant) and ``rho_sharpness_search`` (brute force, small d);
``flat_erm(instance, rho, c)``, ``sharp_erm(instance)``; ``expected_unseen(d, n)``, ``prob_some_unseen(d, n)``;
``sa_gd`` and ``sam`` (trajectories, batched over the leading dimensions of ``w0``);
``inner_max_quadratic(H, g, rho)``; ``stability(algorithm, n, ...)`` (claim 4 on least squares);
the studies ``claim1_study``, ``dynamics_study`` and the verdict builder ``seeded_verdicts(seed)``;
``deterministic_verdicts()`` (sympy rows and the brute-force sharpness check); ``CHAPTER_SEEDS``.
Sympy derivations: :mod:`theorybook.flat_minima.theory`. Widget: :func:`theorybook.flat_minima.widgets.explorer`.
"""

import numpy as _np
import torch as _torch

from .experiment import (
    BETA,
    CHAPTER_SEEDS,
    STABILITY_NS,
    Claim1Study,
    DynamicsStudy,
    Instance,
    StabilityResult,
    Trajectory,
    chapter_rho,
    claim1_study,
    claim1_verdicts,
    dynamics_study,
    dynamics_verdicts,
    empirical_risk,
    expected_unseen,
    flat_erm,
    inner_max_quadratic,
    phi,
    population_risk,
    population_risk_mc,
    prob_some_unseen,
    rho_sharpness,
    rho_sharpness_search,
    sa_gd,
    sagd_sharpness_prediction,
    sam,
    seeded_verdicts,
    sharp_erm,
    sharpness_check,
    stability,
    stability_verdicts,
    unseen_instance,
)
from .theory import derive_all, theory_verdicts


def deterministic_verdicts():
    """The rows without randomness: sympy identities and the closed-form-vs-brute-force sharpness check (fixed
    points, seed 0)."""
    chk = sharpness_check()
    return theory_verdicts(derive_all(), chk.max_rel, chk.points)


__all__ = [
    "BETA", "CHAPTER_SEEDS", "STABILITY_NS", "Claim1Study", "DynamicsStudy", "Instance", "StabilityResult",
    "Trajectory", "chapter_rho", "claim1_study", "claim1_verdicts", "deterministic_verdicts", "dynamics_study",
    "dynamics_verdicts", "empirical_risk", "expected_unseen", "flat_erm", "inner_max_quadratic", "phi",
    "population_risk", "population_risk_mc", "prob_some_unseen", "rho_sharpness", "rho_sharpness_search", "sa_gd",
    "sagd_sharpness_prediction",
    "sam", "seeded_verdicts", "sharp_erm", "sharpness_check", "stability", "stability_verdicts", "unseen_instance",
]

_Z = _torch.tensor([[1.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]], dtype=_torch.float64)
#: Cheap valid arguments for tests/test_api_fuzz.py (the other parameters keep their defaults).
FUZZ_BASE = {
    "phi": {"u": _np.array([-1.0, 0.5])},
    "unseen_instance": {"d": 64, "n": 3},
    "empirical_risk": {"w": _np.array([0.1, -0.2, 0.3, -0.5]), "Z": _Z},
    "population_risk": {"w": _np.array([0.1, -0.2, 0.3, -0.5])},
    "population_risk_mc": {"w": _np.array([0.1, -0.2, 0.3, -0.5]), "m": 200},
    "rho_sharpness": {"w": _np.array([0.1, 0.0, 0.3, -0.5]), "Z": _Z, "rho": 0.2},
    "rho_sharpness_search": {"w": _np.array([0.1, 0.0, 0.3, -0.5]), "Z": _Z, "rho": 0.2, "directions": 200},
    "flat_erm": {"instance": unseen_instance(64, 3, 0, "cpu"), "rho": 0.1, "c": 0.5},
    "sharp_erm": {"instance": unseen_instance(64, 3, 0, "cpu")},
    "expected_unseen": {"d": 64, "n": 3},
    "prob_some_unseen": {"d": 64, "n": 3},
    "sa_gd": {"Z": _Z, "w0": _np.zeros(4), "rho": 0.2, "steps": 20},
    "sam": {"Z": _Z, "w0": _np.array([0.0, 0.0, 0.1, 0.0]), "rho": 0.2, "steps": 20},
    "inner_max_quadratic": {"H": _np.diag([1.0, 0.5, 0.0]), "g": _np.array([0.3, -0.2, 0.1]), "rho": 0.5},
    "stability": {"algorithm": "sa-gd", "n": (8, 16, 32), "d": 3, "steps": 5, "replacements": 2},
    "claim1_study": {"d": 64, "n": 3, "instances": 4, "mc_samples": 50, "rho": 0.05},
    "dynamics_study": {"d": 64, "n": 3, "steps": 50},
    "sharpness_check": {"points": 2},
    "sagd_sharpness_prediction": {"a": _np.array([0.0, 0.5, 1.0, 0.25]), "rho": 0.2, "t": _np.arange(10)},
    "chapter_rho": {"d": 64},
    "derive_unseen": {"d": 64, "n": 3},
}
