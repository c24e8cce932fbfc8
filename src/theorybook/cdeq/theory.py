"""The algebra behind C-DEQ's pieces, executed in sympy [derived].

* :func:`anderson_weight` — the 2-point Anderson step of the paper's code: the minimiser of
  ``‖α₀ r₀ + α₁ r₁‖²`` subject to ``α₀ + α₁ = 1`` is ``α₁ = −⟨r₀, r₁ − r₀⟩/‖r₁ − r₀‖²`` (the code's formula), and for a
  scalar linear map ``f(z) = a z + c`` the step ``α₀ f(z₀) + α₁ f(z₁)`` is the fixed point ``c/(1 − a)`` exactly.
* :func:`picard_closed_form` — for ``f(z) = W z + u`` from ``z₀ = 0``: ``z_k = (I − W^k)(I − W)⁻¹u`` and
  ``z_k − z* = −W^k z*`` (symbolic 2 × 2), hence ``‖z_k − z*‖ ≤ ‖W‖^k ‖z*‖ = γ^k ‖z*‖``.
* :func:`boundary_conditions` — both parameterisations ``F = c_skip z + c_out(·)`` give ``F(z, ε) = z``:
  the paper code's linear ``c_skip = (T − t)/(T − ε)`` and the chapter's ``c_skip = min(1, (ε/t)²)``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import sympy as sp
import torch

from ..validate import integer

__all__ = ["AndersonWeight", "Boundary", "PicardForm", "anderson_weight", "boundary_conditions",
           "picard_closed_form"]


class AndersonWeight(NamedTuple):
    """``alpha1``: sympy's minimiser; ``gap``: it minus the code's formula (0); ``curvature``: the second derivative
    ``‖r₁ − r₀‖²`` (> 0: a minimum); ``scalar_gap``: the step on ``f(z) = az + c`` minus ``c/(1 − a)`` (0)."""

    alpha1: sp.Expr
    gap: sp.Expr
    curvature: sp.Expr
    scalar_gap: sp.Expr


def anderson_weight(dim: int = 2) -> AndersonWeight:
    """Minimise ``‖(1 − α₁) r₀ + α₁ r₁‖²`` over α₁ for symbolic residuals in ``R^dim`` and compare with the code."""
    return _anderson_weight(integer("dim", dim, 1, 4))


@functools.lru_cache(maxsize=8)  # pure and symbolic: the chapter and its verdicts share one evaluation
def _anderson_weight(dim: int) -> AndersonWeight:
    r0 = sp.Matrix(sp.symbols(f"p0:{dim}", real=True))
    r1 = sp.Matrix(sp.symbols(f"q0:{dim}", real=True))
    a1 = sp.Symbol("alpha1", real=True)
    obj = ((1 - a1) * r0 + a1 * r1).dot((1 - a1) * r0 + a1 * r1)
    sol = sp.solve(sp.diff(obj, a1), a1)[0]
    d = r1 - r0
    code = -r0.dot(d) / d.dot(d)
    gap = sp.simplify(sol - code)
    curvature = sp.expand(sp.diff(obj, a1, 2) / 2 - d.dot(d))
    # scalar linear map: exact in one step from any two distinct points
    a, c, z0, z1 = sp.symbols("a c z0 z1", real=True)
    f = lambda z: a * z + c  # noqa: E731 - the map under test
    rp, rc = f(z0) - z0, f(z1) - z1
    al1 = -rp * (rc - rp) / (rc - rp) ** 2
    step = (1 - al1) * f(z0) + al1 * f(z1)
    scalar_gap = sp.simplify(step - c / (1 - a))
    return AndersonWeight(sp.simplify(sol), gap, curvature, scalar_gap)


class PicardForm(NamedTuple):
    """Gaps (zero matrices when exact) of ``z_k = (I − W^k)(I − W)⁻¹u`` and ``z_k − z* = −W^k z*`` for k = 1..k_max."""

    closed_form_gaps: list[sp.Matrix]
    error_gaps: list[sp.Matrix]


def picard_closed_form(k_max: int = 3) -> PicardForm:
    """Iterate ``z_{k+1} = W z_k + u`` from 0 with fully symbolic 2 × 2 ``W`` and ``u`` and check the closed forms."""
    return _picard_closed_form(integer("k_max", k_max, 1, 4))


@functools.lru_cache(maxsize=8)
def _picard_closed_form(k_max: int) -> PicardForm:
    W = sp.Matrix(2, 2, sp.symbols("w0:4", real=True))
    u = sp.Matrix(sp.symbols("u0:2", real=True))
    I2 = sp.eye(2)
    inv = (I2 - W).inv()
    zstar = inv * u
    z = sp.zeros(2, 1)
    cf, er = [], []
    for k in range(1, k_max + 1):
        z = W * z + u
        Wk = W**k
        cf.append(sp.simplify(z - (I2 - Wk) * inv * u))
        er.append(sp.simplify((z - zstar) + Wk * zstar))
    return PicardForm(cf, er)


class Boundary(NamedTuple):
    """For each convention: ``F(z, ε) − z``, ``c_skip + c_out − 1`` and ``c_out(T)`` (paper: 1; ours: 1 − (ε/T)²)."""

    paper_identity: sp.Expr
    paper_partition: sp.Expr
    paper_out_at_T: sp.Expr
    equilibrium_identity: sp.Expr
    equilibrium_partition: sp.Expr
    equilibrium_out_at_T: sp.Expr


@functools.lru_cache(maxsize=1)
def boundary_conditions() -> Boundary:
    """``F(z, t) = c_skip(t) z + c_out(t) N(z, t)`` with an arbitrary network output ``N``, for both conventions."""
    t, T, eps, z, N = sp.symbols("t T epsilon z N", positive=True)
    cs_p, co_p = (T - t) / (T - eps), (t - eps) / (T - eps)
    cs_e = (eps / t) ** 2  # = min(1, (ε/t)²) on t ≥ ε
    co_e = 1 - cs_e
    F_p, F_e = cs_p * z + co_p * N, cs_e * z + co_e * N
    return Boundary(sp.simplify(F_p.subs(t, eps) - z), sp.simplify(cs_p + co_p - 1), sp.simplify(co_p.subs(t, T)),
                    sp.simplify(F_e.subs(t, eps) - z), sp.simplify(cs_e + co_e - 1), sp.simplify(co_e.subs(t, T)))


def skip_out_value(t: torch.Tensor, T: float, eps: float, convention: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Numeric ``(c_skip, c_out)`` (unvalidated; see :func:`theorybook.cdeq.skip_out`)."""
    if convention == "paper":
        cs = (T - t) / (T - eps)
        return cs, (t - eps) / (T - eps)
    cs = torch.clamp((eps / t) ** 2, max=1.0)
    return cs, 1.0 - cs
