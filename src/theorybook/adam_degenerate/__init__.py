"""Adam on highly degenerate polynomials (Bai et al., ICML 2026, arXiv 2603.09581).

Public API (every function validates its arguments through :mod:`theorybook.validate` and raises ``ValueError``
or ``TypeError`` naming parameter, value and valid range):

``simulate_adam(k, beta1, beta2, lr, steps, x0=1.0, *, dtype=torch.float64, device=None)``
    Adam (ε = 0, no bias correction, m₀ = g₀, v₀ = g₀²) on x^k/k, batched over tensors of hyper-parameters;
    returns an :class:`AdamTrajectory` (x, m, v; properties loss, grad, effective_curvature, coupling_ratio).
``adam_path(k, beta1, beta2, lr, steps, x0=1.0, *, m0=None, v0=None)`` — one run in plain Python floats
    (numpy :class:`AdamPath` with ω_t, λ_t, ratio, floor step); ``adam_reference`` returns its x.
``stability_boundary(k, beta2)`` — Eq. (8): β₁* = β₂^{k/(2(k−2))} (necessary; see ``flip_boundary``).
``existence_boundary(k, beta2)`` — Eq. (9): β₁ = β₂^{(k−1)/(2(k−2))}.
``flip_boundary(k, beta2)`` — [derived] period-doubling boundary (active for tiny β₂ only).
``regime(k, beta1, beta2)`` — ``"stable"`` / ``"spike"`` / ``"oscillation"`` (Theorem 6.1), or the [derived]
    ``"period-2"`` sliver below the flip boundary (scalars only).
``linear_rate(k, beta2)`` — Eq. (10): x_{t+1}/x_t → β₂^{1/(2(k−2))}.
``rmsprop_threshold(k)`` — Theorem 5.7: RMSProp's fixed point is stable iff β₂ > ((k−2)/k)^{2(k−2)};
    ``rmsprop_two_cycle(k, beta2)`` — [derived] the period-2 orbit below it.
``adam_steps_per_efold(k, beta2)`` — Remark 5.8: steps per unit of ln(1/ε), 2(k−2)/(−ln β₂).
``steps_to_reach(k, beta1, beta2, lr, eps)`` — first t ≥ 1 with |x_t| ≤ eps; ``gd_steps_to_reach(k, lr, eps)`` the
    same for gradient descent on a list of thresholds (Remark 5.8's ε^(−(k−2)); ``experiments.complexity_separation``
    measures both counts).
``fixed_point(k, beta1, beta2, lr)`` — (r*, ω*, λ*), trace, det, spectral radius and period of the reduced Jacobian.
``phase_diagram(k, n, steps)`` — the (β₁, β₂) scan with Eq. (8)'s agreement fraction; ``boundary_agreement(pd, e)``
    scores the boundary β₁ < β₂^e on the same cells.
``momentum_tail(k, start)`` — heavy ball's late-tail exponent (steps 1e5–1e6) from m₀ = g₀ or 0, with its
    gradient-flow error model; ``mixed_race()`` — GD, heavy ball, Adam and two rivals on Sec. 7's recovered 2-D
    loss ``mixed_loss`` (η tuned per method on one grid, |x_T + y_T| at three budgets).
Measurements of the linearised dynamics: :mod:`theorybook.adam_degenerate.analysis`; the chapter's fixed-point
experiments: :mod:`theorybook.adam_degenerate.experiments`; every verdict row the chapter shows, with its control:
:mod:`theorybook.adam_degenerate.verdicts` (``headline``, ``deterministic_verdicts``, ``PAPER_CLAIMS``).
Sympy derivations: :mod:`theorybook.adam_degenerate.theory` (``derive_*``). Widget: :func:`widgets.explorer`.
"""

from .analysis import (
    casoratian_det,
    deviation_multiplier,
    fixed_point_start,
    linear_window,
    oscillation_period,
    upcrossings,
)
from .dynamics import (
    AdamPath,
    AdamTrajectory,
    PhaseDiagram,
    adam_path,
    adam_reference,
    boundary_agreement,
    gd_steps_to_reach,
    measured_rate,
    phase_diagram,
    simulate_adam,
    steps_to_reach,
)
from .experiments import mixed_loss, mixed_race, momentum_tail, spiral_experiment
from .theory import (
    FixedPoint,
    adam_steps_per_efold,
    existence_boundary,
    fixed_point,
    flip_boundary,
    gradient_flow_hitting_time,
    gradient_flow_x,
    linear_rate,
    log_loss_slope,
    regime,
    rmsprop_threshold,
    rmsprop_two_cycle,
    signgd_loss_level,
    stability_boundary,
)
from .verdicts import PAPER_CLAIMS, deterministic_verdicts, headline, mixed_rows, momentum_rows, spiral_rows

#: Cheap arguments for tests/test_api_fuzz.py (the chapter-scale defaults take seconds).
FUZZ_BASE = {"phase_diagram": {"n": 4, "steps": 50}, "gd_steps_to_reach": {"eps": (0.1, 0.01), "max_steps": 100_000},
             "momentum_tail": {"window": (2000, 3000)}, "mixed_race": {"budgets": (10, 20)}}

__all__ = [
    "AdamPath",
    "AdamTrajectory",
    "PAPER_CLAIMS",
    "FixedPoint",
    "PhaseDiagram",
    "adam_path",
    "adam_reference",
    "adam_steps_per_efold",
    "boundary_agreement",
    "casoratian_det",
    "deterministic_verdicts",
    "deviation_multiplier",
    "existence_boundary",
    "fixed_point",
    "fixed_point_start",
    "flip_boundary",
    "gradient_flow_hitting_time",
    "gradient_flow_x",
    "headline",
    "mixed_loss",
    "mixed_race",
    "mixed_rows",
    "momentum_rows",
    "momentum_tail",
    "linear_rate",
    "linear_window",
    "log_loss_slope",
    "measured_rate",
    "oscillation_period",
    "phase_diagram",
    "regime",
    "rmsprop_threshold",
    "rmsprop_two_cycle",
    "signgd_loss_level",
    "simulate_adam",
    "spiral_experiment",
    "spiral_rows",
    "stability_boundary",
    "steps_to_reach",
    "gd_steps_to_reach",
    "upcrossings",
]
