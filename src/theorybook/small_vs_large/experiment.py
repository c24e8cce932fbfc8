"""The chapter's experiments at CPU scale and the verdict rows built from them (seeded; see ``seeded_verdicts``).

Scales (all parameters; a GPU run can raise them): the fluctuation study at ``d = 100`` with 640 draws of nested
data sets up to ``N = 16d``; the toy's headline comparison at ``d = 200``, ``η = 0.1``, ``N = d`` over 32 seeds;
the MLP at width 256, batch 128, 300 steps, one seed per configuration.

The tolerances and thresholds were fixed from pilot runs over 40 seed values (5000–5039) at a slightly smaller
scale (24 toy runs, 500 draws; the final 32 and 640 only tighten the spread), quoted in each row's note;
``tests/test_seed_robustness.py`` re-runs the rows on 20 further seeds.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch

from ..check import Verdicts, fmt, z_threshold
from ..device import resolve_device, to_numpy
from ..validate import finite_tensor, integer, number
from .dynamics import (
    _DT,
    MLPRun,
    ToyGrid,
    _gen,
    _labels,
    _mlp_train,
    _sphere,
    qhat_samples,
    sampling_bias_std,
    single_threaded,
    toy_grid,
)

__all__ = [
    "CHAPTER_SEEDS", "QStudy", "folded_normal_mean", "mlp_study", "q_study", "seeded_verdicts", "t1_bound",
    "toy_headline",
]

#: The seed of every stochastic computation in the chapter.
CHAPTER_SEEDS = (24,)
#: ``w`` of the fluctuation study is fixed (drawn once from this seed), so its bias 2w₁w₂ is known in advance.
FIXED_W_SEED = 11
Q_D = 100
Q_NS = (25, 50, 100, 200, 400, 800, 1600)  # d/4 … 16d
Q_DRAWS = 640
V_D, V_ETA, V_SEEDS, V_CAP = 200, 0.1, 32, 600
A_STAR = 0.3
MLP_SEEDS = 1


def fixed_w(d: int = Q_D) -> torch.Tensor:
    """The fixed unit vector of the fluctuation study (CPU, float64)."""
    return _sphere(1, integer("d", d, 3, 100_000), _gen(FIXED_W_SEED))[0]


def folded_normal_mean(mu: Any, sigma: Any) -> torch.Tensor:
    """``E|μ + σZ| = σ√(2/π)·exp(−μ²/2σ²) + μ·erf(μ/(σ√2))`` for ``Z ~ N(0, 1)`` (``σ > 0``); at ``μ = 0`` it is
    ``σ√(2/π)`` (sympy derives the constant). Elementwise, float64."""
    m = finite_tensor("mu", mu).to(_DT)
    s = finite_tensor("sigma", sigma).to(_DT)
    if s.numel() == 0 or bool((s <= 0).any()):
        raise ValueError(f"Invalid sigma: {sigma!r} (must be > 0)")
    r = m / s
    return s * math.sqrt(2 / math.pi) * torch.exp(-r * r / 2) + m * torch.erf(r / math.sqrt(2))


class QStudy(NamedTuple):
    """Fluctuation of ``q̂ = wᵀM̂w`` at a fixed ``w``: Monte Carlo against the closed forms."""

    ns: tuple[int, ...]
    w: torch.Tensor
    sd_mc: torch.Tensor  # sample sd of q̂ over the draws, per N
    sd_formula: torch.Tensor  # √(Var q̂) from the closed form
    z: torch.Tensor  # (sd_mc − sd_formula)/SE, SE by the delta method with the sample kurtosis
    mean_abs: torch.Tensor  # Monte-Carlo E|q̂|
    mean_abs_folded: torch.Tensor  # folded-normal E|q̂| from the closed-form mean 2w₁w₂ and sd
    slope: float  # OLS slope of log E|q̂| on log N (Monte Carlo)
    slope_se: float  # its standard error (delta method over the draws; nested data sets are correlated)
    slope_folded: float  # the same slope of the folded-normal curve (the bias that 2w₁w₂ causes)


def _ols_weights(x: torch.Tensor) -> torch.Tensor:
    xc = x - x.mean()
    return xc / (xc * xc).sum()


@single_threaded
def q_study(seed: int = CHAPTER_SEEDS[0], *, d: int = Q_D, ns: tuple[int, ...] = Q_NS, draws: int = Q_DRAWS,
            labels: str = "true", device: Any = None) -> QStudy:
    """Draw ``q̂(N)`` for nested data sets at the fixed ``w`` and compare with the closed forms."""
    s = integer("seed", seed, 0, 2**62)
    w = fixed_w(d)
    lab = _labels(labels)
    q = qhat_samples(w, list(ns), draws, lab, s)  # (R, len(ns)), CPU float64
    R = q.shape[0]
    nt = torch.tensor([float(n) for n in ns], dtype=_DT)
    sd_f = sampling_bias_std(w, nt, lab)
    sd = q.std(0)
    c = q - q.mean(0)
    kurt = (c**4).mean(0) / (c**2).mean(0) ** 2
    se = sd * torch.sqrt((kurt - 1).clamp_min(0) / (4 * R))
    z = (sd - sd_f) / se
    aq = q.abs()
    m = aq.mean(0)
    x = nt.log()
    cw = _ols_weights(x)
    slope = float((cw * m.log()).sum())
    grad = cw / m  # ∂slope/∂m_N
    cov = torch.cov(aq.T)
    slope_se = float(torch.sqrt(grad @ cov @ grad / R))
    mu = 2 * w[0] * w[1] if lab == "true" else torch.zeros((), dtype=_DT)
    mf = folded_normal_mean(mu.expand_as(sd_f), sd_f)
    slope_f = float((cw * mf.log()).sum())
    dev = resolve_device(device)
    return QStudy(tuple(ns), w.to(dev), sd.to(dev), sd_f.to(dev), z.to(dev), m.to(dev), mf.to(dev), slope, slope_se,
                  slope_f)


def t1_bound(w0: Any, n_samples: Any, eta: float = V_ETA, a_star: float = A_STAR, labels: str = "true"
             ) -> torch.Tensor:
    """``2a⋆/(η·E|q̂|)`` with ``E|q̂| ≈ √(2/π)·sd(q̂)`` at ``w₀`` (our constant for the secondary account's
    ``T₁ ≲ a⋆√N/η``): the Phase-1 length if ``q̂`` stayed at its typical initial size; the feedback ``w → top
    eigenvector of aM̂`` only shortens Phase 1."""
    e = number("eta", eta, 0.0, 10.0, low_open=True)
    ast = number("a_star", a_star, 0.0, 1.0, low_open=True)
    sd = sampling_bias_std(w0, n_samples, labels)
    if bool((sd <= 0).any()):
        raise ValueError("Invalid w0: the fluctuation of q̂ vanishes (w must be non-zero)")
    return 2 * ast / (e * math.sqrt(2 / math.pi) * sd)


@single_threaded
def toy_headline(seed: int = CHAPTER_SEEDS[0], *, d: int = V_D, eta: float = V_ETA, seeds: int = V_SEEDS,
                 max_steps: int = V_CAP, device: Any = None) -> ToyGrid:
    """Two-phase (true labels), two-phase (random labels in Phase 1) and population GD at ``N = d``: one batch."""
    dd = integer("d", d, 3, 2000)
    return toy_grid(dd, eta, [dd], labels=("true", "random"), seeds=seeds, seed=seed, max_steps=max_steps,
                    device=device)


@single_threaded
def mlp_study(seed: int = CHAPTER_SEEDS[0], *, ns: tuple[int | None, ...] = (1024, None), seeds: int = MLP_SEEDS,
              width: int = 256, steps: int = 300, device: Any = None) -> tuple[MLPRun, MLPRun]:
    """The MLP at second-layer init scale 1 and 4, paired (same ``W``, direction of ``a``, data and batches)."""
    if not isinstance(ns, (list, tuple)) or not ns:
        raise TypeError(f"Invalid ns: {ns!r} (must be a non-empty list of integers or None)")
    nn = tuple(None if n is None else integer("ns", n, 1, 10**7) for n in ns)
    ratio, acc = _mlp_train(nn, (1.0, 4.0), d=20, k=3, width=width, batch=128, lr=0.1, steps=steps, lr_a_mult=1.0,
                            seeds=seeds, seed=seed, device=device)
    return MLPRun(nn, ratio[0], acc[0]), MLPRun(nn, ratio[1], acc[1])


def _median_censored(x: torch.Tensor) -> float:
    """Median with −1 (not reached) ranked above everything (exact while fewer than half are censored)."""
    y = x.to(_DT).clone()
    y[y < 0] = math.inf
    return float(y.median())


def toy_summary(g: ToyGrid, eta: float = V_ETA, a_star: float = A_STAR) -> dict[str, float]:
    """Medians over seeds from :func:`toy_headline`: steps (population, two-phase, random labels) and T₁/bound."""
    pop = _median_censored(g.population)
    if math.isinf(pop):  # half or more of the population runs hit the cap: no ratio can be claimed (NaN fails)
        pop = math.nan
    out = {"population": pop, "censored": float((g.population < 0).sum())}
    for i, lab in enumerate(g.labels):
        out[f"steps_{lab}"] = _median_censored(g.steps[i, 0])
        bound = t1_bound(g.w0, g.ns[0], eta, a_star, lab).to(g.phase1.device)
        t1 = g.phase1[i, 0].to(_DT)
        t1[t1 < 0] = math.inf
        out[f"t1_ratio_{lab}"] = float((t1 / bound).median())
        out[f"t1_{lab}"] = _median_censored(g.phase1[i, 0])
        out[f"bound_{lab}"] = float(bound.median())
    return out


@single_threaded
def seeded_verdicts(seed: int = CHAPTER_SEEDS[0], *, device: Any = None) -> Verdicts:
    """Every stochastic row of the chapter, built from ``seed`` (the chapter calls it with ``CHAPTER_SEEDS[0]``;
    ``tests/test_seed_robustness.py`` with 20 unseen seeds). ``display=False``."""
    s = integer("seed", seed, 0, 2**62)
    v = Verdicts(f"Small vs large data sets — stochastic rows (seed {s})", display=False)
    # -- fluctuation of q̂ -----------------------------------------------------------------------------------
    qs = q_study(s, device=device)
    m = len(qs.ns)
    zmax = z_threshold(1e-3, m)
    v.less(f"sd of q̂ = wᵀM̂w matches √((3 − 2Σw⁴ − 4w₁²w₂²)/N) at N = {qs.ns[0]}…{qs.ns[-1]} (d = {Q_D}, max |z|)",
           float(qs.z.abs().max()), zmax, kind="consistency", source="derived",
           note=f"{Q_DRAWS} Monte-Carlo data sets per N (nested); z = (sd − formula)/SE with SE = sd·√((κ−1)/4R) "
                f"(κ the sample kurtosis); bound z_threshold(1e-3, {m}) (Bonferroni, valid under the nesting's "
                "correlation)")
    bias = abs(qs.slope_folded + 0.5)
    tol = 0.05
    v.close(f"E|q̂| ∝ N^(−1/2): log–log slope over N = {qs.ns[0]}…{qs.ns[-1]} (d = {Q_D}, fixed w)", qs.slope, -0.5,
            atol=tol, kind="reproduces", source="paper",
            note=f"error model: MC slope SE {qs.slope_se:.4f} (delta method over the draws) → 3.29·SE = "
                 f"{3.29 * qs.slope_se:.3f}, plus the deterministic bend from E q̂ = 2w₁w₂ = "
                 f"{float(2 * qs.w[0] * qs.w[1]):.4f} (folded-normal slope {qs.slope_folded:.3f}, |bias| "
                 f"{bias:.3f}); pilot (40 seeds, 500 draws): mean −0.492, sd 0.0137 → with {Q_DRAWS} draws the bound "
                 f"is ≈ 3.4 sd from the mean")
    # -- the toy: two-phase vs population -------------------------------------------------------------------
    g = toy_headline(s, device=device)
    t = toy_summary(g)
    note_pop = (f"medians over {V_SEEDS} seeds (paired: same w₀), N = d = {V_D}, η = {V_ETA}; censored at "
                f"{V_CAP} steps ({int(t['censored'])} population runs censored; the median is exact below half)")
    v.less("two-phase (N = d, true labels) / population GD: steps to alignment", t["steps_true"] / t["population"],
           0.6, kind="reproduces", source="secondary",
           note=note_pop + "; pilot (40 seeds, 24 runs each): mean 0.41, sd 0.061 → with 32 runs sd ≈ 0.053, the "
                           "bound ≈ 3.6 sd above the mean")
    v.less("two-phase with random ±1 labels in Phase 1 / population GD (Corollary 2)",
           t["steps_random"] / t["population"], 0.8, kind="reproduces", source="secondary",
           note=note_pop + "; pilot (24 runs each): mean 0.44, sd 0.063 → bound ≥ 5.7 sd above")
    v.less("median T₁ / (2a⋆/(η·E|q̂|)) ≤ 1, true and random labels (max of the two)",
           max(t["t1_ratio_true"], t["t1_ratio_random"]), 1.0, kind="reproduces", source="secondary",
           note="E|q̂| = √(2/π)·sd(w₀, N) per seed; the bound is T₁ without the w-feedback, which only speeds "
                "Phase 1; pilot: mean 0.49, sd 0.034 (bound 15 sd above)")
    # -- the MLP: the second layer grows faster on a small, repeated data set --------------------------------
    r1, r4 = mlp_study(s, device=device)
    last1 = to_numpy(r1.ratio[:, :, -1]).mean(1)
    last4 = to_numpy(r4.ratio[:, :, -1]).mean(1)
    q1, q4 = float(last1[0] / last1[1]), float(last4[0] / last4[1])
    v.greater("MLP, ‖a‖/‖W‖_F after 300 steps: N = 1,024 repeated over fresh samples", q1, 1.5, kind="reproduces",
              source="paper",
              note=f"(20, 3)-parity, width 256, batch 128, lr 0.1, {MLP_SEEDS} seed per configuration; pilot (40 "
                   "seeds): mean 2.31, sd 0.17, min 1.95 → bound 4.7 sd below")
    v.less("MLP, second-layer init ×4: that ratio shrinks to ≤ 0.7× its default-init value", q4 / q1, 0.7,
           kind="reproduces", source="secondary",
           note=f"init ×4: {fmt(q4, 3)} vs default {fmt(q1, 3)} (paired: same W, data, batches); pilot: mean 0.53, "
                "sd 0.024 → bound 7 sd above")
    return v
