r"""Sympy derivations behind POGO's feasibility (each returns expressions and a checked boolean).

* :func:`derive_tangent_gram` — for :math:`XX^\top=I` and :math:`\Psi X^\top` skew,
  :math:`MM^\top = I + \eta^2\Psi\Psi^\top` (non-commutative symbols).
* :func:`derive_tangency` — :math:`\Psi X^\top` is skew for :math:`\Psi=\tfrac12(XX^\top G - XG^\top X)`.
* :func:`derive_correction_error` — :math:`X^+X^{+\top}-I=(I+E)(I-\lambda E)^2-I`; at λ = ½ it is
  :math:`-\tfrac34E^2+\tfrac14E^3` (everything is a polynomial in :math:`P = MM^\top`, so commuting symbols suffice).
* :func:`derive_optimal_lambda` — the eigenvalue-wise exact λ, :math:`(1-1/\sqrt{1+e})/e = \tfrac12-\tfrac38e+\dots`
* :func:`derive_quartic_coefficients` — the five coefficients of
  :math:`q(\lambda)=\lVert(A+\lambda B)(A+\lambda B)^\top-I\rVert_F^2` for generic symbolic matrices.
"""

from __future__ import annotations

import sympy as sp

from .. import validate

__all__ = [
    "derive_tangent_gram",
    "derive_tangency",
    "derive_correction_error",
    "derive_optimal_lambda",
    "derive_quartic_coefficients",
    "infeasibility_order",
]


def derive_tangent_gram() -> dict:
    r"""Expand :math:`(X-\eta\Psi)(X-\eta\Psi)^\top` with non-commuting X, Xᵀ, Ψ, Ψᵀ; substitute
    :math:`XX^\top = I` and the tangency :math:`X\Psi^\top = -\Psi X^\top`. Returns ``{"expanded", "reduced",
    "target", "holds"}`` with target :math:`1 + \eta^2\Psi\Psi^\top`."""
    X, Xt, Psi, Psit = sp.symbols("X X^T Psi Psi^T", commutative=False)
    eta = sp.Symbol("eta", positive=True)
    expanded = sp.expand((X - eta * Psi) * (Xt - eta * Psit))
    reduced = sp.expand(expanded.subs({X * Xt: 1, X * Psit: -Psi * Xt}))
    target = 1 + eta**2 * Psi * Psit
    return {"expanded": expanded, "reduced": reduced, "target": target,
            "holds": sp.expand(reduced - target) == 0}


def derive_tangency() -> dict:
    r"""With :math:`XX^\top=I`: :math:`\Psi X^\top = \tfrac12(GX^\top - XG^\top)`, and adding its transpose
    :math:`X\Psi^\top = \tfrac12(XG^\top - GX^\top)` gives 0 (skew). Non-commutative symbols; transposes are
    written out by hand (:math:`(ABC)^\top = C^\top B^\top A^\top`)."""
    X, Xt, G, Gt = sp.symbols("X X^T G G^T", commutative=False)
    half = sp.Rational(1, 2)
    psi_xt = sp.expand(half * (X * Xt * G - X * Gt * X) * Xt).subs(X * Xt, 1)
    x_psit = sp.expand(X * half * (Gt * X * Xt - Xt * G * Xt)).subs(X * Xt, 1)  # X Ψᵀ
    psi_xt, x_psit = sp.expand(psi_xt), sp.expand(x_psit)
    return {"Psi_Xt": psi_xt, "X_Psit": x_psit, "holds": sp.expand(psi_xt + x_psit) == 0}


