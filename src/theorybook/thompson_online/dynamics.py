r"""Exact Bayesian regret of the one-armed Gaussian bandit by backward induction, and a vectorised Monte Carlo.

The setting of the paper's figure [paper, caption]: one unknown arm with prior :math:`\mu \sim \mathcal N(0,
\sigma_0^2)`, one known arm with mean 0, rewards :math:`y = \mu + \sigma\varepsilon`. After n pulls the posterior
is :math:`\mathcal N(m, s_n^2)` with :math:`s_n^2 = (1/\sigma_0^2 + n/\sigma^2)^{-1}`; a pull moves the mean by
:math:`m' - m \sim \mathcal N(0, \delta_n^2)`, :math:`\delta_n^2 = s_n^2 - s_{n+1}^2` (predictive step).

With h steps left, a policy that pulls with probability x has the value (expected remaining Bayesian regret)

.. math::

    V_h(m, n) = \underbrace{\mathbb E[\mu^+] - x\,m}_{r(x)} + x\,\mathbb E\,V_{h-1}(m + \delta_n Z, n+1)
                + (1 - x)\,V_{h-1}(m, n), \qquad V_0 = 0,

and :math:`R_T = V_T(0, 0)`. Policies: ``"ts"`` (:math:`x = \Phi(m/s_n)`), ``"greedy"`` (:math:`x =
\mathbf 1\{m \ge 0\}`), ``"optimal"`` (Bayes-optimal for the finite horizon: pull iff :math:`m + B_h(m, n) \ge 0`
with the value of information :math:`B_h = V_{h-1}(m, n) - \mathbb E V_{h-1}(m + \delta_n Z, n+1)`) and
``"shutdown"`` ([reconstruction] of the paper's "conditional regularizer shutdown": TS, but x = 0 once
:math:`m/s_n < -z_0`).

**The continuation is exact for the grid.** :math:`V_{h-1}(\cdot, n+1)` is represented by its piecewise-linear
interpolant on a uniform grid in m (flat beyond the ends, where V → 0), i.e.
:math:`f(y) = f(g_0) + \sum_k c_k (y - g_k)^+` with slope changes :math:`c_k`. Its Gaussian expectation is then a
closed form, :math:`\mathbb E f(m + \delta Z) = f(m) + \sum_k c_k\,\tilde\psi(m - g_k, \delta)` with
:math:`\tilde\psi(u, \delta) = \mathbb E[(u + \delta Z)^+] - u^+ = \delta\varphi(u/\delta) - |u|\Phi(-|u|/\delta)`,
a convolution with a kernel that depends only on n (cached, applied by FFT, batched over n and policies in torch).
Quadrature (e.g. Gauss–Hermite) is avoided on purpose: greedy's value jumps at m = 0.
"""

from __future__ import annotations

import functools
import math
from collections import OrderedDict
from collections.abc import Sequence
from typing import NamedTuple

import torch

from .. import validate
from ..device import one_thread, resolve_device

__all__ = [
    "POLICIES",
    "BanditSolution",
    "MonteCarloRegret",
    "EXTRA_POLICIES",
    "DiscountedSolution",
    "discounted_solution",
    "solve_bandit",
    "bayes_regret",
    "optimal_boundary",
    "simulate_policies",
    "simulate_regret",
]

POLICIES = ("ts", "greedy", "optimal", "shutdown")
#: Policies beyond the chapter's four: ``"tempered"`` (TS at temperature κ, x = Φ(m/(κ s_n)), the unconditional
#: alternative to the shutdown) and ``"tempered_shutdown"`` (tempered TS with the shutdown's condition).
#: ``"discounted"`` is the stationary Bayes-optimal policy of the discounted problem (γ = ``gamma``), see
#: :func:`discounted_solution`, evaluated on the finite horizon. ``"bayes_ucb"`` is the index rule pull iff
#: m + c·s_n ≥ 0 (c = ``ucb_c``; Bayes-UCB with a Gaussian quantile c): greedy plus the linear regulariser c·s_n·x,
#: applied everywhere — an unconditional regulariser of another shape than TS's.
EXTRA_POLICIES = ("tempered", "tempered_shutdown", "discounted", "bayes_ucb")
_SHUTS = ("shutdown", "tempered_shutdown")
_TEMPERED = ("tempered", "tempered_shutdown")
_SQRT2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_ZMAX = 8.0  # ψ̃ is truncated beyond 8 predictive s.d.: ψ̃(8δ, δ)/δ ≈ φ(8)/64 < 1e-16


