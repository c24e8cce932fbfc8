"""Sympy derivations for the toy of Theorem 1 ([secondary] statement; the algebra here is [derived]).

* :func:`derive_gradients` — ``f = a·σ(wᵀx) − 1``, ``σ(z) = z²/2``, ``ℓ = −y·f``: ``∂ℓ/∂a = −y(wᵀx)²/2``,
  ``∇_wℓ = −a·y·(wᵀx)·x``, and their means ``−½ wᵀMw`` and ``−a·Mw`` with ``M = E[y xxᵀ]``.
* :func:`rademacher_expectation` — ``E`` of a polynomial in ``x ∈ {±1}^d`` by the moment rule
  ``E[Π x_i^{k_i}] = 1`` if every ``k_i`` is even, else 0 (checked against enumerating all ``2^d`` points).
* :func:`derive_sampling_bias` — ``E[y xxᵀ] = e₁e₂ᵀ + e₂e₁ᵀ`` for ``y = x₁x₂``; ``q̂ = wᵀM̂w`` has
  ``E q̂ = 2w₁w₂`` and ``Var q̂ = (3 − 2Σw_i⁴ − 4w₁²w₂²)/N`` on the unit sphere (random labels: ``0`` and
  ``(3 − 2Σw_i⁴)/N``); ``E|Z| = √(2/π)`` for a standard normal.
* :func:`derive_phase2` — Phase 2 is a power iteration with ``I + ηa⋆M``, eigenvalues ``1 ± ηa⋆`` (and 1):
  the misalignment ``1 − (w₁² + w₂²)`` shrinks by ``(1 + ηa⋆)^{-2}`` per step in the tangent ratio.
* :func:`derive_tradeoff` — ``T(a⋆) = A·a⋆ + B/a⋆`` is minimised at ``a⋆ = √(B/A)`` with value ``2√(AB)``; with
  ``A ∝ √N/η`` (Phase 1) and ``B ∝ log(d/ε)/η`` (Phase 2) this gives ``T ∝ N^{1/4}``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import sympy as sp

from ..validate import integer

__all__ = [
    "Gradients", "Phase2", "SamplingBias", "Tradeoff", "derive_gradients", "derive_phase2", "derive_sampling_bias",
    "derive_tradeoff", "enumerate_expectation", "rademacher_expectation",
]


_X = sp.symbols("x1:3", real=True)
#: Cheap valid arguments for tests/test_api_fuzz.py.
FUZZ_BASE = {
    "rademacher_expectation": {"expr": _X[0] ** 2 * _X[1], "xs": list(_X)},
    "enumerate_expectation": {"expr": _X[0] ** 2 * _X[1], "xs": list(_X)},
}


def _symbols(d: int) -> tuple[list[sp.Symbol], list[sp.Symbol]]:
    xs = list(sp.symbols(f"x1:{d + 1}", real=True))
    ws = list(sp.symbols(f"w1:{d + 1}", real=True))
    return xs, ws


def _expr(expr: object) -> sp.Expr:
    """``expr`` as a finite sympy expression, or ``TypeError``/``ValueError``."""
    if isinstance(expr, bool) or not isinstance(expr, (sp.Basic, int, float)):
        raise TypeError(f"Invalid expr: {expr!r} (must be a sympy expression or a number)")
    e = sp.sympify(expr)
    if e.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        raise ValueError(f"Invalid expr: {expr!r} (must be finite)")
    return e


def _xs(xs: object) -> list[sp.Symbol]:
    if not isinstance(xs, (list, tuple)) or not xs or not all(isinstance(x, sp.Symbol) for x in xs):
        raise TypeError(f"Invalid xs: {xs!r} (must be a non-empty list of sympy Symbols)")
    return list(xs)


def rademacher_expectation(expr: sp.Expr, xs: list[sp.Symbol]) -> sp.Expr:
    """``E[expr]`` for independent Rademacher ``xs``: expand, then each monomial ``Π x_i^{k_i}`` ↦ 1 if every
    ``k_i`` is even, else 0 (the moment rule; other symbols are constants). ``expr`` must be polynomial in ``xs``."""
    e, xs = _expr(expr), _xs(xs)
    try:
        poly = sp.Poly(sp.expand(e), *xs)
    except sp.PolynomialError as err:
        raise ValueError(f"Invalid expr: {expr!r} (must be a polynomial in {xs})") from err
    out = sp.Integer(0)
    for powers, coeff in poly.terms():
        if all(k % 2 == 0 for k in powers):
            out += coeff
    return sp.expand(out)


def enumerate_expectation(expr: sp.Expr, xs: list[sp.Symbol]) -> sp.Expr:
    """``E[expr]`` by averaging over all ``2^d`` sign vectors (an independent check of the moment rule)."""
    e, xs = _expr(expr), _xs(xs)
    if len(xs) > 12:
        raise ValueError(f"Invalid xs: {len(xs)} symbols (enumeration needs ≤ 12)")
    total = sum(e.subs(dict(zip(xs, signs, strict=True)), simultaneous=True)
                for signs in itertools.product((-1, 1), repeat=len(xs)))
    return sp.expand(total / sp.Integer(2) ** len(xs))


@dataclass(frozen=True)
class Gradients:
    """Per-sample gradients and their population means (residuals are 0 when the identities hold)."""

    dl_da: sp.Expr
    grad_w: sp.Matrix
    M: sp.Matrix
    mean_da_residual: sp.Expr  # E[∂ℓ/∂a] − (−½ wᵀMw)
    mean_dw_residual: sp.Matrix  # E[∇_w ℓ] − (−a Mw)


def derive_gradients(d: int = 4) -> Gradients:
    """Differentiate ``ℓ = −y·(a(wᵀx)²/2 − 1)`` with ``y = x₁x₂`` and take expectations by the moment rule."""
    dd = integer("d", d, 2, 8)
    xs, ws = _symbols(dd)
    a = sp.Symbol("a", real=True)
    x, w = sp.Matrix(xs), sp.Matrix(ws)
    y = xs[0] * xs[1]
    z = (w.T * x)[0]
    loss = -y * (a * z**2 / 2 - 1)
    dl_da = sp.diff(loss, a)
    grad_w = sp.Matrix([sp.diff(loss, wi) for wi in ws])
    M = sp.Matrix(dd, dd, lambda i, j: rademacher_expectation(y * xs[i] * xs[j], xs))
    mean_da = rademacher_expectation(dl_da, xs)
    mean_dw = grad_w.applyfunc(lambda e: rademacher_expectation(e, xs))
    res_a = sp.simplify(mean_da - (-(w.T * M * w)[0] / 2))
    res_w = (mean_dw - (-a * M * w)).applyfunc(sp.simplify)
    return Gradients(sp.factor(dl_da), grad_w.applyfunc(sp.factor), M, res_a, res_w)


@dataclass(frozen=True)
class SamplingBias:
    """Moments of ``q̂ = wᵀM̂w`` (per sample: ``y·(wᵀx)²``) on the unit sphere, true and random labels."""

    M: sp.Matrix
    M_expected: sp.Matrix  # e₁e₂ᵀ + e₂e₁ᵀ
    M_by_enumeration: sp.Matrix
    mean_q: sp.Expr  # E[y z²] for y = x₁x₂
    var_q: sp.Expr  # N·Var q̂ for y = x₁x₂ (any ‖w‖)
    var_q_random: sp.Expr  # N·Var q̂ for random labels
    var_residual: sp.Expr  # var_q − (3(Σw²)² − 2Σw⁴ − 4w₁²w₂²), 0 when the closed form holds
    var_random_residual: sp.Expr
    fourth_moment_enum_residual: sp.Expr  # E z⁴ by the moment rule − by enumeration
    folded_normal_mean: sp.Expr  # E|Z| for Z ~ N(0, 1)


def derive_sampling_bias(d: int = 4) -> SamplingBias:
    """``E[y xxᵀ]``, ``E q̂``, ``Var q̂`` by the moment rule (and by enumeration for ``d ≤ 6``); ``E|Z|``."""
    dd = integer("d", d, 2, 6)
    xs, ws = _symbols(dd)
    y = xs[0] * xs[1]
    z = sum(wi * xi for wi, xi in zip(ws, xs, strict=True))
    M = sp.Matrix(dd, dd, lambda i, j: rademacher_expectation(y * xs[i] * xs[j], xs))
    M_enum = sp.Matrix(dd, dd, lambda i, j: enumerate_expectation(y * xs[i] * xs[j], xs))
    E = sp.zeros(dd, dd)
    E[0, 1] = E[1, 0] = 1
    mean_q = rademacher_expectation(y * z**2, xs)
    ez4 = rademacher_expectation(z**4, xs)  # y² = 1
    s2 = sum(wi**2 for wi in ws)
    s4 = sum(wi**4 for wi in ws)
    # general ‖w‖: N·Var q̂ = E z⁴ − (E y z²)² (y² = 1); on the sphere Σw² = 1 gives the forms
    var_q = sp.expand(ez4 - mean_q**2)
    var_r = ez4
    var_res = sp.expand(var_q - (3 * s2**2 - 2 * s4 - 4 * ws[0] ** 2 * ws[1] ** 2))
    var_r_res = sp.expand(var_r - (3 * s2**2 - 2 * s4))
    enum_res = sp.expand(ez4 - enumerate_expectation(z**4, xs)) if dd <= 4 else sp.Integer(0)
    Z = sp.Symbol("Z", real=True)
    fold = sp.simplify(sp.integrate(sp.Abs(Z) * sp.exp(-Z**2 / 2) / sp.sqrt(2 * sp.pi), (Z, -sp.oo, sp.oo)))
    return SamplingBias(M, E, M_enum, mean_q, var_q, var_r, var_res, var_r_res, enum_res, fold)


@dataclass(frozen=True)
class Phase2:
    """Power iteration with ``I + ηa⋆M``: eigenvalues, the per-step contraction of the misalignment ratio, and
    the step count to reach ``1 − (w₁² + w₂²) < ε`` from an initial ratio ``r₀``."""

    eigenvalues: dict
    ratio_step: sp.Expr  # ρ_{t+1}/ρ_t for ρ = ‖w_{⊥}‖²/(w·v₊)²
    steps: sp.Expr  # exact T₂(ε, r₀) of the linearised iteration
    steps_small_eta: sp.Expr  # leading term as ηa⋆ → 0


def derive_phase2(d: int = 4) -> Phase2:
    """Eigenvalues of ``I + ηa⋆M`` and the Phase-2 step count along the top eigenvector ``v₊ = (e₁ + e₂)/√2``.

    A component of ``w`` along ``v₊`` grows by ``1 + ηa⋆`` per step, the ``d − 2`` directions orthogonal to
    ``e₁, e₂`` by 1 (and ``v₋`` by ``1 − ηa⋆``), so the squared ratio ``ρ = ‖w_⊥‖²/(w·v₊)²`` shrinks by
    ``(1 + ηa⋆)^{-2}``; alignment ``1 − (w₁² + w₂²) = ρ/(1 + ρ) < ε`` needs ``ρ < ε/(1 − ε)``.
    """
    dd = integer("d", d, 3, 8)
    eta, ast, eps, r0 = sp.symbols("eta a_star epsilon r_0", positive=True)
    M = sp.zeros(dd, dd)
    M[0, 1] = M[1, 0] = 1
    A = sp.eye(dd) + eta * ast * M
    ev = A.eigenvals()
    ratio = sp.Integer(1) / (1 + eta * ast) ** 2
    T = sp.symbols("T", positive=True)
    steps = sp.solve(sp.Eq(r0 * ratio**T, eps / (1 - eps)), T)[0]
    small = sp.limit(steps * eta * ast, eta, 0) / (eta * ast)
    return Phase2({sp.simplify(k): v for k, v in ev.items()}, ratio, sp.simplify(steps), sp.simplify(small))


@dataclass(frozen=True)
class Tradeoff:
    """``T(a⋆) = A a⋆ + B/a⋆``: optimum and its scaling in ``N``."""

    a_opt: sp.Expr
    T_opt: sp.Expr
    second_derivative: sp.Expr  # > 0 at the optimum
    T_of_N: sp.Expr  # with A = √N/η, B = 2 log(d/ε)/η
    exponent_N: sp.Expr  # d log T / d log N


def derive_tradeoff() -> Tradeoff:
    """Minimise ``A·a⋆ + B/a⋆`` over ``a⋆ > 0``; substitute the secondary account's Phase-1 and Phase-2 bounds
    ``T₁ ≲ a⋆√N/η`` and ``T₂ ≲ 2 log(d/ε)/(ηa⋆)``."""
    a, A, B = sp.symbols("a_star A B", positive=True)
    N, d, eps, eta = sp.symbols("N d epsilon eta", positive=True)
    T = A * a + B / a
    a_opt = [s for s in sp.solve(sp.diff(T, a), a) if s.is_positive][0]
    T_opt = sp.simplify(T.subs(a, a_opt))
    d2 = sp.simplify(sp.diff(T, a, 2).subs(a, a_opt))
    T_N = sp.simplify(T_opt.subs({A: sp.sqrt(N) / eta, B: 2 * sp.log(d / eps) / eta}))
    expo = sp.simplify(sp.diff(sp.log(T_N), N) * N)
    return Tradeoff(a_opt, T_opt, d2, T_N, expo)