def derive_correction_error() -> dict:
    r"""With :math:`P = MM^\top = 1 + E` (commuting), :math:`X^+ = (1+\lambda(1-P))M` gives
    :math:`X^+X^{+\top} - 1 = (1+E)(1-\lambda E)^2 - 1`. Returns the general expression, its linear coefficient
    :math:`1-2\lambda` (the contraction factor of a small pre-existing error), the λ = ½ case and its check
    against :math:`-\tfrac34E^2+\tfrac14E^3`."""
    E, lam = sp.symbols("E lambda")
    P = 1 + E
    general = sp.expand((1 + lam * (1 - P)) ** 2 * P - 1)
    half = sp.expand(general.subs(lam, sp.Rational(1, 2)))
    target = -sp.Rational(3, 4) * E**2 + sp.Rational(1, 4) * E**3
    return {"general": general, "linear_coefficient": sp.factor(general.coeff(E, 1)), "half": half,
            "target": target, "holds": sp.expand(half - target) == 0}


def derive_optimal_lambda(order: int = 3) -> dict:
    r"""Eigenvalue-wise, :math:`(1+e)(1-\lambda e)^2 = 1` at :math:`\lambda^*(e) = (1-1/\sqrt{1+e})/e`; its
    series to ``order`` starts :math:`\tfrac12 - \tfrac38 e`. So λ = ½ is exact to first order and a quartic-chosen
    λ can only improve the :math:`O(e^2)` term."""
    order = validate.integer("order", order, 1, 12)
    e = sp.Symbol("e", positive=True)
    lam_star = (1 - 1 / sp.sqrt(1 + e)) / e
    residual = sp.simplify((1 + e) * (1 - lam_star * e) ** 2 - 1)
    series = sp.series(lam_star, e, 0, order).removeO()
    return {"lambda_star": lam_star, "series": sp.expand(series), "residual": residual,
            "holds": residual == 0 and sp.expand(series).coeff(e, 0) == sp.Rational(1, 2)}


def derive_quartic_coefficients(p: int = 2, n: int = 2) -> dict:
    r"""Expand :math:`q(\lambda)=\lVert(A+\lambda B)(A+\lambda B)^\top-I\rVert_F^2` for generic symbolic
    ``p × n`` A, B and compare with :math:`\lVert C_2\rVert^2\lambda^4 + 2\langle C_1,C_2\rangle\lambda^3 +
    (2\langle C_0,C_2\rangle+\lVert C_1\rVert^2)\lambda^2 + 2\langle C_0,C_1\rangle\lambda + \lVert C_0\rVert^2`,
    :math:`C_0=AA^\top-I`, :math:`C_1=AB^\top+BA^\top`, :math:`C_2=BB^\top`."""
    p = validate.integer("p", p, 1, 3)
    n = validate.integer("n", n, p, 3)
    lam = sp.Symbol("lambda")
    A = sp.Matrix(p, n, lambda i, j: sp.Symbol(f"a{i}{j}"))
    B = sp.Matrix(p, n, lambda i, j: sp.Symbol(f"b{i}{j}"))
    eye = sp.eye(p)
    D = (A + lam * B) * (A + lam * B).T - eye
    q = sp.Poly(sp.expand(sum(x**2 for x in D)), lam)
    C0, C1, C2 = A * A.T - eye, A * B.T + B * A.T, B * B.T

    def ip(U, V):
        return sum(u * v for u, v in zip(U, V, strict=True))

    formula = [ip(C2, C2), 2 * ip(C1, C2), 2 * ip(C0, C2) + ip(C1, C1), 2 * ip(C0, C1), ip(C0, C0)]
    coeffs = [q.coeff_monomial(lam**k) for k in (4, 3, 2, 1, 0)]
    holds = all(sp.expand(c - f) == 0 for c, f in zip(coeffs, formula, strict=True))
    return {"degree": q.degree(), "coefficients": coeffs, "formula": formula, "holds": holds}


def infeasibility_order() -> int:
    r"""The power of η in the leading infeasibility term: :math:`E=\eta^2\Psi\Psi^\top` and the error is
    :math:`-\tfrac34E^2+\dots`, so it is the lowest power of η in ``half`` with :math:`E=\eta^2 s`."""
    E = sp.Symbol("E")
    eta, s = sp.symbols("eta s", positive=True)
    half = derive_correction_error()["half"]
    poly = sp.Poly(sp.expand(half.subs(E, eta**2 * s)), eta)
    return min(m[0] for m in poly.monoms())
