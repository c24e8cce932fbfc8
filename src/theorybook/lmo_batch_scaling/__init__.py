"""Bigger batches want less averaging: batch-size laws for momentum LMO optimizers (Shulgin, Awad, Richtárik &
Gorbunov, ICML 2026 poster 61267; no arXiv text or code could be read).

Only the abstract is [paper]: momentum LMO methods (normalised SGD-M, sign-SGD-M, Muon) analysed under ABC /
expected smoothness; for τ-nice sampling the optimal momentum must increase with the batch size and an optimal
batch size minimises the total sample complexity; linear and matrix regression show a "diagonal shift" of the
optimal momentum–batch ridge. Every formula, convention and experiment here is **our reconstruction**.

Public API (validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):

``abc_constants``, ``optimal_alpha``, ``critical_batch``, ``sample_complexity``, ``optimal_batch`` and the sympy
``derive_*`` functions (:mod:`.theory`); ``lmo``, ``dual_norm``, ``newton_schulz``, ``tau_nice_indices``,
``tau_nice_variance``, ``least_squares``, ``matrix_regression``, ``heatmap``, ``run_cell`` (:mod:`.dynamics`);
``chapter_problem``, ``chapter_maps(seed)``, ``noise_free_maps()``, ``alpha_shift``, ``interior_depth``
and the ridge bench's ``RIDGE``, ``ridge_map``, ``load_ridge``, ``ridge_rerun`` (:mod:`.experiment`);
``PAPER_CLAIMS``, ``headline``, ``seeded_verdicts(seed)``, ``deterministic_verdicts()``, ``ridge_verdicts``
(:mod:`.verdicts`) — every row the chapter shows.
"""

from __future__ import annotations

import torch as _torch

from .dynamics import (
    NORMS,
    CellRun,
    HeatmapResult,
    Problem,
    dual_norm,
    heatmap,
    least_squares,
    lmo,
    matrix_regression,
    newton_schulz,
    run_cell,
    tau_nice_indices,
    tau_nice_variance,
)
from .experiment import (
    ALPHAS,
    BUDGET,
    CHAPTER_SEEDS,
    EPS_REL,
    GAMMAS,
    MUON_BUDGET,
    MUON_GAMMAS,
    MUON_SEEDS,
    MUON_TAUS,
    NOISE,
    SEEDS,
    TAUS,
    VARIANCE_DRAWS,
    VARIANCE_TAUS,
    abc_slack,
    alpha_shift,
    bound_vs_measured,
    chapter_maps,
    chapter_problem,
    interior_depth,
    load_single,
    noise_free_maps,
    single_sample_maps,
)
from .theory import (
    abc_constants,
    critical_batch,
    derive_abc_limits,
    derive_batch_law,
    derive_bound,
    derive_variance_factor,
    optimal_alpha,
    optimal_batch,
    sample_complexity,
)
from .verdicts import DEPTH_BOUND, PAPER_CLAIMS, deterministic_verdicts, headline, seeded_verdicts

__all__ = [
    "NORMS", "CellRun", "HeatmapResult", "Problem", "dual_norm", "heatmap", "least_squares", "lmo",
    "matrix_regression", "newton_schulz", "run_cell", "tau_nice_indices", "tau_nice_variance", "abc_constants",
    "critical_batch", "derive_abc_limits", "derive_batch_law", "derive_bound", "derive_variance_factor",
    "optimal_alpha", "optimal_batch", "sample_complexity", "chapter_problem", "chapter_maps", "noise_free_maps",
    "alpha_shift", "interior_depth", "single_sample_maps", "load_single", "abc_slack", "bound_vs_measured", "headline",
    "seeded_verdicts", "deterministic_verdicts", "PAPER_CLAIMS",
    "DEPTH_BOUND", "CHAPTER_SEEDS", "TAUS", "ALPHAS", "GAMMAS", "BUDGET", "EPS_REL", "SEEDS", "NOISE", "MUON_TAUS",
    "MUON_SEEDS", "MUON_BUDGET", "MUON_GAMMAS", "VARIANCE_TAUS", "VARIANCE_DRAWS",
]

#: Cheap arguments for tests/test_api_fuzz.py (the other parameters keep their defaults).
FUZZ_BASE = {
    "ridge_map": {"taus": (1,), "alphas": (1.0,), "gammas": (0.1,)},
    "heatmap": {"problem": None, "norm": "l2", "taus": (1, 4), "alphas": (1.0, 0.5), "gammas": (0.1,),
                "budget": 64, "seeds": 2},
    "run_cell": {"problem": None, "norm": "l2", "tau": 2, "alpha": 0.5, "gamma": 0.1, "samples": 64},
    "least_squares": {"n": 64, "d": 4},
    "matrix_regression": {"n": 64, "p": 3, "q": 3},
    "tau_nice_indices": {"n": 16, "tau": 4, "rows": 8},
    "tau_nice_variance": {"per_sample_grads": _torch.arange(12.0, dtype=_torch.float64).reshape(6, 2), "tau": 2},
    "lmo": {"m": _torch.ones(3, 3, dtype=_torch.float64), "norm": "spectral"},
    "dual_norm": {"g": _torch.ones(3, 3, dtype=_torch.float64), "norm": "spectral"},
    "newton_schulz": {"m": _torch.eye(3, dtype=_torch.float64)},
    "derive_variance_factor": {"n": 4},
    "chapter_problem": {"kind": "least_squares"},
    "chapter_maps": {"seed": 1, "scale": "tiny"},
    "noise_free_maps": {"scale": "tiny"},
    "single_sample_maps": {"scale": "tiny"},
    "single_map": {"norm": "l2", "scale": "tiny"},
    "single_settings": {"scale": "tiny"},
    "abc_slack": {"points": 4},
    "seeded_verdicts": {"seed": 1, "maps": None},
    "abc_constants": {"n": 16, "tau": 4, "L_max": 1.0, "delta_inf": 0.5},
    "optimal_alpha": {"tau": 4, "n": 64, "eps": 0.5, "rho": 1.0, "sigma1": 4.0},
    "critical_batch": {"n": 64, "eps": 0.5, "rho": 1.0, "sigma1": 4.0},
    "sample_complexity": {"tau": 4, "n": 64, "eps": 0.5, "rho": 1.0, "sigma1": 4.0, "delta0": 1.0, "L": 1.0},
    "optimal_batch": {"n": 64, "eps": 0.5, "rho": 1.0, "sigma1": 4.0},
}
FUZZ_BASE["heatmap"]["problem"] = FUZZ_BASE["run_cell"]["problem"] = least_squares(n=64, d=4, device="cpu")
