"""Heterogeneous low-rank regression with a shared adapter, and the three fits the chapter compares (torch).

Data model [reconstruction]: ``k`` tasks, task ``i`` observes ``y_il = ⟨X_il, M_i*⟩ + σ ε_il`` (``l = 1..n``) with
``X_il`` a ``d × d`` matrix of iid N(0, 1) entries, ``ε_il ~ N(0, 1)`` and

.. math:: M_i^* = A_i^* R_i^* B_i^{*\\top},\\qquad A_i^* = \\mathrm{orth}(A^* + \\tau E_i),\\quad
          B_i^* = \\mathrm{orth}(B^* + \\tau F_i),

``A*, B*`` the Q factors of Gaussian ``d × r`` matrices (diagonal of the triangular factor positive), ``E_i, F_i``
with N(0, 1/d) entries (so τ is a relative perturbation: ``‖E_i‖_F ≈ √r``), ``R_i*`` with N(0, 1) entries. At
``τ = 0`` every task shares the column space of ``A*`` and the row space of ``B*``.

CoLoRA [reconstruction of the alternating scheme described by secondary accounts]: fit ``M_i = A R_i Bᵀ`` with ``A, B``
shared ``d × r`` orthonormal and ``R_i`` a personal ``r × r`` core by alternating least squares:

1. spectral start: ``A, B`` = top-``r`` eigenvectors of ``Σ_i M̂_i M̂_iᵀ`` and ``Σ_i M̂_iᵀ M̂_i``,
   ``M̂_i = (1/n) Σ_l y_il X_il`` (``E[⟨X, M⟩X] = M`` for Gaussian ``X``);
2. R-step: per task, least squares of ``y_il`` on ``Z_il = Aᵀ X_il B`` (``r²`` unknowns);
3. A-step: pooled least squares in ``A`` (``dr`` unknowns) using ``⟨X, A R Bᵀ⟩ = ⟨X B Rᵀ, A⟩``; then ``A = QT``
   (QR), ``A ← Q`` and ``R_i ← T R_i`` (the product is unchanged);
4. B-step: pooled least squares in ``B`` using ``⟨X, A R Bᵀ⟩ = ⟨Xᵀ A R, B⟩``; ``B = Q'T'``, ``B ← Q'``,
   ``R_i ← R_i T'ᵀ``;

``iters`` rounds of 2–4, then a final R-step. *Independent LoRA* is the same solver run on each task alone
(``k = 1``); the *shared* fit (FedAvg-LoRA at its pooled optimum, :mod:`.federated`) fits one core ``R`` for all
tasks. Least squares are solved by the normal equations with a ridge of ``1e-12·tr(H)/p`` (the minimum-norm
solution when the system is under-determined — the independent fit below its counting threshold), which runs
unchanged on CUDA.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import torch

from ..device import THEORY_DTYPE, one_thread, resolve_device, to_numpy
from ..validate import finite_tensor, integer, memory_guard, number, one_of

__all__ = [
    "CHAPTER_SEEDS",
    "Fit",
    "RecoveryStudy",
    "Tasks",
    "colora_fit",
    "convergence_study",
    "independent_fit",
    "make_tasks",
    "oracle_error",
    "oracle_monte_carlo",
    "parameter_count",
    "phase_map",
    "recovery_study",
    "relative_error",
    "sample_threshold",
    "sin_theta",
]

#: The seed of the chapter's replicated study (its 3 replicates are derived from it).
CHAPTER_SEEDS = (25,)
#: Chapter scale (the issue's): k tasks, width d, rank r, noise σ, iterations T.
K, D, RANK, SIGMA, ITERS = 16, 16, 2, 0.01, 15
NS = (16, 24, 32, 64, 128)
TAUS_PHASE = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
NS_PHASE = (24, 32, 48, 64, 96, 128)
N_REPS = 3
METHODS = ("colora", "independent", "shared")
_MAX_ITERS = 1000


class Tasks(NamedTuple):
    """Sensing matrices ``X`` (k, n, d, d), responses ``y`` (k, n), ground truth ``M`` (k, d, d) and the shared
    factors ``A*, B*`` (d, r) (the centre of the task subspaces; exact for every task when τ = 0)."""

    X: torch.Tensor
    y: torch.Tensor
    M: torch.Tensor
    A: torch.Tensor
    B: torch.Tensor


class Fit(NamedTuple):
    """A fitted adapter ``M_i = A R_i Bᵀ``.

    CoLoRA: ``A, B`` (d, r), ``R`` (k, r, r), ``A_history`` (iters + 1, d, r) (the spectral start, then ``A`` after
    each round). Shared proxy: ``R`` is (1, r, r). Independent: ``A, B`` (k, d, r), ``R`` (k, r, r),
    ``A_history`` (k, iters + 1, d, r).
    """

    M: torch.Tensor
    A: torch.Tensor
    B: torch.Tensor
    R: torch.Tensor
    A_history: torch.Tensor


def _subseed(seed: int, j: int) -> int:
    return (seed * 1_000_003 + j) % 2**63


def _orth(G: torch.Tensor) -> torch.Tensor:
    """Q factor with a positive diagonal of the triangular factor (a unique choice)."""
    Q, T = torch.linalg.qr(G)
    s = torch.sign(torch.diagonal(T, dim1=-2, dim2=-1))
    s = torch.where(s == 0, torch.ones_like(s), s)
    return Q * s.unsqueeze(-2)


def make_tasks(k: int = K, d: int = D, r: int = RANK, n: int = 32, *, tau: float = 0.0, sigma: float = 0.0,
               seed: int = 0, eta: float = 1.0, device: Any = None) -> Tasks:
    """Draw ``k`` tasks of ``n`` samples each from the model in the module docstring (float64, seeded, sampled
    on the CPU then moved to ``device``).

    ``eta`` ∈ [0, 1] sets the heterogeneity of the cores: ``R_i* = √(1 − η²) R₀ + η G_i`` with ``R₀`` drawn after
    the noise (so the draws of every other quantity do not depend on ``eta``); ``eta = 1`` is the default model
    (independent cores), ``eta = 0`` makes every task the same matrix when ``tau = 0``."""
    k = integer("k", k, 1)
    d = integer("d", d, 1)
    r = integer("r", r, 1, d)
    n = integer("n", n, 1)
    tau = number("tau", tau, 0.0)
    sigma = number("sigma", sigma, 0.0)
    eta = number("eta", eta, 0.0, 1.0)
    seed = integer("seed", seed, 0, 2**63 - 1)
    memory_guard(8.0 * k * n * d * d * 2, lower="k, n or d")
    dev = resolve_device(device)
    g = torch.Generator().manual_seed(seed)
    kw = {"generator": g, "dtype": THEORY_DTYPE}
    A = _orth(torch.randn(d, r, **kw))
    B = _orth(torch.randn(d, r, **kw))
    E = torch.randn(k, d, r, **kw) / math.sqrt(d)
    F = torch.randn(k, d, r, **kw) / math.sqrt(d)
    Ai = _orth(A + tau * E)
    Bi = _orth(B + tau * F)
    R = torch.randn(k, r, r, **kw)
    X = torch.randn(k, n, d, d, **kw)
    eps = torch.randn(k, n, **kw)
    if eta < 1.0:
        R = math.sqrt(1.0 - eta * eta) * torch.randn(r, r, **kw) + eta * R
    M = Ai @ R @ Bi.transpose(-1, -2)
    y = torch.einsum("klde,kde->kl", X, M) + sigma * eps
    return Tasks(X.to(dev), y.to(dev), M.to(dev), A.to(dev), B.to(dev))


# -- the solver (batched over a leading axis b of independent problems) ---------------------------------------
def _solve(G: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Least squares ``argmin ‖Gθ − y‖`` over the last two axes of ``G`` (…, N, p), ``y`` (…, N), by ridge-1e-12
    normal equations (≈ the minimum-norm solution when under-determined)."""
    H = G.transpose(-1, -2) @ G
    p = H.shape[-1]
    lam = 1e-12 * torch.diagonal(H, dim1=-2, dim2=-1).mean(-1) + 1e-300
    H = H + lam[..., None, None] * torch.eye(p, dtype=H.dtype, device=H.device)
    return torch.linalg.solve(H, (G.transpose(-1, -2) @ y.unsqueeze(-1))).squeeze(-1)


