"""Adam on highly degenerate polynomials (Bai et al., ICML 2026, arXiv 2603.09581).

Public API (all validate their arguments and raise ``ValueError`` naming parameter, value and valid range):

``simulate_adam(k, beta1, beta2, lr, steps, x0=1.0, *, dtype=torch.float64, device=None)``
    Adam (ε = 0, no bias correction, m₀ = g₀, v₀ = g₀²) on x^k/k, batched over tensors of hyper-parameters;
    returns an :class:`AdamTrajectory` (x, m, v; properties loss, grad, effective_curvature, coupling_ratio).
``stability_boundary(k, beta2)`` — Eq. (8): β₁* = β₂^{k/(2(k−2))}.
``existence_boundary(k, beta2)`` — Eq. (9): β₁ = β₂^{(k−1)/(2(k−2))}.
``flip_boundary(k, beta2)`` — [derived] period-doubling boundary (active for tiny β₂ only).
``regime(k, beta1, beta2)`` — ``"stable"`` / ``"spike"`` / ``"oscillation"`` (Theorem 6.1).
``linear_rate(k, beta2)`` — Eq. (10): x_{t+1}/x_t → β₂^{1/(2(k−2))}.
``rmsprop_threshold(k)`` — Theorem 5.7: RMSProp converges iff β₂ > ((k−2)/k)^{2(k−2)}.
``steps_to_reach(k, beta1, beta2, lr, eps)`` — first t ≥ 1 with |x_t| ≤ eps.
``fixed_point(k, beta1, beta2, lr)`` — (r*, ω*, λ*), trace, det and spectral radius of the reduced Jacobian.
``phase_diagram(k, n, steps)`` — the (β₁, β₂) scan with Eq. (8)'s agreement fraction.
``adam_reference(...)`` — the plain-Python one-cell reference the batched path is tested against.
Sympy derivations: :mod:`theorybook.adam_degenerate.theory` (``derive_*``). Widget: :func:`widgets.explorer`.
"""

from .dynamics import (
    AdamTrajectory,
    PhaseDiagram,
    adam_reference,
    measured_rate,
    phase_diagram,
    simulate_adam,
    steps_to_reach,
)
from .theory import (
    adam_steps_per_decade,
    existence_boundary,
    fixed_point,
    flip_boundary,
    gradient_flow_hitting_time,
    gradient_flow_x,
    linear_rate,
    log_loss_slope,
    regime,
    rmsprop_threshold,
    signgd_loss_level,
    stability_boundary,
)

__all__ = [
    "AdamTrajectory",
    "PhaseDiagram",
    "adam_reference",
    "adam_steps_per_decade",
    "existence_boundary",
    "fixed_point",
    "flip_boundary",
    "gradient_flow_hitting_time",
    "gradient_flow_x",
    "linear_rate",
    "log_loss_slope",
    "measured_rate",
    "phase_diagram",
    "regime",
    "rmsprop_threshold",
    "signgd_loss_level",
    "simulate_adam",
    "stability_boundary",
    "steps_to_reach",
]
