"""Collaborative low-rank adaptation (CoLoRA; Magakyan et al., ICML 2026, arXiv 2602.07218), at CPU scale on our
reconstruction: heterogeneous linear regression with a shared low-rank adapter ``ΔW_i = A R_i Bᵀ``.

Only the paper's abstract and third-party summaries could be read: the adapter form, the data model and the
alternating scheme are our reconstruction ("a faithful instance of heterogeneous linear regression with a shared
low-rank adapter"), not the paper's text.

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):

``make_tasks(k, d, r, n, *, tau, sigma, seed, device) -> Tasks(X, y, M, A, B)`` — the seeded task family.
``colora_fit(X, y, rank, *, iters=15, shared_core=False) -> Fit(M, A, B, R, A_history)`` — spectral start, then
    alternating R-, A- and B-steps (``shared_core=True``: one core for all tasks, FedAvg-LoRA at its pooled
    optimum, :mod:`.federated`).
``independent_fit(X, y, rank, *, iters=15) -> Fit`` — the same solver on each task alone.
``relative_error(M_hat, M)``, ``sin_theta(U, V)``, ``parameter_count(d, r, k, method)``,
``sample_threshold(d, r, k, method)``, ``oracle_error(M, sigma, rank, n)``, ``oracle_monte_carlo(n, p, trials)``.
Studies: ``recovery_study``, ``convergence_study``, ``phase_map``; ``CHAPTER_SEEDS``.
Federated baselines (:mod:`.federated`): ``fedavg_lora_fit``, ``ffa_lora_fit``, ``communicated``,
``heterogeneity_sweep``. Verdict rows and the paper's claims (:mod:`.verdicts`): ``PAPER_CLAIMS``,
``seeded_verdicts(seed)``, ``deterministic_verdicts()``. Sympy derivations: :mod:`theorybook.colora.theory`. Widget:
:func:`theorybook.colora.widgets.explorer`.
"""

import torch as _torch

from .experiment import (
    CHAPTER_SEEDS,
    METHODS,
    Fit,
    RecoveryStudy,
    Tasks,
    colora_fit,
    convergence_study,
    independent_fit,
    make_tasks,
    oracle_error,
    oracle_monte_carlo,
    parameter_count,
    phase_map,
    recovery_study,
    relative_error,
    sample_threshold,
    sin_theta,
)
from .federated import FED_METHODS, HeteroSweep, communicated, fedavg_lora_fit, ffa_lora_fit, heterogeneity_sweep
from .verdicts import PAPER_CLAIMS, deterministic_verdicts, seeded_verdicts

__all__ = [
    "CHAPTER_SEEDS", "FED_METHODS", "METHODS", "PAPER_CLAIMS", "Fit", "HeteroSweep", "RecoveryStudy", "Tasks",
    "colora_fit", "communicated", "convergence_study", "deterministic_verdicts", "fedavg_lora_fit", "ffa_lora_fit",
    "heterogeneity_sweep", "independent_fit", "make_tasks", "oracle_error", "oracle_monte_carlo", "parameter_count",
    "phase_map", "recovery_study", "relative_error", "sample_threshold", "seeded_verdicts", "sin_theta",
]

_g = _torch.Generator().manual_seed(0)
_X = _torch.randn(2, 6, 4, 4, generator=_g, dtype=_torch.float64)
_M = _torch.randn(2, 3, 3, generator=_g, dtype=_torch.float64)
_U = _torch.linalg.qr(_torch.randn(4, 2, generator=_g, dtype=_torch.float64))[0]
_V = _torch.linalg.qr(_torch.randn(4, 2, generator=_g, dtype=_torch.float64))[0]
_SMALL = {"k": 2, "d": 4, "r": 1, "iters": 2}
#: Cheap valid arguments for tests/test_api_fuzz.py (the other parameters keep their defaults).
FUZZ_BASE = {
    "make_tasks": {"k": 2, "d": 4, "r": 1, "n": 5},
    "colora_fit": {"X": _X, "y": _X[:, :, 0, 0], "rank": 1, "iters": 2},
    "independent_fit": {"X": _X, "y": _X[:, :, 0, 0], "rank": 1, "iters": 2},
    "relative_error": {"M_hat": _M + 0.1, "M": _M},
    "sin_theta": {"U": _U, "V": _V},
    "parameter_count": {"d": 4, "r": 1, "k": 2},
    "sample_threshold": {"d": 4, "r": 1, "k": 2},
    "oracle_error": {"M": _M, "sigma": 0.1, "rank": 1, "n": 6},
    "oracle_monte_carlo": {"n": 8, "p": 1, "trials": 50},
    "recovery_study": {"ns": (6,), "taus": (0.0,), "reps": 1, **_SMALL},
    "convergence_study": {"n": 6, "reps": 1, **_SMALL},
    "phase_map": {"taus": (0.0, 0.2), "ns": (6,), **_SMALL},
    "heterogeneity_sweep": {"etas": (0.0,), "taus": (0.1,), "ns": (6,), "reps": 1, **_SMALL},
    "federated_train": {"X": _X, "y": _X[:, :, 0, 0], "rank": 1, "rounds": 2, "local_steps": 1},
    "fl_cell": {"eta": 1.0, "tau": 0.0, "n": 6, "reps": 1, "k": 2, "d": 4, "r": 1, "rounds": 2, "local_steps": 1},
    "fl_message_size": {"method": "colora", "d": 4, "r": 1},
    "ffa_lora_fit": {"X": _X, "y": _X[:, :, 0, 0], "rank": 2},
    "fedavg_lora_fit": {"X": _X, "y": _X[:, :, 0, 0], "rank": 1, "iters": 2},
    "communicated": {"d": 4, "r": 1},
    "derivation_verdicts": {"d": 2, "r": 1},
    "summarize": {"n": 8, "k": 2, "iters": 2},
    "render": {"n": 8, "k": 2, "iters": 2},
}
