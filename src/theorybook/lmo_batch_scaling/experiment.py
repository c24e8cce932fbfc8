"""The chapter's experiment at CPU scale: the (τ, α, γ) maps, their noise-free control, and the statistics the
verdict rows read (seeded; every size is an argument of :func:`~.dynamics.heatmap`, so a GPU run can raise it).

Design [reconstruction]. Least squares with n = 1024, d = 16, label noise σ = ``NOISE``; τ-nice batches
τ ∈ {1, 2, …, 1024 = n} (the grid reaches the full batch, so an optimum could sit anywhere inside it); α ∈ {1, ½,
…, 1/128}; 13 step sizes γ. The metric is the samples N = τT until the running mean of the seed-averaged
‖∇f(x_t)‖_* falls to ε = ``EPS_REL``·‖∇f(x₀)‖_*; N*(τ) = min over (α, γ), α*(τ) its argmin in α.

Control (:func:`noise_free_maps`): the same maps with every minibatch gradient replaced by the exact gradient
(``oracle="full"``), still charged τ samples per step and censored at the budget only. Its trajectory does not
depend on τ, so its α*(τ) cannot move and its N*(τ) = τ·N*(1) is smallest at τ = 1: a claim about the effect of
the batch's *noise* must fail on it.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..device import one_thread, resolve_device, to_numpy
from ..validate import integer, number, one_of
from .dynamics import HeatmapResult, Problem, heatmap, least_squares, matrix_regression

__all__ = [
    "N", "D", "P", "NOISE", "EPS_REL", "BUDGET", "SEEDS", "TAUS", "ALPHAS", "GAMMAS", "MUON_TAUS", "MUON_SEEDS",
    "MUON_BUDGET", "MUON_GAMMAS", "CHAPTER_SEEDS", "VARIANCE_TAUS", "VARIANCE_DRAWS", "chapter_problem",
    "chapter_maps", "noise_free_maps", "alpha_shift", "interior_depth", "abc_slack", "bound_vs_measured",
    "single_sample_maps", "SINGLE_SEED", "SINGLE_CENSOR", "SINGLE_RESULTS", "single_settings", "single_map",
    "load_single", "RIDGE", "RIDGE_SATURATION", "RIDGE_RESULTS", "ridge_map", "ridge_record",
    "load_ridge", "ridge_alpha_star", "ridge_slope", "ridge_fit_taus", "ridge_slopes", "ridge_rerun",
]

# The chapter's scale (CPU). Every size is an argument of heatmap(...): raise n, seeds and budget on a GPU.
N, D, P = 1024, 16, 8
NOISE = 2.0  # label noise σ (the plan's σ = 1 needs ~4× the steps for the same noise-to-ε ratio; see the chapter)
EPS_REL = 0.2  # ε = 0.2·‖∇f(x₀)‖_*
BUDGET = 2**13
SEEDS = 8
TAUS = tuple(2**k for k in range(11))  # 1 … 1024 = n: the full batch closes the grid
ALPHAS = tuple(2.0**-k for k in range(8))
GAMMAS = tuple(float(g) for g in np.logspace(-3, 0, 13))
MUON_TAUS = (1, 4, 16, 64)
MUON_SEEDS = 2
MUON_BUDGET = 2**12
MUON_GAMMAS = GAMMAS[::3]  # five step sizes: the Muon map is shown, not checked
CHAPTER_SEEDS = (2026,)
SINGLE_SEED = 1  # the single-sample control's seed (fixed, like the noise-free control's)
VARIANCE_TAUS = (1, 4, 16, 64)
VARIANCE_DRAWS = 4000
_TINY = {"taus": (1, 4, 16), "alphas": (1.0, 0.25), "gammas": (0.01, 0.1),
         "kw": {"budget": 256, "eps_rel": 0.5, "seeds": 2, "chunk": 32}}


@lru_cache(maxsize=4)
def _problem(kind: str, device: str) -> Problem:
    if kind == "least_squares":
        return least_squares(N, D, NOISE, seed=0, device=device)
    return matrix_regression(N, P, P, NOISE, seed=0, device=device)


def chapter_problem(kind: str = "least_squares", device: str | torch.device | None = None) -> Problem:
    """The chapter's least-squares (n = 1024, d = 16) or matrix-regression (8 × 8) problem, σ = NOISE, seed 0."""
    one_of("kind", kind, ("least_squares", "matrix_regression"))
    return _problem(kind, str(resolve_device(device)))


