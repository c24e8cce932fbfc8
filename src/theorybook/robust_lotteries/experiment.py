"""The synthetic preference world, comparisons sampled from it, Bradley–Terry, and the studies the chapter runs.

World [reconstruction of the setting described in secondary accounts]: ``K`` annotator groups with shares ``w₀``;
group k's utility for model i is ``u_ki = q_i + σ_u ξ_ki`` with ``q = linspace(1, −1, m)`` and ``ξ ~ N(0, 1)``;
model A = 0 gets ``+boost`` in group 0 (the majority) and ``−dislike`` in group K − 1 (the minority). Group k
prefers i to j with probability ``P_k[i, j] = σ(u_ki − u_kj)`` (Bradley–Terry *within* a group), and
``M_k = 2P_k − 1``. Pooled over the population the margin is ``M̄ = Σ_k w₀_k M_k``, which is not of
Bradley–Terry form.

Comparisons: for each pair, group k contributes ``n_k = max(1, round(K·per_pair·w₀_k))`` votes (so
``per_pair`` is the average per group and the pooled votes are a sample of the reference population); each
replicate draws ``W_k[i, j] ~ Binomial(n_k, P_k[i, j])`` and ``W_k[j, i] = n_k − W_k[i, j]``.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import torch

from ..device import resolve_device, to_numpy
from ..validate import finite_tensor, integer, memory_guard, number
from .lotteries import (
    Lottery,
    _maximal_raw,
    _robust_raw,
    _simplex,
    _worst_raw,
    guaranteed_win_rate,
    margin_matrix,
    maximal_lottery,
    robust_lottery,
    worst_case_value,
)

__all__ = [
    "CHAPTER_SEEDS",
    "RHOS",
    "Comparisons",
    "PreferenceWorld",
    "ReplicateStudy",
    "WorldSweep",
    "bradley_terry",
    "preference_world",
    "replicate_study",
    "sample_comparisons",
    "random_populations",
    "shifted_populations",
    "world_sweep",
]

#: The radii of the chapter's sweep: ρ ∈ {0, 0.05, …, 0.6}.
RHOS = tuple(round(0.05 * i, 2) for i in range(13))
#: The seed the chapter's sampled study uses (20 replicates drawn as one batch from it).
CHAPTER_SEEDS = (2026,)
#: The radius of the headline comparison (the third-party reproduction's ρ).
RHO_STAR = 0.4
N_REPLICATES = 20
N_CHOIX = 5  # replicates cross-checked against choix (the check is exact, not statistical)
PER_PAIR = 500
#: Test populations per replicate for the train–test gap (fixed with the design, before any run): a *random* shift,
#: ``w ~ Dirichlet(KAPPA·w₀)`` — mean exactly w₀, so no group is favoured on average (a concentration of 10 is the
#: spread of a population resampled from about ten annotator cohorts: the minority's share has sd ≈ 0.11) — and, as
#: the planted control of the gap row, mixes drawn uniformly from the TV ball of radius ``SHIFT_RHO`` around w₀,
#: which the simplex's edge makes *raise* the minority's share on average (0.15 → ≈ 0.24).
N_TEST_MIXES = 64
KAPPA = 10.0
SHIFT_RHO = RHO_STAR
#: The milder world of the held-out row's control: the minority's dislike of model A is 0.5 instead of 3, and it is
#: sampled with half the replicates (the CPU budget of the seeded rows).
MILD_DISLIKE = 0.5
MILD_REPLICATES = 10


class PreferenceWorld(NamedTuple):
    """Group utilities ``u`` (K, m), win probabilities ``P`` (K, m, m) and population shares ``w₀`` (K,)."""

    utilities: torch.Tensor
    P: torch.Tensor
    shares: torch.Tensor

    @property
    def M(self) -> torch.Tensor:
        """The margin matrices ``M_k = 2P_k − 1``."""
        return 2.0 * self.P - 1.0


class Comparisons(NamedTuple):
    """Sampled wins ``W[r, k, i, j]`` (replicate r, group k: i beat j) and the votes per pair of each group."""

    wins: torch.Tensor
    per_group: tuple[int, ...]


def preference_world(n_models: int = 8, shares: Any = (0.6, 0.25, 0.15), dislike: float = 3.0, seed: int = 0, *,
                     noise: float = 0.3, boost: float = 1.0, device: Any = None) -> PreferenceWorld:
    """The synthetic world: ``u_ki = q_i + noise·ξ_ki`` (q = linspace(1, −1, m)), ``u_0,A += boost``,
    ``u_{K−1},A −= dislike`` with A = model 0; ``P_k[i, j] = σ(u_ki − u_kj)``."""
    m = integer("n_models", n_models, 2, 400)
    w0 = _simplex("shares", shares)
    K = w0.shape[0]
    if K < 2:
        raise ValueError(f"Invalid shares: {K} group(s) (must have at least 2)")
    d = number("dislike", dislike, 0.0, 50.0)
    s = integer("seed", seed, 0)
    sd = number("noise", noise, 0.0, 10.0)
    b = number("boost", boost, -50.0, 50.0)
    dev = resolve_device(device)
    g = torch.Generator().manual_seed(s)
    xi = torch.randn(K, m, generator=g, dtype=torch.float64)  # sampled on the CPU, then moved
    q = torch.linspace(1.0, -1.0, m, dtype=torch.float64)
    u = (q + sd * xi).to(dev)
    bump = torch.zeros(K, m, dtype=torch.float64, device=dev)
    bump[0, 0] += b
    bump[K - 1, 0] -= d
    u = u + bump
    P = torch.sigmoid(u[:, :, None] - u[:, None, :])
    return PreferenceWorld(u, P, torch.as_tensor(w0, dtype=torch.float64, device=dev))


def _votes_per_group(shares: np.ndarray, per_pair: int) -> np.ndarray:
    """Votes per pair of each group, the chapter's allocation ``n_k = max(1, round(K·n·w₀_k))`` (half to even), for
    shares ``(..., K)``: the same shape, int64. One place for the sampler and the studies' error model."""
    K = shares.shape[-1]
    return np.maximum(1, np.rint(K * per_pair * shares)).astype(np.int64)


