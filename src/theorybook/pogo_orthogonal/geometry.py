r"""Stiefel geometry shared by POGO and its baselines: the row-orthonormal convention, the relative gradient, the
normal correction, the quartic λ, feasibility checks and Haar-random starts — batched torch, device-agnostic.

Convention (Javaloy & Vergari, 2026): a parameter is a stack :math:`X\in\mathbb R^{b\times p\times n}` with
:math:`p\le n` and :math:`XX^\top = I_p` (row-orthonormal). A tall stack (``p > n``) is read as
column-orthonormal and handled through its transpose, so every function below accepts either.
"""

from __future__ import annotations

import math

import torch

from .. import validate
from ..device import resolve_device, resolve_dtype

__all__ = ["infeasibility", "normal_correction", "quartic_lambda", "random_orthonormal", "relative_gradient"]

#: Round-off of a QR factor in each dtype (× √p, times a margin): the smallest start tolerance POGO can ask for.
ORTHO_TOL = {torch.float64: 1e-8, torch.float32: 1e-4, torch.float16: 1e-1, torch.bfloat16: 1e-1}
#: Largest learning rate accepted by the steps and the optimiser (beyond it every method only overflows).
MAX_LR = 1e6


# ---------------------------------------------------------------------------------------------- geometry
def _rows(X: torch.Tensor) -> torch.Tensor:
    """The row-orthonormal view: ``X`` if ``p ≤ n`` else ``Xᵀ`` (a view, no copy)."""
    return X if X.shape[-2] <= X.shape[-1] else X.mT


def _check_stack(name: str, X: torch.Tensor, finite: bool = True) -> None:
    if not isinstance(X, torch.Tensor) or X.ndim < 2 or not X.is_floating_point() or X.shape[-1] < 1 \
            or X.shape[-2] < 1:
        raise ValueError(f"Invalid {name}: must be a floating tensor with ≥ 2 dimensions (got {type(X).__name__}"
                         f"{'' if not isinstance(X, torch.Tensor) else ' of shape ' + str(tuple(X.shape))})")
    if finite and X.numel() and not bool(torch.isfinite(X).all()):
        raise ValueError(f"Invalid {name}: contains NaN or ±inf (must be finite)")


def _check_like(name: str, G, X: torch.Tensor) -> None:
    if not isinstance(G, torch.Tensor) or G.shape != X.shape:
        raise ValueError(f"Invalid {name}: shape {tuple(getattr(G, 'shape', ()))} (must be a tensor of X's shape "
                         f"{tuple(X.shape)})")
    validate.finite_tensor(name, G)


def _lr(lr) -> float:
    return validate.number("lr", lr, 0.0, MAX_LR, low_open=True)


def infeasibility(X: torch.Tensor) -> torch.Tensor:
    r"""Per-matrix :math:`\lVert XX^\top - I_p\rVert_F` on the short side (shape ``X.shape[:-2]``)."""
    _check_stack("X", X)
    return _infeasibility(X)


def _infeasibility(X: torch.Tensor) -> torch.Tensor:
    R = _rows(X)
    eye = torch.eye(R.shape[-2], dtype=R.dtype, device=R.device)
    return torch.linalg.matrix_norm(R @ R.mT - eye)


def _check_orthonormal(name: str, X: torch.Tensor, tol: float | None = None) -> None:
    _check_stack(name, X)
    if tol is None:
        tol = ORTHO_TOL.get(X.dtype, 1e-4) * math.sqrt(min(X.shape[-2:]))
    err = float(_infeasibility(X).max()) if X.numel() else 0.0
    if not math.isfinite(err) or err > tol:
        raise ValueError(f"Invalid {name}: max ‖XXᵀ − I‖_F = {err:.3g} (must be ≤ {tol:.3g}: the stack must be "
                         "orthonormal at the start)")


def random_orthonormal(b: int, p: int, n: int, *, generator: torch.Generator | None = None,
                       dtype: torch.dtype | None = None, device: str | torch.device | None = None) -> torch.Tensor:
    """``b`` Haar-random row-orthonormal ``p × n`` matrices (QR of a Gaussian with the sign of diag R fixed)."""
    b, p, n = validate.integer("b", b, 1), validate.integer("p", p, 1), validate.integer("n", n, 1)
    if p > n:
        raise ValueError(f"Invalid p: {p} (must be ≤ n = {n})")
    validate.memory_guard(3 * 8.0 * b * n * p, lower="b, p or n")
    Z = torch.randn(b, n, p, generator=generator, dtype=torch.float64)
    Q, R = torch.linalg.qr(Z)
    Q = Q * torch.sign(torch.diagonal(R, dim1=-2, dim2=-1)).unsqueeze(-2)
    return Q.mT.contiguous().to(resolve_device(device), resolve_dtype(dtype))


