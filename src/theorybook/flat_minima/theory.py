"""Derivations, executed with sympy, for the unseen-coordinates instance [reconstruction; derived here].

* :func:`derive_phi` — ``φ(u) = ½ min(u, 0)²`` is non-negative, C¹, convex, and ``φ' = min(u, 0)`` is 1-Lipschitz
  (so ``f(w; z) = Σ z_i φ(w_i)`` is β-smooth with β = 1), case by case.
* :func:`derive_population` — ``E f(w; z) = ½ Σ φ(w_i)`` for Bernoulli(½) entries; ``F ≤ ¼`` on the unit ball.
* :func:`derive_orthant_sharpness` — the lemma behind ``S_ρ(w) = max_i a_i(ρ − w_i)_+²/2`` on the orthant:
  ``(t − w)/(ρ − w) ≤ t/ρ`` for ``0 ≤ w ≤ t ≤ ρ``, hence ``Σ a_i (t_i − w_i)² ≤ max_i a_i(ρ − w_i)² · Σ t_i²/ρ²``;
  and the two-coordinate case checked on the arc, where the maximum sits at an endpoint.
* :func:`derive_erms` — the flat ERM (``F̂ = S_ρ = 0``, ``F = c²/4``, in the ball iff ``#seen·ρ² + c² ≤ 1``) and
  the sharp ERM ``w = 0`` (``F̂ = F = 0``, ``S_ρ = ρ² max a_i / 2``).
* :func:`derive_unseen` — ``E #unseen = d 2⁻ⁿ`` and ``P(#unseen ≥ 1) = 1 − (1 − 2⁻ⁿ)^d``.
* :func:`derive_coupling` — the coupled instance of :mod:`.coupled`: ``ψ(σ) = (λ/2)max(σ, 0)²`` is non-negative, C¹
  and ``0 ≤ ψ'' ≤ λ``; the Hessian ``diag(z_i φ'') + ψ''·uuᵀ`` (``‖u‖ = 1``) has eigenvalues in ``[0, 1 + λ]``, so
  ``f`` is convex and (1 + λ)-smooth; the flat-set bound ``Σ_unseen w_i ≤ db − √dρ − #seen·ρ``; and the attainment
  of the inner-max formula (``⟨u, v⟩`` at ``v = −r e_i + √(ρ² − r²) u_{−i}/‖u_{−i}‖``).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import sympy as sp

from ..validate import integer

__all__ = [
    "Derivations",
    "as_text",
    "derive_all",
    "derive_coupling",
    "derive_erms",
    "derive_orthant_sharpness",
    "derive_phi",
    "derive_population",
    "derive_unseen",
    ]

u, v = sp.symbols("u v", real=True)
p_, q_ = sp.symbols("p q", positive=True)

_NAMES = {"rho": "ρ", "lambda": "λ", "n_seen": "#seen", "a_max": "max aᵢ", "varepsilon": "ε"}
_SUPERSCRIPT = str.maketrans("0123456789+-nkd", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿᵏᵈ")


def _power(m: re.Match[str]) -> str:
    e = m.group(1)
    if e.startswith("(") and e.endswith(")"):
        e = e[1:-1]
    return e.translate(_SUPERSCRIPT) if all(ch in "0123456789+-nkd" for ch in e) else f"^({e})"


def as_text(expr: Any) -> str:
    """A sympy expression (or a tuple of them) as a reader's text, not Python's: Unicode symbols, powers as
    superscripts, ``|x|`` for ``Abs(x)``, ``min`` for ``Min``, ``√`` for ``sqrt``, ``·`` for ``*``, ``−`` for ``-``.

    >>> as_text(sp.sympify("Min(0, w)**2/4")), as_text(sp.sympify("Abs(p - q)")), as_text(sp.sympify("a*s**2/2"))
    ('min(0, w)²/4', '|p − q|', 'a·s²/2')
    >>> as_text((sp.Integer(1), sp.Symbol("lambda") + 1)), as_text(1 - (1 - sp.Rational(1, 2)**sp.Symbol("n"))**4)
    ('1, λ + 1', '1 − (1 − (1/2)ⁿ)⁴')
    """
    if isinstance(expr, (tuple, list)):
        return ", ".join(as_text(e) for e in expr)
    if isinstance(expr, bool) or not isinstance(expr, (sp.Basic, int, float)):
        raise TypeError(f"Invalid expr: {type(expr).__name__} (must be a sympy expression, a number, or a tuple or "
                        "list of them)")
    s = sp.sstr(expr)
    s = re.sub(r"\b(rho|lambda|n_seen|a_max|varepsilon)\b", lambda m: _NAMES[m.group(1)], s)
    s = re.sub(r"\bAbs\(([^()]*)\)", r"|\1|", s)
    s = re.sub(r"\b(Min|Max)\(", lambda m: m.group(1).lower() + "(", s)
    s = re.sub(r"\bsqrt\((\w+)\)", r"√\1", s)
    s = re.sub(r"\*\*(\([^()]*\)|\w+)", _power, s)
    return s.replace("*", "·").replace("-", "−")


def phi_expr(x: sp.Expr) -> sp.Expr:
    """``φ(x) = ½ min(x, 0)²`` as a sympy expression."""
    return sp.Min(x, 0) ** 2 / 2


class PhiFacts(NamedTuple):
    phi: sp.Expr
    dphi: sp.Expr
    pieces: dict  # region → (φ, φ', φ'')
    nonnegative: bool
    c1_at_zero: bool
    curvature_range: tuple  # (min φ'', max φ'') over the pieces
    lipschitz_cases: dict  # case → |u − v| − |φ'(u) − φ'(v)| (must be ≥ 0)
    lipschitz_ok: bool


def derive_phi() -> PhiFacts:
    """Non-negativity, C¹ at 0, ``0 ≤ φ'' ≤ 1`` on each piece, and ``|φ'(u) − φ'(v)| ≤ |u − v|`` by sign cases."""
    neg = {"phi": u**2 / 2}
    pos = {"phi": sp.Integer(0)}
    pieces = {}
    for name, piece in (("u < 0", neg), ("u ≥ 0", pos)):
        f = piece["phi"]
        pieces[name] = (f, sp.diff(f, u), sp.diff(f, u, 2))
    phi = sp.Piecewise((u**2 / 2, u < 0), (0, True))
    dphi = sp.Piecewise((u, u < 0), (0, True))
    nonneg = all(sp.ask(sp.Q.nonnegative(f), sp.Q.real(u)) is not False and (f == 0 or f == u**2 / 2)
                 for f, _, _ in pieces.values())
    c1 = (sp.limit(u**2 / 2, u, 0, "-") == 0 and sp.limit(u, u, 0, "-") == 0)
    curv = [p[2] for p in pieces.values()]
    # φ'(x) = min(x, 0); with p, q > 0: both negative (u = −p, v = −q), mixed (u = −p, v = q), both ≥ 0.
    cases = {
        "u, v < 0": sp.Abs(-p_ + q_) - sp.Abs(-p_ + q_),
        "u < 0 ≤ v": (p_ + q_) - p_,
        "u, v ≥ 0": sp.Abs(p_ - q_) - 0,
    }
    lip_ok = all(sp.simplify(e).is_nonnegative for e in cases.values())
    return PhiFacts(phi, dphi, pieces, bool(nonneg), bool(c1), (min(curv), max(curv)), cases, bool(lip_ok))


class PopulationFacts(NamedTuple):
    expectation: sp.Expr  # E[z φ(w)] for z ~ Bernoulli(½)
    identity_ok: bool
    max_on_ball: sp.Expr


def derive_population() -> PopulationFacts:
    """``E[z_i φ(w_i)] = ½ φ(w_i)``, so ``F(w) = ½Σφ(w_i)``; on the unit ball ``F ≤ ¼Σ w_i² ≤ ¼``."""
    w = sp.Symbol("w", real=True)
    E = sum(sp.Rational(1, 2) * z * phi_expr(w) for z in (0, 1))
    ok = sp.simplify(E - phi_expr(w) / 2) == 0
    # max of ¼ Σ min(w_i, 0)² subject to Σ w_i² ≤ 1 is ¼ (all mass on one negative coordinate)
    # per coordinate ½φ(x) ≤ x²/4 (equality for x < 0, 0 ≤ x²/4 otherwise), so F ≤ ¼‖w‖² ≤ ¼, attained at −e_1
    x = sp.Symbol("x", real=True)
    mx = sp.maximum(x**2 / 4, x, sp.Interval(-1, 0))
    ok = ok and sp.simplify(phi_expr(-p_) / 2 - p_**2 / 4) == 0 and phi_expr(p_) == 0
    return PopulationFacts(E, bool(ok), mx)


class SharpnessFacts(NamedTuple):
    lemma: sp.Expr  # ρ(t − w) − t(ρ − w), factored
    lemma_ok: bool  # ≤ 0 on 0 ≤ w ≤ t ≤ ρ
    attained: sp.Expr  # F̂(w − ρe_i) on the orthant, coordinate i
    two_coordinate_ok: bool  # on the arc, the maximum of a₁s₁² + a₂s₂² is at an endpoint


def derive_orthant_sharpness() -> SharpnessFacts:
    """The ratio lemma ``ρ(t − w) − t(ρ − w) = −w(ρ − t) ≤ 0`` and its two-coordinate picture.

    Write the perturbed negative parts as ``t_i − w_i`` with ``t_i = −v_i`` (only coordinates that are pushed
    below 0 matter), so ``Σ t_i² ≤ ρ²`` and ``w_i ≤ t_i ≤ ρ``. Then
    ``Σ a_i (t_i − w_i)² = Σ a_i (ρ − w_i)² ((t_i − w_i)/(ρ − w_i))² ≤ A Σ (t_i/ρ)² ≤ A`` with
    ``A = max_i a_i (ρ − w_i)²``, attained by ``t = ρ e_{i*}``. Two coordinates: on the arc
    ``t = ρ(cos θ, sin θ)`` with ``w = 0`` the objective ``ρ²(a₁cos²θ + a₂sin²θ)`` is monotone in ``cos²θ``,
    so its maximum is at an endpoint θ ∈ {0, π/2}."""
    w, t, rho = sp.symbols("w t rho", nonnegative=True)
    lemma = sp.factor(rho * (t - w) - t * (rho - w))
    # substitute t = w + α(ρ − w)·…: write t = ρ − s with s ≥ 0; lemma = −w s ≤ 0
    s = sp.Symbol("s", nonnegative=True)
    lemma_ok = sp.simplify(lemma.subs(t, rho - s) + w * s) == 0 and (-w * s).is_nonpositive
    a = sp.Symbol("a", positive=True)
    wi = sp.Symbol("w_i", nonnegative=True)
    attained = sp.simplify(a * phi_expr(wi - rho).subs(wi, rho - s))  # w_i = ρ − s ≤ ρ
    a1, a2, th = sp.symbols("a1 a2 theta", positive=True)
    c2 = sp.Symbol("c2", nonnegative=True)  # cos²θ ∈ [0, 1]
    obj = rho**2 * (a1 * c2 + a2 * (1 - c2))
    two_ok = sp.diff(obj, c2, 2) == 0  # linear in cos²θ → extreme at an endpoint
    return SharpnessFacts(lemma, bool(lemma_ok), attained, bool(two_ok))


class ERMFacts(NamedTuple):
    flat_empirical: sp.Expr
    flat_sharpness: sp.Expr
    flat_population: sp.Expr
    flat_norm2: sp.Expr
    sharp_sharpness: sp.Expr
    sharp_population: sp.Expr


def derive_erms() -> ERMFacts:
    """Flat ERM (``ρ`` on seen, ``−c/√k`` on ``k`` unseen coordinates) and sharp ERM ``0``."""
    rho, c, A = sp.symbols("rho c a_max", positive=True)
    k, s = sp.symbols("k n_seen", positive=True, integer=True)
    x = sp.Symbol("x", nonnegative=True)  # |v_i| ≤ ρ: the seen coordinate stays at ρ − x·… ≥ 0
    flat_emp = s * phi_expr(rho) + k * 0 * phi_expr(-c / sp.sqrt(k))  # a_i = 0 on unseen coordinates
    flat_sharp = sp.simplify(phi_expr(rho - rho * x / (1 + x)))  # ρ − |v_i| with |v_i| = ρx/(1+x) < ρ
    flat_pop = sp.simplify(k * sp.Rational(1, 2) * phi_expr(-c / sp.sqrt(k)))
    norm2 = s * rho**2 + k * (c / sp.sqrt(k)) ** 2
    sharp_sharp = A * rho**2 / 2  # lemma at w = 0: max_i a_i ρ²/2
    sharp_pop = sp.Rational(1, 2) * phi_expr(sp.Integer(0))
    return ERMFacts(sp.simplify(flat_emp), flat_sharp, flat_pop, sp.simplify(norm2), sharp_sharp, sharp_pop)


class UnseenFacts(NamedTuple):
    expected: sp.Expr
    prob_any: sp.Expr
    expected_value: sp.Expr  # at d, n
    prob_value: float
    d: int
    n: int


def derive_unseen(d: int = 4096, n: int = 10) -> UnseenFacts:
    """A coordinate is unseen iff all ``n`` Bernoulli(½) draws are 0: probability ``2⁻ⁿ``."""
    dd = integer("d", d, 1, 10**9)
    nn = integer("n", n, 1, 10_000)
    D, N = sp.symbols("d n", positive=True, integer=True)
    p = sp.Rational(1, 2) ** N
    E = sp.simplify(D * p)
    P = 1 - (1 - p) ** D
    return UnseenFacts(E, P, E.subs({D: dd, N: nn}), float(sp.N(P.subs({D: dd, N: nn}), 30)), dd, nn)


class CouplingFacts(NamedTuple):
    psi_nonnegative: bool
    psi_c1: bool
    psi_curvature: tuple  # (min ψ'', max ψ'') over the pieces
    hessian_eigs: tuple  # eigenvalues of diag(1, 1, 1) + λ uuᵀ for d = 3 (the largest the pieces allow)
    beta: sp.Expr
    flat_bound: sp.Expr  # the largest Σ_unseen w_i at a flat ERM
    attained: sp.Expr  # ⟨u, v⟩ at the attaining v, minus its formula (must be 0)


def derive_coupling() -> CouplingFacts:
    """The coupling term, β = 1 + λ, the flat-set bound and the attainment identity of the inner-max formula."""
    lam = sp.Symbol("lambda", positive=True)
    pieces = [lam * u**2 / 2, sp.Integer(0)]  # σ > 0, σ ≤ 0
    curv = [sp.diff(p, u, 2) for p in pieces]
    nonneg = all(p.is_nonnegative or sp.ask(sp.Q.nonnegative(p), sp.Q.real(u)) for p in pieces)
    c1 = sp.limit(lam * u**2 / 2, u, 0, "+") == 0 and sp.limit(lam * u, u, 0, "+") == 0
    d3 = 3  # diag(z φ'') ≤ I and uuᵀ with u = 1/√d: the worst case of every piece, d = 3 (eigenvalues 1, 1, 1 + λ)
    uu = sp.ones(d3, d3) / d3
    eigs = tuple(sorted((sp.eye(d3) + lam * uu).eigenvals().keys(), key=lambda e: sp.default_sort_key(e)))
    d, b, rho, k = sp.symbols("d b rho k", positive=True)
    # flat ERM: w_i ≥ ρ on the d − k seen coordinates and ⟨1, w⟩/√d ≤ τ − ρ with τ = b√d
    bound = sp.expand(sp.sqrt(d) * (b * sp.sqrt(d) - rho) - (d - k) * rho)
    r = sp.Symbol("r", positive=True)
    # ⟨u, v⟩ for v = −r e_i + √(ρ² − r²)·u_{−i}/‖u_{−i}‖, u = 1/√d: −r/√d + √(ρ² − r²)·(d − 1)/(√d·√(d − 1))
    inner = -r / sp.sqrt(d) + sp.sqrt(rho**2 - r**2) * (d - 1) / (sp.sqrt(d) * sp.sqrt(d - 1))
    attained = sp.simplify(inner - (-r / sp.sqrt(d) + sp.sqrt((d - 1) / d) * sp.sqrt(rho**2 - r**2)))
    return CouplingFacts(bool(nonneg), bool(c1), (min(curv, key=sp.default_sort_key), max(curv,
                         key=sp.default_sort_key)), eigs, 1 + lam, bound, attained)


class Derivations(NamedTuple):
    phi: PhiFacts
    population: PopulationFacts
    sharpness: SharpnessFacts
    erms: ERMFacts
    unseen: UnseenFacts
    coupling: CouplingFacts


def derive_all() -> Derivations:
    """All derivations of the chapter."""
    return Derivations(derive_phi(), derive_population(), derive_orthant_sharpness(), derive_erms(), derive_unseen(),
                       derive_coupling())
