r"""POGO and its baselines on stacks of orthonormal matrices — batched torch, device-agnostic.

Convention (Javaloy & Vergari, 2026): a parameter is a stack :math:`X\in\mathbb R^{b\times p\times n}` with
:math:`p\le n` and :math:`XX^\top = I_p` (row-orthonormal). A tall stack (``p > n``) is read as
column-orthonormal and handled through its transpose, so every function below accepts either.

One POGO step with the base optimiser's direction :math:`\tilde G` and learning rate :math:`\eta`:

.. math::

    \Psi = \tfrac12\,(XX^\top\tilde G - X\tilde G^\top X),\qquad
    M = X - \eta\Psi,\qquad
    X^+ = M + \lambda\,(M - MM^\top M),\quad \lambda=\tfrac12 .

The baselines share :math:`\Psi` (the canonical-metric Riemannian gradient, also Landing's relative gradient), so
they differ only in how they return to the manifold: Landing adds the normal field
:math:`\lambda_L(XX^\top-I)X` with its safe step; Riemannian GD retracts with QR or with the Cayley transform.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import torch
import torch.distributed as dist

from .. import validate
from ..device import resolve_device, resolve_dtype

__all__ = [
    "POGO",
    "relative_gradient",
    "normal_correction",
    "quartic_lambda",
    "landing_step",
    "qr_retraction",
    "cayley_step",
    "infeasibility",
    "random_orthonormal",
    "Procrustes",
    "PCA",
    "procrustes_problem",
    "pca_problem",
    "Trace",
    "METHODS",
    "run_method",
    "time_to_target",
    "one_step_infeasibility",
    "product_count",
]

#: Largest ‖XXᵀ − I‖_F accepted for a starting point, by dtype (round-off of a QR factor times a margin).
ORTHO_TOL = {torch.float64: 1e-8, torch.float32: 1e-4, torch.float16: 1e-1, torch.bfloat16: 1e-1}
#: VectorAdam's ε in m̂/(√v̂ + ε).
VADAM_EPS = 1e-8
#: POGO's default construction tolerance on max ‖XXᵀ − I‖_F: POGO's own iterates drift by its η⁴ term (≈ 2e-3
#: after 5 steps, ≈ 0.06 with momentum 0.9 at the chapter's rates), and its normal correction contracts any
#: ‖XXᵀ − I‖₂ < 1, so 0.1 accepts a resumed run's parameters while refusing unconstrained ones (‖XXᵀ − I‖ ≳ 1).
RESUME_TOL = 0.1
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


# ---------------------------------------------------------------------------------------------- baselines
def _check_step_args(X: torch.Tensor, G: torch.Tensor, lr: float) -> float:
    _check_stack("X", X)
    _check_like("G", G, X)
    return _lr(lr)


def landing_step(X: torch.Tensor, G: torch.Tensor, lr: float, *, lam: float = 1.0,
                 eps: float = 0.5) -> torch.Tensor:
    r"""One Landing step (Ablin et al.) with its safe step; returns the new stack (pure).

    Field :math:`\Lambda = \Psi + \lambda_L(XX^\top - I)X`. With :math:`d=\lVert XX^\top-I\rVert_F`,
    :math:`g=\lVert\Lambda\rVert_F`, :math:`\beta=\lambda_L d(1-d)`, :math:`\alpha=g^2`:
    :math:`\eta^* = (\beta+\sqrt{\beta^2+\alpha\max(\varepsilon-d,0)})/(\alpha+10^{-7})` and
    :math:`X^+ = X - \min(\eta,\eta^*,1/(2\lambda_L))\,\Lambda`, per matrix. Five products.
    """
    lr = _check_step_args(X, G, lr)
    lam = validate.number("lam", lam, 0.0, MAX_LR, low_open=True)
    eps = validate.number("eps", eps, 0.0, 1.0, low_open=True)
    R, D = _rows(X), _rows(G)
    eye = torch.eye(R.shape[-2], dtype=R.dtype, device=R.device)
    S = R @ R.mT
    field = 0.5 * (S @ D - (R @ D.mT) @ R) + lam * ((S - eye) @ R)
    d = torch.linalg.matrix_norm(S - eye)[..., None, None]
    alpha = field.square().sum((-2, -1), keepdim=True)
    beta = lam * d * (1 - d)
    safe = (beta + torch.sqrt(beta.square() + alpha * (eps - d).clamp_min(0))) / (alpha + 1e-7)
    step = torch.clamp(safe, max=min(float(lr), 1 / (2 * lam)))
    out = R - step * field
    return out if R is X else out.mT


def qr_retraction(X: torch.Tensor, G: torch.Tensor, lr: float) -> torch.Tensor:
    r"""One Riemannian GD step with the QR retraction: :math:`X^+ = \mathrm{qf}(X - \eta\Psi)` (pure).

    ``qf`` is the orthonormal factor of a thin QR with the signs of diag R made positive (so the retraction is
    continuous and equals the identity at :math:`\eta = 0`).
    """
    lr = _check_step_args(X, G, lr)
    R = _rows(X)
    Y = (R - lr * _rows(relative_gradient(X, G))).mT  # n × p, column form
    Q, Rf = torch.linalg.qr(Y)
    sign = torch.sign(torch.diagonal(Rf, dim1=-2, dim2=-1))
    Q = Q * torch.where(sign == 0, torch.ones_like(sign), sign).unsqueeze(-2)
    return Q.mT if R is X else Q


def cayley_step(X: torch.Tensor, G: torch.Tensor, lr: float) -> torch.Tensor:
    r"""One Riemannian GD step along the Cayley curve (Wen & Yin), exactly orthonormal in exact arithmetic.

    In column form :math:`Y = X^\top` (``n × p``) with gradient :math:`G_c = G^\top`, the skew generator
    :math:`W = \tfrac12(G_cY^\top - YG_c^\top)` satisfies :math:`WY = \Psi^\top` on the manifold, and
    :math:`Y^+ = (I + \tfrac\eta2 W)^{-1}(I - \tfrac\eta2 W)Y`. When ``2p < n`` the low-rank form
    :math:`W = UV^\top`, :math:`U=\tfrac12[G_c, Y]`, :math:`V=[Y,-G_c]` gives
    :math:`Y^+ = Y - \eta U(I_{2p} + \tfrac\eta2 V^\top U)^{-1}V^\top Y` (a ``2p × 2p`` solve); otherwise the
    ``n × n`` system is solved directly.
    """
    lr = _check_step_args(X, G, lr)
    R = _rows(X)
    Y, Gc = R.mT, _rows(G).mT
    n, p = Y.shape[-2], Y.shape[-1]
    if 2 * p < n:
        U = 0.5 * torch.cat([Gc, Y], -1)
        V = torch.cat([Y, -Gc], -1)
        eye = torch.eye(2 * p, dtype=Y.dtype, device=Y.device)
        Yn = Y - lr * (U @ torch.linalg.solve(eye + (0.5 * lr) * (V.mT @ U), V.mT @ Y))
    else:
        W = 0.5 * (Gc @ Y.mT - Y @ Gc.mT)
        eye = torch.eye(n, dtype=Y.dtype, device=Y.device)
        Yn = torch.linalg.solve(eye + (0.5 * lr) * W, Y - (0.5 * lr) * (W @ Y))
    return Yn.mT if R is X else Yn


# ---------------------------------------------------------------------------------------------- POGO
def _check_pogo_group(group: dict) -> None:
    """Validate (and normalise in place) one POGO param group's hyperparameters."""
    group["lr"] = _lr(group["lr"])
    validate.one_of("base", group["base"], ("sgd", "vadam"))
    group["momentum"] = validate.number("momentum", group["momentum"], 0.0, 1.0, high_open=True)
    betas = group["betas"]
    if not isinstance(betas, tuple | list) or len(betas) != 2:
        raise ValueError(f"Invalid betas: {betas!r} (must be a pair (beta1, beta2))")
    group["betas"] = (validate.number("beta1", betas[0], 0.0, 1.0, high_open=True),
                      validate.number("beta2", betas[1], 0.0, 1.0, high_open=True))
    group["lam"] = validate.number("lam", group["lam"], 0.0, 1.0, low_open=True, high_open=True)
    group["lambda_every"] = validate.integer("lambda_every", group["lambda_every"], 0)
    if not isinstance(group["orthogonal"], bool):
        raise TypeError(f"Invalid orthogonal: {group['orthogonal']!r} (must be True or False)")
    if not isinstance(group["distributed"], bool):
        raise TypeError(f"Invalid distributed: {group['distributed']!r} (must be True or False)")
    group["weight_decay"] = validate.number("weight_decay", group.get("weight_decay", 0.0), 0.0, math.inf)
    if group["feasibility_tol"] is not None:
        group["feasibility_tol"] = validate.number("feasibility_tol", group["feasibility_tol"], 0.0, 0.5,
                                                   low_open=True)


