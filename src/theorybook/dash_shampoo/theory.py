r"""The DASH solvers as scalar maps, and the algebra behind them (sympy).

Every solver is a *matrix function*: a polynomial in A (Newton iterations, Chebyshev) or a function of its
eigenvalues (EVD). So on an eigenvector with eigenvalue λ each solver acts as a scalar recursion, and the error
of the matrix iteration on a stack with known spectrum is predicted exactly (in exact arithmetic) by running the
scalar recursion on λ — :func:`predicted_error`. The ``derive_*`` functions return dictionaries of sympy
results that the chapter checks.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
import torch

from .. import validate
from ..device import to_numpy

__all__ = [
    "PAPER_STEP_MS",
    "bernstein_rho",
    "chebyshev_predicted_error",
    "cn_scalar",
    "derive_bmm_counts",
    "derive_chebyshev",
    "derive_cn_map",
    "derive_ndb_map",
    "escape_iterations",
    "ndb_scalar",
    "paper_ratios",
    "predicted_error",
]

#: Step times (ms, 8×H100) from the DASH README, B = 1024: (Distributed Shampoo, DASH-LW, DASH-GPU).
PAPER_STEP_MS = {
    "CN fp32": (666, 149, 136),
    "CN fp16": (471, 138, 119),
    "NDB fp32 fro": (558, 188, 174),
    "NDB fp32 pi": (740, 194, 177),
    "EVD freq 1": (3080, 2850, 2850),
    "EVD freq 10": (355, 315, 313),
}


def paper_ratios() -> dict[str, float]:
    """Headline 666/138 (v1, 4.83×) and 666/119 (v2, 5.6×); like-for-like ratios DS/DASH-LW per row."""
    ds_cn32 = PAPER_STEP_MS["CN fp32"][0]
    out = {"headline v1 (DS CN32 / DASH-LW CN16)": ds_cn32 / PAPER_STEP_MS["CN fp16"][1],
           "headline v2 (DS CN32 / DASH-GPU CN16)": ds_cn32 / PAPER_STEP_MS["CN fp16"][2]}
    for key, (ds, lw, _) in PAPER_STEP_MS.items():
        out[f"like-for-like {key}"] = ds / lw
    return out


# ------------------------------------------------------------------------------------------ scalar maps
MAX_ITERS = 1000


def _array(name: str, x, low: float, high: float) -> np.ndarray:
    """``x`` as a float64 numpy array with every entry in the open interval (low, high)."""
    t = validate.finite_tensor(name, x)
    validate.in_range(name, t, low, high, low_open=True, high_open=True)
    return to_numpy(t.to(torch.float64))


def ndb_scalar(a: np.ndarray, iters: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Scalar Newton–DB on a (= λ/s): returns (y_n, z_n) → (a^{1/2}, a^{-1/2}).

    :math:`e_0=\tfrac32-\tfrac12a`, :math:`y_1=ae_0`, :math:`z_1=e_0`, then :math:`e=\tfrac32-\tfrac12zy`,
    :math:`y\leftarrow ye`, :math:`z\leftarrow ez`. Principal roots for a ∈ (0, 3); a ∈ [3, 5) converges to the
    negative root; a ≥ 5 diverges, so a must lie in (0, 5).
    """
    a = _array("a", a, 0.0, 5.0)
    iters = validate.integer("iters", iters, 1, MAX_ITERS)
    e = 1.5 - 0.5 * a
    y, z = a * e, e
    for _ in range(iters - 1):
        e = 1.5 - 0.5 * z * y
        y, z = y * e, e * z
    return y, z


def cn_scalar(lam: np.ndarray, p: int, iters: int, s: float) -> np.ndarray:
    r"""Scalar coupled Newton: :math:`z=(p+1)/(2s)`, :math:`x_0=z^{1/p}`, :math:`m_0=z\lambda`;
    :math:`m'=(1+1/p)-m/p`, :math:`x\leftarrow xm'`, :math:`m\leftarrow m'^pm`. Returns x_n ≈ λ^{-1/p}."""
    p = validate.integer("p", p, 1, 64)
    iters = validate.integer("iters", iters, 1, MAX_ITERS)
    s = validate.number("s", s, 0.0, math.inf, low_open=True)
    lam = _array("lam", lam, 0.0, 2.0 * s)  # z·λ < p + 1: CN's basin (every residual m' stays positive)
    z = (p + 1) / (2 * s)
    x, m = np.full_like(lam, z ** (1 / p)), z * lam
    for _ in range(iters):
        mp = (1 + 1 / p) - m / p
        x, m = x * mp, mp**p * m
    return x


