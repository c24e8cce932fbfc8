r"""Inverse p-th roots of stacks of SPD blocks, written from the DASH paper's equations (Modoranu et al., 2026).

Every solver takes a stack :math:`A\in\mathbb R^{N\times B\times B}` (or one matrix) and returns
:math:`(A+\varepsilon I)^{-1/p}` for each block, using batched matrix products (``torch.bmm`` via ``@``) only,
so one call handles all N blocks — the *stacking* idea of DASH.

* **EVD** — :math:`A+\varepsilon I = Q\Lambda Q^\top`,
  :math:`\lambda\leftarrow\lambda+(\varepsilon-\min(\lambda_{\min},0))` (Distributed Shampoo's heuristic: ε is
  added a second time), result :math:`Q\Lambda^{-1/p}Q^\top`.
* **Coupled Newton (CN)**, Distributed Shampoo's baseline: :math:`z=(p+1)/(2s)`, :math:`X_0=z^{1/p}I`,
  :math:`M_0=zA`; repeat :math:`M'=(1+\tfrac1p)I-\tfrac1p M`, :math:`X\leftarrow XM'`,
  :math:`M\leftarrow M'^pM`. Then :math:`X\to A^{-1/p}`; 4 products per iteration for p = 4.
* **Newton–DB (NDB)** on :math:`\bar A=A/s`: :math:`E_0=\tfrac32I-\tfrac12\bar A`, :math:`Y_1=\bar AE_0`,
  :math:`Z_1=E_0`; then :math:`E=\tfrac32I-\tfrac12ZY`, :math:`Y\leftarrow YE`, :math:`Z\leftarrow EZ`.
  :math:`Y\to\bar A^{1/2}`, :math:`Z\to\bar A^{-1/2}`; 1 + 3(n−1) products per call. For p = 4:
  :math:`A^{-1/4}=(A^{1/2})^{-1/2}`, two calls (56 products at n = 10).
* **Chebyshev** — :math:`S=(2/s)A-I` maps :math:`[0,s]` to :math:`[-1,1]`; coefficients :math:`c_k` of
  :math:`x^{-1/p}` on :math:`[\varepsilon/s,1+\varepsilon/s]` from a discrete Chebyshev transform on 10,000
  Chebyshev–Gauss nodes; Clenshaw's recurrence evaluates the series with d − 1 products.

Scaling ``s`` (per block): ``"fro"`` :math:`\|A\|_F`; ``"pi"`` :math:`2\hat\lambda_{\max}` from 10 power-iteration
steps with one vector; ``"pim"`` the same with 16 vectors, keeping the largest Rayleigh quotient.
"""

from __future__ import annotations

import functools
import math

import torch

from .. import validate

__all__ = [
    "METHODS",
    "SCALINGS",
    "SPECTRA",
    "bmm_count",
    "chebyshev_coefficients",
    "chebyshev_root",
    "coupled_newton",
    "error_or_inf",
    "evd_root",
    "inverse_root",
    "newton_db",
    "reference_root",
    "relative_error",
    "scale",
    "spd_stack",
]

METHODS = ("ndb", "cn", "evd", "chebyshev")
SCALINGS = ("fro", "pi", "pim")
CHEBYSHEV_NODES = 10_000
POWER_ITERS = 10
#: Largest iteration count / degree / root accepted (beyond these a call only burns time or overflows).
MAX_ITERS = 1000
MAX_DEGREE = 100_000
MAX_P = 64


# ----------------------------------------------------------------------------------------------- helpers
def _eye_like(A: torch.Tensor) -> torch.Tensor:
    return torch.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand_as(A)