def sample_comparisons(world: PreferenceWorld, per_pair: int, seed: int, *, replicates: int = 1) -> Comparisons:
    """Draw ``replicates`` independent data sets at once: ``W_k[i, j] ~ Binomial(n_k, P_k[i, j])`` for i < j."""
    if not isinstance(world, PreferenceWorld):
        raise TypeError(f"Invalid world: {type(world).__name__} (must be a PreferenceWorld)")
    c = integer("per_pair", per_pair, 1, 10**7)
    s = integer("seed", seed, 0)
    R = integer("replicates", replicates, 1, 10**5)
    P = world.P
    K, m, _ = P.shape
    memory_guard(8.0 * 4 * R * K * m * m, lower="replicates or the number of models")
    w0 = to_numpy(world.shares)
    n = tuple(int(x) for x in _votes_per_group(w0, c))
    iu, ju = torch.triu_indices(m, m, 1)
    prob = P[:, iu, ju].detach().to("cpu", torch.float64).clamp(0.0, 1.0)  # (K, pairs)
    count = torch.tensor(n, dtype=torch.float64)[:, None].expand_as(prob)
    g = torch.Generator().manual_seed(s)
    draws = torch.binomial(count.expand(R, -1, -1).contiguous(), prob.expand(R, -1, -1).contiguous(), generator=g)
    W = torch.zeros(R, K, m, m, dtype=torch.float64)
    W[:, :, iu, ju] = draws
    W[:, :, ju, iu] = count - draws
    return Comparisons(W.to(P.device), n)


