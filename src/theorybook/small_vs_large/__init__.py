"""Less data, faster training: repeating a small data set speeds up learning through sampling bias (Liu, Liu,
Edelman & Goel, ICML 2026, arXiv 2605.20314), at CPU scale.

Only the abstract and two third-party notes could be read: the mechanism (the empirical moment
``M̂ = (1/N) Σ y xxᵀ`` fluctuates at Θ(N^{-1/2}), far above the Θ(1/d) signal, so the second layer grows early) is
the paper's; Theorem 1, Corollary 2 and the interventions are **[secondary]**, their constants unknown.

Public API (arguments validated; bad input raises ``ValueError``/``TypeError`` naming parameter, value and range):

``parity_moment(n_samples, d, seed, labels)`` — ``M̂`` for ``y = x₁x₂`` (or random ±1 labels).
``sampling_bias_std(w, n_samples, labels)`` — closed-form sd of ``q̂ = wᵀM̂w``.
``qhat_samples(w, n_samples, draws, labels, seed)`` — Monte-Carlo ``q̂`` for nested data sets.
``toy_run(d, eta, *, n_samples=None, labels, a_star, a0, w0, eps, max_steps, seeds, seed) -> ToyRun`` — the
    toy of Theorem 1 (population GD when ``n_samples`` is None, else two-phase).
``toy_grid(d, eta, ns, ...) -> ToyGrid`` — labels × N × seeds and the population baseline in one batch.
``mlp_norm_ratio(ns, *, d, k, width, batch, lr, steps, init_scale, lr_a_mult, seeds) -> MLPRun`` — ``‖a‖/‖W‖_F``.
``q_study``, ``toy_headline``, ``toy_summary``, ``mlp_study``, ``t1_bound``, ``folded_normal_mean``,
``load_results`` (:mod:`.experiment`); ``race_point``, ``paired_stats``, ``full_batch_race`` (:mod:`.scan`, the
regime scan of ``bench/small_vs_large.py``); ``scan_verdicts(results)`` (the regime rows from the committed bench
results); ``PAPER_CLAIMS``, ``seeded_verdicts(seed)``, ``deterministic_verdicts()`` (:mod:`.verdicts`,
every row the chapter shows) and ``CHAPTER_SEEDS``. Sympy derivations: :mod:`theorybook.small_vs_large.theory`; widget:
:func:`theorybook.small_vs_large.widgets.explorer`.
"""

import torch as _torch

from .dynamics import (
    LABELS,
    MLPRun,
    ToyGrid,
    ToyRun,
    mlp_norm_ratio,
    parity_moment,
    qhat_samples,
    sampling_bias_std,
    toy_grid,
    toy_run,
)
from .experiment import (
    CHAPTER_SEEDS,
    QStudy,
    folded_normal_mean,
    mlp_study,
    q_study,
    race_study,
    race_summary,
    t1_bound,
    toy_headline,
    toy_summary,
)
from .verdicts import PAPER_CLAIMS, deterministic_verdicts, seeded_verdicts

__all__ = [
    "CHAPTER_SEEDS", "LABELS", "MLPRun", "PAPER_CLAIMS", "QStudy", "ToyGrid", "ToyRun", "deterministic_verdicts",
    "folded_normal_mean", "mlp_norm_ratio", "mlp_study", "parity_moment", "q_study", "qhat_samples",
    "sampling_bias_std", "seeded_verdicts", "t1_bound", "toy_grid", "toy_headline", "toy_run", "toy_summary",
    "race_study", "race_summary",
]

_W = _torch.tensor([0.6, 0.8, 0.0], dtype=_torch.float64)
#: Cheap valid arguments for tests/test_api_fuzz.py (the other parameters keep their defaults).
FUZZ_BASE = {
    "parity_moment": {"n_samples": 8, "d": 4},
    "sampling_bias_std": {"w": _W, "n_samples": 10},
    "qhat_samples": {"w": _W, "n_samples": [2, 4], "draws": 4},
    "toy_run": {"d": 6, "eta": 0.2, "n_samples": 12, "max_steps": 200, "seeds": 2},
    "toy_grid": {"d": 6, "eta": 0.2, "ns": [6, 12], "max_steps": 200, "seeds": 2},
    "mlp_norm_ratio": {"ns": [16, None], "d": 6, "k": 2, "width": 8, "batch": 8, "steps": 5, "seeds": 1},
    "q_study": {"d": 8, "ns": (4, 8), "draws": 8},
    "toy_headline": {"d": 6, "seeds": 2, "max_steps": 200},
    "mlp_study": {"ns": (16, None, None), "seeds": 1, "width": 8, "steps": 5},
    "toy_summary": {"g": None},
    "race_study": {"seed": 1, "n_small": 16, "d": 6, "k": 2, "width": 8, "batch": 8, "steps": 5, "seeds": 1,
                   "eval_every": 1, "test_size": 16},
    "race_summary": {"run": None},
    "mlp_race": {"n_small": 16, "d": 6, "k": 2, "width": 8, "batch": 8, "steps": 5, "seeds": 1, "eval_every": 1,
                 "test_size": 16},
    "deterministic_verdicts": {"d": 3},
    "race_point": {"d": 6, "n_small": 16, "seed_sets": (1,), "seeds": 1},
    "full_batch_race": {"ns": (16, 32), "d": 6, "k": 2, "width": 8, "steps": 5, "seeds": 1, "eval_every": 1,
                        "test_size": 16},
    "paired_stats": {"x": [0.1, 0.2, 0.4]},
    "dilution_null": {"run": None},
    "t1_bound": {"w0": _W, "n_samples": 10},
    "folded_normal_mean": {"mu": 0.1, "sigma": 0.2},
    "derive_gradients": {"d": 2},
    "derive_sampling_bias": {"d": 2},
    "derive_phase2": {"d": 3},
}
