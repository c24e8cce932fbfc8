"""The algebra behind CoLoRA's alternating scheme, executed in sympy [derived, on our reconstruction].

* :func:`adapter_identities` — ``⟨X, A R Bᵀ⟩ = ⟨X B Rᵀ, A⟩ = ⟨Xᵀ A R, B⟩``: with the other two factors fixed the
  response is linear in ``A`` (or ``B``, or ``R``), so each step of the alternating scheme is least squares.
* :func:`gaussian_sensing_mean` — ``E[⟨X, M⟩ X] = M`` for ``X`` with iid N(0, 1) entries: ``M̂_i = (1/n) Σ y X`` is
  unbiased, which is why the spectral start points at the shared subspaces.
* :func:`parameter_counts` — trainable numbers ``2dr + kr²`` vs ``k·2dr``, manifold dimensions
  ``2r(d − r) + kr²`` (CoLoRA) and ``2dr − r²`` (one task), and the counting thresholds on ``n`` per task.
* :func:`jacobian_rank` — the dimension count checked: the rank of the Jacobian of
  ``(A, B, R_1..R_k) ↦ (A R_i Bᵀ)_i`` at a random integer point is ``2r(d − r) + kr²`` (the ``GL(r) × GL(r)``
  gauge ``A → A S``, ``B → B U``, ``R_i → S⁻¹ R_i U⁻ᵀ`` removes ``2r²`` of the ``2dr + kr²`` parameters).
* :func:`oracle_risk` — ``E‖R̂ − R‖² = σ² r²/(n − r² − 1)`` for least squares with known ``A, B``: the scalar case
  ``E[1/χ²_n] = 1/(n − 2)`` integrated by sympy, the general one the inverse-Wishart mean ``E[W⁻¹] = I/(n − p − 1)``.
"""

from __future__ import annotations

import random
from typing import NamedTuple

import sympy as sp
from sympy.polys.matrices import DomainMatrix

from ..validate import integer

__all__ = [
    "Counts", "Identities", "JacobianRank", "OracleRisk", "adapter_identities", "gaussian_sensing_mean",
    "jacobian_rank", "oracle_risk", "parameter_counts",
]


def _mat(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))


def _inner(P: sp.Matrix, Q: sp.Matrix) -> sp.Expr:
    """Frobenius inner product ``⟨P, Q⟩ = tr(Pᵀ Q)``."""
    return (P.T * Q).trace()


class Identities(NamedTuple):
    """``⟨X, A R Bᵀ⟩`` and its two rewritings; ``gap_A``, ``gap_B`` are the expanded differences (0 when exact)."""

    response: sp.Expr
    gap_A: sp.Expr
    gap_B: sp.Expr
    gap_R: sp.Expr


def adapter_identities(d: int = 3, r: int = 2) -> Identities:
    """Expand ``⟨X, ARBᵀ⟩ − ⟨XBRᵀ, A⟩``, ``⟨X, ARBᵀ⟩ − ⟨XᵀAR, B⟩`` and ``⟨X, ARBᵀ⟩ − ⟨AᵀXB, R⟩`` for fully symbolic
    ``X`` (d × d), ``A, B`` (d × r), ``R`` (r × r)."""
    d = integer("d", d, 1, 4)
    r = integer("r", r, 1, d)
    X, A, B, R = _mat("x", d, d), _mat("a", d, r), _mat("b", d, r), _mat("r", r, r)
    resp = _inner(X, A * R * B.T)
    return Identities(sp.expand(resp), sp.expand(resp - _inner(X * B * R.T, A)),
                      sp.expand(resp - _inner(X.T * A * R, B)), sp.expand(resp - _inner(A.T * X * B, R)))


def gaussian_sensing_mean(d: int = 2) -> sp.Matrix:
    """``E[⟨X, M⟩ X] − M`` for symbolic ``M`` and ``X`` with iid N(0, 1) entries (``sympy.stats``): the zero matrix."""
    from sympy.stats import E, Normal

    d = integer("d", d, 1, 2)
    X = sp.Matrix(d, d, lambda i, j: Normal(f"X_{i}{j}", 0, 1))
    M = _mat("m", d, d)
    ip = _inner(X, M)
    return sp.Matrix(d, d, lambda i, j: sp.simplify(E(sp.expand(ip * X[i, j])) - M[i, j]))


class Counts(NamedTuple):
    """Symbolic counts in ``d, r, k`` (and the threshold on samples per task ``n``)."""

    params: dict[str, sp.Expr]
    manifold: dict[str, sp.Expr]
    threshold: dict[str, sp.Expr]
    saving: sp.Expr
    saving_limit: sp.Expr
    symbols: tuple[sp.Symbol, sp.Symbol, sp.Symbol]