def predicted_error(lam: np.ndarray, method: str, iters: int, s: float, p: int = 4) -> float:
    r"""Relative Frobenius error of the solver on any matrix with spectrum λ and scale s:
    :math:`\|x_n(\lambda)-\lambda^{-1/p}\|_2/\|\lambda^{-1/p}\|_2` (exact arithmetic, float64)."""
    validate.one_of("method", method, ("ndb", "cn"))
    iters = validate.integer("iters", iters, 1, MAX_ITERS)
    p = validate.integer("p", p, 1, 64)
    s = validate.number("s", s, 0.0, math.inf, low_open=True)
    lam = _array("lam", lam, 0.0, 2.0 * s)
    exact = lam ** (-1.0 / p)
    if method == "cn":
        x = cn_scalar(lam, p, iters, s)
    else:
        if p != 4:
            raise ValueError(f"Invalid p: {p!r} (the NDB prediction is written for p = 4)")
        y, _ = ndb_scalar(lam / s, iters)
        root = y * math.sqrt(s)
        _, z = ndb_scalar(root / math.sqrt(s), iters)
        x = z / s**0.25
    return float(np.linalg.norm(x - exact) / np.linalg.norm(exact))


def escape_iterations(ratio: float, growth: float) -> float:
    r"""Iterations for a tiny scaled eigenvalue δ = ``ratio`` to grow to O(1) at rate ``growth`` per step:
    :math:`\log(1/\delta)/\log(\text{growth})` (NDB: 9/4; CN with p = 4: (5/4)^4 = 625/256)."""
    ratio = validate.number("ratio", ratio, 0.0, 1.0, low_open=True)
    growth = validate.number("growth", growth, 1.0, math.inf, low_open=True)
    return math.log(1 / ratio) / math.log(growth)


def bernstein_rho(a: float) -> float:
    r"""Bernstein-ellipse parameter of :math:`(x+a)^{-1/p}` on [0, 1]: the pole sits at t = −1−2a in the
    Chebyshev variable, so :math:`\rho=1+2a+2\sqrt{a(1+a)}` and :math:`|c_k|\sim\rho^{-k}`."""
    a = validate.number("a", a, 0.0, math.inf, low_open=True)
    return 1 + 2 * a + 2 * math.sqrt(a * (1 + a))


def chebyshev_predicted_error(lam: np.ndarray, s, eps: float, degree: int, p: int = 4) -> float:
    r"""Relative error of the degree-``degree`` Chebyshev root on a stack whose blocks share the spectrum λ and
    have scales s (one per block): the series :math:`\sum_kc_kT_k(2\lambda/s-1)\,s^{-1/p}` evaluated on the
    eigenvalues in float64 (numpy's ``chebval``) against :math:`(\lambda+\varepsilon)^{-1/p}`.

    The matrix solver applies the same polynomial to every eigenvalue, so this is its error in exact
    arithmetic; the difference from the fp32 matrix measurement is rounding.
    """
    from .solvers import chebyshev_coefficients

    s_arr = _array("s", s, 0.0, math.inf).reshape(-1)
    lam = _array("lam", lam, 0.0, math.inf)
    if lam.max() > s_arr.min():
        raise ValueError(f"Invalid lam: max {lam.max():g} (must be ≤ every scale s, min {s_arr.min():g})")
    eps = validate.number("eps", eps, 0.0, math.inf)
    degree = validate.integer("degree", degree, 1, 100_000)
    p = validate.integer("p", p, 1, 64)
    exact = (lam + eps) ** (-1.0 / p)
    num = den = 0.0
    for sb in s_arr:
        c = to_numpy(chebyshev_coefficients(p, eps / sb, degree)[0])
        x = np.polynomial.chebyshev.chebval(2 * lam / sb - 1, c) * sb ** (-1.0 / p)
        num += float(np.sum((x - exact) ** 2))
        den += float(np.sum(exact**2))
    return math.sqrt(num / den)


