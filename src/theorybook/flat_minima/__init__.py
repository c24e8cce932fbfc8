"""Flat minima and generalisation in stochastic convex optimisation (Schliserman, Vansover-Hager, Koren, ICML 2026,
arXiv 2511.03548), at CPU scale on **our** "unseen coordinates" instance — not the paper's construction, which
could not be read.

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):

:mod:`.instance` — ``phi(u)``; ``unseen_instance(d, n, seed)`` → ``Instance(Z, a, seen)``; ``empirical_risk``,
    ``population_risk`` (closed form ``½Σφ``), ``population_risk_mc``, ``heldout_risks`` (held-out draws of every
    coordinate, many points at once); ``rho_sharpness`` (exact on the orthant) and ``rho_sharpness_search``
    (brute force, small d), ``sharpness_check``; ``flat_erm``, ``sharp_erm``;
    ``expected_unseen``, ``prob_some_unseen``; ``chapter_rho``.
:mod:`.experiment` — ``claim1_study`` (many instances, both ERMs; on one of them SA-GD from a random start and
    from 0, and the population risk of all of them on held-out draws, ``HELDOUT_POINTS``).
:mod:`.dynamics` — ``sa_gd``, ``sam``, ``gd`` (trajectories, batched over the leading dimensions of ``w0``);
    ``rwp_gd`` (random-weight-perturbation GD) and ``perturbed_gd`` (claim 2's controls), ``sagd_steps`` (SA-GD's
    exact step count),
    ``sagd_sharpness_prediction``; ``dynamics_study``.
:mod:`.coupled` — claim 2's risk on the *coupled* instance (our construction: one data-independent term
    ``ψ(⟨u, w⟩ − τ)`` in every sample's loss): ``coupled_instance``, ``coupled_empirical_risk``,
    ``coupled_population_risk``, ``coupled_heldout``, ``coupled_sharpness`` (exact inner max on the orthant) and
    ``coupled_sharpness_search`` (brute force), ``coupled_sharpness_check``, ``coupled_sa_gd``, ``coupled_rwp``
    (RWP, the rival), ``coupled_study``.
:mod:`.stability` — ``inner_max_quadratic``; ``stability(algorithm, n, ...)`` (claim 4's stand-in on least squares).
:mod:`.verdicts` — every row the chapter shows: ``PAPER_CLAIMS``, ``seeded_verdicts(seed)``,
    ``deterministic_verdicts()``, ``rate_study``, ``headline(...)``.
Sympy derivations: :mod:`.theory`. Widget: :func:`theorybook.flat_minima.widgets.explorer`.
"""

import numpy as _np
import torch as _torch

from .coupled import (
    COUPLED_UNSEEN,
    COUPLING_LAMBDA,
    RWP_SIGMA_COUPLED,
    CoupledInstance,
    CoupledRun,
    CoupledStudy,
    coupled_empirical_risk,
    coupled_heldout,
    coupled_instance,
    coupled_population_risk,
    coupled_rwp,
    coupled_sa_gd,
    coupled_sharpness,
    coupled_sharpness_check,
    coupled_sharpness_search,
    coupled_study,
)
from .dynamics import (
    PGD_RADII,
    RWP_SIGMA_SEPARABLE,
    RWP_SIGMAS,
    DynamicsStudy,
    RWPRun,
    Trajectory,
    dynamics_study,
    gd,
    perturbed_gd,
    rwp_gd,
    sa_gd,
    sagd_sharpness_prediction,
    sagd_steps,
    sam,
)
from .experiment import HELDOUT_POINTS, Claim1Study, claim1_study
from .instance import (
    BETA,
    STABILITY_NS,
    HeldOut,
    Instance,
    chapter_rho,
    empirical_risk,
    expected_unseen,
    flat_erm,
    heldout_risks,
    phi,
    population_risk,
    population_risk_mc,
    prob_some_unseen,
    rho_sharpness,
    rho_sharpness_search,
    sharp_erm,
    sharpness_check,
    unseen_instance,
)
from .stability import StabilityResult, inner_max_quadratic, stability
from .verdicts import (
    PAPER_CLAIMS,
    RateStudy,
    claim1_verdicts,
    claim2_risk_test,
    claim2_risk_verdicts,
    coupling_verdicts,
    deterministic_verdicts,
    dynamics_verdicts,
    rate_study,
    seeded_verdicts,
    stability_verdicts,
)

#: The seed of the chapter's instances, Monte Carlo and stability data.
CHAPTER_SEEDS = (2026,)