class BanditSolution(NamedTuple):
    """Exact (on the grid) Bayesian regret of several policies, from one backward induction."""

    policies: tuple[str, ...]
    regret: torch.Tensor  # (P, T+1): R_0 … R_T from the prior (m = 0, n = 0)
    boundary: torch.Tensor | None  # (T+1, T+1), [h, n]: optimal pulls iff m ≥ boundary; +inf where not computed
    m: torch.Tensor  # the grid in m, (G,)
    recorded: tuple[int, ...]  # the h at which the n = 0 curves below were kept
    bonus: torch.Tensor  # (P, len(recorded), G): value of information B_h(m, 0) under each policy's own V
    pull: torch.Tensor  # (P, len(recorded), G): the allocation x(m; n = 0, h)
    single_crossing: bool  # optimal's pull set is {m ≥ b} for every (h, n) computed (None-policy: True)


class MonteCarloRegret(NamedTuple):
    """Monte Carlo Bayesian regret: mean and standard error of the cumulative realised regret per step."""

    policies: tuple[str, ...]
    mean: torch.Tensor  # (P, T+1)
    se: torch.Tensor  # (P, T+1)
    trials: int
    final: torch.Tensor  # (P, trials): each trial's realised regret at T (same μ and noise across policies)


def _Phi(z: torch.Tensor) -> torch.Tensor:
    return 0.5 * torch.erfc(-z / _SQRT2)


def _phi(z: torch.Tensor) -> torch.Tensor:
    return torch.exp(-0.5 * z * z) * _INV_SQRT_2PI


def _fft_size(n: int) -> int:
    """Smallest 2^a 3^b 5^c ≥ n (fast for pocketfft/cuFFT)."""
    best = 1 << max(0, (n - 1).bit_length())
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            p = p35
            while p < n:
                p *= 2
            best = min(best, p)
            p35 *= 3
        p5 *= 5
    return best


def _check_common(horizon, prior_var, noise_var, grid) -> tuple[int, float, float, int]:
    T = validate.integer("horizon", horizon, 1)
    v0 = validate.number("prior_var", prior_var, 0.0, math.inf, low_open=True)
    v = validate.number("noise_var", noise_var, 0.0, math.inf, low_open=True)
    if not (1e-6 <= v0 <= 1e6 and 1e-6 <= v <= 1e6):
        raise ValueError(f"Invalid prior_var/noise_var: {v0:g}, {v:g} (each must be in [1e-06, 1e+06])")
    G = validate.integer("grid", grid, 51)
    if G % 2 == 0:
        raise ValueError(f"Invalid grid: {grid!r} (must be an odd integer ≥ 51, so that m = 0 is a grid point)")
    return T, v0, v, G


def _check_policies(policies, shutdown_z, temper=None, gamma=None,
                    ucb_c=None) -> tuple[tuple[str, ...], float, float, float, float]:
    if isinstance(policies, str):
        policies = (policies,)
    if not isinstance(policies, (list, tuple)) or not policies:
        raise TypeError(f"Invalid policies: {policies!r} (must be a non-empty sequence of "
                        f"{POLICIES + EXTRA_POLICIES})")
    out = tuple(validate.one_of("policy", p, POLICIES + EXTRA_POLICIES) for p in policies)
    if len(set(out)) != len(out):
        raise ValueError(f"Invalid policies: {policies!r} (must not repeat a policy)")
    z0 = math.inf
    if any(p in _SHUTS for p in out):
        if shutdown_z is None:
            raise ValueError("Invalid shutdown_z: None (policies 'shutdown'/'tempered_shutdown' need shutdown_z > 0)")
        z0 = validate.number("shutdown_z", shutdown_z, 0.0, math.inf, low_open=True)
    elif shutdown_z is not None:
        validate.number("shutdown_z", shutdown_z, 0.0, math.inf, low_open=True)
    kappa = 1.0
    if any(p in _TEMPERED for p in out):
        if temper is None:
            raise ValueError("Invalid temper: None (policies 'tempered'/'tempered_shutdown' need temper κ in "
                             "[0.01, 100])")
        kappa = validate.number("temper", temper, 0.01, 100.0)
    elif temper is not None:
        validate.number("temper", temper, 0.01, 100.0)
    g = 0.0
    if "discounted" in out:
        if gamma is None:
            raise ValueError("Invalid gamma: None (policy 'discounted' needs a discount γ in [0.5, 0.999])")
        g = validate.number("gamma", gamma, 0.5, 0.999)
    elif gamma is not None:
        validate.number("gamma", gamma, 0.5, 0.999)
    c = 0.0
    if "bayes_ucb" in out:
        if ucb_c is None:
            raise ValueError("Invalid ucb_c: None (policy 'bayes_ucb' needs a bonus c in [0, 10])")
        c = validate.number("ucb_c", ucb_c, 0.0, 10.0)
    elif ucb_c is not None:
        validate.number("ucb_c", ucb_c, 0.0, 10.0)
    return out, z0, kappa, g, c