def _top_eigvecs(S: torch.Tensor, r: int) -> torch.Tensor:
    _, V = torch.linalg.eigh(S)
    return V[..., -r:].flip(-1)


def _core_ls(Z: torch.Tensor, y: torch.Tensor, shared_core: bool) -> torch.Tensor:
    """R-step from the features ``Z_il = Aᵀ X_il B`` (b, k, n, r, r): per task, or pooled when the core is shared."""
    b, k, n, r, _ = Z.shape
    Z = Z.reshape(b, k, n, r * r)
    if shared_core:
        return _solve(Z.reshape(b, 1, k * n, r * r), y.reshape(b, 1, k * n)).reshape(b, 1, r, r)
    return _solve(Z, y).reshape(b, k, r, r)


def _altmin(X: torch.Tensor, y: torch.Tensor, r: int, iters: int, shared_core: bool):
    """One intra-op thread on CPU (many small ops: a second thread only adds synchronisation)."""
    with one_thread(X.device):
        return _altmin_impl(X, y, r, iters, shared_core)


def _altmin_impl(X: torch.Tensor, y: torch.Tensor, r: int, iters: int, shared_core: bool):
    """Alternating minimisation on ``X`` (b, k, n, d, d), ``y`` (b, k, n); returns ``(M, A, B, R, A_history)``.

    Per round two products with the data, ``X B`` and ``Xᵀ A``, each one wide matmul over a copy of the data laid
    out as (d, k·n·d) (a skinny ``(k·n·d, d) @ (d, r)`` product is 2–3× slower); the three least-squares problems
    reuse them: ``Z = Aᵀ(XB)``, ``G_A = (XB) Rᵀ``, ``G_B = (XᵀA) R``."""
    b, k, n, d, _ = X.shape
    N = k * n
    W_right = X.permute(0, 4, 1, 2, 3).reshape(b, d, N * d)  # [e, (i, l, a)] = X_il[a, e]:  Bᵀ W → (X B)ᵀ
    W_left = X.permute(0, 3, 1, 2, 4).reshape(b, d, N * d)  # [a, (i, l, e)] = X_il[a, e]:  Aᵀ W → (Xᵀ A)ᵀ
    Mhat = torch.einsum("bkl,bklde->bkde", y, X) / n
    wide = Mhat.permute(0, 2, 1, 3).reshape(b, d, k * d)  # [M̂_1 … M̂_k]
    tall = Mhat.reshape(b, k * d, d)  # [M̂_1; …; M̂_k]
    A = _top_eigvecs(wide @ wide.transpose(1, 2), r)  # Σ_i M̂_i M̂_iᵀ
    B = _top_eigvecs(tall.transpose(1, 2) @ tall, r)  # Σ_i M̂_iᵀ M̂_i
    hist = [A]
    yf = y.reshape(b, N)

    def project(W, F):
        """``P[s, i, l, a] = (X_il F)[a, s]`` from ``W = W_right`` (or ``(X_ilᵀ F)[a, s]`` from ``W_left``)."""
        return (F.transpose(1, 2) @ W).reshape(b, r, k, n, d)

    def cores(P, A):
        """``Z_il = Aᵀ X_il B`` (b, k, n, r, r) from ``P = project(W_right, B)``."""
        return (P.reshape(b, r * N, d) @ A).reshape(b, r, k, n, r).permute(0, 2, 3, 4, 1)

    def design(P, Rk):
        """Rows ``X_il B R_iᵀ`` (or ``X_ilᵀ A R_i`` with ``Rk = Rᵀ``) flattened with columns ordered (t, a), so the
        unknown is ``vec(Fᵀ)`` row-major: (b, N, r·d)."""
        G = torch.einsum("bkts,bskx->bktx", Rk, P.reshape(b, r, k, n * d)).reshape(b, k, r, n, d)
        return G.transpose(2, 3).reshape(b, N, r * d)

    for _ in range(iters):
        P = project(W_right, B)  # one pass over the data serves the R-step and the A-step
        R = _core_ls(cores(P, A), y, shared_core)
        # A-step: y = ⟨X B Rᵀ, A⟩
        Q, T = torch.linalg.qr(_solve(design(P, R.expand(b, k, r, r)), yf).reshape(b, r, d).transpose(1, 2))
        A, R = Q, T.unsqueeze(1) @ R  # A R Bᵀ unchanged
        # B-step: y = ⟨Xᵀ A R, B⟩
        P = project(W_left, A)
        B = torch.linalg.qr(_solve(design(P, R.expand(b, k, r, r).transpose(-1, -2)), yf)
                            .reshape(b, r, d).transpose(1, 2))[0]
        hist.append(A)
    R = _core_ls(cores(project(W_right, B), A), y, shared_core)
    M = A.unsqueeze(1) @ R @ B.transpose(-1, -2).unsqueeze(1)
    return M.expand(b, k, d, d), A, B, R, torch.stack(hist, 1)