__all__ = [
    "BETA", "CHAPTER_SEEDS", "HELDOUT_POINTS", "PAPER_CLAIMS", "PGD_RADII", "perturbed_gd", "RWP_SIGMAS",
    "RWP_SIGMA_SEPARABLE", "RWP_SIGMA_COUPLED", "RWPRun", "rwp_gd", "coupled_rwp",
    "STABILITY_NS", "Claim1Study", "DynamicsStudy", "HeldOut", "Instance", "RateStudy",
    "StabilityResult", "Trajectory", "chapter_rho", "claim1_study", "claim1_verdicts",
    "deterministic_verdicts", "dynamics_study", "dynamics_verdicts", "empirical_risk", "expected_unseen", "flat_erm",
    "gd", "heldout_risks",
    "inner_max_quadratic", "phi", "population_risk", "population_risk_mc", "prob_some_unseen", "rate_study",
    "rho_sharpness", "rho_sharpness_search", "sa_gd", "sagd_sharpness_prediction", "sagd_steps", "sam",
    "seeded_verdicts", "sharp_erm", "sharpness_check", "stability", "stability_verdicts", "unseen_instance",
    "COUPLED_UNSEEN", "COUPLING_LAMBDA", "CoupledInstance", "CoupledRun", "CoupledStudy", "claim2_risk_test",
    "claim2_risk_verdicts", "coupled_empirical_risk", "coupled_heldout", "coupled_instance", "coupled_population_risk",
    "coupled_sa_gd", "coupled_sharpness", "coupled_sharpness_check", "coupled_sharpness_search", "coupled_study",
    "coupling_verdicts",
]

_CI = coupled_instance(2, 0, unseen=2)
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
    "gd": {"Z": _Z, "w0": _np.array([0.0, -0.1, 0.1, 0.0]), "steps": 20},
    "perturbed_gd": {"a": _np.array([0.5, 1.0, 0.0, 0.5]), "rho": 0.2, "steps": 256},
    "sagd_steps": {"a": _np.array([0.0, 0.5, 1.0, 0.25])},
    "inner_max_quadratic": {"H": _np.diag([1.0, 0.5, 0.0]), "g": _np.array([0.3, -0.2, 0.1]), "rho": 0.5},
    "stability": {"algorithm": "sa-gd", "n": (8, 16, 32), "d": 3, "steps": 5, "replacements": 2},
    "claim1_study": {"d": 64, "n": 3, "instances": 4, "mc_samples": 50, "rho": 0.05, "steps": 50},
    "heldout_risks": {"W": _np.array([[0.1, -0.2, 0.3, -0.5], [0.0, 0.0, 0.0, -1.0]]), "m": 200},
    "rwp_gd": {"a": _np.array([0.5, 1.0, 0.0, 0.5]), "rho": 0.2, "sigma": 0.1, "steps": 256},
    "coupled_rwp": {"instance": _CI, "sigma": 0.01, "steps": 50},
    "dynamics_study": {"d": 64, "n": 3, "steps": 50},
    "sharpness_check": {"points": 2},
    "sagd_sharpness_prediction": {"a": _np.array([0.0, 0.5, 1.0, 0.25]), "rho": 0.2, "t": _np.arange(10)},
    "chapter_rho": {"d": 64},
    "derive_unseen": {"d": 64, "n": 3},
    "rate_study": {"d": (64, 128, 256), "n": (3, 4, 5), "d_fixed": 64, "n_fixed": 3, "instances": 1},
    "headline": {"st": None},
    "coupled_instance": {"n": 2, "unseen": 2},
    "coupled_empirical_risk": {"w": _np.full(8, 0.1), "instance": _CI},
    "coupled_population_risk": {"w": _np.full(8, 0.1), "instance": _CI},
    "coupled_heldout": {"W": _np.full((1, 8), 0.1), "instance": _CI, "m": 200},
    "coupled_sharpness": {"w": _np.full(8, 0.1), "instance": _CI},
    "coupled_sharpness_search": {"w": _np.full(8, 0.1), "instance": _CI, "directions": 50},
    "coupled_sharpness_check": {"points": 1},
    "coupled_sa_gd": {"instance": _CI, "steps": 50},
    "coupled_study": {"n": 2, "unseen": (1, 2, 3), "chapter_unseen": 2, "mc_samples": 50, "steps": 50},
    "claim2_risk_test": {"empirical_ratio": 0.0, "sharpness_ratio": 0.0, "risk": 0.2, "norm": 1.0,
                         "start_risk": 0.0, "beta": 1.1, "n": 4},
    "coupling_verdicts": {"D": None},
}