def _check_stack(A: torch.Tensor) -> torch.Tensor:
    """Validate A (square, symmetric, floating) and return it as a 3-D stack."""
    if not isinstance(A, torch.Tensor) or not A.is_floating_point():
        raise ValueError(f"Invalid A: {type(A).__name__} (must be a floating torch.Tensor)")
    if A.ndim not in (2, 3) or A.shape[-1] != A.shape[-2] or A.shape[-1] < 1:
        raise ValueError(f"Invalid A: shape {tuple(A.shape)} (must be square, (B, B) or (N, B, B))")
    S = A if A.ndim == 3 else A.unsqueeze(0)
    if not bool(torch.isfinite(S).all()):
        raise ValueError("Invalid A: contains NaN or inf (must be finite)")
    asym = (S - S.mT).flatten(1).norm(dim=1)
    size = S.flatten(1).norm(dim=1)
    tol = 100 * torch.finfo(S.dtype).eps * size + torch.finfo(S.dtype).tiny
    if bool((asym > tol).any()):
        raise ValueError(f"Invalid A: not symmetric (max ‖A−Aᵀ‖_F = {asym.max().item():.3g}, must be ≈ 0)")
    return S


def _check_p(p, integral: bool = False) -> float:
    x = validate.number("p", p, 1.0, MAX_P)
    if integral and x != int(x):
        raise ValueError(f"Invalid p: {p!r} (must be an integer ≥ 1 for coupled Newton)")
    return x


def _check_common(iters=None, scaling=None, eps=None, degree=None) -> None:
    if iters is not None:
        validate.integer("iters", iters, 1, MAX_ITERS)
    if scaling is not None:
        validate.one_of("scaling", scaling, SCALINGS)
    if eps is not None:
        validate.number("eps", eps, 0.0, math.inf)
    if degree is not None:
        validate.integer("degree", degree, 1, MAX_DEGREE)


def _power_of_two(p: float) -> int:
    k = round(math.log2(p)) if p >= 1 else -1
    if k < 0 or 2**k != p:
        raise ValueError(f"Invalid p: {p!r} (must be a power of two 1, 2, 4, 8, … for Newton–DB)")
    return k


def scale(A: torch.Tensor, scaling: str = "fro", *, seed: int = 0) -> torch.Tensor:
    r"""Per-block scale s, shape (N, 1, 1): ``fro`` → ‖A‖_F; ``pi``/``pim`` → 2·λ̂_max (power iteration).

    Power iteration: 10 steps of :math:`V\leftarrow AV/\|AV\|` from Gaussian V (1 column for ``pi``, 16 for
    ``pim``), then the largest Rayleigh quotient :math:`v^\top Av`. λ̂_max ≤ λ_max always, so ``pi`` can
    under-estimate when the start vector misses the top eigenvector; ``pim`` makes that unlikely.
    """
    S = _check_stack(A)
    validate.one_of("scaling", scaling, SCALINGS)
    validate.integer("seed", seed, 0, 2**63 - 1)
    return _scale(S, scaling, seed)


def _scale(S: torch.Tensor, scaling: str, seed: int = 0) -> torch.Tensor:
    if scaling == "fro":
        s = S.flatten(1).norm(dim=1)
    else:
        k = 1 if scaling == "pi" else 16
        # drawn on the CPU, then moved: the same start vectors on every device and for every block, so a
        # block's scale depends neither on its place in a stack nor on where it is computed
        gen = torch.Generator().manual_seed(seed)
        V = torch.randn(S.shape[-1], k, generator=gen, dtype=torch.float64).to(S.device, S.dtype)
        V = V.expand(S.shape[0], -1, -1)
        for _ in range(POWER_ITERS):
            V = S @ V
            V = V / V.norm(dim=1, keepdim=True).clamp_min(torch.finfo(S.dtype).tiny)
        s = 2 * (V * (S @ V)).sum(dim=1).amax(dim=1)
    tiny = torch.finfo(S.dtype).tiny ** 0.5
    return s.clamp_min(tiny).reshape(-1, 1, 1)


# ----------------------------------------------------------------------------------------------- solvers
def evd_root(A: torch.Tensor, p: float, eps: float = 0.0) -> torch.Tensor:
    r"""EVD: :math:`Q\,\mathrm{diag}(\lambda^{-1/p})Q^\top` of :math:`A+\varepsilon I` with DS's eigenvalue shift."""
    S = _check_stack(A)
    p = _check_p(p)
    _check_common(eps=eps)
    out = _evd_root(S, p, float(eps))
    return out if A.ndim == 3 else out[0]