def _check_data(X: Any, y: Any, rank: Any, iters: Any) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    X = finite_tensor("X", X, ndim=4)
    k, n, d, d2 = X.shape
    if d != d2 or min(k, n, d) < 1:
        raise ValueError(f"Invalid X: shape {tuple(X.shape)} (must be (k, n, d, d) with k, n, d ≥ 1)")
    y = finite_tensor("y", y, ndim=2).to(X.device, X.dtype)
    if tuple(y.shape) != (k, n):
        raise ValueError(f"Invalid y: shape {tuple(y.shape)} (must be (k, n) = {(k, n)} to match X)")
    r = integer("rank", rank, 1, d)
    t = integer("iters", iters, 1, _MAX_ITERS)
    memory_guard(8.0 * k * n * d * r * 4 + 8.0 * k * n * d * d, lower="k, n or d")
    return X, y, r, t


def colora_fit(X: Any, y: Any, rank: int, *, iters: int = ITERS, shared_core: bool = False) -> Fit:
    """CoLoRA by alternating minimisation (module docstring): shared ``A, B`` (d, r), personal ``R_i`` (r, r).

    ``X`` (k, n, d, d), ``y`` (k, n). With ``shared_core=True`` one core ``R`` serves every task (the shared proxy,
    a single ΔW = A R Bᵀ for all tasks, as FedAvg of one LoRA adapter would fit).
    """
    X, y, r, t = _check_data(X, y, rank, iters)
    if not isinstance(shared_core, bool):
        raise TypeError(f"Invalid shared_core: {shared_core!r} (must be a bool)")
    M, A, B, R, H = _altmin(X.unsqueeze(0), y.unsqueeze(0), r, t, shared_core)
    return Fit(M[0], A[0], B[0], R[0], H[0])


