"""The chapter's experiments at CPU scale (seeded); :mod:`.verdicts` builds every row from them.

Scales (all parameters; a GPU run can raise them): the fluctuation study at ``d = 100`` with 640 draws of nested
data sets up to ``N = 16d``; the toy's headline comparison at ``d = 200``, ``η = 0.1``, ``N = d`` over 32 seeds;
the MLP at width 256, batch 128, 300 steps, one seed per configuration.

The tolerances and thresholds are stated, with their error model or pilot (seeds from
``theorybook.check.PILOT_SEEDS``), in each row's ``basis`` (:mod:`.verdicts`); ``tests/test_seed_robustness.py``
re-runs the rows on 20 further seeds.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, NamedTuple

import torch

from ..device import resolve_device
from ..validate import finite_tensor, integer, number
from .dynamics import (
    _DT,
    MLPRun,
    ToyGrid,
    _gen,
    _labels,
    _mlp_train,
    _signs,
    _sphere,
    qhat_samples,
    sampling_bias_std,
    single_threaded,
    toy_grid,
)
from .race import REGIMES, RaceRun, mlp_race, speedup
from .race import _median_censored as _median_race

__all__ = [
    "BIAS_DRAWS", "BIAS_DS", "CHAPTER_SEEDS", "FULL_BATCH", "QStudy", "RACE", "RESULTS", "SCAN", "bias_signal_study",
    "load_results", "folded_normal_mean",
    "mlp_study", "q_study", "race_study", "race_summary",
    "t1_bound", "toy_headline", "toy_summary", "fresh_phase1", "FRESH_SEED_OFFSET",
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


#: The bias-versus-signal study (issue 57): parity dimensions and Monte-Carlo data sets per (d, N).
BIAS_DS = (50, 100, 200)
BIAS_DRAWS = 256


@single_threaded
def bias_signal_study(seed: int = CHAPTER_SEEDS[0], *, ds: tuple[int, ...] = BIAS_DS, draws: int = BIAS_DRAWS,
                      device: Any = None) -> dict[str, tuple[float, ...]]:
    """The abstract's "far above the Θ(1/d) population signal", measured: at ``w = (1, …, 1)/√d`` — every
    coordinate at its rms size, so the population signal is ``E q̂ = 2w₁w₂ = 2/d`` exactly — the mean absolute
    fluctuation ``E|q̂ − 2/d|`` over ``draws`` independent data sets of 2-sparse parity, divided by the signal
    ``2/d``, at ``N = d`` (the small-data regime of Theorem 1) and at ``N = d²`` (where the theorem's range ends).

    Exact sampler: with all ``wᵢ`` equal, ``wᵀx = (x₁ + x₂ + S)/√d`` with ``S = 2·Binomial(d − 2, ½) − (d − 2)``
    the sum of the other ``d − 2`` signs, and ``y = x₁x₂``. Returns ``ds`` and the ratios ``at_d``, ``at_d2``."""
    s = integer("seed", seed, 0, 2**62)
    if not isinstance(ds, (list, tuple)) or not ds:
        raise TypeError(f"Invalid ds: {ds!r} (must be a non-empty tuple of parity dimensions)")
    dd = tuple(integer("ds", d, 3, 1000) for d in ds)
    R = integer("draws", draws, 2, 100_000)
    gen = _gen(s)
    out: dict[str, list[float]] = {"at_d": [], "at_d2": []}
    chunk = 32
    for d in dd:
        mu = 2.0 / d
        for key, n in (("at_d", d), ("at_d2", d * d)):
            tot = 0.0
            for r0 in range(0, R, chunk):
                r = min(chunk, R - r0)
                x12 = torch.randint(0, 2, (r, n, 2), generator=gen, dtype=torch.int64).to(_DT) * 2 - 1
                rest = torch.binomial(torch.full((r, n), float(d - 2), dtype=_DT),
                                      torch.full((r, n), 0.5, dtype=_DT), generator=gen) * 2 - (d - 2)
                z2 = (x12.sum(-1) + rest) ** 2 / d
                q = (x12.prod(-1) * z2).mean(-1)
                tot += float((q - mu).abs().sum())
            out[key].append(tot / R / mu)
    resolve_device(device)
    return {"ds": dd, "at_d": tuple(out["at_d"]), "at_d2": tuple(out["at_d2"])}


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


#: The fresh-samples control of the toy rows draws its data apart from the toy's own (same seed, same w₀).
FRESH_SEED_OFFSET = 1_000_033


@single_threaded
def fresh_phase1(g: ToyGrid, seed: int = CHAPTER_SEEDS[0], *, labels: str = "true", eta: float = V_ETA,
                 a_star: float = A_STAR, a0: float = 0.01, eps: float = 1e-2, max_steps: int = V_CAP,
                 device: Any = None) -> torch.Tensor:
    """The large-data arm of the toy at the same compute: Phase 1 on ``N = g.ns[0]`` **fresh** samples at every
    step (``M̂_t w`` from a new data set each step, no repetition), then population GD once ``|a| ≥ a⋆`` — from the
    toy's own ``w₀`` per seed (paired with :func:`toy_headline`'s runs), the same η, a₀, a⋆, ε and step cap.

    Returns the steps to alignment per seed (−1 = not reached within ``max_steps``, as :class:`ToyGrid`).
    ``labels="random"``: fresh random ±1 labels (Corollary 2's Phase 1 without a repeated set). The data are drawn
    from ``seed + FRESH_SEED_OFFSET``; ``M̂_t w = Xᵀ(y ⊙ Xw)/N`` is formed without ``M̂`` (O(N·d) per row and step).
    """
    if not isinstance(g, ToyGrid):
        raise TypeError(f"Invalid g: {type(g).__name__} (must be a ToyGrid from toy_headline or toy_grid)")
    s = integer("seed", seed, 0, 2**62)
    lab = _labels(labels)
    e = number("eta", eta, 0.0, 10.0, low_open=True)
    ast = number("a_star", a_star, 0.0, 1.0, low_open=True)
    aa = number("a0", a0, -1.0, 1.0)
    ep = number("eps", eps, 0.0, 1.0, low_open=True, high_open=True)
    T = integer("max_steps", max_steps, 1, 10**6)
    dev = resolve_device(device)
    N = int(g.ns[0])
    w = g.w0.to(dev, _DT).clone()
    S, d = w.shape
    gen = _gen(s + FRESH_SEED_OFFSET)
    a = torch.full((S,), aa, dtype=_DT, device=dev)
    steps = torch.full((S,), -1, dtype=torch.int64, device=dev)
    p1 = torch.ones(S, dtype=torch.bool, device=dev)
    for t in range(T + 1):
        hit = ((1 - (w[:, 0] ** 2 + w[:, 1] ** 2)) < ep) & (steps < 0)
        steps = torch.where(hit, torch.full_like(steps, t), steps)
        if t == T or bool((steps >= 0).all()):
            break
        p1 = p1 & (a.abs() < ast)
        Mw = torch.zeros_like(w)
        Mw[:, 0], Mw[:, 1] = w[:, 1], w[:, 0]
        rows = torch.nonzero(p1 & (steps < 0)).flatten()  # an aligned row's later state is never read
        k = int(rows.numel())
        if k:
            X = _signs((k * N, d), gen, torch.float32).reshape(k, N, d).to(dev)
            y = (X[:, :, 0] * X[:, :, 1] if lab == "true"
                 else _signs((k * N, 1), gen, torch.float32).reshape(k, N).to(dev))
            proj = torch.bmm(X, w[rows].to(torch.float32)[:, :, None])[:, :, 0]  # float32: signs are exact
            Mw[rows] = torch.bmm((y * proj)[:, None, :], X)[:, 0, :].to(_DT) / N
        q = (w * Mw).sum(1)
        w_new = w + e * a[:, None] * Mw
        w = w_new / w_new.norm(dim=1, keepdim=True)
        a = torch.clamp(a + 0.5 * e * q, -1.0, 1.0)
    return steps


@single_threaded
def mlp_study(seed: int = CHAPTER_SEEDS[0], *, ns: tuple[int | None, ...] = (1024, None, None),
              seeds: int = MLP_SEEDS,
              width: int = 256, steps: int = 300, device: Any = None) -> tuple[MLPRun, MLPRun]:
    """The MLP at second-layer init scale 1 and 4, paired (same ``W``, direction of ``a``, data and batches). Each
    ``None`` in ``ns`` is its own independent fresh stream (a second ``None`` is the fresh-vs-fresh control)."""
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
    if not isinstance(g, ToyGrid):
        raise TypeError(f"Invalid g: {type(g).__name__} (must be a ToyGrid from toy_headline or toy_grid)")
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


#: The headline race (:func:`theorybook.small_vs_large.race.mlp_race`), fixed before the chapter's run: (16, 4)-
#: parity (even, so a bias-free ReLU net can represent it), width 64, batch 64, lr 0.5, 800 steps, 12 seeds, a
#: repeated set of N = 1,024 points against fresh samples, second-layer init ×1 and ×4; target 90 % test accuracy.
RACE = {"n_small": 1024, "d": 16, "k": 4, "width": 64, "batch": 64, "lr": 0.5, "steps": 800, "scales": (1.0, 4.0),
        "seeds": 12, "eval_every": 20, "target": 0.9, "test_size": 1024}
RACE_RATIO_STEP = 100  # the step at which ‖a‖/‖W‖_F is compared (early: the schedule acts before alignment)


@single_threaded
def race_study(seed: int = CHAPTER_SEEDS[0], *, device: Any = None, **overrides: Any) -> RaceRun:
    """The chapter's race at :data:`RACE` (keyword overrides for a smaller or larger run)."""
    s = integer("seed", seed, 0, 2**62)
    bad = set(overrides) - set(RACE)
    if bad:
        raise TypeError(f"Invalid arguments: {sorted(bad)} (race_study takes {sorted(RACE)})")
    return mlp_race(seed=s, device=device, **{**RACE, **overrides})


def race_summary(run: RaceRun, ratio_step: int = RACE_RATIO_STEP) -> dict[str, float]:
    """What the rows read from a race (init scales ×1 and ×4 in this order): the speed-up of the repeated set over
    fresh samples (``speedup``) and of the second fresh stream (``speedup_control``), both at init ×1 and ×4; the
    init-×4 speed-up of fresh training (``init_speedup``); ``‖a‖/‖W‖_F`` at ``ratio_step`` repeated over fresh
    (``ratio_gain``, ``ratio_gain_control``) and its shrink factor at init ×4 (``ratio_shrink``,
    ``ratio_shrink_control``); the median steps (``steps_*``) and the censored count."""
    if not isinstance(run, RaceRun):
        raise TypeError(f"Invalid run: {type(run).__name__} (must be a RaceRun)")
    if len(run.scales) < 2:
        raise ValueError(f"Invalid run: {len(run.scales)} init scale(s) (need the default and a larger one)")
    st = integer("ratio_step", ratio_step, 0, int(run.eval_steps[-1]))
    hits = (run.eval_steps == st).nonzero()
    if hits.numel() == 0:
        raise ValueError(f"Invalid ratio_step: {st} (not an evaluation step; they are multiples of "
                         f"{int(run.eval_steps[1]) if len(run.eval_steps) > 1 else 0})")
    e = int(hits[0, 0])
    rat = run.ratio[:, :, :, e].double().mean(2).cpu()  # (scale, regime)
    med = [[_median_race(run.steps_to_target[li, ri]) for ri in range(len(REGIMES))] for li in range(2)]
    gain = rat[:, 0] / rat[:, 1]
    gain_c = rat[:, 2] / rat[:, 1]
    return {
        "speedup": speedup(run, 0), "speedup_control": speedup(run, 0, "fresh-control"),
        "speedup_x4": speedup(run, 1), "speedup_control_x4": speedup(run, 1, "fresh-control"),
        "init_speedup": med[0][1] / med[1][1],
        "ratio_gain": float(gain[0]), "ratio_gain_control": float(gain_c[0]),
        "ratio_shrink": float(gain[1] / gain[0]), "ratio_shrink_control": float(gain_c[1] / gain_c[0]),
        "steps_repeated": med[0][0], "steps_fresh": med[0][1], "steps_control": med[0][2],
        "steps_fresh_x4": med[1][1], "steps_repeated_x4": med[1][0],
        "censored": float((run.steps_to_target < 0).sum()),
    }


#: The regime scan of the race (``bench/small_vs_large.py``; design fixed before it ran): parity dimension d and
#: repeated-set size N, (d, 4)-parity, width 64, batch 64, lr 0.5, at most 1,200 steps (evaluated every 10), target
#: 90 %, four independent seed sets of 12 paired seeds per point (48), second-layer init ×1 and ×4.
SCAN = {"ds": (16, 20, 24), "ns": (1024, 4096, 16384), "seed_sets": (101, 102, 103, 104), "seeds": 12,
        "race": {"k": 4, "width": 64, "batch": 64, "lr": 0.5, "steps": 1200, "scales": (1.0, 4.0), "eval_every": 10,
                 "target": 0.9, "test_size": 1024}}
#: Full-batch GD against the data-set size (issue 45's scaled-down "≈ 100×"): (24, 4)-parity, width 64, lr 0.5.
FULL_BATCH = {"ns": (512, 2048, 8192, 32768), "d": 24, "k": 4, "width": 64, "lr": 0.5, "steps": 2000, "seeds": 4,
              "seed": 201, "eval_every": 10, "target": 0.9, "test_size": 2048}
#: The committed results of bench/small_vs_large.py (read by the chapter and :func:`~.verdicts.scan_verdicts`).
RESULTS = Path(__file__).resolve().parents[3] / "bench" / "results" / "small_vs_large.json"


def load_results(path: Path | str = RESULTS) -> dict[str, Any]:
    """The committed results of ``bench/small_vs_large.py`` (per-point paired log speed-ups, full-batch steps,
    configuration, machine)."""
    if not isinstance(path, (str, Path)):
        raise TypeError(f"Invalid path: {type(path).__name__} (must be a str or Path)")
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"Invalid path: {str(p)!r} (no such results file; run bench/small_vs_large.py)")
    try:
        out = json.loads(p.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"Invalid path: {str(p)!r} (not a JSON results file: {err})") from None
    if not isinstance(out, dict) or "scan" not in out or "full_batch" not in out:
        raise ValueError(f"Invalid path: {str(p)!r} (not the results of bench/small_vs_large.py)")
    return out