def _evd_root(A: torch.Tensor, p: float, eps: float) -> torch.Tensor:
    lam, Q = torch.linalg.eigh(A + eps * _eye_like(A))
    shift = eps - lam.amin(dim=-1, keepdim=True).clamp_max(0.0)
    lam = (lam + shift).clamp_min(torch.finfo(A.dtype).tiny)
    return (Q * lam.pow(-1.0 / p).unsqueeze(-2)) @ Q.mT


def coupled_newton(A: torch.Tensor, p: int, iters: int = 10, scaling: str = "fro", eps: float = 0.0,
                   tol: float | None = None) -> tuple[torch.Tensor, int]:
    r"""Coupled Newton (Distributed Shampoo). Returns (X ≈ (A+εI)^{-1/p}, iterations run).

    :math:`\alpha=-1/p`, :math:`z=(p+1)/(2s)`, :math:`X_0=z^{1/p}I`, :math:`M_0=z(A+\varepsilon I)`; each step
    :math:`M'=(1-\alpha)I+\alpha M`, :math:`X\leftarrow XM'`, :math:`M\leftarrow M'^pM`. With ``tol`` it stops
    once :math:`\max|M-I|<` tol over the whole stack (DS's rule: one host sync per iteration).
    """
    S = _check_stack(A)
    p = int(_check_p(p, integral=True))
    _check_common(iters=iters, scaling=scaling, eps=eps)
    if tol is not None:
        tol = validate.number("tol", tol, 0.0, math.inf, low_open=True)
    X, done = _coupled_newton(S, p, int(iters), scaling, float(eps), tol)
    return (X if A.ndim == 3 else X[0]), done


def _coupled_newton(A: torch.Tensor, p: int, iters: int, scaling: str, eps: float,
                    tol: float | None = None) -> tuple[torch.Tensor, int]:
    I = _eye_like(A)
    A = A + eps * I
    z = (p + 1) / (2 * _scale(A, scaling))
    X = z.pow(1.0 / p) * I
    M = z * A
    done = 0
    for k in range(1, iters + 1):
        done = k
        Mp = (1 + 1 / p) * I - M / p
        X = X @ Mp
        M = _matrix_power(Mp, int(p)) @ M
        if tol is not None and (M - I).abs().amax().item() < tol:
            break
    return X, done


def _matrix_power(M: torch.Tensor, p: int) -> torch.Tensor:
    """M^p by repeated squaring (p = 4: two products)."""
    result, base = None, M
    while p:
        if p & 1:
            result = base if result is None else result @ base
        p >>= 1
        if p:
            base = base @ base
    return result


def newton_db(A: torch.Tensor, iters: int = 10, scaling: str = "fro", *, inverse: bool = True,
              s: torch.Tensor | None = None) -> torch.Tensor:
    r"""Newton–DB: :math:`A^{-1/2}` (``inverse=True``) or :math:`A^{1/2}` from the coupled iteration on A/s.

    Converges to the principal roots when the spectrum of A/s lies in (0, 3) (monotonically in |1−w| on
    (0, 2]); the 2λ̂_max scaling puts it in (0, ½]. ``s`` overrides the scaling (positive, shape (N, 1, 1) or
    a scalar).
    """
    S = _check_stack(A)
    _check_common(iters=iters, scaling=scaling)
    if not isinstance(inverse, bool):
        raise TypeError(f"Invalid inverse: {inverse!r} (must be True or False)")
    if s is not None:
        s_t = validate.finite_tensor("s", s)
        validate.positive("s", s_t)
        if s_t.numel() not in (1, S.shape[0]):
            raise ValueError(f"Invalid s: shape {tuple(s_t.shape)} (must be a scalar or one scale per block)")
        s = s_t.reshape(-1, 1, 1).to(S.device, S.dtype)
    out = _newton_db(S, int(iters), scaling, inverse=inverse, s=s)
    return out if A.ndim == 3 else out[0]