def _scale(scale: str) -> tuple[tuple, tuple, tuple, dict]:
    one_of("scale", scale, ("chapter", "tiny"))
    if scale == "tiny":
        return _TINY["taus"], _TINY["alphas"], _TINY["gammas"], dict(_TINY["kw"])
    return TAUS, ALPHAS, GAMMAS, dict(budget=BUDGET, eps_rel=EPS_REL, seeds=SEEDS, chunk=64)


def chapter_maps(seed: int, scale: str = "chapter", muon: bool = False) -> dict[str, HeatmapResult]:
    """The chapter's (τ, α, γ) maps: ``l2`` and ``linf`` on least squares (8 seeds), and with ``muon=True`` the
    ``spectral`` map on matrix regression (Newton–Schulz, τ ∈ MUON_TAUS, 2 seeds). ``scale="tiny"`` is a smoke
    scale for tests."""
    sd = integer("seed", seed, 0, 2**62)
    taus, alphas, gammas, kw = _scale(scale)
    if not isinstance(muon, bool):
        raise TypeError(f"Invalid muon: {muon!r} (must be a bool)")
    with one_thread():
        ls = chapter_problem("least_squares")
        out = {norm: heatmap(ls, norm, taus, alphas, gammas, seed=sd + j, **kw) for j, norm in
               enumerate(("l2", "linf"))}
        if muon:
            mr = chapter_problem("matrix_regression")
            mkw = {**kw, "seeds": 2}
            if scale == "chapter":
                mkw["budget"] = MUON_BUDGET
            out["spectral"] = heatmap(mr, "spectral", MUON_TAUS if scale == "chapter" else (1, 4), alphas,
                                      MUON_GAMMAS if scale == "chapter" else gammas, seed=sd + 2, orth="ns", **mkw)
    return out


@lru_cache(maxsize=2)
def _noise_free(scale: str) -> dict[str, HeatmapResult]:
    taus, alphas, gammas, kw = _scale(scale)
    kw["seeds"] = 1  # exact gradients: every seed would run the same trajectory
    with one_thread():
        ls = chapter_problem("least_squares")
        return {norm: heatmap(ls, norm, taus, alphas, gammas, seed=0, oracle="full", censor=None, **kw)
                for norm in ("l2", "linf")}


def noise_free_maps(scale: str = "chapter") -> dict[str, HeatmapResult]:
    """The control: the ``l2`` and ``linf`` maps of :func:`chapter_maps` with the exact gradient in place of every
    τ-nice minibatch (still τ samples per step), censored at the budget only. Deterministic, so one seed (every
    seed would give the same trajectory); cached."""
    one_of("scale", scale, ("chapter", "tiny"))
    return _noise_free(scale)


#: The single-sample control's censoring, fixed before it ran: none but a budget in steps — every τ runs
#: budget/τ₁ steps (the method's τ = 1 budget, 2¹³ steps at the chapter's scale), with no 2·best rule
#: (``heatmap(..., censor=None, per_tau=True)``). Its steps to ε do not shrink with τ, so the method's 2·best rule,
#: in samples, would censor it from τ = 4 on. Computed by ``bench/lmo_batch_scaling_single.py`` (≈ 2 min on 2
#: cores), committed in :data:`SINGLE_RESULTS` and read by the chapter.
SINGLE_CENSOR: float | None = None
SINGLE_RESULTS = Path(__file__).resolve().parents[3] / "bench" / "results" / "lmo_batch_scaling_single.json"