def _bt_fit(W: torch.Tensor, alpha: float, iters: int = 100) -> torch.Tensor:
    """Newton's method for ``max_s Σ_ij W_ij log σ(s_i − s_j) − (α/2)‖s‖²`` with Σs = 0, batched over leading dims.

    Gradient ``g_i = Σ_j (W_ij − N_ij σ(s_i − s_j)) − α s_i`` (N = W + Wᵀ); negative Hessian
    ``H = diag(Σ_j N_ij π_ij) − N∘π + αI`` with ``π_ij = σ_ij(1 − σ_ij)``. H·1 = α·1, so H + 11ᵀ/m is positive
    definite and its Newton step keeps Σs = 0. Steps are damped to max |δ| ≤ 2 (the likelihood is concave).
    """
    m = W.shape[-1]
    N = W + W.transpose(-1, -2)
    s = torch.zeros(W.shape[:-1], dtype=W.dtype, device=W.device)
    eye = torch.eye(m, dtype=W.dtype, device=W.device)
    J = torch.full((m, m), 1.0 / m, dtype=W.dtype, device=W.device)
    scale = N.sum(dim=(-1, -2)).clamp_min(1.0)
    for _ in range(iters):
        sig = torch.sigmoid(s[..., :, None] - s[..., None, :])
        g = W.sum(-1) - (N * sig).sum(-1) - alpha * s
        if bool((g.abs().amax(-1) <= 1e-13 * scale).all()):
            break
        pi = N * sig * (1.0 - sig)
        H = torch.diag_embed(pi.sum(-1)) - pi + alpha * eye + J
        step = torch.linalg.solve(H, g.unsqueeze(-1)).squeeze(-1)
        big = step.abs().amax(-1, keepdim=True).clamp_min(2.0) / 2.0
        s = s + step / big
    return s - s.mean(-1, keepdim=True)


def _strongly_connected(W: np.ndarray) -> bool:
    m = W.shape[-1]
    R = (W > 0) | np.eye(m, dtype=bool)
    for _ in range(max(1, math.ceil(math.log2(m)) + 1)):
        R = R | ((R.astype(np.int64) @ R.astype(np.int64)) > 0)
    return bool(R.all())


def bradley_terry(wins: Any, *, alpha: float = 0.0) -> torch.Tensor:
    """Bradley–Terry scores (mean zero) by Newton's method: ``Pr(i ≻ j) = σ(s_i − s_j)``, maximising the
    log-likelihood ``Σ_ij W_ij log σ(s_i − s_j) − (α/2)‖s‖²``; ``wins[..., i, j]`` counts i's wins over j.

    With ``alpha = 0`` the maximum-likelihood estimate exists only if every model beats, directly or through a
    chain, every other (the win graph is strongly connected); otherwise ``ValueError`` (pass ``alpha > 0``).
    """
    t = finite_tensor("wins", wins)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2] or t.shape[-1] < 2:
        raise ValueError(f"Invalid wins: shape {tuple(t.shape)} (must be (..., m, m) with m ≥ 2)")
    a = number("alpha", alpha, 0.0, 1e6)
    memory_guard(8.0 * 6 * t.numel(), lower="the number of models")
    Wn = np.asarray(to_numpy(t), dtype=np.float64)
    if (Wn < 0).any() or (Wn != np.round(Wn)).any():
        raise ValueError("Invalid wins: entries must be non-negative integers (counts of comparisons won)")
    if a == 0.0:
        flat = Wn.reshape(-1, Wn.shape[-1], Wn.shape[-1])
        if not all(_strongly_connected(x) for x in flat):
            raise ValueError("Invalid wins: the win graph is not strongly connected, so the Bradley–Terry MLE "
                             "does not exist (pass alpha > 0)")
    W = t.to(torch.float64)
    W = W - torch.diag_embed(torch.diagonal(W, dim1=-2, dim2=-1))
    return _bt_fit(W, a)


# -- the studies ----------------------------------------------------------------------------------------------
def _pooled(Ms: np.ndarray, w0: np.ndarray) -> np.ndarray:
    return np.einsum("k,kij->ij", w0, Ms)