def parameter_counts() -> Counts:
    """Trainable numbers, manifold dimensions and counting thresholds ``n ≥ dim/k``, solved by sympy.

    ``params``: CoLoRA ``2dr + kr²`` [secondary: O(dr + kr²)], independent LoRA ``k·2dr``, shared ``2dr + r²``.
    ``manifold``: CoLoRA ``2r(d − r) + kr²`` (two Grassmannians and k cores), one task ``2dr − r²``.
    ``saving`` = independent / CoLoRA parameters, and its limit as ``k → ∞`` (``2d/r``)."""
    d, r, k, n = sp.symbols("d r k n", positive=True, integer=True)
    params = {"colora": 2 * d * r + k * r**2, "independent": k * 2 * d * r, "shared": 2 * d * r + r**2}
    one = 2 * d * r - r**2
    manifold = {"colora": 2 * r * (d - r) + k * r**2, "independent": k * one, "shared": one}
    threshold = {m: sp.solve(sp.Eq(k * n, dim), n)[0] for m, dim in manifold.items()}
    saving = sp.simplify(params["independent"] / params["colora"])
    return Counts(params, manifold, threshold, saving, sp.limit(saving, k, sp.oo), (d, r, k))


class JacobianRank(NamedTuple):
    """Exact ranks of the parameterisations' Jacobians at a random integer point, and the counts they must equal."""

    rank_colora: int
    dim_colora: int
    rank_single: int
    dim_single: int
    n_params: int


def jacobian_rank(d: int = 4, r: int = 2, k: int = 3, seed: int = 0) -> JacobianRank:
    """Rank of ``∂(A R_i Bᵀ)_i / ∂(A, B, R_1..R_k)`` (exact, integer point drawn from ``seed``) vs
    ``2r(d − r) + kr²``; and of ``∂(A R Bᵀ)/∂(A, B, R)`` for one task vs ``2dr − r²``. Generic points attain the
    maximal rank; a degenerate draw could only lower it."""
    d = integer("d", d, 1, 6)
    r = integer("r", r, 1, d)
    k = integer("k", k, 1, 4)
    seed = integer("seed", seed, 0)
    rng = random.Random(seed)
    rand = lambda rows, cols: sp.Matrix(rows, cols, lambda i, j: rng.randint(-5, 5))  # noqa: E731
    A, B = rand(d, r), rand(d, r)
    Rs = [rand(r, r) for _ in range(k)]

    def unit(rows, cols, i, j):
        U = sp.zeros(rows, cols)
        U[i, j] = 1
        return U

    def columns(R_list):
        """Directional derivatives (exact: the map is linear in each factor) along every coordinate of A, B, R_i."""
        cols = []
        for i in range(d):
            for j in range(r):
                cols.append(sp.Matrix.vstack(*[(unit(d, r, i, j) * R * B.T).reshape(d * d, 1) for R in R_list]))
        for i in range(d):
            for j in range(r):
                cols.append(sp.Matrix.vstack(*[(A * R * unit(d, r, i, j).T).reshape(d * d, 1) for R in R_list]))
        for t in range(len(R_list)):
            for i in range(r):
                for j in range(r):
                    cols.append(sp.Matrix.vstack(*[(A * unit(r, r, i, j) * B.T if s == t else sp.zeros(d, d))
                                                  .reshape(d * d, 1) for s in range(len(R_list))]))
        return sp.Matrix.hstack(*cols)

    def rank(J: sp.Matrix) -> int:  # exact rank over QQ (DomainMatrix: fast, no expression swell)
        return int(DomainMatrix.from_Matrix(J).convert_to(sp.QQ).rank())

    J, J1 = columns(Rs), columns(Rs[:1])
    return JacobianRank(rank(J), 2 * r * (d - r) + k * r * r, rank(J1), 2 * d * r - r * r, J.shape[1])


class OracleRisk(NamedTuple):
    """``E[1/χ²_n]`` from sympy's integral, the inverse-Wishart risk ``p/(n − p − 1)`` and their difference at p = 1."""

    inv_chi2_mean: sp.Expr
    risk: sp.Expr
    gap_p1: sp.Expr
    symbols: tuple[sp.Symbol, sp.Symbol]


def oracle_risk() -> OracleRisk:
    """The oracle's risk ``E‖R̂ − R‖²/σ² = tr E[(ZᵀZ)⁻¹] = p/(n − p − 1)`` (``p = r²``, rows of ``Z`` iid N(0, I_p)):
    sympy integrates the ``p = 1`` case ``E[1/χ²_n] = 1/(n − 2)`` (for ``n > 2``)."""
    from sympy.stats import ChiSquared, E

    n = sp.Symbol("n", positive=True)
    p = sp.Symbol("p", positive=True, integer=True)
    inv = sp.simplify(E(1 / ChiSquared("c", n)))
    if isinstance(inv, sp.Piecewise):
        inv = inv.args[0][0]  # the branch n > 2
    risk = p / (n - p - 1)
    return OracleRisk(inv, risk, sp.simplify(inv - risk.subs(p, 1)), (n, p))