def relative_gradient(X: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
    r""":math:`\Psi = \tfrac12(XX^\top G - XG^\top X)` (rows), the canonical-metric Riemannian gradient.

    For orthonormal ``X``, :math:`\Psi X^\top` is skew, i.e. :math:`\Psi` is tangent. Four products as written;
    returned in the orientation of ``X``.
    """
    _check_stack("X", X)
    _check_like("G", G, X)
    R, D = _rows(X), _rows(G)
    Psi = 0.5 * ((R @ R.mT) @ D - (R @ D.mT) @ R)
    return Psi if R is X else Psi.mT


def normal_correction(M: torch.Tensor, lam: float | torch.Tensor = 0.5) -> torch.Tensor:
    r""":math:`X^+ = M + \lambda(M - MM^\top M)`; with :math:`\lambda=\tfrac12` one Newton–Schulz polar step.

    If :math:`MM^\top = I + E` then :math:`X^+X^{+\top} - I = (I+E)(I-\lambda E)^2 - I`, which is
    :math:`-\tfrac34E^2 + \tfrac14E^3` at :math:`\lambda = \tfrac12`. ``lam`` may be a tensor broadcast per matrix.
    """
    _check_stack("M", M)
    if isinstance(lam, torch.Tensor) and lam.numel() > 1:
        validate.finite_tensor("lam", lam)
    else:
        lam = validate.number("lam", lam)
    R = _rows(M)
    out = R + lam * (R - (R @ R.mT) @ R)
    return out if R is M else out.mT


def quartic_lambda(M: torch.Tensor) -> torch.Tensor:
    r"""Per-matrix λ minimising :math:`q(\lambda)=\lVert (M+\lambda B)(M+\lambda B)^\top - I\rVert_F^2`,
    :math:`B = M - MM^\top M`.

    With :math:`P = MM^\top`: :math:`C_0 = P-I`, :math:`C_1 = AB^\top + BA^\top = 2(P-P^2)`,
    :math:`C_2 = BB^\top = (I-P)P(I-P)`, and :math:`q = \lVert C_0 + \lambda C_1 + \lambda^2 C_2\rVert^2` has
    coefficients :math:`\lVert C_2\rVert^2,\ 2\langle C_1,C_2\rangle,\ 2\langle C_0,C_2\rangle+\lVert C_1\rVert^2,\
    2\langle C_0,C_1\rangle,\ \lVert C_0\rVert^2`. [reconstruction] The authors take the complex root of q with the
    smallest imaginary part; we take the best real critical point of q (roots of the cubic q′, computed in float64),
    clipped to [0, 1] (the range in which the correction contracts), among {those, ½}, so q(λ) ≤ q(½) and
    0 ≤ λ ≤ 1 always. Returns shape ``M.shape[:-2] + (1, 1)``.
    """
    _check_stack("M", M)
    return _quartic_lambda(M)


def _quartic_lambda(M: torch.Tensor) -> torch.Tensor:
    R = _rows(M).to(torch.float64)
    P = R @ R.mT
    eye = torch.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    C0, half_C1 = P - eye, P - P @ P
    C1, C2 = 2 * half_C1, half_C1 @ (eye - P)  # (P − P²)(I − P) = (I − P)P(I − P): all commute

    def ip(U: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        return (U * V).sum((-2, -1))

    c4, c3 = ip(C2, C2), 2 * ip(C1, C2)
    c2, c1, c0 = 2 * ip(C0, C2) + ip(C1, C1), 2 * ip(C0, C1), ip(C0, C0)
    coef = torch.stack([c4, c3, c2, c1, c0], -1)  # (..., 5), highest degree first
    scale = c4.clamp_min(torch.finfo(torch.float64).tiny)
    # cubic q'(λ)/ (4 c4) = λ³ + a λ² + b λ + c  → companion matrix eigenvalues
    a, b, c = 3 * c3 / (4 * scale), 2 * c2 / (4 * scale), c1 / (4 * scale)
    comp = torch.zeros(*c4.shape, 3, 3, dtype=torch.float64, device=P.device)
    comp[..., 0, :] = torch.stack([-a, -b, -c], -1)
    comp[..., 1, 0] = 1.0
    comp[..., 2, 1] = 1.0
    ok = torch.isfinite(comp).all(-1).all(-1)
    comp = torch.where(ok[..., None, None], comp, torch.zeros_like(comp))
    # λ outside [0, 1] is not a correction: near σ = 1 the step maps e = σ − 1 to ≈ (1 − 2λ)e, a contraction iff
    # 0 < λ < 1; an ill-conditioned quartic (low precision, c4 → 0) can put its real critical point at λ ~ 10³.
    cand = torch.linalg.eigvals(comp).real.clamp(0.0, 1.0)
    cand = torch.cat([cand, torch.full_like(cand[..., :1], 0.5)], -1)  # (..., 4)
    powers = cand.unsqueeze(-1) ** torch.arange(4, -1, -1, dtype=torch.float64, device=P.device)
    q = (powers * coef.unsqueeze(-2)).sum(-1)
    q = torch.where(torch.isfinite(q), q, torch.full_like(q, math.inf))
    best = cand.gather(-1, q.argmin(-1, keepdim=True)).squeeze(-1)
    best = torch.where(ok & (c4 > 0), best, torch.full_like(best, 0.5))
    return best.to(M.dtype)[..., None, None]