class WorldSweep(NamedTuple):
    """Lotteries of one set of margin matrices over a grid of radii (all values are game values in [−1, 1];
    the win rate is (1 + value)/2)."""

    rhos: np.ndarray
    Ms: np.ndarray
    w0: np.ndarray
    ml: Lottery  # maximal lottery of the pooled margin Σ_k w₀_k M_k
    robust: list[Lottery]  # robust lottery at each ρ (dual LP)
    vertex_values: np.ndarray  # the same LP in vertex form
    worst_robust: np.ndarray  # closed-form worst case of p_ρ at ρ
    worst_ml: np.ndarray  # closed-form worst case of the maximal lottery at ρ
    worst_bt: np.ndarray  # closed-form worst case of the BT top model (a pure lottery) at ρ
    bt_scores: np.ndarray
    bt_top: int
    group_win: np.ndarray  # (3, K) per-group guaranteed win rate of BT top, ML, robust at ρ* = 0.4 (or nearest)


def world_sweep(world: PreferenceWorld, rhos: Any = RHOS) -> WorldSweep:
    """Maximal lottery, robust lotteries over ``rhos`` and the BT top model, computed on the true ``P``.

    BT is fitted to the pooled expected wins ``Σ_k w₀_k P_k`` (the infinite-data limit of pooled votes).
    """
    if not isinstance(world, PreferenceWorld):
        raise TypeError(f"Invalid world: {type(world).__name__} (must be a PreferenceWorld)")
    r = np.atleast_1d(np.asarray(to_numpy(finite_tensor("rhos", rhos)), dtype=np.float64))
    if r.ndim != 1 or r.size == 0 or (r < 0).any() or (r > 1).any():
        raise ValueError("Invalid rhos: must be a non-empty 1-D list of radii in [0, 1]")
    Ms = np.asarray(to_numpy(world.M), dtype=np.float64)
    w0 = np.asarray(to_numpy(world.shares), dtype=np.float64)
    Ppool = torch.einsum("k,kij->ij", world.shares, world.P)
    scores = to_numpy(_bt_fit(Ppool, 0.0))
    top = int(np.argmax(scores))
    return _sweep(Ms, w0, r, scores, top, vertex=True)


def _sweep(Ms: np.ndarray, w0: np.ndarray, rhos: np.ndarray, scores: np.ndarray, top: int, *,
           vertex: bool) -> WorldSweep:
    K, m, _ = Ms.shape
    ml = maximal_lottery(_pooled(Ms, w0))
    e_top = np.zeros(m)
    e_top[top] = 1.0
    rob, vv, wr, wm, wb = [], [], [], [], []
    for rho in rhos:
        lot = robust_lottery(Ms, w0, rho)
        rob.append(lot)
        vv.append(robust_lottery(Ms, w0, rho, form="vertex").value if vertex else np.nan)
        wr.append(worst_case_value(lot.p, Ms, w0, rho).value)
        wm.append(worst_case_value(ml.p, Ms, w0, rho).value)
        wb.append(worst_case_value(e_top, Ms, w0, rho).value)
    i_star = int(np.argmin(np.abs(rhos - RHO_STAR)))
    gw = np.array([[guaranteed_win_rate(p, Ms[k]) for k in range(K)] for p in (e_top, ml.p, rob[i_star].p)])
    return WorldSweep(rhos, Ms, w0, ml, rob, np.array(vv), np.array(wr), np.array(wm), np.array(wb), scores, top, gw)


