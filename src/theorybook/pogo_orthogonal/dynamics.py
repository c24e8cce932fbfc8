r"""POGO's baselines, test problems and timed runs on stacks of orthonormal matrices — batched torch,
device-agnostic. The optimizer itself is in :mod:`.optimizer`, the shared geometry in :mod:`.geometry`; both are
re-exported here (``from theorybook.pogo_orthogonal.dynamics import POGO`` keeps working).

The baselines share :math:`\Psi = \tfrac12(XX^\top G - XG^\top X)` (the canonical-metric Riemannian gradient, also
Landing's relative gradient), so they differ only in how they return to the manifold: Landing adds the normal field
:math:`\lambda_L(XX^\top-I)X` with its safe step; Riemannian GD retracts with QR or with the Cayley transform.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, partial

import torch

from .. import validate
from ..device import resolve_device, resolve_dtype
from .geometry import (
    MAX_LR,
    ORTHO_TOL,
    _check_like,
    _check_orthonormal,
    _check_stack,
    _infeasibility,
    _lr,
    _rows,
    infeasibility,
    normal_correction,
    quartic_lambda,
    random_orthonormal,
    relative_gradient,
)
from .optimizer import FEASIBILITY_BOUND, POGO, RESUME_TOL, VADAM_EPS

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
_REEXPORTED = (MAX_LR, ORTHO_TOL, FEASIBILITY_BOUND, RESUME_TOL, VADAM_EPS, _check_orthonormal)


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


def _geoopt(X: torch.Tensor, lr: float, betas: tuple[float, float], momentum: float, adam: bool):
    import geoopt  # optional peer library (Riemannian Adam and SGD, Bécigneul & Ganea)

    P = geoopt.ManifoldParameter(_rows(X).mT.contiguous(), manifold=geoopt.EuclideanStiefel())
    opt = (geoopt.optim.RiemannianAdam([P], lr=lr, betas=betas) if adam
           else geoopt.optim.RiemannianSGD([P], lr=lr, momentum=momentum))
    return P, opt


#: Method names understood by :func:`run_method`.
METHODS = ("pogo-sgd", "pogo-vadam", "landing", "qr", "cayley", "radam-geoopt", "rsgd-geoopt")


def run_method(problem: Procrustes | PCA, method: str, lr: float, steps: int, *, record_every: int = 1,
               momentum: float = 0.0, betas: tuple[float, float] = (0.9, 0.999), lam: float = 0.5,
               lambda_every: int = 0, target: float | None = None, min_steps: int = 0,
               clock: Callable[[], float] | None = None, landing_lam: float = 1.0) -> Trace:
    """Run ``method`` from ``problem.X0`` for ``steps`` steps, timing only the optimiser step (with ``clock``,
    default ``time.perf_counter``; ``time.thread_time`` measures the calling thread's CPU time, which other
    processes do not inflate when torch runs on one thread).

    The loss gradient is computed outside the timed region; gap and feasibility are recorded every
    ``record_every`` steps (untimed). A non-finite iterate (or a failed linear solve) stops the run as diverged;
    with ``target`` the run also stops at the first recorded gap ≤ target at or after step ``min_steps``.
    ``landing_lam`` is Landing's λ_L (its authors' default 1; ``lam`` is POGO's correction λ).
    """
    if not isinstance(problem, Procrustes | PCA):
        raise TypeError(f"Invalid problem: {type(problem).__name__} (must be a Procrustes or PCA problem)")
    validate.one_of("method", method, METHODS)
    lr = _lr(lr)
    steps = validate.integer("steps", steps, 0, 100_000)
    record_every = validate.integer("record_every", record_every, 1)
    if target is not None:
        target = validate.number("target", target, 0.0, math.inf, low_open=True)
    min_steps = validate.integer("min_steps", min_steps, 0, 100_000)
    landing_lam = validate.number("landing_lam", landing_lam, 0.0, MAX_LR, low_open=True)
    if clock is not None and not callable(clock):
        raise TypeError(f"Invalid clock: {clock!r} (must be a callable returning seconds, e.g. time.thread_time)")
    clock = clock or time.perf_counter
    sync = torch.cuda.synchronize if problem.X0.is_cuda else (lambda: None)
    X = problem.X0.clone()
    param, opt = None, None
    if method.startswith("pogo"):
        param = torch.nn.Parameter(X)
        base = "sgd" if method == "pogo-sgd" else "vadam"
        opt = POGO([param], lr, base=base, momentum=momentum, betas=betas, lam=lam, lambda_every=lambda_every)
    elif method.endswith("geoopt"):
        param, opt = _geoopt(X, lr, betas, momentum, adam=method == "radam-geoopt")
    fns = {"landing": partial(landing_step, lam=landing_lam), "qr": qr_retraction, "cayley": cayley_step}

    # geoopt stores column-orthonormal (n × p) matrices: flip row-form stacks on the way in and out
    flip = method.endswith("geoopt") and X.shape[-2] <= X.shape[-1]

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
        t0 = clock()
        try:
            if opt is not None:
                opt.step()
            else:
                X = fns[method](X, G, lr)
        except (RuntimeError, torch.linalg.LinAlgError):
            diverged = True
        sync()
        elapsed += clock() - t0
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
            if diverged or (target is not None and gap <= target and t >= min_steps):
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
        # the start check is not counted (it runs before the counter)
        opt = POGO([param], 0.1, base="sgd", lambda_every=1 if method == "pogo-quartic" else 0)
        with counter:
            opt.step()
    return counter.get_total_flops() / (2 * b * p * p * n)