class POGO(torch.optim.Optimizer):
    r"""POGO: base optimiser → relative gradient → tangent step → one-step normal correction.

    Parameters are stacks ``(..., p, n)`` orthonormal when added (rows if ``p ≤ n``, else columns), checked at
    construction and in :meth:`add_param_group`: max ‖XXᵀ − I‖_F within the dtype's round-off, or within
    ``feasibility_tol`` (≤ ½) when given — e.g. to resume from a checkpoint of a POGO run, whose iterates are
    feasible only up to POGO's η⁴ term.

    * ``base="sgd"``: :math:`\tilde G = \mathrm{buf} \leftarrow \mu\,\mathrm{buf} + G` (``momentum`` μ; plain
      gradient when μ = 0).
    * ``base="vadam"`` (VectorAdam): :math:`m\leftarrow\beta_1 m+(1-\beta_1)G`, one scalar per matrix
      :math:`v\leftarrow\beta_2 v+(1-\beta_2)\lVert G\rVert_F^2`,
      :math:`\tilde G=\hat m/(\sqrt{\hat v}+10^{-8})` with bias correction.

    Then :math:`\Psi=\tfrac12(XX^\top\tilde G-X\tilde G^\top X)`, :math:`M=X-\eta\Psi`,
    :math:`X^+=M+\lambda(M-MM^\top M)` with ``lam`` (½ = one Newton–Schulz polar step), or, every
    ``lambda_every`` = k > 0 steps, λ from :func:`quartic_lambda`. Six batched products per step (see
    :func:`product_count`). Works on any device; state lives with the parameter.

    **Euclidean groups.** A param group with ``orthogonal=False`` (e.g. biases, an unconstrained head) holds
    ordinary parameters of any shape and takes a plain step with the same base: ``"sgd"`` →
    :math:`w\leftarrow w-\eta\,\mathrm{buf}` (heavy-ball momentum μ), ``"vadam"`` → Adam
    (:math:`w\leftarrow w-\eta\,\hat m/(\sqrt{\hat v}+10^{-8})`, element-wise v). Example:
    ``POGO([{"params": stiefel}, {"params": others, "orthogonal": False}], lr=0.1)``.

    **Distributed.** ``distributed=True`` with ``torch.distributed`` initialised (e.g. under DDP: every rank holds
    the same averaged gradient): the base direction is formed on every rank (element-wise, so the state stays
    identical everywhere), and the six products of a stack ``(b, p, n)`` are split into ``world_size`` equal
    shares of matrices, each rank computing its share, then ``all_gather``. Every rank must call :meth:`step`.

    State is flat (string keys, tensors and an int ``step``): ``torch.save(opt.state_dict())`` loads back with
    ``torch.load``'s default ``weights_only=True``. The construction check accepts POGO's own drifted iterates
    (default tolerance :data:`RESUME_TOL`), so the usual resume — build the optimizer on the model's current
    parameters, then ``load_state_dict`` — works without ``feasibility_tol``.

    **Precision.** With 16-bit parameters the tangent step and the normal correction run in float32 and are cast
    back; the quartic λ is computed in float64 and clipped to [0, 1]. **Weight decay** (``weight_decay``, decoupled,
    AdamW-style: w ← (1 − ηλ_wd)w before the base step) applies to Euclidean groups; an orthogonal group refuses it.
    Complex and non-floating parameters are refused.

    **torch.compile.** :meth:`step` is excluded from dynamo graphs (``torch.compiler.disable``): in a compiled
    training step the forward and backward passes compile and the step runs eagerly, with the same parameters as
    an eager run (``tests/test_optim_contract.py``).
    """

    def __init__(self, params, lr: float, *, base: str = "sgd", momentum: float = 0.0,
                 betas: tuple[float, float] = (0.9, 0.999), lam: float = 0.5, lambda_every: int = 0,
                 orthogonal: bool = True, feasibility_tol: float | None = None, distributed: bool = False,
                 weight_decay: float = 0.0):
        defaults = dict(lr=lr, base=base, momentum=momentum, betas=betas, lam=lam, lambda_every=lambda_every,
                        orthogonal=orthogonal, feasibility_tol=feasibility_tol, distributed=distributed,
                        weight_decay=weight_decay)
        _check_pogo_group(defaults)
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict) -> None:
        """torch.optim's ``add_param_group``, validating the group's hyperparameters and, for an orthogonal group,
        refusing a stack that is not orthonormal (also after construction). A rejected group is not kept."""
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        try:
            _check_pogo_group(group)
            for i, X in enumerate(group["params"]):
                if X.is_complex() or not X.is_floating_point():
                    raise TypeError(f"Invalid params[{i}]: dtype {X.dtype} — POGO takes real floating-point "
                                    "parameters (complex Stiefel/unitary constraints are not implemented)")
            if group["orthogonal"] and group["weight_decay"]:
                raise ValueError(f"Invalid weight_decay: {group['weight_decay']!r} for an orthogonal group (must be 0:"
                                 " ‖X‖ is fixed on the manifold; use it on Euclidean groups)")
            if group["orthogonal"]:
                for i, X in enumerate(group["params"]):
                    try:
                        tol = group["feasibility_tol"]
                        if tol is None:
                            tol = max(RESUME_TOL, ORTHO_TOL.get(X.dtype, 1e-4) * math.sqrt(min(X.shape[-2:])))
                        _check_orthonormal(f"params[{i}]", X.detach(), tol)
                    except ValueError as err:
                        raise ValueError(f"{err}. For ordinary (Euclidean) parameters use a separate group: "
                                         "POGO([{'params': orthonormal}, {'params': others, 'orthogonal': False}],"
                                         " lr). To resume from a POGO run (which drifts by its η⁴ term) pass "
                                         "feasibility_tol, e.g. 1e-2") from None
        except (TypeError, ValueError):
            del self.param_groups[-1]
            raise

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("weight_decay", 0.0)

    @torch.compiler.disable
    @torch.no_grad()
    def step(self, closure: Callable[[], torch.Tensor] | None = None):
        """One POGO step (runs eagerly even inside ``torch.compile``; see the class docstring)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for X in group["params"]:
                if X.grad is not None:
                    if X.grad.is_sparse:
                        raise RuntimeError("POGO does not support sparse gradients")
                    if group["orthogonal"]:
                        self._update(X, X.grad, group, self.state[X])
                    else:
                        self._euclidean(X, X.grad, group, self.state[X])
        return loss

    @staticmethod
    def _euclidean(w: torch.Tensor, g: torch.Tensor, group: dict, state: dict) -> None:
        state["step"] = t = state.get("step", 0) + 1
        if group["weight_decay"]:
            w.mul_(1 - group["lr"] * group["weight_decay"])  # decoupled (AdamW-style): before the base step
        if group["base"] == "sgd":
            if group["momentum"] > 0:
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = g.clone()
                else:
                    buf.mul_(group["momentum"]).add_(g)
                g = buf
            w.add_(g, alpha=-group["lr"])
            return
        b1, b2 = group["betas"]
        if "exp_avg" not in state:
            state["exp_avg"] = torch.zeros_like(w)
            state["exp_avg_sq"] = torch.zeros_like(w)
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m.lerp_(g, 1 - b1)
        v.mul_(b2).addcmul_(g, g, value=1 - b2)
        denom = (v / (1 - b2**t)).sqrt_().add_(VADAM_EPS)
        w.addcdiv_(m / (1 - b1**t), denom, value=-group["lr"])

    @staticmethod
    def _update(X: torch.Tensor, G: torch.Tensor, group: dict, state: dict) -> None:
        state["step"] = t = state.get("step", 0) + 1
        if group["base"] == "sgd":
            if group["momentum"] > 0:
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = G.clone()
                else:
                    buf.mul_(group["momentum"]).add_(G)
                G = buf
        else:
            b1, b2 = group["betas"]
            if "exp_avg" not in state:
                state["exp_avg"] = torch.zeros_like(G)
                state["exp_avg_sq"] = G.new_zeros(G.shape[:-2] + (1, 1))
            m, v = state["exp_avg"], state["exp_avg_sq"]
            m.lerp_(G, 1 - b1)
            v.mul_(b2).add_(G.square().sum((-2, -1), keepdim=True), alpha=1 - b2)
            denom = (v / (1 - b2**t)).sqrt_().add_(VADAM_EPS)
            G = (m / (1 - b1**t)) / denom
        R, D = _rows(X), _rows(G)
        work = torch.promote_types(R.dtype, torch.float32)  # 16-bit parameters: the step in float32, cast back
        R_w, D_w = R.to(work), D.to(work)
        quartic = group["lambda_every"] > 0 and t % group["lambda_every"] == 0
        if R.ndim >= 3 and group["distributed"] and dist.is_available() and dist.is_initialized() \
                and dist.get_world_size() > 1:
            shape = R.shape
            new = _sharded(_pogo_core, R_w.reshape(-1, *shape[-2:]), D_w.reshape(-1, *shape[-2:]), group["lr"],
                           group["lam"], quartic)
            R.copy_(new.reshape(shape))
        else:
            R.copy_(_pogo_core(R_w, D_w, group["lr"], group["lam"], quartic))


def _pogo_core(R: torch.Tensor, D: torch.Tensor, lr: float, lam: float, quartic: bool) -> torch.Tensor:
    """Tangent step and normal correction on row-orthonormal R with base direction D (the six products)."""
    M = R - lr * (0.5 * ((R @ R.mT) @ D - (R @ D.mT) @ R))
    lam = _quartic_lambda(M) if quartic else lam
    return M + lam * (M - (M @ M.mT) @ M)


def _sharded(fn: Callable[..., torch.Tensor], R: torch.Tensor, D: torch.Tensor, *args) -> torch.Tensor:
    """fn on this rank's equal share of the (N, p, n) stacks (padded with copies of the first matrix), then
    ``all_gather``: every rank ends with fn of the whole stack."""
    world, rank = dist.get_world_size(), dist.get_rank()
    N = R.shape[0]
    k = -(-N // world)
    if k * world > N:
        R = torch.cat([R, R[:1].expand(k * world - N, *R.shape[1:])])
        D = torch.cat([D, D[:1].expand(k * world - N, *D.shape[1:])])
    share = fn(R[rank * k : (rank + 1) * k], D[rank * k : (rank + 1) * k], *args).contiguous()
    parts = [torch.empty_like(share) for _ in range(world)]
    dist.all_gather(parts, share)
    return torch.cat(parts)[:N]


# ---------------------------------------------------------------------------------------------- problems
@dataclass(frozen=True)
class Procrustes:
    r"""b orthogonal Procrustes problems :math:`f_i(X_i)=\tfrac12\lVert X_iA_i-B_i\rVert_F^2`, :math:`X_i\in O(p)`.

    The exact optimum in the connected component of the start :math:`X_{0,i}` is
    :math:`X^*_i = U\,\mathrm{diag}(1,\dots,1,s)\,V^\top` from :math:`B_iA_i^\top = U\Sigma V^\top`, with
    :math:`s=\pm1` chosen so that :math:`\det X^*_i=\det X_{0,i}` (no continuous method can change the sign of the
    determinant). ``gap`` is the relative gap :math:`(F(X)-F^*)/(F(X_0)-F^*)`, F = Σ f_i.
    """

    A: torch.Tensor
    B: torch.Tensor
    X0: torch.Tensor
    X_star: torch.Tensor
    lipschitz: float

    def losses(self, X: torch.Tensor) -> torch.Tensor:
        return 0.5 * (X @ self.A - self.B).square().sum((-2, -1))

    def loss(self, X: torch.Tensor) -> torch.Tensor:
        return self.losses(X).sum()

    def grad(self, X: torch.Tensor) -> torch.Tensor:
        return (X @ self.A - self.B) @ self.A.mT

    @cached_property
    def _f_star_f0(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.loss(self.X_star), self.loss(self.X0)

    def gap(self, X: torch.Tensor) -> float:
        f_star, f0 = self._f_star_f0
        return float((self.loss(X) - f_star) / (f0 - f_star))


@dataclass(frozen=True)
class PCA:
    r"""PCA on the Stiefel manifold: :math:`f(X) = -\tfrac12\mathrm{tr}(X^\top AX)`, :math:`X\in\mathbb R^{n\times p}`,
    :math:`X^\top X=I_p` (a ``(1, n, p)`` stack, column-orthonormal). :math:`f^* = -\tfrac12\sum_{i\le p}\lambda_i`;
    ``gap`` is :math:`(f(X)-f^*)/|f^*|` as in the authors' example.
    """

    A: torch.Tensor
    X0: torch.Tensor
    f_star: float
    lipschitz: float

    def loss(self, X: torch.Tensor) -> torch.Tensor:
        return -0.5 * (X * (self.A @ X)).sum()

    def grad(self, X: torch.Tensor) -> torch.Tensor:
        return -(self.A @ X)

    def gap(self, X: torch.Tensor) -> float:
        return float((self.loss(X) - self.f_star) / abs(self.f_star))


def procrustes_problem(b: int, p: int, seed: int, *, noise: float = 0.3, dtype: torch.dtype | None = None,
                       device: str | torch.device | None = None) -> Procrustes:
    r"""``b`` random ``p × p`` Procrustes problems: :math:`A_i\in\mathbb R^{p\times 2p}` with entries
    :math:`\mathcal N(0, 1/2p)`, :math:`B_i = Q_iA_i + \sigma N_i` (Haar :math:`Q_i`, σ = ``noise``), start
    :math:`X_{0,i}` Haar-random. ``lipschitz`` = :math:`\max_i\lambda_{\max}(A_iA_i^\top)`.
    """
    b, p = validate.integer("b", b, 1), validate.integer("p", p, 1)
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    noise = validate.number("noise", noise, 0.0, 1e6)
    validate.memory_guard(12 * 8.0 * b * p * p, lower="b or p")
    gen = torch.Generator().manual_seed(seed)
    m = 2 * p
    A = torch.randn(b, p, m, generator=gen, dtype=torch.float64) / math.sqrt(m)
    Q = random_orthonormal(b, p, p, generator=gen, device="cpu")
    B = Q @ A + noise * torch.randn(b, p, m, generator=gen, dtype=torch.float64) / math.sqrt(m)
    X0 = random_orthonormal(b, p, p, generator=gen, device="cpu")
    U, _, Vh = torch.linalg.svd(B @ A.mT)
    s = torch.sign(torch.linalg.det(X0) * torch.linalg.det(U) * torch.linalg.det(Vh))
    D = torch.ones(b, p, dtype=torch.float64)
    D[:, -1] = s
    X_star = (U * D.unsqueeze(-2)) @ Vh
    L = float(torch.linalg.eigvalsh(A @ A.mT).max())
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    return Procrustes(*(t.to(dev, dt) for t in (A, B, X0, X_star)), lipschitz=L)


def pca_problem(n: int, p: int, cond: float, seed: int, *, dtype: torch.dtype | None = None,
                device: str | torch.device | None = None) -> PCA:
    r"""PCA with :math:`A = Q\,\mathrm{diag}(10\cdot\mathrm{logspace}(-\log_{10}\kappa, 0, n))\,Q^\top`
    (condition number κ = ``cond``), Haar Q, Haar column-orthonormal start; ``p > n`` raises."""
    n, p = validate.integer("n", n, 1), validate.integer("p", p, 1)
    if p > n:
        raise ValueError(f"Invalid p: {p} (must be ≤ n = {n})")
    cond = validate.number("cond", cond, 1.0, 1e15)
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    validate.memory_guard(6 * 8.0 * n * n, lower="n")
    gen = torch.Generator().manual_seed(seed)
    lam = 10 * torch.logspace(-math.log10(cond), 0, n, dtype=torch.float64)
    Q = random_orthonormal(1, n, n, generator=gen, device="cpu")[0]
    A = (Q * lam) @ Q.mT
    A = 0.5 * (A + A.mT)
    X0 = random_orthonormal(1, p, n, generator=gen, device="cpu").mT.contiguous()
    f_star = -0.5 * float(lam.sort(descending=True).values[:p].sum())
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    return PCA(A.to(dev, dt), X0.to(dev, dt), f_star, lipschitz=float(lam.max()))


# ---------------------------------------------------------------------------------------------- runs
@dataclass(frozen=True)
class Trace:
    """A run: at each recorded step, cumulative optimiser-step seconds, gap and max ‖XXᵀ − I‖_F."""

    method: str
    step: list[int]
    time: list[float]
    gap: list[float]
    infeas: list[float]
    diverged: bool

    @property
    def max_infeas(self) -> float:
        return max(self.infeas) if self.infeas else math.nan

    @property
    def label(self) -> str:
        """One status line: diverged, or the final gap and the peak infeasibility."""
        if self.diverged:
            return f"{self.method}: diverged at step {self.step[-1]}"
        return (f"{self.method}: gap {self.gap[-1]:.2e} after {self.step[-1]} steps; "
                f"peak ‖XXᵀ − I‖_F {self.max_infeas:.1e}")


def _geoopt_adam(X: torch.Tensor, lr: float, betas: tuple[float, float]):
    import geoopt  # optional peer library (Riemannian Adam, Bécigneul & Ganea)

    P = geoopt.ManifoldParameter(_rows(X).mT.contiguous(), manifold=geoopt.EuclideanStiefel())
    opt = geoopt.optim.RiemannianAdam([P], lr=lr, betas=betas)
    return P, opt


#: Method names understood by :func:`run_method`.
METHODS = ("pogo-sgd", "pogo-vadam", "landing", "qr", "cayley", "radam-geoopt")


def run_method(problem: Procrustes | PCA, method: str, lr: float, steps: int, *, record_every: int = 1,
               momentum: float = 0.0, betas: tuple[float, float] = (0.9, 0.999), lam: float = 0.5,
               lambda_every: int = 0, target: float | None = None) -> Trace:
    """Run ``method`` from ``problem.X0`` for ``steps`` steps, timing only the optimiser step.

    The loss gradient is computed outside the timed region; gap and feasibility are recorded every
    ``record_every`` steps (untimed). A non-finite iterate (or a failed linear solve) stops the run as diverged;
    with ``target`` the run also stops at the first recorded gap ≤ target.
    """
    if not isinstance(problem, Procrustes | PCA):
        raise TypeError(f"Invalid problem: {type(problem).__name__} (must be a Procrustes or PCA problem)")
    validate.one_of("method", method, METHODS)
    lr = _lr(lr)
    steps = validate.integer("steps", steps, 0, 100_000)
    record_every = validate.integer("record_every", record_every, 1)
    if target is not None:
        target = validate.number("target", target, 0.0, math.inf, low_open=True)
    sync = torch.cuda.synchronize if problem.X0.is_cuda else (lambda: None)
    X = problem.X0.clone()
    param, opt = None, None
    if method.startswith("pogo"):
        param = torch.nn.Parameter(X)
        base = "sgd" if method == "pogo-sgd" else "vadam"
        opt = POGO([param], lr, base=base, momentum=momentum, betas=betas, lam=lam, lambda_every=lambda_every)
    elif method == "radam-geoopt":
        param, opt = _geoopt_adam(X, lr, betas)
    fns = {"landing": landing_step, "qr": qr_retraction, "cayley": cayley_step}

    # geoopt stores column-orthonormal (n × p) matrices: flip row-form stacks on the way in and out
    flip = method == "radam-geoopt" and X.shape[-2] <= X.shape[-1]

    def current() -> torch.Tensor:
        if param is None:
            return X
        return param.detach().mT if flip else param.detach()

    trace = Trace(method, [0], [0.0], [problem.gap(X)], [float(_infeasibility(X).max())], False)
    elapsed, diverged = 0.0, False
    for t in range(1, steps + 1):
        G = problem.grad(current())
        if param is not None:
            param.grad = G.mT.contiguous() if flip else G
        sync()
        t0 = time.perf_counter()
        try:
            if opt is not None:
                opt.step()
            else:
                X = fns[method](X, G, lr)
        except (RuntimeError, torch.linalg.LinAlgError):
            diverged = True
        sync()
        elapsed += time.perf_counter() - t0
        if diverged or t % record_every == 0 or t == steps:
            Xc = current()
            gap, inf = problem.gap(Xc), float(_infeasibility(Xc).max())
            diverged = diverged or not (math.isfinite(gap) and math.isfinite(inf)) or inf > 1e3
            gap = gap if math.isfinite(gap) else math.inf  # a diverged run reports inf, never NaN
            inf = inf if math.isfinite(inf) else math.inf
            trace.step.append(t)
            trace.time.append(elapsed)
            trace.gap.append(gap)
            trace.infeas.append(inf)
            if diverged or (target is not None and gap <= target):
                break
    return Trace(method, trace.step, trace.time, trace.gap, trace.infeas, diverged)


def time_to_target(trace: Trace, target: float) -> tuple[int | None, float | None]:
    """(first recorded step, cumulative step seconds) with gap ≤ ``target``, or (None, None)."""
    if not isinstance(trace, Trace):
        raise TypeError(f"Invalid trace: {type(trace).__name__} (must be a Trace from run_method)")
    target = validate.number("target", target, 0.0, math.inf, low_open=True)
    for s, t, g in zip(trace.step, trace.time, trace.gap, strict=True):
        if g <= target:
            return s, t
    return None, None


# ---------------------------------------------------------------------------------------------- analysis
def one_step_infeasibility(X: torch.Tensor, Psi: torch.Tensor, etas: torch.Tensor,
                           lam: float = 0.5) -> tuple[torch.Tensor, torch.Tensor]:
    r"""For each η: measured :math:`\lVert X^+X^{+\top}-I\rVert_F` after one POGO step from ``X`` along ``Psi``,
    and the prediction :math:`\lVert (I+E)(I-\lambda E)^2 - I\rVert_F` with :math:`E = MM^\top - I`
    (:math:`= \eta^2\Psi\Psi^\top` when X is orthonormal and Ψ tangent; :math:`-\tfrac34E^2+\tfrac14E^3` at λ=½).
    ``X`` and ``Psi`` are single ``p × n`` matrices; returns two tensors shaped like ``etas``.
    """
    _check_orthonormal("X", X)
    _check_like("Psi", Psi, X)
    etas = validate.finite_tensor("etas", etas).to(X.device, X.dtype)
    validate.in_range("etas", etas, 0.0, MAX_LR, low_open=True, high_open=False)
    lam = validate.number("lam", lam, 0.0, 1.0, low_open=True)
    validate.memory_guard(6 * 8.0 * etas.numel() * X.shape[-1] * X.shape[-2], lower="etas (fewer values)")
    M = X.unsqueeze(0) - etas.reshape(-1, 1, 1) * Psi.unsqueeze(0)
    Xp = normal_correction(M, lam)
    measured = infeasibility(Xp)
    R = _rows(M)
    eye = torch.eye(R.shape[-2], dtype=R.dtype, device=R.device)
    E = R @ R.mT - eye
    predicted = torch.linalg.matrix_norm((eye + E) @ (eye - lam * E) @ (eye - lam * E) - eye)
    return measured.reshape(etas.shape), predicted.reshape(etas.shape)


def product_count(method: str, b: int, p: int, n: int) -> float:
    r"""Matrix-product flops of one step, measured with ``torch.utils.flop_counter``, in units of one
    ``p × n`` by ``n × p`` product per matrix (:math:`2bp^2n` flops). ``method``: ``"pogo"``, ``"pogo-quartic"``,
    ``"landing"``. QR/solve flops are not counted by the flop counter, so retractions are not offered here.
    """
    validate.one_of("method", method, ("pogo", "pogo-quartic", "landing"))
    b, p = validate.integer("b", b, 1, 4096), validate.integer("p", p, 1, 512)
    n = validate.integer("n", n, p, 512)
    from torch.utils.flop_counter import FlopCounterMode

    gen = torch.Generator().manual_seed(0)
    X = random_orthonormal(b, p, n, generator=gen, dtype=torch.float64, device="cpu")
    G = torch.randn(b, p, n, generator=gen, dtype=torch.float64)
    counter = FlopCounterMode(display=False)
    if method == "landing":
        with counter:
            landing_step(X, G, 0.1)
    else:
        param = torch.nn.Parameter(X.clone())
        param.grad = G
        opt = POGO([param], 0.1, lambda_every=1 if method == "pogo-quartic" else 0)  # start check not counted
        with counter:
            opt.step()
    return counter.get_total_flops() / (2 * b * p * p * n)