def single_settings(scale: str = "chapter") -> dict[str, Any]:
    """The single-sample control's settings at ``scale`` (what the bench records in its JSON)."""
    taus, alphas, gammas, kw = _scale(scale)
    kw["seeds"] = max(1, kw["seeds"] // 2)  # half the seeds: a noisier control, so more apt to show a shift
    return {"taus": list(taus), "alphas": list(alphas), "gammas": list(gammas), **kw, "oracle": "single",
            "censor": SINGLE_CENSOR, "per_tau": True, "seed": SINGLE_SEED, "noise": NOISE, "n": N, "d": D}


def single_map(norm: str, scale: str = "chapter", *, taus: tuple[int, ...] | None = None,
               censor: float | None = SINGLE_CENSOR) -> HeatmapResult:
    """One map of the single-sample control (``norm`` "l2" or "linf"); ``taus`` a prefix of the scale's τ grid
    (the same batch streams: each τ's stream depends only on the seed and its place in the grid) and ``censor`` a
    2·best factor applied per τ — with any factor ≥ 1 a τ's N*(τ) and α*(τ) are those of the uncensored map, which
    the tests use to re-compute committed entries cheaply."""
    one_of("norm", norm, ("l2", "linf"))
    st = single_settings(scale)
    t = tuple(st["taus"]) if taus is None else tuple(integer("taus", x, 1, N) for x in _items("taus", taus))
    if not t or t != tuple(st["taus"][:len(t)]):
        raise ValueError(f"Invalid taus: {t!r} (must be a non-empty prefix of {tuple(st['taus'])})")
    cf = None if censor is None else number("censor", censor, 1.0, 1e6)
    j = ("l2", "linf").index(norm)
    with one_thread():
        return heatmap(chapter_problem("least_squares"), norm, t, st["alphas"], st["gammas"], budget=st["budget"],
                       eps_rel=st["eps_rel"], seeds=st["seeds"], seed=SINGLE_SEED + j, chunk=st["chunk"],
                       oracle="single", censor=cf, per_tau=True)


@lru_cache(maxsize=2)
def _single(scale: str) -> dict[str, HeatmapResult]:
    return {norm: single_map(norm, scale) for norm in ("l2", "linf")}


def single_sample_maps(scale: str = "chapter") -> dict[str, HeatmapResult]:
    """The sceptic's control: the ``l2`` and ``linf`` maps of :func:`chapter_maps` with a single-sample gradient
    (the τ = 1 noise) at every τ, still charged τ samples per step, on the same grids, ε and budget (in steps, at
    every τ: :data:`SINGLE_CENSOR`), uncensored, with half the seeds (a noisier argmin, so more apt to move by
    chance: a harder control to fail). Only the steps per sample change with τ, not the noise: if α* moved here,
    the shift would be a budget effect. One fixed seed (``SINGLE_SEED``), cached. At the chapter's scale this
    takes minutes: the chapter reads the committed run (:func:`load_single`)."""
    one_of("scale", scale, ("chapter", "tiny"))
    return _single(scale)


def load_single(path: Path | str = SINGLE_RESULTS) -> dict[str, HeatmapResult]:
    """The committed single-sample control maps of ``bench/lmo_batch_scaling_single.py`` as HeatmapResults
    (``None`` in the JSON → ``inf``: censored); raises if the file's settings are not this code's."""
    if isinstance(path, bool) or not isinstance(path, (str, Path)):
        raise TypeError(f"Invalid path: {type(path).__name__} (must be a str or Path)")
    src = Path(path)
    if not src.is_file():
        raise ValueError(f"Invalid path: {src} is not a file (the committed run: bench/lmo_batch_scaling_single.py)")
    out = json.loads(src.read_text())
    if not (isinstance(out, dict) and {"settings", "maps"} <= set(out)):
        raise ValueError(f"{src}: not the results of bench/lmo_batch_scaling_single.py")
    if out["settings"] != json.loads(json.dumps(single_settings("chapter"))):
        raise ValueError(f"{src}: its settings differ from single_settings('chapter'): re-run the bench")

    def arr(v):
        return np.array([[np.inf if x is None else x for x in r] if isinstance(r, list) else
                         (np.inf if r is None else r) for r in v], dtype=float)

    res = {}
    for norm, m in out["maps"].items():
        samples = np.array([arr(blk) for blk in m["samples"]], dtype=float)
        res[norm] = HeatmapResult(norm, np.array(out["settings"]["taus"]), np.array(out["settings"]["alphas"]),
                                  np.array(out["settings"]["gammas"]), samples, arr(m["best"]),
                                  arr(m["n_star"]), arr(m["alpha_star"]), float(m["eps"]), float(m["grad0"]),
                                  float(m["cap"]), int(out["settings"]["seeds"]))
    return res


def alpha_shift(r: HeatmapResult) -> tuple[bool, float]:
    """(α* non-decreasing over the uncensored τ, α*(last uncensored τ)/α*(1)); ``(False, nan)`` with fewer than
    two uncensored τ or a censored τ = 1."""
    if not isinstance(r, HeatmapResult):
        raise TypeError(f"Invalid r: {type(r).__name__} (must be a HeatmapResult)")
    a = np.asarray(r.alpha_star, dtype=float)
    f = a[np.isfinite(a)]
    if f.size < 2 or not np.isfinite(a[0]):
        return False, float("nan")
    return bool(np.all(np.diff(f) >= 0)), float(f[-1] / a[0])


def interior_depth(r: HeatmapResult) -> float:
    """How far the best interior batch beats both ends of the τ grid: ``min(N*(τ₁), N*(τ_max))/min_{1<i<k} N*(τᵢ)
    − 1`` (> 0: an interior optimum; ≤ 0: the optimum sits at an end). A censored N* counts as +∞ (it exceeds the
    censoring level, itself ≥ the best count); NaN when every interior τ is censored."""
    if not isinstance(r, HeatmapResult):
        raise TypeError(f"Invalid r: {type(r).__name__} (must be a HeatmapResult)")
    ns = np.asarray(r.n_star, dtype=float)
    if ns.size < 3:
        raise ValueError(f"Invalid r: {ns.size} batch sizes (need ≥ 3 for an interior)")
    inner = float(np.min(ns[1:-1]))
    if not np.isfinite(inner):
        return float("nan")
    return float(min(ns[0], ns[-1]) / inner - 1.0)


def abc_slack(problem: Problem | None = None, taus=VARIANCE_TAUS, points: int = 64, seed: int = 0) -> dict:
    """The τ-nice ABC inequality on a least-squares problem, evaluated exactly (float64) at ``points`` random
    points ``x = x* + r·u`` (u uniform on the sphere, r log-uniform in [10⁻², 10] · ‖x*‖):
    ``E‖g_S(x)‖² = ‖∇f‖² + (n−τ)/(τ(n−1))·(1/n)Σ‖∇f_i − ∇f‖²`` against
    ``2A(f − f_inf) + B‖∇f‖² + C`` with ``L_i = ‖a_i‖²``, ``f_i^inf = 0`` and ``Δ_inf = f_inf``. Returns the
    smallest ratio right side / left side over points and τ (≥ 1: the condition holds) and its median."""
    from .theory import abc_constants

    prob = chapter_problem("least_squares") if problem is None else problem
    if not isinstance(prob, Problem) or prob.shape[0] != 1:
        raise TypeError("Invalid problem: must be a least-squares Problem (p = 1)")
    k = integer("points", points, 1, 10_000)
    gen = torch.Generator().manual_seed(integer("seed", seed, 0, 2**62))
    q = prob.shape[1]
    u = torch.randn(k, 1, q, generator=gen, dtype=torch.float64)
    u = u / torch.linalg.vector_norm(u, dim=(-2, -1), keepdim=True)
    r = 10 ** (torch.rand(k, 1, 1, generator=gen, dtype=torch.float64) * 3 - 2) * float(prob.x_star.norm())
    xs = prob.x_star.cpu() + r * u
    a, b = prob.a.cpu(), prob.b.cpu()
    L_max = float((a * a).sum(1).max())
    ratios = []
    for x in xs:
        res = a @ x.T - b  # (n, 1)
        gi = res * a  # per-sample gradients (n, q)
        g = gi.mean(0)
        f = float(0.5 * (res * res).mean())
        var = float(((gi - g) ** 2).sum(1).mean())
        for tau in taus:
            A, B, C = abc_constants(prob.n, int(tau), L_max, prob.f_star)
            lhs = float(g @ g) + (prob.n - tau) / (tau * (prob.n - 1)) * var
            ratios.append((2 * A * (f - prob.f_star) + B * float(g @ g) + C) / lhs)
    t = np.array(ratios)
    return {"min_ratio": float(t.min()), "median_ratio": float(np.median(t)), "cases": int(t.size)}


def bound_vs_measured(r: HeatmapResult, problem: Problem | None = None) -> dict:
    """Our reconstructed rate bound ``Φ = Δ₀/(γT) + γL/α + ρσ̄_τ√α`` at every (τ, α, γ) cell of a map that reached
    ε, against the measured running mean there (≤ ε at its hitting time T = N/τ). The noise is the ABC bound along
    ``f ≤ f(x₀)``: ``σ̄_τ² = 2A(τ)·(f(x₀) − f_inf) + C(τ)`` (τ-nice constants, ``L_i = ‖a_i‖²``); ρ = 1 for ℓ2
    (dual ℓ2, ``L = λ_max(H)``) and ρ = √d for ℓ∞ (dual ℓ1 ≤ √d·ℓ2, ``L = Σ|H_ij|`` ≥ the ∞→1 norm of H).
    Returns the smallest and median Φ/ε over the cells (≥ 1: the measured rates sit under the bound) and the
    median Φ/ε at each τ's best cell."""
    from .theory import abc_constants

    if not isinstance(r, HeatmapResult) or r.norm not in ("l2", "linf"):
        raise TypeError("Invalid r: must be an l2 or linf HeatmapResult of the least-squares problem")
    prob = chapter_problem("least_squares") if problem is None else problem
    a = prob.a.cpu()
    L_max = float((a * a).sum(1).max())
    x0 = torch.zeros(1, prob.shape[1], dtype=torch.float64)
    delta0 = float(prob.loss(x0.to(prob.a.device))) - prob.f_star
    if r.norm == "l2":
        rho, L = 1.0, prob.L
    else:
        rho, L = math.sqrt(prob.shape[1]), float(prob.H.abs().sum())
    ratios, best = [], []
    for i, tau in enumerate(r.taus):
        A, _, C = abc_constants(prob.n, int(tau), L_max, prob.f_star)
        sig = math.sqrt(2 * A * delta0 + C)
        for j, al in enumerate(r.alphas):
            for k, ga in enumerate(r.gammas):
                N = r.samples[i, j, k]
                if not np.isfinite(N):
                    continue
                T = N / tau
                phi = delta0 / (ga * T) + ga * L / al + rho * sig * math.sqrt(al)
                ratios.append(phi / r.eps)
                if N == r.n_star[i]:
                    best.append(phi / r.eps)
    t = np.array(ratios)
    if t.size == 0:
        return {"min_ratio": float("nan"), "median_ratio": float("nan"), "cells": 0, "best_median": float("nan")}
    return {"min_ratio": float(t.min()), "median_ratio": float(np.median(t)), "cells": int(t.size),
            "best_median": float(np.median(best)) if best else float("nan")}


# -- the ridge bench (bench/lmo_ridge.py → bench/results/lmo_ridge.json) ------------------------------------------
#: The design of bench/lmo_ridge.py, fixed before it ran: the chapter's ℓ2 measurement (normalised SGD-M on the
#: chapter's least squares, samples to ε, 8 runs averaged per map, 2·best censoring) on a finer α grid (4 points per
#: octave, 1 … 2⁻⁵), a finer γ grid (8 per decade, 10⁻³ … 1) and half the chapter's ε (ε = 0.1·‖∇f(x₀)‖, budget
#: 2¹⁵), τ ∈ {1, …, 32}; one map per seed, pilot seeds from theorybook.check.PILOT_SEEDS and evaluation seeds
#: disjoint from the chapter's (2026…) and the robustness seeds (7001–7040).
RIDGE = {"norm": "l2", "taus": (1, 2, 4, 8, 16, 32), "alphas": tuple(2.0 ** (-k / 4) for k in range(21)),
         "gammas": tuple(float(g) for g in np.logspace(-3, 0, 25)), "eps_rel": 0.1, "budget": 2**15, "seeds": 8,
         "chunk": 64, "pilot_seeds": tuple(range(9001, 9009)), "eval_seeds": tuple(range(3001, 3013))}
#: Pre-registered saturation rule: the fit uses the prefix τ = 1, 2, … of the bench grid at which the median α*
#: over the *pilot* seeds is ≤ 2^(−1/2) (two fine grid steps below α = 1); it stops at the first τ that fails.
RIDGE_SATURATION = 2.0**-0.5
#: The committed results of bench/lmo_ridge.py (read by the chapter and :func:`~.verdicts.ridge_verdicts`).
RIDGE_RESULTS = Path(__file__).resolve().parents[3] / "bench" / "results" / "lmo_ridge.json"


def _items(name: str, values: Any) -> list:
    """The elements of a 1-D sequence (list, tuple, 1-D array or tensor) as Python scalars, else TypeError."""
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
        raise TypeError(f"Invalid {name}: {type(values).__name__} (must be a sequence of numbers)")
    arr = np.asarray(to_numpy(values) if isinstance(values, torch.Tensor) else values, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"Invalid {name}: shape {arr.shape} (must be 1-D)")
    return list(arr)


def _ridge_results(results: Any) -> dict[str, Any]:
    """``results`` if it has the shape of ``bench/results/lmo_ridge.json``, else TypeError/ValueError."""
    if not isinstance(results, dict) or not {"design", "pilot", "eval"} <= set(results):
        raise TypeError("Invalid results: must be the dict of bench/results/lmo_ridge.json (load_ridge())")
    d, pilot, ev = results["design"], results["pilot"], results["eval"]
    if not (isinstance(d, dict) and "taus" in d and isinstance(pilot, list) and isinstance(ev, list) and pilot and ev
            and all(isinstance(m, dict) and len(m.get("alpha_star", ())) == len(d["taus"]) for m in pilot + ev)):
        raise ValueError("Invalid results: each pilot/eval map needs one α* per design τ")
    return results


def ridge_map(seed: int, taus: tuple[int, ...] | None = None, alphas: tuple[float, ...] | None = None,
              gammas: tuple[float, ...] | None = None) -> HeatmapResult:
    """One ℓ2 map of the ridge bench (:data:`RIDGE`) at ``seed``; ``taus`` (a prefix of RIDGE's, so the same batch
    streams), ``alphas`` and ``gammas`` (subsets) give the chapter's reduced re-run of one cell block. Cells do not
    interact except through the censoring level min(budget, 2·best), so a subset holding the map's best cell
    reproduces the full map's counts."""
    sd = integer("seed", seed, 0, 2**62)
    t = RIDGE["taus"] if taus is None else tuple(integer("taus", x, 1, RIDGE["taus"][-1]) for x in _items("taus", taus))
    if t != RIDGE["taus"][:len(t)] or not t:
        raise ValueError(f"Invalid taus: {t!r} (must be a non-empty prefix of {RIDGE['taus']})")
    a = RIDGE["alphas"] if alphas is None else tuple(number("alphas", x, 0.0, 1.0) for x in _items("alphas", alphas))
    g = RIDGE["gammas"] if gammas is None else tuple(number("gammas", x, 0.0, 1e6) for x in _items("gammas", gammas))
    for name, sub, full in (("alphas", a, RIDGE["alphas"]), ("gammas", g, RIDGE["gammas"])):
        if not sub or any(not any(math.isclose(x, y, rel_tol=1e-12) for y in full) for x in sub):
            raise ValueError(f"Invalid {name}: {sub!r} (must be a non-empty subset of RIDGE['{name}'])")
    with one_thread():
        return heatmap(chapter_problem("least_squares"), RIDGE["norm"], t, a, g, budget=RIDGE["budget"],
                       eps_rel=RIDGE["eps_rel"], seeds=RIDGE["seeds"], seed=sd, chunk=RIDGE["chunk"])


def ridge_record(seed: int, r: HeatmapResult) -> dict[str, Any]:
    """A map as JSON (``inf`` → ``None``): every ridge point α*(τ), N*(τ), the (τ, α) best-over-γ counts and the
    full (τ, α, γ) counts."""
    if not isinstance(r, HeatmapResult):
        raise TypeError(f"Invalid r: {type(r).__name__} (must be a HeatmapResult)")

    def js(x: np.ndarray) -> list:
        return np.where(np.isfinite(x), x, np.nan).tolist() if x.ndim else [float(x)]

    def nn(v):
        return [nn(u) for u in v] if isinstance(v, list) else (None if v != v else float(v))

    return {"seed": integer("seed", seed, 0, 2**62), "alpha_star": nn(js(np.asarray(r.alpha_star, float))),
            "n_star": nn(js(np.asarray(r.n_star, float))), "best": nn(js(r.best)), "samples": nn(js(r.samples)),
            "cap": float(r.cap), "eps": float(r.eps)}


def load_ridge(path: Path | str = RIDGE_RESULTS) -> dict[str, Any]:
    """The committed results of ``bench/lmo_ridge.py``: the design, every map's ridge (pilot and evaluation
    seeds) and the machine."""
    if isinstance(path, bool) or not isinstance(path, (str, Path)):
        raise TypeError(f"Invalid path: {type(path).__name__} (must be a str or Path)")
    src = Path(path)
    why = ""
    out: Any = None
    if src.is_file():
        try:
            out = json.loads(src.read_text())
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            why = f"not a JSON results file: {err}"
        else:
            if not (isinstance(out, dict) and {"design", "pilot", "eval"} <= set(out)):
                why = "not the results of bench/lmo_ridge.py"
    else:
        why = "no such results file; run bench/lmo_ridge.py"
    if why:
        raise ValueError(f"Invalid path: {str(src)!r} ({why})")
    return out


def ridge_slope(alpha_star, taus) -> tuple[float, float]:
    """Least-squares fit of log₂ α* = a + b·log₂ τ over the given points: ``(b, a)``; NaN if fewer than two
    finite points."""
    a = np.asarray(alpha_star, dtype=float)
    t = np.asarray(taus, dtype=float)
    if a.shape != t.shape or a.ndim != 1:
        raise ValueError(f"Invalid alpha_star: shape {a.shape} (must match taus {t.shape}, 1-D)")
    if np.any(t < 1) or not np.all(np.isfinite(t)):
        raise ValueError("Invalid taus: must be finite and ≥ 1")
    ok = np.isfinite(a) & (a > 0)
    if ok.sum() < 2:
        return float("nan"), float("nan")
    b, c = np.polyfit(np.log2(t[ok]), np.log2(a[ok]), 1)
    return float(b), float(c)


def ridge_alpha_star(results: dict[str, Any], part: str) -> np.ndarray:
    """The ridge α*(τ) of every ``part`` ("pilot" | "eval") map of the bench results: shape (maps, len(design τ)),
    ``inf`` where the JSON has ``None`` (censored)."""
    one_of("part", part, ("pilot", "eval"))
    results = _ridge_results(results)
    return np.array([[np.inf if x is None else x for x in m["alpha_star"]] for m in results[part]], float)


def ridge_fit_taus(results: dict[str, Any]) -> tuple[int, ...]:
    """The pre-registered fit range (:data:`RIDGE_SATURATION`): the prefix of the bench's τ at which the pilot
    seeds' median α* stays ≤ 2^(−1/2)."""
    taus = _ridge_results(results)["design"]["taus"]
    A = ridge_alpha_star(results, "pilot")
    out = []
    for i, t in enumerate(taus):
        if not float(np.median(A[:, i])) <= RIDGE_SATURATION * (1 + 1e-12):
            break
        out.append(int(t))
    return tuple(out)


def ridge_slopes(results: dict[str, Any], part: str) -> np.ndarray:
    """Per-seed fitted slopes b over :func:`ridge_fit_taus` for ``part`` ("pilot" | "eval")."""
    A = ridge_alpha_star(results, part)
    fit = ridge_fit_taus(results)
    taus = list(results["design"]["taus"])
    idx = [taus.index(t) for t in fit]
    return np.array([ridge_slope(a[idx], fit)[0] for a in A])


def ridge_rerun(results: dict[str, Any], half_width: int = 1) -> dict[str, Any]:
    """The chapter's reduced re-run of the ridge bench: the first evaluation seed at τ = 1 only, on the
    (2·half_width + 1)² block of (α, γ) cells around its committed best cell. Returns the block's indices, the
    re-run counts and the committed counts (``inf`` for censored)."""
    results = _ridge_results(results)
    h = integer("half_width", half_width, 0, 10)
    m = results["eval"][0]
    S = np.array([[[np.inf if x is None else x for x in row] for row in blk] for blk in m["samples"]], float)[0]
    j, k = np.unravel_index(int(np.argmin(S)), S.shape)
    ja = list(range(max(0, j - h), min(S.shape[0], j + h + 1)))
    kg = list(range(max(0, k - h), min(S.shape[1], k + h + 1)))
    r = ridge_map(int(m["seed"]), taus=(1,), alphas=tuple(RIDGE["alphas"][i] for i in ja),
                  gammas=tuple(RIDGE["gammas"][i] for i in kg))
    return {"seed": int(m["seed"]), "alpha_idx": ja, "gamma_idx": kg, "samples": r.samples[0],
            "committed": S[np.ix_(ja, kg)], "cap": float(r.cap), "committed_cap": float(m["cap"])}