def independent_fit(X: Any, y: Any, rank: int, *, iters: int = ITERS) -> Fit:
    """Independent LoRA: the same alternating solver on each task alone (``k`` problems of one task, batched)."""
    X, y, r, t = _check_data(X, y, rank, iters)
    k, n, d, _ = X.shape
    M, A, B, R, H = _altmin(X.reshape(k, 1, n, d, d), y.reshape(k, 1, n), r, t, False)
    return Fit(M[:, 0], A, B, R[:, 0], H)


def relative_error(M_hat: Any, M: Any) -> torch.Tensor:
    """Per-task relative error ``‖M̂_i − M_i*‖_F / ‖M_i*‖_F`` for ``M̂, M`` of shape (k, d, d) (or (d, d))."""
    Mh = finite_tensor("M_hat", M_hat)
    Mt = finite_tensor("M", M).to(Mh.device, Mh.dtype)
    if Mh.ndim not in (2, 3) or Mh.shape != Mt.shape:
        raise ValueError(f"Invalid M_hat/M: shapes {tuple(Mh.shape)}, {tuple(Mt.shape)} (must be equal, (k, d, d))")
    den = torch.linalg.matrix_norm(Mt)
    if not bool((den > 0).all()):
        raise ValueError("Invalid M: a ground-truth matrix is zero (relative error undefined)")
    return torch.linalg.matrix_norm(Mh - Mt) / den


def sin_theta(U: Any, V: Any) -> torch.Tensor:
    """``sin Θ_max(U, V) = ‖(I − UUᵀ)V‖₂`` for orthonormal ``U, V`` (…, d, r): the sine of the largest principal
    angle between the column spaces (batched over leading axes). Computed by projection, accurate for small angles."""
    U = finite_tensor("U", U)
    V = finite_tensor("V", V).to(U.device, U.dtype)
    if U.ndim < 2 or V.ndim < 2 or U.shape[-2] != V.shape[-2] or U.shape[-1] != V.shape[-1]:
        raise ValueError(f"Invalid U/V: shapes {tuple(U.shape)}, {tuple(V.shape)} (must both be (…, d, r))")
    I_r = torch.eye(U.shape[-1], dtype=U.dtype, device=U.device)
    for name, W in (("U", U), ("V", V)):
        if not bool(torch.allclose(W.transpose(-1, -2) @ W, I_r.expand_as(W.transpose(-1, -2) @ W), atol=1e-6)):
            raise ValueError(f"Invalid {name}: columns are not orthonormal (WᵀW ≠ I within 1e-6)")
    P = V - U @ (U.transpose(-1, -2) @ V)
    return torch.linalg.matrix_norm(P, ord=2).clamp(max=1.0)


