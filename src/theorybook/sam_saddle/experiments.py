"""The chapter's experiments as functions (of a seed where they are stochastic); their rows: :mod:`.verdicts`.

Two experiments on the noisy quadratic saddle ℓ = ½(w₁² − w₂²) (λ = ±1, Theorem 1's ρ* = 1), unnormalised SAM
with Gaussian gradient noise N(0, |H|/B) on the descent gradient (Theorem 2's SDE):

* **variance** (Theorem 2, Corollary 1): ``MC_PATHS`` paths from the saddle for every ρ ∈ ``MC_RHO`` and
  B ∈ ``MC_BATCH`` (noise independent across paths and B, shared across ρ), η = ``MC_LR``, ``MC_STEPS`` steps;
* **escape** (Theorem 3's direction): the first step with ‖w‖ ≥ 1 at ρ = 0.5 for every momentum γ ∈
  ``ESC_GAMMA`` and B ∈ ``ESC_BATCH`` (noise independent across paths and B, shared across γ).

:func:`stochastic_run` runs both for one seed; :func:`theorybook.sam_saddle.verdicts.seeded_verdicts` turns a run
into the chapter's stochastic verdict rows (``tests/test_seed_robustness.py`` re-runs them for 20 unseen seeds).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from .. import validate
from ..device import one_thread
from .dynamics import device_arg, saddle_quadratic_grad
from .landscapes import BEALE_MINIMUM, beale_grad, beale_sam
from .stochastic import MSDResult, escape_steps, monte_carlo_msd
from .theory import discrete_variance, escape_step_prediction, sam_variance

__all__ = ["CHAPTER_SEEDS", "BealeRun", "RandomAscentRun", "StochasticRun", "ThresholdScan",
           "beale_expanded_threshold_scan", "beale_run", "beale_near_minimum_run", "BEALE_NEAR_MIN_START",
           "beale_threshold_scan", "random_ascent_run", "stochastic_run"]

#: The seeds the chapter itself uses (excluded from the seed-robustness test).
CHAPTER_SEEDS: tuple[int, ...] = (0,)

MC_LAM = (1.0, -1.0)
MC_LR = 0.01
MC_RHO = (0.0, 0.5, 2.0)
MC_BATCH = (1.0, 8.0)
MC_STEPS = 300
MC_EVERY = 5
MC_PATHS = 1000
#: Corollary 1 is a small-t statement: its gap is read at step k = 10 (t = kη = 0.1, |λ|t = 0.1).
COR1_K = 10

ESC_RHO = 0.5
ESC_LR = 0.03
ESC_GAMMA = (0.0, 0.5, 0.9)
ESC_BATCH = (1.0, 16.0, 256.0)
ESC_STEPS = 600
ESC_PATHS = 256
ESC_RADIUS = 1.0
#: The slower-SGD rival of Theorem 3's SAM-specific row: SGD (ρ = 0) at step ESC_LR / this, on the same noise.
#: Fixed on pilot seeds 9001–9010 by the rule "SGD's median escape step at γ = 0 matches SAM's" (mean over B of
#: ln(SAM/SGD) at γ = 0 on the grid 1.3–2.0: +0.03…+0.06 at 1.6, −0.03…−0.005 at 1.7, nearest to 0 at 1.7).
ESC_SLOW_SGD = 1.7
_ESC_STREAM = 1_000_003  # the escape experiment's generator seed is seed + this (a separate stream)
#: The planted instance of Theorem 2's printed drift λ(1+ρλ)²: gradient descent on the SAM objective, fewer paths.
PLANTED_PATHS = 250
_PLANTED_STREAM = 2_000_003


class StochasticRun(NamedTuple):
    """One seed's experiments (tensors on the run's device).

    ``mc``: the Monte-Carlo moments (:class:`MSDResult`); ``pred``, ``pred_full``: σ²(t) of Theorem 2 with the
    algorithm's drift λ(1+ρλ) and with the printed (1+ρλ)², and ``disc`` the exact discrete-time variance,
    each of ``mc.msd``'s shape (n, R, nB, d); ``esc``: escape steps (paths, γ, B) as float, censored at
    ``ESC_STEPS + 1`` for a path that never escapes (the median is unaffected while most paths escape);
    ``esc_median`` and ``esc_pred``: measured median and the [derived] heavy-ball prediction, (γ, B);
    ``esc_sgd``: the same escape experiment at ρ = 0 (SGD with momentum) on the same noise (common random
    numbers), (paths, γ, B); ``planted``: :data:`PLANTED_PATHS` Monte-Carlo paths of gradient descent on the SAM
    objective (drift λ(1+ρλ)², the paper's printed formula, present by construction), same ρ, B, steps;
    ``planted_c``: ``MC_PATHS`` paths of the expanded drift λ(1+2ρλ) for ``COR1_K`` steps (Corollary 1's printed
    constant 2, present by construction); ``esc_sgd_slow``: the escape experiment for SGD with momentum at the
    smaller step ``ESC_LR / ESC_SLOW_SGD`` (ρ = 0) on the same noise, (paths, γ, B).
    """

    seed: int
    mc: MSDResult
    pred: torch.Tensor
    pred_full: torch.Tensor
    disc: torch.Tensor
    esc: torch.Tensor
    esc_median: torch.Tensor
    esc_pred: torch.Tensor
    esc_sgd: torch.Tensor
    planted: MSDResult
    planted_c: MSDResult
    esc_sgd_slow: torch.Tensor


def _per_direction(fn, x, rho, batch, **kw) -> torch.Tensor:
    return torch.stack([fn(x, lam, rho, MC_LR, batch, **kw) for lam in MC_LAM], -1)


def stochastic_run(seed: int, *, device: str | torch.device | None = None) -> StochasticRun:
    """Run both experiments (and the planted instance) for ``seed`` (≈ 0.4 s of CPU time on one core)."""
    seed = validate.integer("seed", seed, 0, 2**62)
    dev = device_arg(device)
    f64 = dict(dtype=torch.float64, device=dev)
    rho = torch.tensor(MC_RHO, **f64).reshape(-1, 1)
    batch = torch.tensor(MC_BATCH, **f64)
    with one_thread(dev):
        mc = monte_carlo_msd(MC_LAM, MC_RHO, MC_LR, MC_BATCH, MC_STEPS, MC_PATHS, seed=seed, every=MC_EVERY,
                             device=dev)
        tt, kk = mc.t.reshape(-1, 1, 1), (mc.t / MC_LR).round().reshape(-1, 1, 1)
        pred = _per_direction(sam_variance, tt, rho, batch, drift="linear")
        pred_full = _per_direction(sam_variance, tt, rho, batch, drift="full")
        disc = _per_direction(discrete_variance, kk, rho, batch)
        gam = torch.tensor(ESC_GAMMA, **f64).reshape(-1, 1)
        b_esc = torch.tensor(ESC_BATCH, **f64)
        noise = torch.sqrt(torch.tensor([abs(v) for v in MC_LAM], **f64) / b_esc.reshape(-1, 1))  # (B, d)
        w0 = torch.zeros(ESC_PATHS, 1, 1, len(ESC_BATCH), 2, **f64)  # a B axis: independent noise per batch size
        # SGD, SAM and the slower SGD on the same noise (the noise has w0's shape: shared across these arms)
        rho_esc = torch.tensor([0.0, ESC_RHO, 0.0], **f64).reshape(-1, 1, 1)
        lr_esc = torch.tensor([ESC_LR, ESC_LR, ESC_LR / ESC_SLOW_SGD], **f64).reshape(-1, 1, 1)
        k = escape_steps(saddle_quadratic_grad(MC_LAM), w0, lr_esc, rho_esc, ESC_STEPS, ESC_RADIUS, momentum=gam,
                         noise=noise, seed=seed + _ESC_STREAM, device=dev)
        planted = monte_carlo_msd(MC_LAM, MC_RHO, MC_LR, MC_BATCH, MC_STEPS, PLANTED_PATHS,
                                  seed=seed + _PLANTED_STREAM, every=MC_EVERY, drift="full", device=dev)
        planted_c = monte_carlo_msd(MC_LAM, MC_RHO, MC_LR, MC_BATCH, COR1_K, MC_PATHS, seed=seed + _PLANTED_STREAM + 1,
                                    every=MC_EVERY, drift="expanded", device=dev)
    k_all = torch.where(k < 0, ESC_STEPS + 1, k).to(torch.float64)  # censored at steps + 1 (never escaped)
    esc, esc_sgd, esc_sgd_slow = k_all[:, 1], k_all[:, 0], k_all[:, 2]
    pred_esc = escape_step_prediction(-1.0, ESC_RHO, ESC_LR, b_esc, gam, ESC_RADIUS, ESC_STEPS).to(dev)
    pred_esc = torch.where(pred_esc < 0, ESC_STEPS + 1, pred_esc)
    return StochasticRun(seed, mc, pred, pred_full, disc, esc, esc.median(0).values, pred_esc, esc_sgd, planted,
                         planted_c, esc_sgd_slow)


_RANDOM_STREAM = 3_000_003


class RandomAscentRun(NamedTuple):
    """The random-direction ablation of SAM's ascent (the sceptic's control): the ascent step of the same length
    ρ‖∇ℓ(w)‖ along a uniformly random unit direction instead of along the gradient, on its own noise stream.
    ``esc``: escape steps (paths, γ, B) of the escape experiment (ρ = ``ESC_RHO``, same η, γ, B, steps, radius,
    censored at ``ESC_STEPS + 1``); ``w2``: w₂² after ``MC_STEPS`` steps of the variance experiment, (paths, ρ > 0,
    B) for ρ ∈ ``MC_RHO[1:]``, B ∈ ``MC_BATCH``."""

    esc: torch.Tensor
    w2: torch.Tensor


def random_ascent_run(seed: int, *, device: str | torch.device | None = None) -> RandomAscentRun:
    """Run the random-direction ablation for ``seed`` (generator seed + a separate stream; ≈ 0.3 s on one core)."""
    seed = validate.integer("seed", seed, 0, 2**62)
    dev = device_arg(device)
    f64 = dict(dtype=torch.float64, device=dev)
    gen = torch.Generator().manual_seed(seed + _RANDOM_STREAM)
    lam = torch.tensor(MC_LAM, **f64)

    def unit(shape):
        u = torch.randn(shape, generator=gen, dtype=torch.float64).to(dev)
        return u / torch.linalg.vector_norm(u, dim=-1, keepdim=True)

    with one_thread(dev):
        gam = torch.tensor(ESC_GAMMA, **f64).reshape(1, -1, 1, 1)
        sig = torch.sqrt(lam.abs() / torch.tensor(ESC_BATCH, **f64).reshape(-1, 1))  # (B, d)
        shape = (ESC_PATHS, len(ESC_GAMMA), len(ESC_BATCH), 2)
        w, b = torch.zeros(shape, **f64), torch.zeros(shape, **f64)
        hit = torch.full(shape[:-1], ESC_STEPS + 1.0, **f64)
        for t in range(1, ESC_STEPS + 1):
            xi = torch.randn((ESC_PATHS, 1, len(ESC_BATCH), 2), generator=gen, dtype=torch.float64).to(dev)
            g = lam * w
            wp = w + ESC_RHO * torch.linalg.vector_norm(g, dim=-1, keepdim=True) * unit(shape)
            b = gam * b + lam * wp + sig * xi
            w = w - ESC_LR * b
            hit = torch.where((hit > ESC_STEPS) & (w.square().sum(-1) >= ESC_RADIUS**2), float(t), hit)
        rho = torch.tensor(MC_RHO[1:], **f64).reshape(1, -1, 1, 1)
        sig = torch.sqrt(lam.abs() / torch.tensor(MC_BATCH, **f64).reshape(-1, 1))
        shape = (MC_PATHS, len(MC_RHO) - 1, len(MC_BATCH), 2)
        w = torch.zeros(shape, **f64)
        for _ in range(MC_STEPS):
            xi = torch.randn((MC_PATHS, 1, len(MC_BATCH), 2), generator=gen, dtype=torch.float64).to(dev)
            g = lam * w
            w = w - MC_LR * (lam * (w + rho * torch.linalg.vector_norm(g, dim=-1, keepdim=True) * unit(shape))
                             + sig * xi)
    return RandomAscentRun(hit, w[..., 1].square())


# ------------------------------------------------------------------------------------ deterministic (Beale)
BEALE_LR = 1.25e-5  # the official code: 10⁻³/80, float64, start (1, 2), normalised SAM
BEALE_START = (1.0, 2.0)
BEALE_RHOS = (0.0, 0.1, 0.5, 1.0)
BEALE_STEPS = 100_000  # the official code's cap
#: The official GD stop rule: within this distance of the minimum (3, ½).
BEALE_STOP_RADIUS = 0.15
BEALE_MAX_STEPS = 500_000
_CHUNK = 50_000


class BealeRun(NamedTuple):
    """``traj``: every step of the 10⁵-step run for ρ ∈ ``BEALE_RHOS`` (:class:`SAMTrajectory`); ``cont_t`` and
    ``cont_distance``: the continuation of ρ ∈ {0, 0.1} under the official stop rule, distance to (3, ½)
    every 1000 steps from step 10⁵ on, shape (n,) and (n, 2); ``arrival``: the first recorded step within
    ``BEALE_STOP_RADIUS`` of (3, ½) for those two cells (−1: not by ``BEALE_MAX_STEPS``)."""

    traj: object
    cont_t: torch.Tensor
    cont_distance: torch.Tensor
    arrival: torch.Tensor


def beale_run(*, device: str | torch.device | None = None) -> BealeRun:
    """The paper's Beale experiment at the official settings (≈ 2 s of CPU time), continued for the two cells
    that leave the saddle until the official stop rule fires or ``BEALE_MAX_STEPS``."""
    dev = device_arg(device)
    traj = beale_sam(BEALE_START, BEALE_LR, BEALE_RHOS, BEALE_STEPS, device=dev)
    w = traj.final[:2]
    mins = torch.tensor(BEALE_MINIMUM, dtype=torch.float64, device=dev)
    ts, ds = [torch.tensor([BEALE_STEPS], device=dev)], [torch.linalg.vector_norm(w - mins, dim=-1)[None]]
    done = BEALE_STEPS
    while done < BEALE_MAX_STEPS and bool((ds[-1][-1] > BEALE_STOP_RADIUS).any()):
        part = beale_sam(w, BEALE_LR, BEALE_RHOS[:2], _CHUNK, every=1000, device=dev)
        ts.append(done + part.t[1:])
        ds.append(part.distance(BEALE_MINIMUM)[1:])
        w, done = part.final, done + _CHUNK
    t, d = torch.cat(ts), torch.cat(ds)
    inside = d <= BEALE_STOP_RADIUS
    first = torch.where(inside.any(0), t[inside.to(torch.int64).argmax(0)], -1)
    return BealeRun(traj, t, d, first)


#: The Case III control's start, fixed before it ran: the official start's ray from the minimum (3, ½), at the
#: official stop radius — where the official GD run counts as arrived. SAM runs there with the stuck runs' ρ.
BEALE_NEAR_MIN_START = tuple(m + BEALE_STOP_RADIUS * (s0 - m) / math.dist(BEALE_START, BEALE_MINIMUM)
                             for s0, m in zip(BEALE_START, BEALE_MINIMUM, strict=True))


def beale_near_minimum_run(*, device: str | torch.device | None = None):
    """The Case III control: normalised SAM with the stuck runs' ρ (``BEALE_RHOS[2:]`` = 0.5, 1) on Beale,
    started at :data:`BEALE_NEAR_MIN_START` (within the official stop radius of the minimum, not at the saddle),
    with the official step and 10⁵ steps, every step recorded (a :class:`~.landscapes.SAMTrajectory`): does SAM's
    ascent flip and its gradient cosine swing at any stationary point its ρ-ball straddles, or at the saddle only?"""
    return beale_sam(BEALE_NEAR_MIN_START, BEALE_LR, BEALE_RHOS[2:], BEALE_STEPS, device=device_arg(device))


class ThresholdScan(NamedTuple):
    """Unnormalised SAM started 10⁻⁶ from Beale's saddle (0, 1) for ρ on a grid: ``rho`` (n,), ``escaped``
    (n,) bool (the component along the escape eigenvector (1, −1)/√2 grew), ``measured``: the midpoint between
    the largest escaping and the smallest captured ρ, ``spacing``: the grid step."""

    rho: torch.Tensor
    escaped: torch.Tensor
    measured: float
    spacing: float


def beale_expanded_threshold_scan(*, device: str | torch.device | None = None) -> ThresholdScan:
    """The capture-threshold scan of :func:`beale_threshold_scan` (same 25-point ρ grid, η = 10⁻³, 2000 steps,
    start and escape test) for the rival the chapter discusses: gradient descent on the expanded SAM objective
    f + ρ‖∇f‖², whose step w − η(I + 2ρH)∇f has the drift λ(1 + 2ρλ) and would put the threshold at
    −1/(2λ₁) = 2/111 (Hessian-vector products by central differences of the exact gradient, step 10⁻⁵·‖∇f‖).
    ``measured`` is ``math.inf`` when there is no switch on the grid (captured, or escaping, at every ρ)."""
    dev = device_arg(device)
    rho = torch.linspace(0.030, 0.042, 25, dtype=torch.float64, device=dev).reshape(-1, 1)
    d = torch.tensor([0.0, 1.0], dtype=torch.float64, device=dev)
    w = (torch.tensor([1e-6, 1.0], dtype=torch.float64, device=dev)).expand(rho.shape[0], 2).clone()
    u = torch.tensor([1.0, -1.0], dtype=torch.float64, device=dev) / math.sqrt(2.0)
    p0 = ((w - d) * u).sum(-1).abs()
    grad, h = beale_grad._raw, 1e-5
    with torch.no_grad(), one_thread(dev):  # 25×2 numbers per op: a second thread only contends (90 s vs 2 s loaded)
        for _ in range(2000):
            g = grad(w)
            hg = (grad(w + h * g) - grad(w - h * g)) / (2 * h)  # central difference: relative error ~ (h‖g‖)²
            w = w - 1e-3 * (g + 2.0 * rho * hg)
    escaped = ((w - d) * u).sum(-1).abs() > p0
    r = rho[:, 0]
    if bool(escaped.all()) or not bool(escaped.any()):
        measured = math.inf  # no switch on the grid
    else:
        measured = 0.5 * (float(r[escaped].max()) + float(r[~escaped].min()))
    return ThresholdScan(r, escaped, measured, float(r[1] - r[0]))


def beale_threshold_scan(*, scale: float = 1.0, device: str | torch.device | None = None) -> ThresholdScan:
    """Theorem 1 on Beale measured: 25 values ρ ∈ [0.030, 0.042]/``scale``, η = 10⁻³, 2000 steps from (10⁻⁶, 1),
    unnormalised SAM on ``scale``·f (Beale scaled: λ₁ = −27.75·scale, so Theorem 1 moves the threshold to
    4/(111·scale); run as SAM on f with (scale·η, scale·ρ), the same iterates)."""
    c = validate.number("scale", scale, 0.1, 10.0)
    dev = device_arg(device)
    rho = torch.linspace(0.030, 0.042, 25, dtype=torch.float64) / c
    tr = beale_sam((1e-6, 1.0), 1e-3 * c, rho * c, 2000, normalized=False, every=2000, device=dev)
    u = torch.tensor([1.0, -1.0], dtype=torch.float64, device=dev) / math.sqrt(2.0)
    proj = ((tr.w - torch.tensor([0.0, 1.0], dtype=torch.float64, device=dev)) * u).sum(-1).abs()
    escaped = proj[-1] > proj[0]
    rho = rho.to(dev)
    if bool(escaped.all()) or not bool(escaped.any()):
        measured = math.nan
    else:
        measured = 0.5 * (float(rho[escaped].max()) + float(rho[~escaped].min()))
    return ThresholdScan(rho, escaped, measured, float(rho[1] - rho[0]))