def _newton_db(A: torch.Tensor, iters: int, scaling: str = "fro", *, inverse: bool = True,
               s: torch.Tensor | None = None) -> torch.Tensor:
    I = _eye_like(A)
    s = _scale(A, scaling) if s is None else s
    Abar = A / s
    E = 1.5 * I - 0.5 * Abar
    Y, Z = Abar @ E, E
    for _ in range(iters - 1):
        E = 1.5 * I - 0.5 * (Z @ Y)
        Y, Z = Y @ E, E @ Z
    return Z / s.sqrt() if inverse else Y * s.sqrt()


def _ndb_root(A: torch.Tensor, p: float, iters: int, scaling: str, eps: float) -> torch.Tensor:
    """(A+εI)^{-1/p} for p = 2^k: k−1 NDB square roots, then one inverse square root (p = 1: square it)."""
    k = _power_of_two(p)
    R = A + eps * _eye_like(A)
    if k == 0:
        Z = _newton_db(R, iters, scaling, inverse=True)
        return Z @ Z
    s = _scale(R, scaling)
    for _ in range(k - 1):
        R = _newton_db(R, iters, inverse=False, s=s)
        s = s.sqrt()  # spectrum of A^{1/2} sits in (0, √s]: reuse the scale rather than re-estimating it
    return _newton_db(R, iters, inverse=True, s=s)


def chebyshev_coefficients(p: float, lower: torch.Tensor | float, degree: int,
                           nodes: int = CHEBYSHEV_NODES) -> torch.Tensor:
    r"""Coefficients :math:`c_0..c_d` of :math:`x^{-1/p}` on :math:`[a,1+a]` (a = ``lower``, per block).

    :math:`\theta_j=\pi(j+\tfrac12)/N`, :math:`x_j=\tfrac12\cos\theta_j+\tfrac12+a`,
    :math:`c_k=(2/N)\sum_jf(x_j)\cos k\theta_j`, :math:`c_0` halved. Computed in float64; shape (N_blocks, d+1).
    """
    p = validate.number("p", p, 1.0, MAX_P)
    validate.integer("degree", degree, 0, MAX_DEGREE)
    validate.integer("nodes", nodes, 1)
    a = validate.finite_tensor("lower", lower).to("cpu", torch.float64).reshape(-1, 1)
    validate.in_range("lower", a, 0.0, math.inf)
    validate.memory_guard(8.0 * int(nodes) * (int(degree) + 1 + a.shape[0]), lower="degree or nodes")
    theta, basis = _chebyshev_basis(int(degree), int(nodes))
    f = (0.5 * torch.cos(theta) + 0.5 + a).pow(-1.0 / p)
    c = (2.0 / int(nodes)) * f @ basis
    c[:, 0] *= 0.5
    return c


