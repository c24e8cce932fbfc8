"""POGO: orthogonality at scale in a handful of matrix products (Javaloy & Vergari, ICML 2026, arXiv 2602.14656).

Public API (every public function validates its arguments and raises ``ValueError`` naming parameter, value and
valid range):

``POGO(params, lr, *, base="sgd"|"vadam", momentum=0.0, betas=(0.9, 0.999), lam=0.5, lambda_every=0,
orthogonal=True, feasibility_tol=None, distributed=False)``
    a ``torch.optim.Optimizer`` over stacks of row- (p ≤ n) or column- (p > n) orthonormal matrices; param groups
    with ``orthogonal=False`` take a plain SGD/Adam step; checkpoints load with ``weights_only=True``; the class lives
    in :mod:`.optimizer` (the Stiefel geometry in :mod:`.geometry`, baselines and runs in :mod:`.dynamics`).
``landing_step(X, G, lr, *, lam=1.0, eps=0.5)`` — Landing (Ablin et al.) with its safe step.
``qr_retraction(X, G, lr)`` / ``cayley_step(X, G, lr)`` — Riemannian GD with the QR / Cayley retraction.
``procrustes_problem(b, p, seed)`` / ``pca_problem(n, p, cond, seed)`` — test problems with exact optima.
``run_method(problem, method, lr, steps)`` — a timed run (optimiser step only) → :class:`Trace`.
Also ``relative_gradient``, ``normal_correction``, ``quartic_lambda``, ``infeasibility``,
``one_step_infeasibility``, ``product_count``. Sympy derivations: :mod:`.theory`. Widget: :func:`widgets.explorer`.
Verdict rows: ``seeded_verdicts(seed)`` / ``deterministic_verdicts()`` (:mod:`.verdicts`), ``CHAPTER_SEEDS``.
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
from .verdicts import CHAPTER_SEEDS, deterministic_verdicts, seeded_verdicts

__all__ = [
    "CHAPTER_SEEDS",
    "METHODS",
    "PCA",
    "POGO",
    "Procrustes",
    "Trace",
    "cayley_step",
    "derive_correction_error",
    "deterministic_verdicts",
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
    "seeded_verdicts",
    "time_to_target",
]


def _fuzz_base() -> dict:
    import torch

    gen = torch.Generator().manual_seed(0)
    X = random_orthonormal(2, 3, 4, generator=gen, device="cpu")
    G = torch.randn(2, 3, 4, generator=gen, dtype=torch.float64)
    Psi = relative_gradient(X, G)
    prob = procrustes_problem(2, 3, 0, device="cpu")
    trace = run_method(prob, "pogo-sgd", 0.1, 3)
    steps = {"X": X, "G": G, "lr": 0.1}
    return {
        "relative_gradient": {"X": X, "G": G}, "normal_correction": {"M": X}, "quartic_lambda": {"M": X},
        "landing_step": steps, "qr_retraction": steps, "cayley_step": steps, "infeasibility": {"X": X},
        "run_method": {"problem": prob, "method": "pogo-sgd", "lr": 0.1, "steps": 3},
        "time_to_target": {"trace": trace, "target": 1e-3},
        "one_step_infeasibility": {"X": X[0], "Psi": Psi[0], "etas": torch.tensor([0.1, 0.2], dtype=torch.float64)},
        "product_count": {"method": "pogo", "b": 2, "p": 3, "n": 4},
        "POGO": {"params": [torch.nn.Parameter(X.clone())], "lr": 0.1},
        "procrustes_problem": {"b": 2, "p": 3, "seed": 0}, "pca_problem": {"n": 6, "p": 3, "cond": 10.0, "seed": 0},
        "random_orthonormal": {"b": 2, "p": 3, "n": 4},
        "explore": {"b": 2, "p": 3, "steps": 5}, "render": {"b": 2, "p": 3}, "explorer": {"b": 2, "p": 3},
        "plot_runs": {"runs": {"pogo-sgd": trace}, "title": "t"},
        "procrustes_runs": {"methods": ("pogo-sgd",)}, "eta4_law": {"n_eta": 3},
        "derive_quartic_coefficients": {"p": 1, "n": 1},
    }


#: Cheap, valid base arguments for the API fuzz test (tests/test_api_fuzz.py); each bad value replaces one.
FUZZ_BASE = _fuzz_base()
