"""SAM turns saddles into attractors (Kim, Park, Choi, Lee, ICML 2026, arXiv 2301.06308).

Public API (all validate their arguments and raise ``ValueError`` naming parameter, value and valid range):

``simulate_sam(grad_fn, w0, lr, rho, steps, *, normalized=True, momentum=0.0, noise=None, seed=None)``
    SAM / SGD-with-momentum on any batched gradient, every cell of broadcast(w0, ρ, η, γ, σ) in one tensor
    program; returns a :class:`SAMTrajectory` (w, perturbed points w^p, ascent/descent cosine).
``sam_sweep(w0, lr, rho, steps, *, lam, normalized, momentum, threshold, tail)`` — deterministic SAM on
    the quadratic saddle, loss reductions + final iterate only (fused Triton kernel on CUDA).
``escape_steps(...)`` — first step leaving a ball around the saddle (via :func:`theorybook.sweep.run_sweep`).
``attractor_threshold(lambda_min)`` — Theorem 1: ρ* = −1/λ₁.
``sam_variance(t, lam, rho, lr, batch, drift="linear"|"full")`` — Theorem 2's σ²(t).
``beale``, ``beale_grad``, ``saddle_quadratic`` (+ ``saddle_quadratic_grad``) — the test functions.
``beale_sam(w0, lr, rho, steps)`` — the scalar fast path for long deterministic Beale runs (10⁵ steps).
``stochastic_run(seed)``, ``CHAPTER_SEEDS`` — the chapter's stochastic experiments; every verdict row the chapter
shows, with its control: :mod:`theorybook.sam_saddle.verdicts` (``headline``, ``seeded_verdicts(seed)`` — re-run for
unseen seeds by ``tests/test_seed_robustness.py`` —, ``theorem2_excess``, ``PAPER_CLAIMS``).
Sympy derivations: :mod:`theorybook.sam_saddle.theory` (``derive_*``, ``beale_critical_points``).
The digits proxy of the CIFAR claim (quoted, not tested): :mod:`theorybook.sam_saddle.proxy` (``digits_data``,
``train_digits_mlp``, ``tune_lr``).
Widget: :func:`theorybook.sam_saddle.widgets.explorer`.
"""

from .dynamics import (
    MAX_STEPS,
    NORM_EPS,
    SAMState,
    SAMSweep,
    SAMTrajectory,
    saddle_quadratic,
    saddle_quadratic_grad,
    sam_sweep,
    sam_update,
    simulate_sam,
)
from .experiments import CHAPTER_SEEDS, StochasticRun, stochastic_run
from .landscapes import BEALE_MINIMUM, BEALE_SADDLE, ascent_flip_share, beale, beale_grad, beale_sam
from .proxy import digits_data, train_digits_mlp, tune_lr
from .stochastic import MSDResult, escape_steps, monte_carlo_msd
from .theory import (
    attractor_threshold,
    beale_critical_points,
    corollary1_gap,
    derive_corollary1,
    derive_linearised_map,
    derive_ou_variance,
    derive_theorem3_reduction,
    discrete_variance,
    drift_rate,
    escape_step_prediction,
    growth_factor,
    sam_variance,
)
from .verdicts import PAPER_CLAIMS, headline, seeded_verdicts, theorem2_excess

__all__ = [
    "BEALE_MINIMUM",
    "BEALE_SADDLE",
    "CHAPTER_SEEDS",
    "MAX_STEPS",
    "PAPER_CLAIMS",
    "headline",
    "theorem2_excess",
    "StochasticRun",
    "ascent_flip_share",
    "beale_sam",
    "seeded_verdicts",
    "stochastic_run",
    "NORM_EPS",
    "SAMState",
    "SAMSweep",
    "SAMTrajectory",
    "attractor_threshold",
    "beale",
    "beale_critical_points",
    "beale_grad",
    "corollary1_gap",
    "derive_corollary1",
    "derive_linearised_map",
    "derive_ou_variance",
    "derive_theorem3_reduction",
    "discrete_variance",
    "drift_rate",
    "escape_step_prediction",
    "escape_steps",
    "MSDResult",
    "monte_carlo_msd",
    "growth_factor",
    "saddle_quadratic",
    "saddle_quadratic_grad",
    "sam_sweep",
    "sam_update",
    "sam_variance",
    "simulate_sam",
    "digits_data",
    "train_digits_mlp",
    "tune_lr",
]