@functools.lru_cache(maxsize=16)
def _chebyshev_basis(degree: int, nodes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Nodes θ_j and the (nodes, d+1) matrix cos(kθ_j), cached: it depends on neither p nor the block."""
    theta = math.pi * (torch.arange(nodes, dtype=torch.float64) + 0.5) / nodes
    k = torch.arange(degree + 1, dtype=torch.float64)
    return theta, torch.cos(theta[:, None] * k[None, :])


def chebyshev_root(A: torch.Tensor, p: float, degree: int = 60, scaling: str = "pim",
                   eps: float = 0.0) -> torch.Tensor:
    r"""Chebyshev series of :math:`(A+\varepsilon I)^{-1/p}` evaluated with Clenshaw's recurrence.

    :math:`S=(2/s)A-I`; :math:`b_d=c_dI`, :math:`b_{d-1}=2c_dS+c_{d-1}I`,
    :math:`b_k=2Sb_{k+1}-b_{k+2}+c_kI`, result :math:`(Sb_1-b_2+c_0I)\,s^{-1/p}` (d − 1 products).
    The interval's lower end is ε/s: as ε/λ_max → 0 the near-singularity of x^{-1/p} at −ε/s slows the series.
    """
    S = _check_stack(A)
    p = _check_p(p)
    _check_common(scaling=scaling, eps=eps, degree=degree)
    out = _chebyshev_root(S, p, int(degree), scaling, float(eps))
    return out if A.ndim == 3 else out[0]


def _chebyshev_root(A: torch.Tensor, p: float, degree: int, scaling: str, eps: float) -> torch.Tensor:
    I = _eye_like(A)
    s = _scale(A, scaling)
    c = chebyshev_coefficients(p, (eps / s).reshape(-1).double().cpu(), degree).to(A.device, A.dtype)
    c = c[:, :, None, None]
    S = (2.0 / s) * A - I
    if degree == 0:
        return c[:, 0] * I * s.pow(-1.0 / p)
    if degree == 1:
        return (c[:, 1] * S + c[:, 0] * I) * s.pow(-1.0 / p)
    b2 = c[:, degree] * I
    b1 = 2 * c[:, degree] * S + c[:, degree - 1] * I
    for k in range(degree - 2, 0, -1):
        b1, b2 = 2 * (S @ b1) - b2 + c[:, k] * I, b1
    return (S @ b1 - b2 + c[:, 0] * I) * s.pow(-1.0 / p)


def inverse_root(A: torch.Tensor, p: float, *, method: str = "ndb", iters: int = 10, scaling: str = "fro",
                 eps: float = 0.0, degree: int = 60) -> torch.Tensor:
    r""":math:`(A+\varepsilon I)^{-1/p}` for one matrix (B, B) or a stack (N, B, B), in one batched call.

    ``method``: ``"ndb"`` (p a power of two), ``"cn"`` (integer p), ``"evd"``, ``"chebyshev"`` (``degree``);
    ``iters`` counts iterations per Newton call; ``scaling`` ∈ {fro, pi, pim} (ignored by EVD).
    Raises ``ValueError`` for non-square, non-symmetric or non-finite A, p ∉ [1, 64], iters ∉ [1, 1000].
    """
    S = _check_stack(A)
    validate.one_of("method", method, METHODS)
    p = _check_p(p, integral=(method == "cn"))
    _check_common(iters=iters, scaling=scaling, eps=eps, degree=degree)
    if method == "ndb":
        _power_of_two(p)
    out = solve_unchecked(S, p, method, int(iters), scaling, float(eps), int(degree))
    return out if A.ndim == 3 else out[0]


def solve_unchecked(S: torch.Tensor, p: float, method: str, iters: int, scaling: str, eps: float,
                    degree: int) -> torch.Tensor:
    """The dispatch behind :func:`inverse_root` on a validated (N, B, B) stack, with no checks (hot loops)."""
    if method == "evd":
        return _evd_root(S, p, eps)
    if method == "cn":
        return _coupled_newton(S, int(p), iters, scaling, eps)[0]
    if method == "ndb":
        return _ndb_root(S, p, iters, scaling, eps)
    return _chebyshev_root(S, p, degree, scaling, eps)


def bmm_count(method: str, p: int = 4, iters: int = 10, degree: int = 60) -> int:
    """Batched products per call: NDB log₂p·(1+3(n−1)) (+1 for p = 1), CN n·(products in M'^p + 2), EVD 1
    (one eigh and one product), Chebyshev d − 1 (power-iteration products not counted)."""
    validate.one_of("method", method, METHODS)
    p = validate.integer("p", p, 1, MAX_P)
    iters = validate.integer("iters", iters, 1, MAX_ITERS)
    degree = validate.integer("degree", degree, 1, MAX_DEGREE)
    if method == "ndb":
        k = _power_of_two(p)
        return (1 + 3 * (iters - 1)) * max(k, 1) + (1 if k == 0 else 0)
    if method == "cn":
        pw = (p.bit_length() - 1) + (bin(p).count("1") - 1)
        return iters * (pw + 2)
    if method == "evd":
        return 1
    return max(degree - 1, 0)


# ----------------------------------------------------------------------------------------------- test data
SPECTRA = ("logspace", "flat")


def spd_stack(n: int, size: int, kappa: float = 1e3, *, seed: int = 0, dtype: torch.dtype | None = None,
              device=None, spectrum: str = "logspace") -> torch.Tensor:
    r"""N random SPD blocks :math:`Q\,\mathrm{diag}(\lambda)Q^\top` (Haar Q) with λ_max = 1 and λ_min = 1/κ:
    λ = logspace(0, −log₁₀κ, B) (``spectrum="logspace"``, the default: ‖A‖_F stays within a small factor of λ_max)
    or linspace(1/κ, 1, B) (``"flat"``: ‖A‖_F ≈ λ_max·√(B/3), the spectrum on which Frobenius scaling over-estimates
    λ_max most).

    Sampled in float64 on the CPU (so a seed gives the same stack on every device), then moved."""
    from ..device import resolve_device, resolve_dtype

    n = validate.integer("n", n, 1)
    size = validate.integer("size", size, 1)
    kappa = validate.number("kappa", kappa, 1.0, math.inf)
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    validate.one_of("spectrum", spectrum, SPECTRA)
    validate.memory_guard(4 * 8.0 * n * size * size, lower="n or size")
    dtype, device = resolve_dtype(dtype), resolve_device(device)
    gen = torch.Generator().manual_seed(seed)
    G = torch.randn(n, size, size, generator=gen, dtype=torch.float64)
    Q, _ = torch.linalg.qr(G)
    if spectrum == "flat":
        lam = torch.linspace(1.0 / kappa, 1.0, size, dtype=torch.float64).flip(0)
    else:
        lam = torch.logspace(0.0, -math.log10(kappa), size, dtype=torch.float64)
    A = (Q * lam) @ Q.mT
    return (0.5 * (A + A.mT)).to(device=device, dtype=dtype)


def reference_root(A: torch.Tensor, p: float, eps: float = 0.0) -> torch.Tensor:
    """(A+εI)^{-1/p} by float64 EVD, without the DS shift (the ground truth the solvers are held to).

    Eigenvalues of A + εI must be positive (A positive definite, or ε > 0)."""
    S = _check_stack(A).double()
    p = _check_p(p)
    _check_common(eps=eps)
    lam, Q = torch.linalg.eigh(S + float(eps) * _eye_like(S))
    if bool((lam <= 0).any()):
        raise ValueError(f"Invalid A: smallest eigenvalue of A + εI is {lam.min().item():.3g} (must be > 0 for "
                         "a reference root)")
    out = (Q * lam.pow(-1.0 / p).unsqueeze(-2)) @ Q.mT
    return out if A.ndim == 3 else out[0]


def relative_error(X: torch.Tensor, X_ref: torch.Tensor) -> float:
    r"""Stack-wide relative Frobenius error :math:`\|X-X^*\|_F/\|X^*\|_F` (computed in float64).

    Non-finite ``X`` (a diverged solver) raises ``ValueError``; use :func:`error_or_inf` to get ``inf`` instead."""
    X = validate.finite_tensor("X", X)
    X_ref = validate.finite_tensor("X_ref", X_ref)
    if X.shape != X_ref.shape:
        raise ValueError(f"Invalid X: shape {tuple(X.shape)} (must equal X_ref's shape {tuple(X_ref.shape)})")
    return _relative_error(X, X_ref)


def _relative_error(X: torch.Tensor, X_ref: torch.Tensor) -> float:
    X_ref = X_ref.double()
    den = float(X_ref.norm())
    if not den > 0:
        raise ValueError("Invalid X_ref: zero norm (the relative error is undefined)")
    return float((X.double() - X_ref).norm()) / den


def error_or_inf(X: torch.Tensor, X_ref: torch.Tensor) -> float:
    """:func:`relative_error`, or ``inf`` when ``X`` has non-finite entries (a solver left its basin)."""
    if not isinstance(X, torch.Tensor) or not bool(torch.isfinite(X).all()):
        return math.inf
    return relative_error(X, X_ref)