class ReplicateStudy(NamedTuple):
    """Sampled train/test replicates: per replicate r and radius ρ (values, not win rates)."""

    rhos: np.ndarray
    per_group: tuple[int, ...]
    certified: np.ndarray  # (R, n_rho) robust LP value on the train margins
    heldout: np.ndarray  # (R, n_rho) worst case of the train-fitted robust lottery on the test margins
    true_wc: np.ndarray  # (R, n_rho) … on the true margins
    ml_certified: np.ndarray  # (R,) min_j (M̂_poolᵀ p_ML)_j on train (the ML's own guarantee; 0 up to LP tolerance)
    ml_train_wc: np.ndarray  # (R, n_rho) worst case of the ML on the train margins
    ml_heldout: np.ndarray  # (R, n_rho) … on the test margins
    ml_true: np.ndarray  # (R, n_rho) … on the true margins
    bt_true: np.ndarray  # (R, n_rho) worst case of the pooled-train BT top model on the true margins
    bt_top: np.ndarray  # (R,)
    bt_choix_gap: float | None  # max |own Newton − choix ILSR|, first N_CHOIX replicates (None: not run)
    supports: list[list[tuple[int, ...]]]  # robust supports per replicate and radius
    # guaranteed win rates (1 + min_j (M̄ᵀp)_j)/2, the same objective for every method (the train–test gap):
    gwr_train: np.ndarray  # (R, n_rho) p_ρ on the train votes, reference population w₀
    gwr_shift: np.ndarray  # (R, n_rho) p_ρ on the test votes, mean over the replicate's random test populations
    gwr_same: np.ndarray  # (R, n_rho) p_ρ on the test votes, population w₀ (no shift)
    gwr_tvshift: np.ndarray  # (R, n_rho) p_ρ on the test votes, mean over TV-ball-uniform populations (planted)
    ml_gwr: np.ndarray  # (R, 4) the ML: train, random-shift test, unshifted test, TV-ball-uniform test
    alt_gwr: np.ndarray  # (R, 2, 4) the same four for the uniform lottery and the 50/50 hedge of A and model 1
    alt_heldout: np.ndarray  # (R, 2, n_rho) held-out worst case over the TV ball of the uniform lottery, BT top-1
    ml_supports: list[tuple[int, ...]]  # the maximal lottery's support per replicate
    mild_diff: np.ndarray  # (MILD_REPLICATES,) held-out row's statistic in the milder world (win-rate units)
    bt_scores: np.ndarray  # (R, m) the pooled-train Bradley–Terry scores (the leaderboard; its top-k sets)
    top2_heldout: np.ndarray  # (R, n_rho) held-out worst case over the TV ball of the 50/50 mix of BT's top two


def random_populations(w0: Any, kappa: float, n: int, seed: int) -> np.ndarray:
    """``n`` population mixes ``w ~ Dirichlet(κ·w₀)`` (mean exactly w₀: a random shift that favours no group on
    average; seeded): shape (n, K)."""
    w = _simplex("w0", w0)
    k = number("kappa", kappa, 1e-3, 1e6)
    n = integer("n", n, 1, 100_000)
    s = integer("seed", seed, 0)
    if (w <= 0).any():
        raise ValueError(f"Invalid w0: {w.tolist()} (every share must be > 0 for a Dirichlet shift)")
    return np.random.default_rng(s).dirichlet(k * w, size=n)


def shifted_populations(w0: Any, rho: float, n: int, seed: int) -> np.ndarray:
    """``n`` population mixes drawn uniformly from ``{w ∈ Δ_K : TV(w, w₀) ≤ ρ}`` (rejection from the uniform
    Dirichlet(1, …, 1) on the simplex; seeded): shape (n, K)."""
    w = _simplex("w0", w0)
    r = number("rho", rho, 1e-3, 1.0)
    n = integer("n", n, 1, 100_000)
    s = integer("seed", seed, 0)
    rng = np.random.default_rng(s)
    out: list[np.ndarray] = []
    while len(out) < n:
        cand = rng.dirichlet(np.ones(w.size), size=max(16, 2 * (n - len(out))))
        ok = 0.5 * np.abs(cand - w).sum(-1) <= r
        out.extend(cand[ok][: n - len(out)])
    return np.array(out)


def _gwr(p: np.ndarray, Ms: np.ndarray, mixes: np.ndarray) -> np.ndarray:
    """Guaranteed win rate ``(1 + min_j Σ_k w_k (M_kᵀp)_j)/2`` of ``p`` for each mix ``w`` (T, K)."""
    C = np.einsum("kij,i->kj", Ms, p)
    return (1.0 + (mixes @ C).min(-1)) / 2.0


def _hedge(m: int) -> np.ndarray:
    """The hand-made hedge: ½ on model A (= 0), ½ on model 1 (the best model by base quality after A)."""
    h = np.zeros(m)
    h[0] = h[1] = 0.5
    return h


def _best_alternative(ml: np.ndarray, alt: np.ndarray) -> np.ndarray:
    """Per replicate, the better of the ML's, the uniform lottery's and the BT top-1's held-out worst case."""
    return np.maximum(ml, alt.max(1))