def _method(method: Any) -> str:
    return one_of("method", method, METHODS)


def parameter_count(d: int, r: int, k: int, method: str = "colora") -> int:
    """Trainable numbers: CoLoRA ``2dr + kr²``; independent LoRA ``k·2dr`` (each task a pair of d × r factors);
    shared proxy ``2dr + r²`` (one adapter for all)."""
    d = integer("d", d, 1)
    r = integer("r", r, 1, d)
    k = integer("k", k, 1)
    m = _method(method)
    return {"colora": 2 * d * r + k * r * r, "independent": k * 2 * d * r, "shared": 2 * d * r + r * r}[m]


def sample_threshold(d: int, r: int, k: int, method: str = "colora") -> float:
    """Counting threshold on ``n`` per task: the dimension of the fitted model's manifold divided by ``k``.

    CoLoRA ``(2r(d − r) + kr²)/k``; independent ``2dr − r²``; shared ``(2dr − r²)/k`` (unrounded) [derived]."""
    d = integer("d", d, 1)
    r = integer("r", r, 1, d)
    k = integer("k", k, 1)
    m = _method(method)
    dim = {"colora": 2 * r * (d - r) + k * r * r, "independent": k * (2 * d * r - r * r),
           "shared": 2 * d * r - r * r}[m]
    return dim / k


def oracle_error(M: Any, sigma: float, rank: int, n: int) -> torch.Tensor:
    """Relative RMS error of the oracle that knows ``A, B`` and fits ``R_i`` by least squares:
    ``√(σ² r² / (n − r² − 1)) / ‖M_i‖_F`` per task (inverse-Wishart mean ``E[(ZᵀZ)⁻¹] = I/(n − p − 1)``, ``p = r²``)."""
    Mt = finite_tensor("M", M)
    if Mt.ndim not in (2, 3):
        raise ValueError(f"Invalid M: shape {tuple(Mt.shape)} (must be (k, d, d) or (d, d))")
    s = number("sigma", sigma, 0.0)
    r = integer("rank", rank, 1, Mt.shape[-1])
    nn = integer("n", n, r * r + 2)
    den = torch.linalg.matrix_norm(Mt)
    if not bool((den > 0).all()):
        raise ValueError("Invalid M: a ground-truth matrix is zero (relative error undefined)")
    return s * math.sqrt(r * r / (nn - r * r - 1)) / den


def oracle_monte_carlo(n: int, p: int, trials: int = 20_000, *, seed: int = 0,
                       device: Any = None) -> tuple[float, float]:
    """Monte Carlo of ``E‖θ̂ − θ‖²/σ²`` for least squares with ``n`` iid N(0, I_p) rows (σ = 1): returns
    ``(mean, standard error)`` over ``trials`` draws. Independent of the inverse-Wishart formula ``p/(n − p − 1)``."""
    n = integer("n", n, 1)
    p = integer("p", p, 1)
    if n < p + 4:
        raise ValueError(f"Invalid n: {n} (must be ≥ p + 4 = {p + 4}: the error's variance is infinite below)")
    trials = integer("trials", trials, 2)
    seed = integer("seed", seed, 0)
    memory_guard(8.0 * trials * n * (p + 1) * 3, lower="trials or n")
    g = torch.Generator().manual_seed(seed)
    Z = torch.randn(trials, n, p, generator=g, dtype=THEORY_DTYPE)
    e = torch.randn(trials, n, generator=g, dtype=THEORY_DTYPE)
    dev = resolve_device(device)
    Z, e = Z.to(dev), e.to(dev)
    with one_thread(dev):
        err = torch.linalg.solve(Z.transpose(1, 2) @ Z, (Z.transpose(1, 2) @ e.unsqueeze(-1))).squeeze(-1)
    sq = (err**2).sum(-1)
    return float(sq.mean()), float(sq.std() / math.sqrt(trials))


