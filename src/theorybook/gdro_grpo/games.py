"""Eq. 27 where it has content: bilinear group-DRO games, in which simultaneous no-regret play cycles.

The game [reconstruction: ours, not the paper's]: ``B`` groups with losses linear in θ,
``L_b(θ) = a_b·θ + c_b``, θ in the box ``[−1, 1]^d``, and ``f(θ, q) = Σ_b q_b L_b(θ)`` — the paper's
``min_θ max_{q ∈ Δ_B} Σ_b q_b L_b(θ)`` without the curvature of the chapter's quadratic toy. Each instance has a
planted interior equilibrium ``(θ*, q*)``: ``q*`` full-support (Dirichlet(2)), ``θ*`` uniform in ``[−½, ½]^d``,
``a_b`` Gaussian with ``Σ_b q*_b a_b = 0`` (so every θ is a best response to ``q*``) and ``c = −Aθ*`` (so every q is
a best response to ``θ*``); with ``B = d + 1`` it is generically the only one. Linear in both players, ``f`` has no
strong convexity to pull the last iterate in: projected OGD against Hedge circles the equilibrium, and only the
averages converge.

The players run at the textbook fixed-horizon step sizes, scaled by ``s`` (the grid a sceptic tunes):
OGD ``θ_{t+1} = Π_box(θ_t − η_θ Σ_b q_{t,b} a_b)`` with ``η_θ = s·D/(G√T)`` (``D = 2√d`` the box's diameter,
``G = max_b ‖a_b‖``), Hedge ``q_{t+1} ∝ q_t e^{η_q L(θ_t)}`` with ``η_q = s·√(log B)/(R√T)`` (``R = max_b
(‖a_b‖₁ + |c_b|)`` bounds the losses), simultaneous, from ``θ_1 = 0`` and uniform ``q_1``.

The duality gap has a closed form: ``max_q f(θ, q) = max_b L_b(θ)`` and ``min_{θ ∈ box} f(θ, q) = q·c − ‖Aᵀq‖₁``.
Because ``f`` is linear in each player, Eq. 27 holds here with *equality* for the averaged iterates:
``gap(θ̄_T, q̄_T) = (Regret_θ(T) + Regret_q(T))/T`` [derived] — the averaged gap decays exactly as fast as the
players' regrets are sublinear, which is what the chapter measures.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..validate import integer, memory_guard, number

__all__ = ["ADVERSARIES", "EQ27_ADV", "EQ27_ADV_LAST", "EQ27_ADV_SLOPE", "EQ27_ETA_GRID", "EQ27_OPT", "PairPlay",
           "adversary_play", "BILINEAR_T", "EQ27_GAMES", "EQ27_SLOPE", "EQ27_STEP", "EQ27_STEP_LAST", "STEP_GRID",
           "TUNING_SEEDS",
           "BilinearGames", "NoRegretPlay", "bilinear_games", "duality_gap", "gap_slopes", "no_regret_play",
           "step_tuning"]

#: The horizons of the Eq. 27 scan, registered before the results: 2 decades, ≈ ½ decade apart.
BILINEAR_T = (100, 316, 1000, 3162, 10000)
#: The step-size scales ``s`` both the averaged and the last iterate were tuned over (on pilot seeds).
STEP_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
#: Games per seed in the Eq. 27 row (the row tests the mean slope over them).
EQ27_GAMES = 8
#: Pilot seeds (from ``theorybook.check.PILOT_SEEDS``) on which :func:`step_tuning` chose the two scales below.
TUNING_SEEDS = tuple(range(9101, 9111))
#: The scale with the most negative mean slope of the AVERAGED iterates' gap on ``TUNING_SEEDS`` (−0.546; s = 10
#: gave −0.541, s = 1 −0.509).
EQ27_STEP = 3.0
#: The scale with the most negative mean slope of the LAST iterate's gap on ``TUNING_SEEDS``, same grid, same
#: criterion (−0.133; s = 30 gave −0.121, s = 3 −0.087).
EQ27_STEP_LAST = 10.0
#: The row's threshold on the fitted slope: the theory's −1/2 plus 3.29 × 0.0215 (the sd of the 8-game mean slope
#: over pilot seeds 9111–9200, where it was −0.540 on average and never above −0.481) = −0.43, rounded up.
EQ27_SLOPE = -0.4
#: The paper's adversary (Prompt-GDRO's EMA-debiased EXP3P) against OGD: the η_q grid its tuning used
#: (bench/gdro_grpo_eq27_pilot.py, with STEP_GRID for OGD's scale; β 0.1, γ 0.15, C 5, the code defaults).
EQ27_ETA_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
#: (s, η_q) with the most negative mean slope of the AVERAGED iterates' gap on TUNING_SEEDS (η_q at the grid's edge;
#: bench/results/gdro_grpo_eq27_pilot.json).
EQ27_ADV = (1.0, 100.0)
#: (s, η_q) with the most negative mean slope of the LAST iterate's gap on TUNING_SEEDS (same 49 settings).
EQ27_ADV_LAST = (0.1, 100.0)
#: (s_θ, s_q) of optimistic OGD vs optimistic Hedge with the most negative mean last-iterate slope on TUNING_SEEDS
#: (over STEP_GRID × STEP_GRID).
EQ27_OPT = (30.0, 100.0)
#: The paper-adversary row's threshold: −1/2 + 3.29 × 0.0327 (the sd of its statistic over pilot seeds 9111–9200,
#: where it was −0.559 on average and never above −0.463) = −0.392, rounded up to a multiple of 0.05.
EQ27_ADV_SLOPE = -0.35


class BilinearGames(NamedTuple):
    """``G`` bilinear group-DRO games ``L_b(θ) = a_b·θ + c_b`` on ``[−1, 1]^d`` with their planted equilibria."""

    A: np.ndarray  # (G, B, d) the rows a_b
    c: np.ndarray  # (G, B)
    q_star: np.ndarray  # (G, B) the adversary's equilibrium weights (full support)
    theta_star: np.ndarray  # (G, d) the θ-player's equilibrium (interior)


def bilinear_games(seed: int, n_games: int = 8, B: int = 5, d: int = 4) -> BilinearGames:
    """Draw ``n_games`` games with a planted interior equilibrium from ``numpy.random.default_rng(seed)``.

    ``q* ~ Dirichlet(2·1_B)``, ``θ* ~ U[−½, ½]^d``, ``A`` standard Gaussian projected to ``q*ᵀA = 0``, ``c = −Aθ*``
    (the game's value is 0). ``B = d + 1`` (the default) makes the equilibrium unique for almost every draw."""
    s = integer("seed", seed, 0)
    G = integer("n_games", n_games, 1, 100_000)
    Bn = integer("B", B, 2, 1000)
    dn = integer("d", d, 1, 1000)
    memory_guard(8.0 * G * Bn * (dn + 3), lower="n_games, B or d")
    rng = np.random.default_rng(s)
    q_star = rng.dirichlet(2.0 * np.ones(Bn), size=G)
    theta_star = rng.uniform(-0.5, 0.5, size=(G, dn))
    A = rng.normal(size=(G, Bn, dn))
    A = A - np.einsum("gb,gbd->gd", q_star, A)[:, None, :]
    c = -np.einsum("gbd,gd->gb", A, theta_star)
    return BilinearGames(A, c, q_star, theta_star)


def _check_games(games: Any) -> BilinearGames:
    if not isinstance(games, BilinearGames):
        raise TypeError(f"Invalid games: {type(games).__name__} (must be bilinear_games(...)'s BilinearGames)")
    return games


def _box_min(g: BilinearGames, q: np.ndarray) -> np.ndarray:
    """``min_{θ ∈ [−1, 1]^d} f(θ, q) = q·c − ‖Aᵀq‖₁`` for ``q`` of shape ``(..., G, B)``: shape ``(..., G)``."""
    return (q * g.c).sum(-1) - np.abs(np.einsum("gbd,...gb->...gd", g.A, q)).sum(-1)


def duality_gap(games: BilinearGames, theta: Any, q: Any) -> np.ndarray:
    """``max_q' f(θ, q') − min_{θ' ∈ box} f(θ', q) = max_b L_b(θ) − (q·c − ‖Aᵀq‖₁)`` for each game.

    ``theta``: ``(..., G, d)`` points of the box; ``q``: ``(..., G, B)`` points of the simplex; returns ``(..., G)``."""
    g = _check_games(games)
    G, B, d = g.A.shape
    th = np.asarray(theta, dtype=float)
    qq = np.asarray(q, dtype=float)
    if th.shape[-2:] != (G, d) or qq.shape[-2:] != (G, B):
        raise ValueError(f"Invalid theta/q shapes: {th.shape}, {qq.shape} (must end in ({G}, {d}) and ({G}, {B}))")
    if not (np.all(np.isfinite(th)) and np.all(np.isfinite(qq))):
        raise ValueError("Invalid theta/q: NaN or inf")
    if np.any(np.abs(th) > 1.0 + 1e-12):
        raise ValueError("Invalid theta: outside the box [−1, 1]^d")
    if np.any(qq < -1e-12) or np.any(np.abs(qq.sum(-1) - 1.0) > 1e-9):
        raise ValueError("Invalid q: not on the simplex (nonnegative, summing to 1)")
    best_q = (np.einsum("gbd,...gd->...gb", g.A, th) + g.c).max(-1)
    return best_q - _box_min(g, qq)


class NoRegretPlay(NamedTuple):
    """Simultaneous OGD (θ) against Hedge (q) on each game, one run per (horizon T, step scale s, game).

    Arrays are ``(len(T), len(scales), G)``; ``regret_theta``/``regret_q`` are each player's regret against its
    best fixed comparator in hindsight, computed from the realised losses."""

    T: tuple[int, ...]
    scales: tuple[float, ...]
    avg_gap: np.ndarray  # duality gap of (θ̄_T, q̄_T), the averages of the iterates played in rounds 1..T
    last_gap: np.ndarray  # duality gap of (θ_T, q_T), the iterates played in round T
    regret_theta: np.ndarray
    regret_q: np.ndarray


def no_regret_play(games: BilinearGames, T: Any = BILINEAR_T, scales: Any = (1.0,)) -> NoRegretPlay:
    """Run projected OGD against Hedge at the fixed-horizon steps (module docstring) for every horizon in ``T``,
    every scale in ``scales`` and every game, all in one vectorised loop over rounds."""
    g = _check_games(games)
    Ts = tuple(integer("T", t, 1, 10**6) for t in np.atleast_1d(np.asarray(T)).tolist())
    ss = tuple(number("scales", x, 0.0, 1e6, low_open=True) for x in np.atleast_1d(np.asarray(scales)).tolist())
    if not Ts or not ss:
        raise ValueError("Invalid T/scales: need at least one horizon and one scale")
    G, B, d = g.A.shape
    nT, S = len(Ts), len(ss)
    memory_guard(8.0 * nT * S * G * (B + d) * 8, lower="T, scales or the number of games")
    Tarr = np.asarray(Ts, dtype=float)
    s = np.asarray(ss)[None, :, None] / np.sqrt(Tarr)[:, None, None]  # (nT, S, 1)
    D = 2.0 * math.sqrt(d)
    Gn = np.linalg.norm(g.A, axis=2).max(1)  # bounds ‖Aᵀq‖₂ on the simplex
    R = (np.abs(g.A).sum(2) + np.abs(g.c)).max(1)  # bounds |L_b(θ)| on the box
    e_th = (s * D / Gn)[..., None]  # (nT, S, G, 1)
    e_q = (s * math.sqrt(math.log(B)) / R)[..., None]
    At = np.swapaxes(g.A, 1, 2)  # (G, d, B)
    th = np.zeros((nT, S, G, d))
    w = np.zeros((nT, S, G, B))
    sum_th, sum_q, sum_L = np.zeros_like(th), np.zeros_like(w), np.zeros_like(w)
    realised = np.zeros((nT, S, G))
    last_th, last_q = np.zeros_like(th), np.zeros_like(w)
    ends = {t: i for i, t in enumerate(Ts)}
    active = np.ones((nT, 1, 1, 1))
    for t in range(1, max(Ts) + 1):
        q = np.exp(w - w.max(-1, keepdims=True))
        q /= q.sum(-1, keepdims=True)
        L = (th[..., None, :] @ At)[..., 0, :] + g.c  # (nT, S, G, B)
        sum_th += active * th
        sum_q += active * q
        sum_L += active * L
        realised += active[..., 0] * (q * L).sum(-1)
        if t in ends:
            i = ends[t]
            last_th[i], last_q[i] = th[i], q[i]
        grad = (q[..., None, :] @ g.A)[..., 0, :]  # Σ_b q_b a_b, (nT, S, G, d)
        th = np.clip(th - e_th * grad, -1.0, 1.0)
        w = w + e_q * L
        if t in ends:  # horizons that ended stop accumulating
            active = active.copy()
            active[ends[t]] = 0.0
    Tn = Tarr[:, None, None, None]
    th_bar, q_bar = sum_th / Tn, sum_q / Tn
    reg_q = sum_L.max(-1) - realised
    reg_th = realised - Tarr[:, None, None] * _box_min(g, q_bar)
    return NoRegretPlay(Ts, ss, duality_gap(g, th_bar, q_bar), duality_gap(g, last_th, last_q), reg_th, reg_q)


class PairPlay(NamedTuple):
    """Simultaneous play of a θ-player against a q-player on each game, one run per (horizon T, setting, game).

    Arrays are ``(len(T), len(settings), G)``."""

    T: tuple[int, ...]
    settings: tuple[tuple[float, float], ...]
    avg_gap: np.ndarray  # duality gap of the averaged iterates (θ̄_T, q̄_T)
    last_gap: np.ndarray  # duality gap of the last iterates (θ_T, q_T)


ADVERSARIES = ("ema", "optimistic")


def adversary_play(games: BilinearGames, T: Any = BILINEAR_T, settings: Any = ((1.0, 1.0),), *,
                   adversary: str = "ema", beta: float = 0.1, gamma: float = 0.15, clip: float = 5.0) -> PairPlay:
    """Eq. 27 with other players than the textbook pair of :func:`no_regret_play`, on every game, horizon and setting.

    ``adversary="ema"`` — the paper's players: projected OGD for θ at the fixed-horizon step ``s·D/(G√T)`` against
    Prompt-GDRO's EMA-debiased EXP3P adversary, ``S ← (1−β)S + β L(θ_t)``, ``q = (1−γ) softmax(η_q·clip(S, −C, C))
    + γ/B`` (:func:`~.theory.exp3p_weights`; ``S₀ = 0``, uniform ``q₁``); a setting is ``(s, η_q)``.
    ``adversary="optimistic"`` — optimistic OGD ``θ_{t+1} = Π(θ_t − η_θ(2g_t − g_{t−1}))`` against optimistic Hedge
    ``q_{t+1} ∝ exp(η_q Σ_{s≤t} L_s + η_q(L_t − L_{t−1}))``, both at the fixed-horizon steps of
    :func:`no_regret_play` scaled by ``(s_θ, s_q)``: the standard pair whose last iterate converges in bilinear games
    (a setting is ``(s_θ, s_q)``)."""
    g = _check_games(games)
    if adversary not in ADVERSARIES:
        raise ValueError(f"Invalid adversary: {adversary!r} (must be one of {ADVERSARIES})")
    Ts = tuple(integer("T", t, 1, 10**6) for t in np.atleast_1d(np.asarray(T)).tolist())
    st = np.asarray(settings, dtype=float)
    if st.ndim != 2 or st.shape[1] != 2 or st.shape[0] == 0:
        raise ValueError(f"Invalid settings: {settings!r} (must be a non-empty sequence of pairs)")
    pairs = tuple((number("settings", a, 0.0, 1e6, low_open=True), number("settings", b, 0.0, 1e6, low_open=True))
                  for a, b in st.tolist())
    be = number("beta", beta, 0.0, 1.0, low_open=True)
    ga = number("gamma", gamma, 0.0, 1.0, high_open=True)
    C = number("clip", clip, 0.0, 1e3, low_open=True)
    if not Ts:
        raise ValueError("Invalid T: need at least one horizon")
    G, B, d = g.A.shape
    nT, P = len(Ts), len(pairs)
    memory_guard(8.0 * nT * P * G * (B + d) * 10, lower="T, settings or the number of games")
    Tarr = np.asarray(Ts, dtype=float)
    s_th = np.array([p[0] for p in pairs])[None, :, None] / np.sqrt(Tarr)[:, None, None]  # (nT, P, 1)
    D = 2.0 * math.sqrt(d)
    Gn = np.linalg.norm(g.A, axis=2).max(1)
    R = (np.abs(g.A).sum(2) + np.abs(g.c)).max(1)
    e_th = (s_th * D / Gn)[..., None]  # (nT, P, G, 1)
    if adversary == "ema":
        e_q = np.broadcast_to(np.array([p[1] for p in pairs])[None, :, None, None], (nT, P, 1, 1))
    else:
        s_q = np.array([p[1] for p in pairs])[None, :, None] / np.sqrt(Tarr)[:, None, None]
        e_q = (s_q * math.sqrt(math.log(B)) / R)[..., None]
    At = np.swapaxes(g.A, 1, 2)
    th = np.zeros((nT, P, G, d))
    w = np.zeros((nT, P, G, B))  # EMA score S (ema) or cumulative loss (optimistic)
    grad_prev = np.zeros_like(th)
    L_prev = np.zeros_like(w)
    sum_th, sum_q = np.zeros_like(th), np.zeros_like(w)
    last_th, last_q = np.zeros_like(th), np.zeros_like(w)
    ends = {t: i for i, t in enumerate(Ts)}
    active = np.ones((nT, 1, 1, 1))
    for t in range(1, max(Ts) + 1):
        if adversary == "ema":
            z = e_q * np.clip(w, -C, C)
        else:
            z = e_q * (w + L_prev)  # optimism: the last loss counted twice
        q = np.exp(z - z.max(-1, keepdims=True))
        q /= q.sum(-1, keepdims=True)
        if adversary == "ema":
            q = (1.0 - ga) * q + ga / B
        L = (th[..., None, :] @ At)[..., 0, :] + g.c
        sum_th += active * th
        sum_q += active * q
        if t in ends:
            i = ends[t]
            last_th[i], last_q[i] = th[i], q[i]
        grad = (q[..., None, :] @ g.A)[..., 0, :]
        if adversary == "ema":
            th = np.clip(th - e_th * grad, -1.0, 1.0)
            w = (1.0 - be) * w + be * L
        else:
            th = np.clip(th - e_th * (2.0 * grad - grad_prev), -1.0, 1.0)
            w = w + L
            grad_prev, L_prev = grad, L
        if t in ends:
            active = active.copy()
            active[ends[t]] = 0.0
    Tn = Tarr[:, None, None, None]
    return PairPlay(Ts, pairs, duality_gap(g, sum_th / Tn, sum_q / Tn), duality_gap(g, last_th, last_q))


def gap_slopes(T: Any, y: Any) -> np.ndarray:
    """Least-squares slope of ``log y`` against ``log T`` along the first axis (``y``: ``(len(T), ...)``, > 0)."""
    x = np.log(np.asarray([number("T", t, 0.0, math.inf, low_open=True) for t in np.atleast_1d(T).tolist()]))
    if x.size < 2 or np.ptp(x) == 0:
        raise ValueError(f"Invalid T: {T!r} (need at least two distinct horizons)")
    yy = np.asarray(y, dtype=float)
    if yy.shape[:1] != x.shape or not np.all(np.isfinite(yy)) or np.any(yy <= 0):
        raise ValueError(f"Invalid y: shape {yy.shape} (must be positive, finite, first axis of length {x.size})")
    xc = x - x.mean()
    ly = np.log(yy)
    return np.tensordot(xc, ly - ly.mean(0), axes=(0, 0)) / float(xc @ xc)


def step_tuning(seeds: Any = TUNING_SEEDS, grid: Any = STEP_GRID, n_games: int = EQ27_GAMES,
                T: Any = BILINEAR_T) -> dict[str, Any]:
    """The pilot tuning behind ``EQ27_STEP`` and ``EQ27_STEP_LAST``: for every scale of ``grid``, the fitted log–log
    slope of the averaged and of the last iterate's duality gap over ``T``, averaged over ``n_games`` games per seed
    and over ``seeds``; each gets the scale with its most negative mean slope (≈ 10 s at the defaults)."""
    sd = tuple(integer("seeds", x, 0) for x in np.atleast_1d(np.asarray(seeds)).tolist())
    if not sd:
        raise ValueError("Invalid seeds: need at least one")
    avg, last = [], []
    for x in sd:
        p = no_regret_play(bilinear_games(x, n_games), T, grid)
        avg.append(gap_slopes(p.T, p.avg_gap).mean(-1))
        last.append(gap_slopes(p.T, p.last_gap).mean(-1))
    a, la = np.mean(avg, 0), np.mean(last, 0)
    sc = p.scales
    return {"grid": sc, "avg_slope": tuple(float(v) for v in a), "last_slope": tuple(float(v) for v in la),
            "best_avg": sc[int(np.argmin(a))], "best_last": sc[int(np.argmin(la))]}
