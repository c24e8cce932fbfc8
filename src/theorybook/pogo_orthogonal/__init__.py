"""POGO: orthogonality at scale in a handful of matrix products (Javaloy & Vergari, ICML 2026, arXiv 2602.14656).

Public API (every public function validates its arguments and raises ``ValueError`` naming parameter, value and
valid range):

``POGO(params, lr, *, base="sgd"|"vadam", momentum=0.0, betas=(0.9, 0.999), lam=0.5, lambda_every=0)``
    a ``torch.optim.Optimizer`` over stacks of row- (p ≤ n) or column- (p > n) orthonormal matrices.
``landing_step(X, G, lr, *, lam=1.0, eps=0.5)`` — Landing (Ablin et al.) with its safe step.
``qr_retraction(X, G, lr)`` / ``cayley_step(X, G, lr)`` — Riemannian GD with the QR / Cayley retraction.
``procrustes_problem(b, p, seed)`` / ``pca_problem(n, p, cond, seed)`` — test problems with exact optima.
``run_method(problem, method, lr, steps)`` — a timed run (optimiser step only) → :class:`Trace`.
Also ``relative_gradient``, ``normal_correction``, ``quartic_lambda``, ``infeasibility``,
``one_step_infeasibility``, ``product_count``. Sympy derivations: :mod:`.theory`. Widget: :func:`widgets.explorer`.
"""

from .dynamics import (
    METHODS,
    PCA,
    POGO,
    Procrustes,
    Trace,
    cayley_step,
    infeasibility,
    landing_step,
    normal_correction,
    one_step_infeasibility,
    pca_problem,
    procrustes_problem,
    product_count,
    qr_retraction,
    quartic_lambda,
    random_orthonormal,
    relative_gradient,
    run_method,
    time_to_target,
)
from .theory import (
    derive_correction_error,
    derive_optimal_lambda,
    derive_quartic_coefficients,
    derive_tangency,
    derive_tangent_gram,
    infeasibility_order,
)

__all__ = [
    "METHODS",
    "PCA",
    "POGO",
    "Procrustes",
    "Trace",
    "cayley_step",
    "derive_correction_error",
    "derive_optimal_lambda",
    "derive_quartic_coefficients",
    "derive_tangency",
    "derive_tangent_gram",
    "infeasibility",
    "infeasibility_order",
    "landing_step",
    "normal_correction",
    "one_step_infeasibility",
    "pca_problem",
    "procrustes_problem",
    "product_count",
    "qr_retraction",
    "quartic_lambda",
    "random_orthonormal",
    "relative_gradient",
    "run_method",
    "time_to_target",
]