# ------------------------------------------------------------------------------------------ sympy
def derive_ndb_map() -> dict[str, object]:
    r"""NDB as a map of the product w = zy = z²a: :math:`w\mapsto f(w)=w(3-w)^2/4`.

    Returns f, its fixed points, the error map :math:`e'=e^2(3+e)/4` (e = 1 − w), f′(0) = 9/4 (the escape rate
    of small eigenvalues), f′(1) = 0 (quadratic convergence), the interval where the first factor
    :math:`e_0=\tfrac32-\tfrac12a` stays positive (principal roots: a ∈ (0, 3)), and the set where |e'| < |e|.
    """
    w, e = sp.symbols("w e", real=True)
    a = sp.symbols("a", positive=True)
    f = sp.expand(w * (sp.Rational(3, 2) - w / 2) ** 2)
    fixed = sorted(sp.solve(sp.Eq(f, w), w))
    err_map = sp.factor(sp.expand(1 - f.subs(w, 1 - e)))
    contraction = sp.solve_univariate_inequality(sp.Abs(e * (3 + e) / 4) < 1, e, relational=False)
    positive_first = sp.solve_univariate_inequality(sp.Rational(3, 2) - a / 2 > 0, a, relational=False)
    positive_first = positive_first.intersect(sp.Interval.open(0, sp.oo))
    # the first step maps every a in (0, 3) into (0, 1]: f(a) ≤ 1 ⇔ (a−1)²(a−4) ≤ 0
    first_step_bound = sp.factor(f - 1)
    return {
        "f": f, "fixed_points": fixed, "error_map": err_map,
        "f_prime_0": sp.diff(f, w).subs(w, 0), "f_prime_1": sp.diff(f, w).subs(w, 1),
        "contraction_e": contraction, "principal_a": positive_first, "f_minus_1": first_step_bound,
    }


def derive_cn_map(p: int = 4) -> dict[str, object]:
    r"""CN's residual map :math:`m\mapsto g(m)=m\,((1+1/p)-m/p)^p`: fixed point 1 with g′(1) = 0 and the escape
    rate g′(0) = (1+1/p)^p for small eigenvalues."""
    p = validate.integer("p", p, 1, 16)
    m = sp.symbols("m", real=True)
    g = m * ((1 + sp.Rational(1, p)) - m / p) ** p
    return {"g": g, "g_prime_0": sp.diff(g, m).subs(m, 0), "g_prime_1": sp.simplify(sp.diff(g, m).subs(m, 1)),
            "g_1": g.subs(m, 1)}


def derive_chebyshev() -> dict[str, object]:
    r"""Where the Chebyshev series of :math:`(x+a)^{-1/p}` on [0, 1] loses accuracy.

    With x = (t+1)/2, the singularity x = −a sits at t₀ = −1 − 2a; ρ = |t₀| + √(t₀²−1) and its expansion
    ρ = 1 + 2√a + O(a): the degree for accuracy δ grows like log(1/δ)/(2√a).
    """
    a = sp.symbols("a", positive=True)
    t = sp.symbols("t", real=True)
    t0 = sp.solve(sp.Eq((t + 1) / 2 + a, 0), t)[0]
    rho = -t0 + sp.sqrt(t0**2 - 1)
    series = sp.series(rho, a, 0, 1).removeO()
    degree = sp.log(1 / sp.Symbol("delta", positive=True)) / sp.log(rho)
    return {"pole_t": t0, "rho": sp.simplify(rho), "rho_series": sp.expand(series), "degree_for_delta": degree}


def derive_bmm_counts() -> dict[str, object]:
    """Products per call as functions of n (iterations) and d (degree), for p = 4."""
    n, d = sp.symbols("n d", positive=True, integer=True)
    ndb_call = 1 + 3 * (n - 1)
    return {"ndb_p4": sp.expand(2 * ndb_call), "cn_p4": 4 * n, "chebyshev": d - 1,
            "ndb_p4_n10": (2 * ndb_call).subs(n, 10), "cn_p4_n10": (4 * n).subs(n, 10),
            "chebyshev_d60": (d - 1).subs(d, 60)}
