"""The chapter's stochastic experiments as functions of a seed, and the verdict rows they support.

Two experiments on the noisy quadratic saddle ℓ = ½(w₁² − w₂²) (λ = ±1, Theorem 1's ρ* = 1), unnormalised SAM
with Gaussian gradient noise N(0, |H|/B) on the descent gradient (Theorem 2's SDE):

* **variance** (Theorem 2, Corollary 1): ``MC_PATHS`` paths from the saddle for every ρ ∈ ``MC_RHO`` and
  B ∈ ``MC_BATCH`` (noise independent across paths and B, shared across ρ), η = ``MC_LR``, ``MC_STEPS`` steps;
* **escape** (Theorem 3's direction): the first step with ‖w‖ ≥ 1 at ρ = 0.5 for every momentum γ ∈
  ``ESC_GAMMA`` and B ∈ ``ESC_BATCH`` (noise independent across paths and B, shared across γ).

:func:`stochastic_run` runs both for one seed; :func:`seeded_verdicts` turns a run into the chapter's
stochastic verdict rows (the chapter shows exactly these rows; ``tests/test_seed_robustness.py`` re-runs them
for 20 unseen seeds). Each row's note states its error model; every tolerance is fixed here, before any
measurement, at a false-alarm probability ≤ 10⁻³ (Bonferroni over the ``m`` comparisons a row takes the
maximum of, :func:`theorybook.check.z_threshold`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from .. import validate
from ..check import Verdicts, z_threshold
from ..device import one_thread
from .dynamics import MSDResult, device_arg, escape_steps, monte_carlo_msd, saddle_quadratic_grad
from .theory import corollary1_gap, discrete_variance, escape_step_prediction, sam_variance

__all__ = ["CHAPTER_SEEDS", "BealeRun", "StochasticRun", "ThresholdScan", "beale_run", "beale_threshold_scan",
           "seeded_verdicts", "stochastic_run"]

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
_ESC_STREAM = 1_000_003  # the escape experiment's generator seed is seed + this (a separate stream)


class StochasticRun(NamedTuple):
    """One seed's experiments (tensors on the run's device).

    ``mc``: the Monte-Carlo moments (:class:`MSDResult`); ``pred``, ``pred_full``: σ²(t) of Theorem 2 with the
    algorithm's drift λ(1+ρλ) and with the printed (1+ρλ)², and ``disc`` the exact discrete-time variance,
    each of ``mc.msd``'s shape (n, R, nB, d); ``esc``: escape steps (paths, γ, B) as float, censored at
    ``ESC_STEPS + 1`` for a path that never escapes (the median is unaffected while most paths escape);
    ``esc_median`` and ``esc_pred``: measured median and the [derived] heavy-ball prediction, (γ, B).
    """

    seed: int
    mc: MSDResult
    pred: torch.Tensor
    pred_full: torch.Tensor
    disc: torch.Tensor
    esc: torch.Tensor
    esc_median: torch.Tensor
    esc_pred: torch.Tensor


def _per_direction(fn, x, rho, batch, **kw) -> torch.Tensor:
    return torch.stack([fn(x, lam, rho, MC_LR, batch, **kw) for lam in MC_LAM], -1)


def stochastic_run(seed: int, *, device: str | torch.device | None = None) -> StochasticRun:
    """Run both experiments for ``seed`` (≈ 0.2 s of CPU time on one core)."""
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
        w0 = torch.zeros(ESC_PATHS, 1, len(ESC_BATCH), 2, **f64)  # a B axis: independent noise per batch size
        k = escape_steps(saddle_quadratic_grad(MC_LAM), w0, ESC_LR, ESC_RHO, ESC_STEPS, ESC_RADIUS, momentum=gam,
                         noise=noise, seed=seed + _ESC_STREAM, device=dev)
    esc = torch.where(k < 0, ESC_STEPS + 1, k).to(torch.float64)  # censored at steps + 1 (never escaped)
    pred_esc = escape_step_prediction(-1.0, ESC_RHO, ESC_LR, b_esc, gam, ESC_RADIUS, ESC_STEPS).to(dev)
    pred_esc = torch.where(pred_esc < 0, ESC_STEPS + 1, pred_esc)
    return StochasticRun(seed, mc, pred, pred_full, disc, esc, esc.median(0).values, pred_esc)


def _median_rank_z(samples: torch.Tensor, predicted: torch.Tensor, slack: float) -> torch.Tensor:
    """How far ``predicted`` (±``slack``) sits from the sample median, in rank standard deviations √n/2.

    Under the hypothesis that ``predicted`` is the population median, #{X < p} ~ Binomial(n, ½): the statistic
    max(#{X < p − slack} − n/2, n/2 − #{X ≤ p + slack}) / (√n/2) exceeds z with probability ≤ P(|N(0,1)| > z)
    (normal approximation, n = 256), whatever the distribution of X. 0 or negative: p is inside.
    """
    n = samples.shape[0]
    below = (samples < predicted - slack).sum(0).to(torch.float64)
    upto = (samples <= predicted + slack).sum(0).to(torch.float64)
    return torch.maximum(below - n / 2, n / 2 - upto) / (math.sqrt(n) / 2)


def seeded_verdicts(seed: int, *, run: StochasticRun | None = None) -> Verdicts:
    """The chapter's stochastic verdict rows for ``seed`` (``run``: reuse an existing run of that seed)."""
    seed = validate.integer("seed", seed, 0, 2**62)
    if run is None:
        run = stochastic_run(seed)
    elif not isinstance(run, StochasticRun) or run.seed != seed:
        raise ValueError(f"Invalid run: must be a StochasticRun of seed {seed}")
    mc, v = run.mc, Verdicts("SAM at saddles: stochastic rows", display=False)
    msd, se = mc.msd[1:], mc.se[1:]  # t = 0 is exact (every path starts at the saddle)

    # Theorem 2 with the algorithm's drift: MC is unbiased for the discrete-time variance; the SDE differs from
    # it by a known O(η) discretisation bias, which is allowed for exactly (|MC − σ²| ≤ |MC − disc| + |disc − σ²|).
    m_var = msd.numel()
    z_var = z_threshold(1e-3, m_var)
    excess = ((msd - run.pred[1:]).abs() - (run.disc[1:] - run.pred[1:]).abs()) / se
    v.less("Theorem 2, drift λ(1+ρλ): max over t, ρ, B, j of (|MC − σ²(t)| − |discretisation bias|)/s.e.",
           float(excess.max()), z_var, kind="reproduces", source="derived",
           note=f"{MC_PATHS} paths per (ρ, B); s.e. of the mean of w²; Bonferroni over m = {m_var} z-scores at "
                f"false-alarm 1e-3; the SDE's O(η) bias vs the exact discrete variance is added to the tolerance")
    z_full = ((msd - run.pred_full[1:]) / se).abs().max()
    v.greater("Theorem 2 as printed, drift λ(1+ρλ)²: max |MC − σ²(t)|/s.e.", float(z_full), 2 * z_var,
              kind="differs", source="secondary", paper="σ²(t) with a = λ(1+ρλ)²",
              note="rejected: at ρ = 2 > ρ* the printed drift predicts escape, the measured variance saturates; "
                   f"tolerance 2× the Bonferroni threshold {z_var:.2f}")

    # Corollary 1 (escape direction j = 1): the paired gap Δ_SGD − Δ_SAM is positive and has the exact expected
    # value disc(ρ=0) − disc(ρ) at every recorded t.
    gap, gap_se = mc.gap[1:, 1:, :, 1], mc.gap_se[1:, 1:, :, 1]
    gap_exact = run.disc[1:, :1, :, 1] - run.disc[1:, 1:, :, 1]
    m_gap = gap.numel()
    v.less("Corollary 1: max over t, ρ > 0, B of |MC gap − exact discrete gap| / s.e.",
           float(((gap - gap_exact) / gap_se).abs().max()), z_threshold(1e-3, m_gap), kind="reproduces",
           source="derived", note=f"paired (common-noise) differences over {MC_PATHS} paths; Bonferroni over "
                                  f"m = {m_gap} at false-alarm 1e-3")
    z_pos = gap[-1] / gap_se[-1]
    v.greater("Corollary 1: SGD's escape variance exceeds SAM's at t = 3 (min over ρ > 0, B of gap/s.e.)",
              float(z_pos.min()), z_threshold(2e-3, z_pos.numel()), kind="reproduces", source="secondary",
              note="one-sided test of gap > 0 at false-alarm 1e-3 over the (ρ, B) cells")

    # Corollary 1's constant: ĉ = gap / (η t²|λ|³ρ/B), divided by κ = exact gap / leading term (κ ≈ 0.90 at
    # k = 10: the discrete sum Σ_{i<k} i = k(k−1)/2 and the O(t) terms), pooled per path over (ρ, B) so the
    # paths are i.i.d.; its expectation is exactly 1 for the algorithm's drift (the paper's constant is 2).
    k_idx = COR1_K // MC_EVERY
    t_s = float(mc.t[k_idx])
    rho = torch.tensor(MC_RHO[1:], dtype=torch.float64, device=mc.t.device).reshape(-1, 1)
    batch = torch.tensor(MC_BATCH, dtype=torch.float64, device=mc.t.device)
    lead = corollary1_gap(t_s, -1.0, rho, MC_LR, batch, drift="linear")
    kappa = gap_exact[k_idx - 1] / lead
    w2 = mc.w[k_idx, ..., 1].square()  # (paths, R, nB)
    c_path = ((w2[:, :1] - w2[:, 1:]) / (lead * kappa)).mean((1, 2))
    c_hat, c_se = float(c_path.mean()), float(c_path.std()) / math.sqrt(MC_PATHS)
    z1 = z_threshold(1e-3, 1)
    v.between(f"Corollary 1's constant c at t = {t_s:g} (pooled over ρ ∈ {{0.5, 2}}, B ∈ {{1, 8}})", c_hat,
              1 - z1 * c_se, 1 + z1 * c_se, kind="differs", source="secondary", paper=2,
              note=f"band 1 ± {z1:.2f} s.e. (path-level s.e. {c_se:.3f}): the algorithm's drift gives c = 1; "
                   f"the discretisation factor κ ∈ [{float(kappa.min()):.3f}, {float(kappa.max()):.3f}] is "
                   "divided out")

    # Theorem 3's direction and the [derived] heavy-ball prediction of the median escape step.
    med = run.esc_median
    v.true("Escape step falls with momentum γ (every B; medians of 256 paths)", bool((med[1:] < med[:-1]).all()),
           kind="reproduces", source="secondary", measured=f"γ=0: {med[0].tolist()}, γ=0.9: {med[-1].tolist()}",
           note="the [derived] prediction puts neighbouring γ ≥ 50 % apart; a 256-path median is good to a few %")
    v.true("Escape step rises with batch size B (every γ)", bool((med[:, 1:] > med[:, :-1]).all()),
           kind="reproduces", source="secondary", measured=f"B=1: {med[:, 0].tolist()}, B=256: {med[:, -1].tolist()}",
           note="the [derived] prediction puts neighbouring B ≥ 39 % apart")
    m_esc = med.numel()
    zr = _median_rank_z(run.esc, run.esc_pred, 1.0)
    v.less("Median escape step vs heavy-ball covariance prediction: max rank-z over (γ, B)", float(zr.max()),
           z_threshold(1e-3, m_esc), kind="reproduces", source="derived",
           note=f"distribution-free: #paths below the prediction ~ Binomial({ESC_PATHS}, ½) if it is the median; "
                f"±1 step for the integer crossing; Bonferroni over m = {m_esc}")
    return v


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
    from .dynamics import BEALE_MINIMUM, beale_sam

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


class ThresholdScan(NamedTuple):
    """Unnormalised SAM started 10⁻⁶ from Beale's saddle (0, 1) for ρ on a grid: ``rho`` (n,), ``escaped``
    (n,) bool (the component along the escape eigenvector (1, −1)/√2 grew), ``measured``: the midpoint between
    the largest escaping and the smallest captured ρ, ``spacing``: the grid step."""

    rho: torch.Tensor
    escaped: torch.Tensor
    measured: float
    spacing: float


def beale_threshold_scan(*, device: str | torch.device | None = None) -> ThresholdScan:
    """Theorem 1 on Beale measured: 25 values ρ ∈ [0.030, 0.042], η = 10⁻³, 2000 steps from (10⁻⁶, 1)."""
    from .dynamics import beale_sam

    dev = device_arg(device)
    rho = torch.linspace(0.030, 0.042, 25, dtype=torch.float64)
    tr = beale_sam((1e-6, 1.0), 1e-3, rho, 2000, normalized=False, every=2000, device=dev)
    u = torch.tensor([1.0, -1.0], dtype=torch.float64, device=dev) / math.sqrt(2.0)
    proj = ((tr.w - torch.tensor([0.0, 1.0], dtype=torch.float64, device=dev)) * u).sum(-1).abs()
    escaped = proj[-1] > proj[0]
    rho = rho.to(dev)
    if bool(escaped.all()) or not bool(escaped.any()):
        measured = math.nan
    else:
        measured = 0.5 * (float(rho[escaped].max()) + float(rho[~escaped].min()))
    return ThresholdScan(rho, escaped, measured, float(rho[1] - rho[0]))