# -- the chapter's studies ------------------------------------------------------------------------------------
class RecoveryStudy(NamedTuple):
    """Median-over-tasks relative errors ``errors[τ, method, n, rep]`` (methods in :data:`METHODS` order; NaN for
    a method not run), the oracle's predicted RMS relative error ``oracle[n, rep]`` (median over tasks, formula, at
    the first τ; ``inf`` where ``n ≤ r² + 1``, where its risk is infinite) and the oracle fit's
    measured error ``oracle_fit[τ, n, rep]`` (least squares for ``R_i`` with the true ``A_i*, B_i*``)."""

    taus: tuple[float, ...]
    ns: tuple[int, ...]
    errors: np.ndarray
    oracle: np.ndarray
    oracle_fit: np.ndarray
    thresholds: dict[str, float]


def _batch(k, d, r, n, tau, sigma, seed, reps, device):
    return _batch_eta(k, d, r, n, tau, sigma, seed, reps, 1.0, device)


def _batch_eta(k, d, r, n, tau, sigma, seed, reps, eta, device):
    ts = [make_tasks(k, d, r, n, tau=tau, sigma=sigma, seed=_subseed(seed, j), eta=eta, device=device)
          for j in range(reps)]
    return Tasks(*(torch.stack(z) for z in zip(*ts, strict=True)))


def _truth_factors(k, d, r, tau, seed, reps, device):
    """The per-task ``A_i*, B_i*`` of :func:`make_tasks` (same generator draws), for the oracle fit."""
    As, Bs = [], []
    for j in range(reps):
        g = torch.Generator().manual_seed(_subseed(seed, j))
        kw = {"generator": g, "dtype": THEORY_DTYPE}
        A, B = _orth(torch.randn(d, r, **kw)), _orth(torch.randn(d, r, **kw))
        E = torch.randn(k, d, r, **kw) / math.sqrt(d)
        F = torch.randn(k, d, r, **kw) / math.sqrt(d)
        As.append(_orth(A + tau * E))
        Bs.append(_orth(B + tau * F))
    dev = resolve_device(device)
    return torch.stack(As).to(dev), torch.stack(Bs).to(dev)