def _heldout_statistic(Mtr: np.ndarray, Mte: np.ndarray, w0: np.ndarray, tops: np.ndarray, rho: float) -> np.ndarray:
    """Per replicate, in win-rate units: held-out worst case (TV radius ρ, test votes) of the train-fitted p_ρ minus
    the best of the non-robust alternatives fitted on the same train votes (ML, uniform, BT top-1)."""
    R, m = Mtr.shape[0], Mtr.shape[-1]
    out = np.empty(R)
    u = np.full(m, 1.0 / m)
    for i in range(R):
        p = _robust_raw(Mtr[i], w0, rho).p
        ml = _maximal_raw(_pooled(Mtr[i], w0)).p
        e = np.zeros(m)
        e[tops[i]] = 1.0
        best = max(_worst_raw(q, Mte[i], w0, rho).value for q in (ml, u, e))
        out[i] = (_worst_raw(p, Mte[i], w0, rho).value - best) / 2.0
    return out


def replicate_study(world: PreferenceWorld, per_pair: int = PER_PAIR, seed: int = CHAPTER_SEEDS[0], *,
                    replicates: int = N_REPLICATES, rhos: Any = (RHO_STAR,), with_choix: bool = True,
                    test_mixes: int = N_TEST_MIXES, shift_rho: float = SHIFT_RHO, kappa: float = KAPPA,
                    mild_replicates: int = MILD_REPLICATES) -> ReplicateStudy:
    """Train and test data for ``replicates`` replicates drawn as one batch (train = first half of a batch of
    2R, test = second half); lotteries fitted on train, evaluated on train, test and the true margins.

    The train–test gap [our reading of the secondary account]: every method is scored by the same objective, its
    guaranteed win rate ``(1 + min_j (M̄ᵀp)_j)/2``, on the train votes of the reference population ``w₀`` and on
    the test votes of a *randomly shifted* test population — for replicate ``r``, ``test_mixes`` mixes
    ``w ~ Dirichlet(κ·w₀)`` (seed ``seed·1000003 + r``), averaged — and, as the planted control, of mixes uniform in
    the TV ball of radius ``shift_rho`` (which raise the minority's share); and of ``w₀`` itself (no shift).
    ``mild_replicates`` replicates of the milder world (dislike :data:`MILD_DISLIKE`, same seed; 0 to skip) give the
    held-out row's control."""
    if not isinstance(world, PreferenceWorld):
        raise TypeError(f"Invalid world: {type(world).__name__} (must be a PreferenceWorld)")
    R = integer("replicates", replicates, 1, 1000)
    r = np.atleast_1d(np.asarray(to_numpy(finite_tensor("rhos", rhos)), dtype=np.float64))
    if r.ndim != 1 or r.size == 0 or (r < 0).any() or (r > 1).any():
        raise ValueError("Invalid rhos: must be a non-empty 1-D list of radii in [0, 1]")
    seed = int(integer("seed", seed, 0))
    T = integer("test_mixes", test_mixes, 1, 10_000)
    srho = number("shift_rho", shift_rho, 1e-3, 1.0)
    kap = number("kappa", kappa, 1e-3, 1e6)
    Rm = integer("mild_replicates", mild_replicates, 0, 1000)
    if not isinstance(with_choix, bool):
        raise TypeError(f"Invalid with_choix: {with_choix!r} (must be True or False)")
    comp = sample_comparisons(world, per_pair, seed, replicates=2 * R)
    W = comp.wins
    Mtr = margin_matrix(W[:R])  # (R, K, m, m)
    Mte = margin_matrix(W[R:])
    Mtrue = np.asarray(to_numpy(world.M), dtype=np.float64)
    w0 = np.asarray(to_numpy(world.shares), dtype=np.float64)
    m = Mtrue.shape[1]
    pooled_wins = W[:R].sum(1)  # (R, m, m) integer counts of the pooled train votes
    scores = bradley_terry(pooled_wins, alpha=0.0)
    sc = np.asarray(to_numpy(scores))
    gap: float | None = None
    if with_choix:
        import choix

        gap = 0.0
        pw = np.asarray(to_numpy(pooled_wins))
        for i in range(min(R, N_CHOIX)):
            ref = choix.ilsr_pairwise_dense(pw[i], alpha=0.0, max_iter=10_000, tol=1e-12)
            gap = max(gap, float(np.abs((ref - ref.mean()) - sc[i]).max()))
    shape = (R, r.size)
    cert, held, tru = np.empty(shape), np.empty(shape), np.empty(shape)
    mlc, mltr, mlh, mlt, btt = np.empty(R), np.empty(shape), np.empty(shape), np.empty(shape), np.empty(shape)
    tops = np.argmax(sc, axis=1)
    supports, ml_sup = [], []
    g_tr, g_sh, g_sa, g_tv = np.empty(shape), np.empty(shape), np.empty(shape), np.empty(shape)
    ml_g, alt_g, alt_h = np.empty((R, 4)), np.empty((R, 2, 4)), np.empty((R, 2, r.size))
    top2_h = np.empty(shape)
    ref = w0[None]
    u = np.full(m, 1.0 / m)
    hedge = _hedge(m)
    for i in range(R):  # inputs were validated above; the loop calls the unvalidated cores
        mixes = random_populations(w0, kap, T, (seed * 1_000_003 + i) % 2**63)
        tvmix = shifted_populations(w0, srho, T, (seed * 1_000_003 + i) % 2**63)
        pooled = _pooled(Mtr[i], w0)
        ml = _maximal_raw(pooled)
        ml_sup.append(ml.support)
        mlc[i] = float((pooled.T @ ml.p).min())
        e_top = np.zeros(m)
        e_top[tops[i]] = 1.0
        top2 = np.zeros(m)
        top2[np.argsort(-sc[i], kind="stable")[:2]] = 0.5  # the leaderboard's top two, half each

        def four(p: np.ndarray, i: int = i, mixes: np.ndarray = mixes, tvmix: np.ndarray = tvmix) -> tuple:
            return (_gwr(p, Mtr[i], ref)[0], _gwr(p, Mte[i], mixes).mean(), _gwr(p, Mte[i], ref)[0],
                    _gwr(p, Mte[i], tvmix).mean())

        ml_g[i] = four(ml.p)
        alt_g[i] = (four(u), four(hedge))
        sup = []
        for a, rho in enumerate(r):
            lot = _robust_raw(Mtr[i], w0, float(rho))
            sup.append(lot.support)
            cert[i, a] = lot.value
            held[i, a] = _worst_raw(lot.p, Mte[i], w0, rho).value
            tru[i, a] = _worst_raw(lot.p, Mtrue, w0, rho).value
            mltr[i, a] = _worst_raw(ml.p, Mtr[i], w0, rho).value
            mlh[i, a] = _worst_raw(ml.p, Mte[i], w0, rho).value
            mlt[i, a] = _worst_raw(ml.p, Mtrue, w0, rho).value
            btt[i, a] = _worst_raw(e_top, Mtrue, w0, rho).value
            alt_h[i, :, a] = (_worst_raw(u, Mte[i], w0, rho).value, _worst_raw(e_top, Mte[i], w0, rho).value)
            top2_h[i, a] = _worst_raw(top2, Mte[i], w0, rho).value
            g_tr[i, a], g_sh[i, a], g_sa[i, a], g_tv[i, a] = four(lot.p)
        supports.append(sup)
    mild = np.empty(0)
    if Rm:
        mw = preference_world(m, w0, MILD_DISLIKE, device=world.P.device)
        cm = sample_comparisons(mw, per_pair, seed, replicates=2 * Rm)
        tm = np.argmax(np.asarray(to_numpy(bradley_terry(cm.wins[:Rm].sum(1), alpha=0.0))), axis=1)
        mild = _heldout_statistic(margin_matrix(cm.wins[:Rm]), margin_matrix(cm.wins[Rm:]), w0, tm, RHO_STAR)
    return ReplicateStudy(r, comp.per_group, cert, held, tru, mlc, mltr, mlh, mlt, btt, tops, gap, supports,
                          g_tr, g_sh, g_sa, g_tv, ml_g, alt_g, alt_h, ml_sup, mild, sc, top2_h)