@functools.lru_cache(maxsize=8)
def _kernels(T: int, v0: float, v: float, G: int, device: str):
    """Grid, posterior s.d. per n, and the FFT of the ψ̃ kernel for every n < T (cached: independent of policy)."""
    dev = torch.device(device)
    half = 6.0 * math.sqrt(v0)  # the posterior mean's marginal s.d. is < σ₀: ±6σ₀ holds it, and V → 0 beyond
    dx = 2.0 * half / (G - 1)
    m = (torch.arange(G, dtype=torch.float64, device=dev) - (G - 1) // 2) * dx
    n = torch.arange(T + 2, dtype=torch.float64, device=dev)
    s = (1.0 / v0 + n / v).rsqrt()
    delta = (s[:-1] ** 2 - s[1:] ** 2).clamp_min(0.0).sqrt()  # δ_n, n = 0 … T
    # two FFT sizes: the first few n have wide kernels (δ_n ≈ σ₀/√2 at n = 0), the rest narrow ones (δ_n ≈ σ/n)
    widths = [min(G - 1, math.ceil(_ZMAX * float(dk) / dx)) for dk in delta[:T].tolist()]
    n1 = next((k for k, wk in enumerate(widths) if wk <= widths[0] // 4), T)
    bands = []
    for lo, hi in ((0, n1), (n1, T)):
        if hi <= lo:
            bands.append((lo, hi, 1, None))
            continue
        w = widths[lo]
        L = _fft_size(G + w + 1)  # no wrap-around: indices i − k ∈ [−(G−1), G−1] alias only beyond ±w
        j = torch.arange(-w, w + 1, device=dev)
        u = (j.to(torch.float64) * dx).abs()[None, :]
        d = delta[lo:hi, None]
        kap = d * _phi(u / d) - u * _Phi(-u / d)
        kpad = torch.zeros(hi - lo, L, dtype=torch.float64, device=dev)
        kpad[:, j % L] = kap
        bands.append((lo, hi, L, torch.fft.rfft(kpad, dim=-1)))
    step = _Phi(m[None, :] / delta[:T, None])  # E 1{m + δ_n Z ≥ 0}: the Gaussian expectation of a unit step at 0
    return m, s, dx, tuple(bands), step


def _smooth(c: torch.Tensor, bands, G: int, A: int) -> torch.Tensor:
    """Σ_k c_k ψ̃(m_i − g_k, δ_n) for the rows of ``c`` (P·A rows: n = row mod A), by FFT with each n's kernel."""
    c = c.reshape(-1, A, G)
    out = []
    for lo, hi, L, Kf in bands:
        top = min(hi, A)
        if top <= lo:
            continue
        part = torch.fft.rfft(c[:, lo:top], n=L, dim=-1) * Kf[: top - lo]
        out.append(torch.fft.irfft(part, n=L, dim=-1)[..., :G])
    return out[0] if len(out) == 1 else torch.cat(out, dim=1)



def _estimate_bytes(T: int, G: int, P: int) -> float:
    w = 0.84 * G
    L = G + w + 1
    return 8.0 * (10 * P * (T + 1) * G + 2 * T * L + 4 * P * (T + 1) * L) + 8.0 * (T + 1) ** 2


class _One(NamedTuple):
    regret: torch.Tensor  # (T+1,)
    bonus: torch.Tensor  # (T+1, G): B_h(m, 0) for h = 0 … T (row 0 unused)
    pull: torch.Tensor  # (T+1, G): x(m; n = 0, h)
    boundary: torch.Tensor | None
    single_crossing: bool


_SOLVED: OrderedDict[tuple, _One] = OrderedDict()  # per-policy results, least recently used evicted
_SOLVED_MAX = 32


def _solved(T: int, policies: tuple[str, ...], v0: float, v: float, z0: float, kappa: float, gamma: float,
            G: int, device: str, ucb_c: float = 0.0) -> list[_One]:
    """Each policy's solution from the cache, solving the missing ones together in one batched pass."""
    keys = {p: (T, p, v0, v, z0 if p in _SHUTS else math.inf, kappa if p in _TEMPERED else 1.0,
                gamma if p == "discounted" else ucb_c if p == "bayes_ucb" else 0.0, G, device) for p in policies}
    missing = tuple(p for p in policies if keys[p] not in _SOLVED)
    if missing:
        for p, one in zip(missing, _solve_batch(T, missing, v0, v, z0, kappa, gamma, G, device, ucb_c), strict=True):
            _SOLVED[keys[p]] = one
    out = []
    for p in policies:
        _SOLVED.move_to_end(keys[p])
        out.append(_SOLVED[keys[p]])
    while len(_SOLVED) > _SOLVED_MAX:
        _SOLVED.popitem(last=False)
    return out


def _solve_batch(T: int, policies: tuple[str, ...], v0: float, v: float, z0: float, kappa: float,
                 gamma: float, G: int, device: str, ucb_c: float = 0.0) -> list[_One]:
    """Backward induction for several policies at once (one tensor program over policy × n × m per step)."""
    m, s, dx, bands, _ = _kernels(T, v0, v, G, device)
    dev = m.device
    P = len(policies)
    i0 = (G - 1) // 2
    # stationary threshold policies (pull iff m ≥ g_j(n), grid index j(n); G = never): leaving the arm is
    # absorbing for them, so left of the threshold V_{h−1}(m, n) = (h−1)·E[μ⁺](m, s_n) and V jumps at g_j(n)
    jidx = {}
    if "greedy" in policies:
        jidx["greedy"] = torch.full((T + 2,), i0, dtype=torch.long, device=dev)
    if "discounted" in policies:
        b = discounted_solution(gamma, prior_var=v0, noise_var=v, grid=G, device=device).boundary[: T + 2]
        jidx["discounted"] = torch.searchsorted(m, b.to(dev)).clamp_max(G)  # first node ≥ b (b snapped up)
    if "bayes_ucb" in policies:
        jidx["bayes_ucb"] = torch.searchsorted(m, -ucb_c * s[: T + 2]).clamp_max(G)  # first node ≥ −c·s_n
    z = m[None, :] / s[: T + 1, None]  # (T+1, G): m/s_n
    e_pos = m * _Phi(z) + s[: T + 1, None] * _phi(z)  # E[μ⁺] at (m, s_n)
    fixed = {
        "ts": lambda: _Phi(z),
        "greedy": lambda: (m >= 0).to(torch.float64).expand(T + 1, G),
        "discounted": lambda: (torch.arange(G, device=dev)[None, :] >= jidx["discounted"][: T + 1, None]).to(
            torch.float64),
        "bayes_ucb": lambda: (torch.arange(G, device=dev)[None, :] >= jidx["bayes_ucb"][: T + 1, None]).to(
            torch.float64),
        "shutdown": lambda: _Phi(z) * (z >= -z0).to(torch.float64),
        "tempered": lambda: _Phi(z / kappa),
        "tempered_shutdown": lambda: _Phi(z / kappa) * (z >= -z0).to(torch.float64),
        "optimal": lambda: torch.zeros(T + 1, G, dtype=torch.float64, device=dev),
    }
    X = torch.stack([fixed[p]() for p in policies])  # (P, T+1, G); the optimal row is set per step
    r = e_pos[None] - X * m  # instantaneous regret r(x) = E[μ⁺] − x m of the fixed policies
    opt = policies.index("optimal") if "optimal" in policies else -1
    delta = (s[:-1] ** 2 - s[1:] ** 2).clamp_min(0.0).sqrt()
    V = torch.zeros(P, T + 1, G, dtype=torch.float64, device=dev)
    R = torch.zeros(P, T + 1, dtype=torch.float64, device=dev)
    boundary = torch.full((T + 1, T + 1), math.inf, dtype=torch.float64, device=dev) if opt >= 0 else None
    bonus = torch.zeros(P, T + 1, G, dtype=torch.float64, device=dev)
    pull = torch.zeros(P, T + 1, G, dtype=torch.float64, device=dev)
    single = True
    for h in range(1, T + 1):
        A = T - h + 1  # states reachable from the prior with h steps left: n = 0 … T − h
        F = V[:, 1 : A + 1]  # V_{h−1}(·, n+1)
        jumps = []
        if jidx:
            F = F.clone()
        for p, j_all in jidx.items():
            # split off the jump J·1{m ≥ g_j} (J = V(g_j) − (h−1)·E[μ⁺](g_j, s_n+1)), whose Gaussian expectation
            # is J·Φ((m − g_j)/δ_n), and interpolate the continuous rest
            k, j = policies.index(p), j_all[1 : A + 1]
            jc = j.clamp_max(G - 1)
            left = (h - 1) * e_pos[1 : A + 1].gather(1, jc[:, None])[:, 0]
            jump = torch.where(j < G, F[k].gather(1, jc[:, None])[:, 0] - left, torch.zeros_like(left))
            F[k] -= jump[:, None] * (torch.arange(G, device=dev)[None, :] >= j[:, None]).to(torch.float64)
            jumps.append((k, jump, m[jc]))
        Fp = torch.cat([F[..., :1], F, F[..., -1:]], dim=-1)  # flat extension beyond the grid
        c = (Fp[..., 2:] - 2.0 * Fp[..., 1:-1] + Fp[..., :-2]) / dx  # slope changes c_k of the interpolant
        cont = F + _smooth(c.reshape(P * A, G), bands, G, A).reshape(P, A, G)  # E V_{h−1}(m + δ_n Z, n+1)
        for k, jump, at in jumps:
            cont[k] += jump[:, None] * _Phi((m[None, :] - at[:, None]) / delta[:A, None])
        stay = V[:, :A]
        gain = cont - stay  # = −B_h(m, n), minus the value of information
        Vn = stay + r[:, :A] + X[:, :A] * gain
        if opt >= 0:
            margin = m - gain[opt]  # m + B_h: pull iff ≥ 0
            act = margin >= 0
            Vn[opt] = stay[opt] + e_pos[:A] + torch.where(act, gain[opt] - m, torch.zeros_like(margin))
            single = single and bool((act[:, 1:] >= act[:, :-1]).all())
            first = act.to(torch.uint8).argmax(dim=-1)  # first pulled grid point
            lo = (first - 1).clamp_min(0)
            ml, mh = margin.gather(1, lo[:, None])[:, 0], margin.gather(1, first[:, None])[:, 0]
            frac = torch.where(mh > ml, -ml / (mh - ml), torch.zeros_like(ml)).clamp(0.0, 1.0)
            b = torch.where(first == 0, m[0], m[lo] + frac * dx)
            boundary[h, :A] = torch.where(act[:, -1], b, torch.full_like(b, math.inf))
        pull[:, h] = X[:, 0]
        if opt >= 0:
            pull[opt, h] = act[0].to(torch.float64)
        bonus[:, h] = -gain[:, 0]
        V[:, :A] = Vn
        R[:, h] = Vn[:, 0, i0]
    return [_One(R[k], bonus[k], pull[k], boundary if k == opt else None, single if k == opt else True)
            for k in range(P)]


class DiscountedSolution(NamedTuple):
    """The discounted one-armed bandit, solved exactly on the grid (:func:`discounted_solution`)."""

    gamma: float
    boundary: torch.Tensor  # (n_max + 1,): the stationary policy pulls at (m, n) iff m ≥ boundary[n]
    value: torch.Tensor  # (G,): the discounted Bayesian regret V_γ(m, 0), m on the grid
    m: torch.Tensor  # the grid in m
    single_crossing: bool  # the pull set is {m ≥ b(n)} for every n


@functools.lru_cache(maxsize=8)
def _discounted(gamma: float, v0: float, v: float, G: int, n_max: int, device: str) -> DiscountedSolution:
    m, s, dx, bands, _ = _kernels(n_max, v0, v, G, device)
    z = m[None, :] / s[: n_max + 1, None]
    e_pos = m * _Phi(z) + s[: n_max + 1, None] * _phi(z)
    stop = e_pos / (1.0 - gamma)  # leaving the unknown arm is absorbing: E[μ⁺] per step for ever
    Vn = (e_pos[n_max] - m.clamp_min(0.0)) / (1.0 - gamma)  # at n_max: no more learning, the better arm for ever
    b = torch.full((n_max + 1,), math.inf, dtype=torch.float64, device=m.device)
    single = True
    for n in range(n_max - 1, -1, -1):
        lo, hi, L, Kf = next(band for band in bands if band[0] <= n < band[1])
        Fp = torch.cat([Vn[:1], Vn, Vn[-1:]])
        c = (Fp[2:] - 2.0 * Fp[1:-1] + Fp[:-2]) / dx
        cont = Vn + torch.fft.irfft(torch.fft.rfft(c, n=L) * Kf[n - lo], n=L)[:G]
        pull = e_pos[n] - m + gamma * cont
        act = pull <= stop[n]
        single = single and bool((act[1:] >= act[:-1]).all())
        if bool(act.any()):
            b[n] = m[int(act.to(torch.uint8).argmax())]
        Vn = torch.minimum(pull, stop[n])
    b[n_max] = 0.0
    return DiscountedSolution(gamma, b, Vn, m, single)


def discounted_solution(gamma: float, *, prior_var: float = 1.0, noise_var: float = 1.0, grid: int = 1601,
                        n_max: int | None = None, device: str | torch.device | None = None) -> DiscountedSolution:
    r"""The discounted one-armed bandit solved exactly on the grid: the stationary Bayes-optimal policy.

    .. math::

        V_\gamma(m, n) = \min\Big\{\frac{\mathbb E[\mu^+]}{1-\gamma},\ \mathbb E[\mu^+] - m
        + \gamma\,\mathbb E\,V_\gamma(m + \delta_n Z, n+1)\Big\}

    (not pulling leaves the state unchanged, so it is absorbing — the Gittins index rule of a one-armed bandit).
    Because n only grows, one backward pass over n = n_max … 0 solves it exactly (no value iteration); at
    ``n_max`` (default ⌈10/(1−γ)⌉, where γ^n_max < 5e-5) learning is switched off. The policy pulls iff
    m ≥ ``boundary[n]`` (the first grid point that pulls): a stationary map of the posterior (m, s_n), what
    the paper's "stationarization" asks for — here with the discount the paper calls too different.
    """
    g = validate.number("gamma", gamma, 0.5, 0.999)
    _, v0, v, G = _check_common(1, prior_var, noise_var, grid)
    N = math.ceil(10.0 / (1.0 - g)) if n_max is None else validate.integer("n_max", n_max, 2, 100_000)
    validate.memory_guard(_estimate_bytes(N, G, 1) / 4, lower="n_max or grid")
    dev = str(resolve_device(device))
    with one_thread(dev):
        return _discounted(g, v0, v, G, N, dev)


def solve_bandit(horizon: int, *, policies: Sequence[str] = POLICIES, prior_var: float = 1.0,
                 noise_var: float = 1.0, shutdown_z: float | None = None, grid: int = 1601,
                 record: Sequence[int] = (), device: str | torch.device | None = None,
                 temper: float | None = None, gamma: float | None = None,
                 ucb_c: float | None = None) -> BanditSolution:
    r"""Backward induction over (m, n, h) for several policies at once; exact for the piecewise-linear grid model.

    Returns :class:`BanditSolution`: ``regret[p, T]`` is :math:`R_T` of ``policies[p]`` for every horizon
    T ≤ ``horizon`` (the fixed policies are stationary, and ``"optimal"`` is re-optimised for each remaining
    horizon, so one pass gives every :math:`R_T`). ``record`` lists remaining horizons h at which the n = 0 curves
    of the value of information and the allocation are kept. ``temper`` is κ of the ``"tempered"`` policies,
    ``gamma`` the discount of ``"discounted"`` and ``ucb_c`` the bonus c of ``"bayes_ucb"``
    (:data:`EXTRA_POLICIES`). Results are cached per argument set.
    """
    T, v0, v, G = _check_common(horizon, prior_var, noise_var, grid)
    pols, z0, kappa, g, c = _check_policies(policies, shutdown_z, temper, gamma, ucb_c)
    if isinstance(record, (str, bytes)) or not isinstance(record, (list, tuple)):
        raise TypeError(f"Invalid record: {record!r} (must be a sequence of integers in [1, horizon])")
    rec = tuple(validate.integer("record", h, 1, T) for h in record)
    validate.memory_guard(_estimate_bytes(T, G, 1), lower="horizon or grid")
    dev = str(resolve_device(device))
    with one_thread(dev):
        parts = _solved(T, pols, v0, v, z0, kappa, g, G, dev, c)
    idx = list(rec)
    opt = next((o for p, o in zip(pols, parts, strict=True) if p == "optimal"), None)
    m = _kernels(T, v0, v, G, dev)[0]
    return BanditSolution(
        pols, torch.stack([o.regret for o in parts]), None if opt is None else opt.boundary.clone(), m.clone(), rec,
        torch.stack([o.bonus[idx] for o in parts]), torch.stack([o.pull[idx] for o in parts]),
        all(o.single_crossing for o in parts))


def bayes_regret(policy: str, horizon: int, *, prior_var: float = 1.0, noise_var: float = 1.0,
                 shutdown_z: float | None = None, grid: int = 1601,
                 device: str | torch.device | None = None) -> torch.Tensor:
    r"""Exact Bayesian regret :math:`R_0, \dots, R_T` of one policy (``"ts"``, ``"greedy"``, ``"optimal"``,
    ``"shutdown"``) from the prior mean 0 — a tensor of length ``horizon + 1``."""
    validate.one_of("policy", policy, POLICIES)
    sol = solve_bandit(horizon, policies=(policy,), prior_var=prior_var, noise_var=noise_var,
                       shutdown_z=shutdown_z, grid=grid, device=device)
    return sol.regret[0]


def optimal_boundary(horizon: int, *, prior_var: float = 1.0, noise_var: float = 1.0, grid: int = 1601,
                     device: str | torch.device | None = None) -> torch.Tensor:
    r"""The Bayes-optimal policy's threshold :math:`b_h(n)`: with h steps left and n pulls so far it pulls iff
    :math:`m \ge b_h(n)` (a (T+1)×(T+1) tensor indexed [h, n]; +inf where h = 0 or n > T − h, states the prior
    cannot reach). :math:`b_1(n) = 0` (the last step is greedy); :math:`b_h(n) < 0` is the exploration the
    optimum buys."""
    sol = solve_bandit(horizon, policies=("optimal",), prior_var=prior_var, noise_var=noise_var, grid=grid,
                       device=device)
    return sol.boundary


def simulate_policies(policies: Sequence[str], horizon: int, trials: int, seed: int, *, prior_var: float = 1.0,
                      noise_var: float = 1.0, shutdown_z: float | None = None, grid: int = 1601,
                      device: str | torch.device | None = None, temper: float | None = None) -> MonteCarloRegret:
    r"""Monte Carlo of the Bayesian regret: ``trials`` independent bandits per policy, vectorised.

    Each trial draws :math:`\mu \sim \mathcal N(0, \sigma_0^2)`, then for t = 1 … T picks the arm with the policy's
    probability, draws the reward :math:`y = \mu + \sigma\varepsilon` when the unknown arm is pulled, updates the
    posterior by the conjugate formula, and books the realised regret :math:`\mu^+ - a_t\,\mu`. The optimal
    policy follows the grid threshold :func:`optimal_boundary`. Random numbers come from one CPU
    ``torch.Generator`` seeded with ``seed`` and are moved to ``device`` (same numbers on every device).
    """
    T, v0, v, G = _check_common(horizon, prior_var, noise_var, grid)
    pols, z0, kappa, _, _ = _check_policies(policies, shutdown_z, temper)
    for p in ("discounted", "bayes_ucb"):
        if p in pols:
            raise ValueError(f"Invalid policies: {p!r} (evaluated exactly by solve_bandit, not simulated)")
    n_tr = validate.integer("trials", trials, 1)
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    P = len(pols)
    validate.memory_guard(8.0 * 12 * P * n_tr + 16.0 * P * (T + 1), lower="trials")
    validate.memory_guard(8.0 * P * n_tr * T / 50, lower="trials or horizon", budget=8 * 2 * 10**9)  # run time
    dev = resolve_device(device)
    with one_thread(dev):
        return _simulate(pols, T, n_tr, seed, v0, v, z0, kappa, G, dev)


def _simulate(pols, T, n_tr, seed, v0, v, z0, kappa, G, dev) -> MonteCarloRegret:
    P = len(pols)
    b_tab = optimal_boundary(T, prior_var=v0, noise_var=v, grid=G, device=dev) if "optimal" in pols else None
    gen = torch.Generator().manual_seed(seed)

    def draw(kind, dtype=torch.float32):
        # common random numbers: every policy sees the same μ, noise and uniforms (each policy's estimate stays
        # unbiased). Per-step draws are float32 (2-4× cheaper on a CPU; a 6e-8 resolution in the action
        # probability and 1e-7 relative in the noise are far below the Monte Carlo error), then float64.
        fn = torch.randn if kind == "normal" else torch.rand
        return fn(n_tr, generator=gen, dtype=dtype).to(dev, torch.float64)

    mu = math.sqrt(v0) * draw("normal", torch.float64)
    mu_pos = mu.clamp_min(0.0)
    m = torch.zeros(P, n_tr, dtype=torch.float64, device=dev)
    n = torch.zeros(P, n_tr, dtype=torch.float64, device=dev)
    x = torch.empty(P, n_tr, dtype=torch.float64, device=dev)
    # the realised regret after t steps is t·μ⁺ − μ·n_t (each pull of the unknown arm earns μ instead of μ⁺), so
    # three inner products per step give the sum and the sum of squares over trials
    s_mu, s_mupos, s_musq = (torch.zeros(P, T + 1, dtype=torch.float64, device=dev) for _ in range(3))
    sd, prec0, prec1 = math.sqrt(v), 1.0 / v0, 1.0 / v
    for t in range(T):
        h = T - t
        tau = prec0 + n * prec1  # posterior precision 1/s_n²
        for k, p in enumerate(pols):
            if p == "greedy":
                x[k] = (m[k] >= 0).to(torch.float64)
            elif p == "optimal":
                x[k] = (m[k] >= b_tab[h][n[k].long()]).to(torch.float64)
            else:
                zk = m[k] * tau[k].sqrt()
                xk = _Phi(zk / kappa) if p in _TEMPERED else _Phi(zk)
                x[k] = xk * (zk >= -z0).to(torch.float64) if p in _SHUTS else xk
        a = (draw("uniform") < x).to(torch.float64)
        y = mu + sd * draw("normal")
        m += a * (y - m) * (prec1 / (tau + prec1))  # conjugate update of the posterior mean, pulled trials only
        n += a
        s_mu[:, t + 1] = n @ mu
        s_mupos[:, t + 1] = n @ (mu_pos * mu_pos)
        s_musq[:, t + 1] = (n * n) @ (mu * mu)
    tt = torch.arange(T + 1, dtype=torch.float64, device=dev)
    a1, a2 = mu_pos.sum(), (mu_pos * mu_pos).sum()
    total = tt * a1 - s_mu
    total_sq = tt * tt * a2 - 2.0 * tt * s_mupos + s_musq
    mean = total / n_tr
    var = (total_sq / n_tr - mean * mean).clamp_min(0.0) * (n_tr / max(n_tr - 1, 1))
    return MonteCarloRegret(pols, mean, (var / n_tr).sqrt(), n_tr, T * mu_pos - n * mu)


def simulate_regret(policy: str, horizon: int, trials: int, seed: int, *, prior_var: float = 1.0,
                    noise_var: float = 1.0, shutdown_z: float | None = None, grid: int = 1601,
                    device: str | torch.device | None = None) -> MonteCarloRegret:
    """Monte Carlo Bayesian regret of one policy (see :func:`simulate_policies`); ``mean``/``se`` are (1, T+1)."""
    validate.one_of("policy", policy, POLICIES)
    return simulate_policies((policy,), horizon, trials, seed, prior_var=prior_var, noise_var=noise_var,
                             shutdown_z=shutdown_z, grid=grid, device=device)
