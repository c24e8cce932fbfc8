"""Projected SGD on a stochastic convex problem, batched over stepsizes × seeds in one tensor program.

The problems are finite sums f(x) = (1/n) Σ_i ℓ(a_iᵀx, y_i) over a synthetic data set, sampled one example per
step, on the ball 𝒟 = {‖x‖ ≤ R}:

* ``logistic``: ℓ = log(1 + exp(−y aᵀx)), y ∈ {±1} drawn from the logistic model (not separable, so x* is
  finite) — smooth; the paper's synthetic experiment is logistic regression [secondary];
* ``lad``: ℓ = |aᵀx − y| (least absolute deviation) — non-smooth and Lipschitz, the setting of the paper's
  main theorem [secondary].

f* is computed exactly (Newton's method for logistic, a linear program for LAD), so the excess loss
f(x_T) − f* of the last iterate is measured without bias. All (η, seed) cells share one loop over t; cell
(η, s) sees the example sequence of seed s only, so its trajectory does not depend on what else is batched
(common random numbers across stepsizes — the comparison over η is then less noisy).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import torch

from .. import validate
from ..device import one_thread, resolve_device, resolve_dtype, to_numpy
from .theory import Schedule, ideal_eta, schedule, stepsizes, suffix_bound

__all__ = ["PROBLEMS", "Problem", "make_problem", "SGDRun", "run_sgd", "MisspecificationCurve",
           "misspecification_curve", "problem_bound", "GRID_SCHEDULES", "AVERAGED", "GridRun", "coarse_grid_experiment"]

PROBLEMS = ("logistic", "lad")


class Problem(NamedTuple):
    """A finite-sum convex problem on the ball ‖x‖ ≤ R, with its exact minimiser.

    ``lipschitz`` is G = max_i ‖a_i‖ (every stochastic gradient has norm ≤ G); ``diameter`` D = 2R.
    """

    kind: str
    features: torch.Tensor
    labels: torch.Tensor
    radius: float
    x_star: torch.Tensor
    f_star: float

    @property
    def lipschitz(self) -> float:
        return float(self.features.norm(dim=1).max())

    @property
    def diameter(self) -> float:
        return 2.0 * self.radius

    def loss(self, x: torch.Tensor) -> torch.Tensor:
        """f(x) for x of shape (..., d) → (...)."""
        m = x @ self.features.to(x).T
        y = self.labels.to(x)
        if self.kind == "logistic":
            return torch.nn.functional.softplus(-y * m).mean(-1)
        return (m - y).abs().mean(-1)


def _logistic_newton(A: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x = torch.zeros(A.shape[1], dtype=A.dtype)
    for _ in range(100):
        m = y * (A @ x)
        s = torch.sigmoid(-m)
        g = -(A * (y * s)[:, None]).mean(0)
        H = (A * (s * (1 - s))[:, None]).T @ A / A.shape[0]
        step = torch.linalg.solve(H, g)
        x = x - step
        if float(step.norm()) < 1e-14 * (1 + float(x.norm())):
            break
    return x


def _lad_linprog(A: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """LAD through its dual LP, max yᵀz s.t. Aᵀz = 0, |z_i| ≤ 1/n (n box variables, d equalities — ~10× faster
    than the primal); x* is read from the equality multipliers and checked against strong duality."""
    from scipy.optimize import linprog

    n, d = A.shape
    An, yn = to_numpy(A), to_numpy(y)
    res = linprog(-yn, A_eq=An.T, b_eq=np.zeros(d), bounds=[(-1.0 / n, 1.0 / n)] * n, method="highs")
    if res.status != 0:  # pragma: no cover - HiGHS solves these small LPs
        raise RuntimeError(f"LAD linear program failed: {res.message}")
    dual_value = -float(res.fun)
    for sign in (-1.0, 1.0):  # the multipliers' sign convention, checked rather than assumed
        x = sign * np.asarray(res.eqlin.marginals)
        if abs(np.abs(An @ x - yn).mean() - dual_value) <= 1e-9 * (1.0 + abs(dual_value)):
            return torch.as_tensor(x, dtype=A.dtype)
    raise RuntimeError("LAD dual multipliers do not attain the dual value")  # pragma: no cover


def make_problem(kind: str = "logistic", n: int = 1000, d: int = 20, *, seed: int = 0,
                 radius_factor: float = 2.0, noise: float = 1.0) -> Problem:
    """A synthetic instance: features a_i ~ N(0, diag(σ_j²)) with σ_j log-spaced in [0.1, 1] (ill-conditioned,
    so a too-small stepsize leaves flat directions unlearned), ‖w‖ = 2 for the planted parameter, labels from
    the logistic model (``logistic``) or y = aᵀw + noise·N(0,1) (``lad``); radius R = radius_factor·‖x*‖.
    """
    validate.one_of("kind", kind, PROBLEMS)
    n = validate.integer("n", n, 2, 10**6)
    d = validate.integer("d", d, 1, 1000)
    if kind == "lad" and n > 20_000:
        raise ValueError(f"Invalid n: {n} (the LAD linear program is limited to n ≤ 20000)")
    validate.memory_guard(8.0 * n * d * 4, lower="n or d")
    seed = validate.integer("seed", seed, 0)
    radius_factor = validate.number("radius_factor", radius_factor, 1.0, 1e6, low_open=True)
    noise = validate.number("noise", noise, 0.0, 1e6, low_open=True)
    g = torch.Generator().manual_seed(seed)
    dt = torch.float64
    A = torch.randn(n, d, generator=g, dtype=dt) * torch.logspace(0, -1, d, dtype=dt)
    w = torch.randn(d, generator=g, dtype=dt)
    w = 2.0 * w / w.norm()
    z = A @ w
    if kind == "logistic":
        y = torch.where(torch.rand(n, generator=g, dtype=dt) < torch.sigmoid(z), 1.0, -1.0).to(dt)
        x_star = _logistic_newton(A, y)
    else:
        y = z + noise * torch.randn(n, generator=g, dtype=dt)
        x_star = _lad_linprog(A, y)
    radius = radius_factor * float(x_star.norm())
    prob = Problem(kind, A, y, radius, x_star, 0.0)
    return prob._replace(f_star=float(prob.loss(x_star)))


class SGDRun(NamedTuple):
    """Result of :func:`run_sgd`: cells are (len(eta), len(seeds)).

    ``final_excess`` f(x_T) − f*; ``steps`` the recorded t (0 and every ``record_every``, always T);
    ``excess`` the excess loss at those steps (shape ``(len(steps), E, S)``, or None);
    ``x`` the final iterates.
    """

    eta: torch.Tensor
    seeds: tuple[int, ...]
    final_excess: torch.Tensor
    x: torch.Tensor
    steps: torch.Tensor | None = None
    excess: torch.Tensor | None = None


def _seeds(seeds) -> tuple[int, ...]:
    if isinstance(seeds, (bool, str)) or seeds is None:
        raise TypeError(f"Invalid seeds: {seeds!r} (an int count or a sequence of ints ≥ 0)")
    try:
        seeds = range(validate.integer("seeds", seeds, 1, 10**5))
    except TypeError:
        pass
    if not hasattr(seeds, "__iter__"):
        raise TypeError(f"Invalid seeds: {seeds!r} (an int count or a sequence of ints ≥ 0)")
    out = tuple(seeds)
    if not out:
        raise ValueError("Invalid seeds: empty (must be ≥ 1 seed)")
    return tuple(validate.integer("seeds", s, 0) for s in out)


def run_sgd(problem: Problem, eta, sched: str | Schedule, T: int, seeds=8, *, p: float | None = None,
            record_every: int = 0, average: bool = False, dtype=None, device=None) -> SGDRun:
    r"""Projected SGD x_{t+1} = Π_𝒟[x_t − η_t g_t], η_t = η·h((t−1)/T), x_1 = 0, for every (η, seed) at once.

    ``eta``: a number or 1-D tensor of base stepsizes (> 0); ``seeds``: an int (→ range) or a sequence of
    ints ≥ 0. g_t = ∇ℓ(a_iᵀx_t, y_i) with i drawn uniformly by seed's own generator. ``record_every > 0``
    also records the full excess loss every that many steps (for loss curves). ``average``: the output (final
    excess and ``x``) is the uniform average of the iterates x_2..x_{T+1} (Polyak–Ruppert) instead of the last one.
    """
    if not isinstance(average, bool):
        raise TypeError(f"Invalid average: {average!r} (must be a bool)")
    if not isinstance(problem, Problem):
        raise ValueError(f"Invalid problem: {type(problem).__name__} (must be a Problem from make_problem)")
    h = schedule(sched, p)
    T = validate.integer("T", T, 1, 10**8)
    validate.in_range("eta", eta, 0.0, 1e12, low_open=True)
    record_every = validate.integer("record_every", record_every, 0)
    seeds = _seeds(seeds)
    E, d = torch.as_tensor(eta).numel(), problem.features.shape[1]
    validate.memory_guard(8.0 * (len(seeds) * T * (d + 2) + E * T + 3 * E * len(seeds) * d
                                 + (E * len(seeds) * (T // record_every + 2) if record_every else 0)),
                          lower="T, the number of seeds or of stepsizes")
    dt, dev = resolve_dtype(dtype), resolve_device(device)
    with one_thread(dev):
        return _run(problem, eta, h, T, seeds, record_every, dt, dev, average)


def _run(problem: Problem, eta, h: Schedule, T: int, seeds: tuple[int, ...], record_every: int,
         dt, dev, average: bool = False) -> SGDRun:
    A = problem.features.to(dev, dt)
    y = problem.labels.to(dev, dt)
    n, d = A.shape
    e = torch.as_tensor(eta, dtype=dt, device=dev).reshape(-1)
    lr = stepsizes(e, h, T, dtype=dt, device=dev)  # (E, T)
    idx = torch.stack([torch.randint(n, (T,), generator=torch.Generator().manual_seed(s)) for s in seeds])
    idx = idx.to(dev)
    a_seq, y_seq = A[idx], y[idx]  # (S, T, d), (S, T): each seed's examples, gathered once
    neg_y = -y_seq
    x = torch.zeros(e.numel(), len(seeds), d, dtype=dt, device=dev)
    R = problem.radius
    steps, rec = [], []
    xsum = torch.zeros_like(x) if average else None

    def record(t):
        steps.append(t)
        rec.append(problem.loss(x) - problem.f_star)

    if record_every:
        record(0)
    logistic = problem.kind == "logistic"
    for t in range(T):
        a = a_seq[:, t]  # (S, d)
        m = (x * a).sum(-1)  # a_iᵀx, (E, S)
        if logistic:  # ∂ℓ/∂m = −y·σ(−y m)
            c = m.mul_(neg_y[:, t]).sigmoid_().mul_(neg_y[:, t])
        else:  # ∂|m − y|/∂m = sign(m − y)
            c = m.sub_(y_seq[:, t]).sign_()
        c.mul_(lr[:, t, None])
        x.addcmul_(c.unsqueeze(-1), a, value=-1.0)  # x − η_t g_t
        shrink = torch.linalg.vector_norm(x, dim=-1, keepdim=True).reciprocal_().mul_(R).clamp_(max=1.0)
        x.mul_(shrink)  # Π onto ‖x‖ ≤ R
        if xsum is not None:
            xsum.add_(x)
        if record_every and ((t + 1) % record_every == 0 or t + 1 == T):
            record(t + 1)
    if xsum is not None:
        x = xsum / T
    final = problem.loss(x) - problem.f_star
    if record_every:
        return SGDRun(e, seeds, final, x, torch.tensor(steps), torch.stack(rec))
    return SGDRun(e, seeds, final, x)


class MisspecificationCurve(NamedTuple):
    """Excess loss vs misspecification ρ around the tuned stepsize η* (seed-mean of the last-iterate excess).

    ``over[k]`` at η = ρ_k η*, ``under[k]`` at η = η*/ρ_k, ``worst[k]`` = max over grid points in
    [η*/ρ_k, ρ_k η*]; ``etas``/``mean_excess``/``sem`` the whole tuning grid (sem: standard error over seeds).
    """

    schedule: Schedule
    rho: torch.Tensor
    over: torch.Tensor
    under: torch.Tensor
    worst: torch.Tensor
    eta_star: float
    etas: torch.Tensor
    mean_excess: torch.Tensor
    sem: torch.Tensor


def misspecification_curve(problem: Problem, sched: str | Schedule, T: int, seeds=16, *,
                           p: float | None = None, rho_max: float = 64.0, per_octave: int = 2,
                           margin_octaves: float = 3.0, dtype=None, device=None) -> MisspecificationCurve:
    r"""Tune η on a geometric grid (``per_octave`` points per factor 2); read off the cost of being off by ρ.

    The grid is centred on e*_h·D/G with D = 2R (the bound's ideal stepsize, :func:`ideal_eta`, which is in
    units of D/G, converted to the problem's units)
    and extends log₂ρ_max + ``margin_octaves`` octaves each side; η* is the grid point with the least
    seed-mean excess, and ρ runs over 2^{k/per_octave} ≤ ρ_max. One call = one batched run of every grid
    stepsize × every seed. Raises ``ValueError`` if η* lands too near the grid's edge (widen the margin).
    """
    if not isinstance(problem, Problem):
        raise ValueError(f"Invalid problem: {type(problem).__name__} (must be a Problem from make_problem)")
    h = schedule(sched, p)
    T = validate.integer("T", T, 1, 10**8)
    rho_max = validate.number("rho_max", rho_max, 2.0, 2.0**20)
    per_octave = validate.integer("per_octave", per_octave, 1, 16)
    margin_octaves = validate.number("margin_octaves", margin_octaves, 0.0, 20.0)
    K = int(math.floor(math.log2(rho_max) * per_octave + 1e-9))
    M = int(math.ceil(margin_octaves * per_octave))
    # ideal_eta is in units of D/G; the ball's diameter is D = 2R
    centre = ideal_eta(h, T) * problem.diameter / problem.lipschitz
    j = torch.arange(-(K + M), K + M + 1, dtype=torch.float64)
    etas = centre * 2.0 ** (j / per_octave)
    run = run_sgd(problem, etas, h, T, seeds, dtype=dtype, device=device)
    ex = run.final_excess.double().cpu()
    mean = ex.mean(1)
    sem = ex.std(1) / math.sqrt(ex.shape[1]) if ex.shape[1] > 1 else torch.zeros_like(mean)
    k = int(torch.argmin(mean))
    if k - K < 0 or k + K >= len(etas):
        raise ValueError(f"Invalid margin_octaves: {margin_octaves:g} (the tuned stepsize {float(etas[k]):.3g} is "
                         f"within {K} grid points of the grid's edge; increase it)")
    ks = torch.arange(K + 1)
    rho = 2.0 ** (ks.double() / per_octave)
    worst = torch.stack([mean[k - q:k + q + 1].max() for q in range(K + 1)])
    return MisspecificationCurve(h, rho, mean[k + ks], mean[k - ks], worst, float(etas[k]), etas, mean, sem)


def problem_bound(problem: Problem, eta, sched: str | Schedule, T: int, *,
                  p: float | None = None) -> torch.Tensor:
    r"""[reconstruction] The restarted suffix bound in the problem's own units, at base stepsize(s) ``eta``:
    min_τ (D² + G²Σ_{t≥τ}η_t²)/(2Σ_{t≥τ}η_t) with D = 2R and G = max_i‖a_i‖ (a bound on every ‖g_t‖).

    It bounds the η-weighted suffix average; for the last iterate only up to a log factor.
    Returns a CPU tensor shaped like ``eta``.
    """
    if not isinstance(problem, Problem):
        raise ValueError(f"Invalid problem: {type(problem).__name__} (must be a Problem from make_problem)")
    validate.in_range("eta", eta, 0.0, 1e6, low_open=True)
    h = schedule(sched, p)
    T = validate.integer("T", T, 1, 10**7)
    D, G = problem.diameter, problem.lipschitz
    e = validate.finite_tensor("eta", eta).detach().to("cpu", torch.float64)
    shape = e.shape
    e = e.reshape(-1) * G / D
    if e.numel() > 4096:
        raise ValueError(f"Invalid eta: {e.numel()} stepsizes (at most 4096 per call)")
    vals = torch.stack([suffix_bound(1.0, h, T, eta_star=float(ei), device="cpu") for ei in e])
    return (vals * D * G / math.sqrt(T)).reshape(shape)


#: The coarse-grid schedules: the annealed one first, then the two the paper says a misspecified stepsize hurts.
GRID_SCHEDULES = ("linear", "fixed", "inverse_sqrt")
#: The coarse grid's extra arm: the fixed stepsize with the uniform average of its iterates (Polyak–Ruppert).
AVERAGED = "fixed_averaged"


class GridRun(NamedTuple):
    """Result of :func:`coarse_grid_experiment`: per schedule h, the coarse grid η_{h,j} = η_h·ρ^j centred on h's
    own ideal base stepsize η_h, and the path-mean excess f(x_T) − f* at each grid point (CPU float64, shape
    ``(len(j),)``, in ``etas[h]`` and ``excess[h]``).

    ``fixed_best`` is the tuned fixed stepsize's excess (the least over its grid); ``ratio[h]`` is h's worst
    excess over its grid divided by ``fixed_best`` — the price of trusting a coarse grid without tuning.
    """

    seed: int
    etas: dict[str, torch.Tensor]
    excess: dict[str, torch.Tensor]
    fixed_best: float
    ratio: dict[str, float]

    @property
    def ratio_annealed(self) -> float:
        """Linear decay's worst-over-grid excess ÷ the tuned fixed stepsize's."""
        return self.ratio["linear"]


def coarse_grid_experiment(seed: int, *, T: int = 1000, n: int = 1000, d: int = 20, n_paths: int = 10,
                           rho: float = 2.0, lo: int = -4, hi: int = 5) -> GridRun:
    r"""The paper's synthetic experiment at CPU scale [secondary for its form]: for each schedule h of
    :data:`GRID_SCHEDULES` a coarse geometric grid of base stepsizes η_{h,j} = η_h·ρ^j, j = lo..hi, centred on h's
    own ideal η_h = e*_h·D/G (:func:`ideal_eta` in the problem's units, so no schedule is handed a better-placed
    grid), run on the same logistic problem (``make_problem("logistic", n, d, seed=seed)``) and the same ``n_paths``
    example sequences (seeds 10·seed + i, common to every schedule and grid point).

    Robustness is read as the worst path-mean excess over the grid, relative to the tuned fixed stepsize's (the
    best fixed excess on its grid). Cost: one batched run per schedule (≈ 0.1 s on a CPU).
    """
    seed = validate.integer("seed", seed, 0, 10**8)
    T = validate.integer("T", T, 1, 10**6)
    n_paths = validate.integer("n_paths", n_paths, 1, 1000)
    rho = validate.number("rho", rho, 1.0, 1e3, low_open=True)
    lo = validate.integer("lo", lo, -40, 0)
    hi = validate.integer("hi", hi, 0, 40)
    if hi - lo < 4:
        raise ValueError(f"Invalid lo/hi: {lo}, {hi} (the grid needs ≥ 5 points)")
    problem = make_problem("logistic", n=n, d=d, seed=seed)
    paths = [10 * seed + i for i in range(n_paths)]
    powers = rho ** torch.arange(lo, hi + 1, dtype=torch.float64)
    etas, excess = {}, {}
    for name in GRID_SCHEDULES:
        etas[name] = ideal_eta(schedule(name), T) * problem.diameter / problem.lipschitz * powers
        run = run_sgd(problem, etas[name], name, T, paths)
        excess[name] = torch.as_tensor(to_numpy(run.final_excess), dtype=torch.float64).mean(1)
    # fixed stepsize with iterate averaging (issue 57): the fixed schedule's own grid, paths and T
    etas[AVERAGED] = etas["fixed"].clone()
    run = run_sgd(problem, etas[AVERAGED], "fixed", T, paths, average=True)
    excess[AVERAGED] = torch.as_tensor(to_numpy(run.final_excess), dtype=torch.float64).mean(1)
    best = float(excess["fixed"].min())
    return GridRun(seed, etas, excess, best, {h: float(excess[h].max()) / best for h in (*GRID_SCHEDULES, AVERAGED)})