def _fit_errors(T: Tasks, r: int, iters: int, methods: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Median-over-tasks relative error of each method on a batch of replicates ``T.X`` (reps, k, n, d, d)."""
    b, k, n, d, _ = T.X.shape
    out = {}
    for m in methods:
        if m == "independent":
            M = _altmin(T.X.reshape(b * k, 1, n, d, d), T.y.reshape(b * k, 1, n), r, iters, False)[0]
            M = M.reshape(b, k, d, d)
        else:
            M = _altmin(T.X, T.y, r, iters, m == "shared")[0]
        err = torch.linalg.matrix_norm(M - T.M) / torch.linalg.matrix_norm(T.M)
        out[m] = to_numpy(err.median(dim=1).values)
    return out


def recovery_study(ns: Any = NS, taus: Any = (0.0, 0.3), *, k: int = K, d: int = D, r: int = RANK,
                   sigma: float = SIGMA, iters: int = ITERS, reps: int = N_REPS, seed: int = CHAPTER_SEEDS[0],
                   methods: Any = METHODS, device: Any = None) -> RecoveryStudy:
    """Relative recovery error vs ``n`` for the chosen methods at each ``τ`` (``reps`` replicates, batched).

    Replicate ``j`` uses the seed ``seed·1000003 + j`` for every ``n`` and ``τ``: the factors, cores and
    perturbation directions are shared across the grid (paired comparisons), only the samples grow with ``n``.
    Entries of methods not run are NaN."""
    ns = tuple(integer("ns", x, 1) for x in np.atleast_1d(np.asarray(ns, dtype=object)))
    taus = tuple(number("taus", x, 0.0) for x in np.atleast_1d(np.asarray(taus, dtype=object)))
    if not ns or not taus:
        raise ValueError("Invalid ns/taus: must be non-empty")
    methods = (methods,) if isinstance(methods, str) else tuple(methods)
    methods = tuple(_method(m) for m in methods)
    cells = [(tau, n, m) for tau in taus for n in ns for m in methods]
    return _recovery(cells, ns, taus, k=k, d=d, r=r, sigma=sigma, iters=iters, reps=reps, seed=seed, device=device)


def _recovery_impl(cells, ns, taus, *, k, d, r, sigma, iters, reps, seed, device, oracle_fit=True) -> RecoveryStudy:
    k, d = integer("k", k, 1), integer("d", d, 1)
    r = integer("r", r, 1, d)
    sigma = number("sigma", sigma, 0.0)
    iters = integer("iters", iters, 1, _MAX_ITERS)
    reps = integer("reps", reps, 1)
    seed = integer("seed", seed, 0)
    memory_guard(8.0 * reps * k * max(ns) * d * d * 8, lower="reps, k, n or d")
    errors = np.full((len(taus), len(METHODS), len(ns), reps), np.nan)
    oracle = np.full((len(ns), reps), np.inf)  # the oracle's risk is infinite for n ≤ r² + 1
    ofit = np.full((len(taus), len(ns), reps), np.nan)
    for a, tau in enumerate(taus):
        Ai, Bi = _truth_factors(k, d, r, tau, seed, reps, device)
        for c, n in enumerate(ns):
            todo = tuple(m for (t, nn, m) in cells if t == tau and nn == n)
            if not todo:
                continue
            T = _batch(k, d, r, n, tau, sigma, seed, reps, device)
            for m, e in _fit_errors(T, r, iters, todo).items():
                errors[a, METHODS.index(m), c, :] = e
            if oracle_fit:
                Z = Ai.transpose(-1, -2)[:, :, None] @ T.X @ Bi[:, :, None]  # (reps, k, n, r, r)
                R = _solve(Z.reshape(reps, k, n, r * r), T.y).reshape(reps, k, r, r)
                Mo = Ai @ R @ Bi.transpose(-1, -2)
                ofit[a, c] = to_numpy((torch.linalg.matrix_norm(Mo - T.M)
                                       / torch.linalg.matrix_norm(T.M)).median(dim=1).values)
            if n >= r * r + 2:
                oracle[c] = to_numpy(torch.stack([oracle_error(T.M[j], sigma, r, n).median() for j in range(reps)]))
    th = {m: sample_threshold(d, r, k, m) for m in METHODS}
    return RecoveryStudy(taus, ns, errors, oracle, ofit, th)


def _recovery(*args, **kw) -> RecoveryStudy:
    with one_thread(resolve_device(kw.get("device"))):
        return _recovery_impl(*args, **kw)


def convergence_study(n: int = 24, iters: int = 30, *, k: int = K, d: int = D, r: int = RANK, sigma: float = 0.0,
                      tau: float = 0.0, reps: int = N_REPS, seed: int = CHAPTER_SEEDS[0],
                      device: Any = None) -> np.ndarray:
    """``sin Θ(Â_t, A*)`` for ``t = 0..iters`` (the spectral start, then each round), CoLoRA, one row per replicate:
    shape (reps, iters + 1)."""
    n, iters = integer("n", n, 1), integer("iters", iters, 1, _MAX_ITERS)
    k, d = integer("k", k, 1), integer("d", d, 1)
    r = integer("r", r, 1, d)
    sigma, tau = number("sigma", sigma, 0.0), number("tau", tau, 0.0)
    reps, seed = integer("reps", reps, 1), integer("seed", seed, 0)
    memory_guard(8.0 * reps * k * n * d * d * 6, lower="reps, k, n or d")
    T = _batch(k, d, r, n, tau, sigma, seed, reps, device)
    H = _altmin(T.X, T.y, r, iters, False)[4]  # (reps, iters + 1, d, r)
    return to_numpy(sin_theta(H, T.A[:, None].expand_as(H)))


def phase_map(taus: Any = TAUS_PHASE, ns: Any = NS_PHASE, *, k: int = K, d: int = D, r: int = RANK,
              sigma: float = SIGMA, iters: int = ITERS, seed: int = CHAPTER_SEEDS[0],
              device: Any = None) -> np.ndarray:
    """``log₁₀(CoLoRA error / independent error)`` (medians over tasks, one replicate) on the grid τ × n:
    shape (len(taus), len(ns)); negative where collaboration wins."""
    st = recovery_study(ns, taus, k=k, d=d, r=r, sigma=sigma, iters=iters, reps=1, seed=seed,
                        methods=("colora", "independent"), device=device)
    return np.log10(st.errors[:, 0, :, 0] / st.errors[:, 1, :, 0])
