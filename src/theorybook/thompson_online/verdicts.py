"""Every verdict row of the Thompson-sampling chapter, with the paper claims they test.

Only the abstract, a TL;DR and one figure caption of the paper could be read, so the regularised-greed identity
and the shutdown rule are **our reconstruction**: the rows that check the identity are ``consistency`` rows (our
algebra, proved by sympy and checked numerically). The secondary account's "conditional regularizer shutdown moves
TS towards the optimum" is tested against the best tempered TS, with the unconditional shutdown (greedy) and, from
the sceptic review, Bayes-UCB as controls: greedy fails, Bayes-UCB passes, so the row "holds, not specific". The
abstract's "the discounted formulation changes the problem too much" differs at the matched discount γ = 1 − 1/T,
with a discount three times too short planted and caught.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sp
import torch

from .. import validate
from ..check import Control, PaperClaim, Planted, Scan, Verdicts, z_threshold
from ..device import to_numpy
from .dynamics import POLICIES, BanditSolution, MonteCarloRegret, simulate_policies, solve_bandit

__all__ = ["EXPERIMENT", "GRID_CHECKED", "KAPPA_GRID", "PAPER_CLAIMS", "Z0_GRID", "competitor_regrets", "experiment",
           "exact_verdicts", "grid_halving", "seeded_verdicts", "tuning_scan"]

#: The chapter's experiment B (the paper's figure): prior N(0, 1), noise variance 1, T = 200, 1601-point grid, 20K
#: Monte Carlo trials per policy (as in the paper's caption). The shutdown's z₀ and tempered TS's κ are the best of
#: their 9-point grids (:data:`Z0_GRID`, :data:`KAPPA_GRID`) on the exact DP at T = 200
#: (``bench/thompson_online_tuning.py``; ``tests/test_thompson_online.py`` checks the committed JSON agrees).
EXPERIMENT = {"horizon": 200, "prior_var": 1.0, "noise_var": 1.0, "shutdown_z": 1.25, "temper": 0.65, "ucb_c": 1.5,
              "grid": 1601, "trials": 20_000}
#: The planted discount of the stationarization row: an effective horizon 1/(1 − γ) three times shorter than T —
#: of the factors 2, 3, 5, 10 the smallest whose excess regret reaches the 10 % shown as the paper's size (12 % at
#: grid 1601). Chosen in the sceptic review: factor 10 (71 %) was seven times that size; factor 2 gives 4.4 %.
PLANTED_HORIZON_FACTOR = 3
#: The discount scan at T = 200 (bench/thompson_online_ucb.py): γ = 1 − k/T for these k.
DISCOUNT_FACTORS = (0.5, 1, 2, 3, 10)
#: The bench's results (the horizon scan of the shutdown and stationarization rows).
TUNING_JSON = Path(__file__).resolve().parents[3] / "bench" / "results" / "thompson_online_tuning.json"
#: The sceptic review's Bayes-UCB tuning (``bench/thompson_online_ucb.py``): R_T on :data:`UCB_GRID` at each horizon.
UCB_JSON = Path(__file__).resolve().parents[3] / "bench" / "results" / "thompson_online_ucb.json"

#: The tuning grids (9 values each, the same budget): the shutdown's z₀ and tempered TS's κ, chosen on the exact DP
#: at T = 200 by ``bench/thompson_online_tuning.py`` (results in bench/results/thompson_online_tuning.json).
Z0_GRID = (0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5)
KAPPA_GRID = (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8)
#: The sceptic review's alternative, Bayes-UCB (pull iff m + c·s_n ≥ 0), gets the shutdown's grid (both are
#: thresholds on m/s), tuned on the same exact DP by ``bench/thompson_online_ucb.py``.
UCB_GRID = Z0_GRID
#: The policies whose R₂₀₀ the grid-halving rows check: every one a verdict row compares (the shutdown row's 0.02
#: tolerance rests on the shutdown, tempered TS and tempered TS with the shutdown's condition).
GRID_CHECKED = ("ts", "optimal", "shutdown", "tempered", "tempered_shutdown")

PAPER_CLAIMS = (
    PaperClaim("regularised-greed", "TS solves an online optimisation problem: instantaneous regret plus a "
               "'biserial covariance' regulariser ν̃ that measures the residual uncertainty about which arm is "
               "better — the same form as the stationary Bellman-optimal policy, with a different regulariser ν.",
               quoted_only=True, reason_class="paper text unread", headline=True,
               why="the paper's ν̃ and objective ℛ² could not be read (the digest has only the words 'biserial "
                   "covariance' and 'point-biserial correlation', not a formula); the chapter's regulariser "
                   "s·φ(Φ⁻¹(x)) is our reconstruction, chosen so that its optimiser is Φ(m/s): checking TS against "
                   "it is true by construction, so it stays a consistency row, not a test of the paper's form"),
    PaperClaim("stationarization", "A 'faithful stationarization' of the finite-horizon regret problem has a "
               "stationary Bellman-optimal policy x*(π).", quoted_only=True, reason_class="paper text unread",
               why="the paper's stationarized objective could not be read, so its x*(π) cannot be computed; any "
                   "time-invariant MDP has a stationary Bellman-optimal policy, so the existence claim has no "
                   "measurable consequence of its own. The obvious stand-in, discounting with γ = 1 − 1/T, is the "
                   "formulation the paper calls unfaithful: the chapter solves it exactly against the "
                   "finite-horizon DP in the 'discounted' row, which cannot double as a test of this claim"),
    PaperClaim("discounted", "The discounted (Gittins) formulation changes the finite-horizon problem too much "
               "to be a faithful stationarization.", where="abstract"),
    PaperClaim("shutdown", "A 'conditional regularizer shutdown' moves TS closer to the optimal policy.",
               where="analysis section (secondary account)", source="secondary"),
)


def experiment(seed: int, *, trials: int = 20_000, horizon: int = 200, grid: int = 1601,
               device: str | torch.device | None = None) -> tuple[BanditSolution, MonteCarloRegret]:
    """Experiment B at the chapter's settings: the exact DP of all four policies (cached) and a seeded Monte Carlo
    with ``trials`` bandits per policy (common random numbers across policies)."""
    e = EXPERIMENT
    sol = solve_bandit(horizon, policies=POLICIES, prior_var=e["prior_var"], noise_var=e["noise_var"],
                       shutdown_z=e["shutdown_z"], grid=grid, record=(), device=device)
    mc = simulate_policies(POLICIES, horizon, trials, seed, prior_var=e["prior_var"], noise_var=e["noise_var"],
                           shutdown_z=e["shutdown_z"], grid=grid, device=device)
    return sol, mc


def _paired_z(mc: MonteCarloRegret, a: str, b: str) -> tuple[float, float, float]:
    """Paired Monte Carlo R_a(T) − R_b(T) over the same bandits: (mean, SE, mean/SE)."""
    diff = mc.final[POLICIES.index(a)] - mc.final[POLICIES.index(b)]
    mean = float(diff.mean())
    se = float(diff.std() / diff.numel() ** 0.5) if diff.numel() > 1 else math.inf
    return mean, se, (mean / se if se > 0 else math.copysign(math.inf, mean) if mean else 0.0)


def seeded_verdicts(seed: int, *, trials: int = 20_000, horizon: int = 200, grid: int = 1601,
                    device: str | torch.device | None = None,
                    results: tuple[BanditSolution, MonteCarloRegret] | None = None) -> Verdicts:
    """The chapter's stochastic rows for one Monte Carlo seed (defaults = the chapter's scale; display off).

    1. [consistency] the Monte Carlo regret of each policy at T agrees with the exact DP: max over the four
       policies of |MC − DP|/SE ≤ z_threshold(1e-3, 4).
    2. [reproduces, secondary] shutdown lowers TS's regret: the paired z-score of R_TS(T) − R_shutdown(T) exceeds
       the one-sided 1e-3 threshold; control: the *unconditional* shutdown (greedy, the regulariser off
       everywhere), whose paired z-score against TS must not.

    ``results`` reuses an ``experiment(seed, …)`` already run at the same settings.
    """
    seed = validate.integer("seed", seed, 0, 2**63 - 1)
    if results is not None and not (isinstance(results, tuple) and len(results) == 2
                                     and isinstance(results[0], BanditSolution)
                                     and isinstance(results[1], MonteCarloRegret)):
        raise TypeError(f"Invalid results: {type(results).__name__} (must be experiment(seed, …)'s "
                        "(BanditSolution, MonteCarloRegret))")
    sol, mc = results if results is not None else experiment(seed, trials=trials, horizon=horizon, grid=grid,
                                                              device=device)
    T = sol.regret.shape[1] - 1
    z = ((mc.mean[:, T] - sol.regret[:, T]) / mc.se[:, T].clamp_min(1e-300)).abs()
    worst = int(z.argmax())
    zt = z_threshold(1e-3, len(POLICIES))
    d_mean, d_se, d_z = _paired_z(mc, "ts", "shutdown")
    g_mean, g_se, _ = _paired_z(mc, "ts", "greedy")
    ts, sd = POLICIES.index("ts"), POLICIES.index("shutdown")
    dp_gap = float(sol.regret[ts, T] - sol.regret[sd, T])
    z_one = z_threshold(2e-3)  # one-sided 1e-3
    v = Verdicts(f"Thompson sampling, Monte Carlo (seed {seed})", display=False)
    v.less(f"Monte Carlo ({mc.trials} trials/policy) = exact DP at T = {T}: max over 4 policies of |MC − DP|/SE",
           float(z.max()), zt, kind="consistency", source="derived",
           basis=(f"model: each MC mean averages {mc.trials} i.i.d. realised regrets, so (MC − DP)/SE ≈ N(0, 1); "
                  f"Bonferroni over 4 policies, false alarm ≤ 1e-3"),
           note=(f"worst: {POLICIES[worst]}. The DP's grid error (< 1e-3 relative, checked by halving the grid) "
                 f"is < 0.02 SE. Why it matters: the exact DP is what every other regret number rests on."))
    v.greater(f"Monte Carlo sees the shutdown's gain over TS at T = {T}: paired z of R_(TS) − R_(shutdown)", d_z, z_one,
              kind="consistency", source="derived",
              basis="model: paired CLT z-score; one-sided threshold z_threshold(2e-3) = 3.09, false alarm ≤ 1e-3 "
                    "under 'no improvement'",
              note=(f"the shutdown rule (x = 0 once m/s < −{EXPERIMENT['shutdown_z']:g}) is our operationalisation. "
                    f"Paired difference {d_mean:.4g} ± {d_se:.2g} (exact DP gap {dp_gap:.4g}); greedy's is "
                    f"{g_mean:.4g} ± {g_se:.2g}. A check that simulation and DP agree on the sign and size; the "
                    "paper's claim is tested against the tuned unconditional competitor by the exact row."))
    return v


def competitor_regrets(horizon: int = 200, *, grid: int = 1601,
                       device: str | torch.device | None = None) -> dict[str, float]:
    """Exact R_T (DP) of every policy the shutdown and stationarization rows compare, at the chapter's settings:
    TS, greedy, the finite-horizon optimum, the shutdown (z₀*), tempered TS (κ*), tempered TS with the shutdown's
    condition, Bayes-UCB (c*), the discounted stationary policy (γ = 1 − 1/T) and the planted one (γ = 1 − 10/T)."""
    T = validate.integer("horizon", horizon, 20, 2000)
    e = EXPERIMENT
    kw = {"prior_var": e["prior_var"], "noise_var": e["noise_var"], "grid": grid, "device": device}
    out = {}
    sol = solve_bandit(T, policies=POLICIES, shutdown_z=e["shutdown_z"], **kw)
    out.update({p: float(sol.regret[k, T]) for k, p in enumerate(POLICIES)})
    sol = solve_bandit(T, policies=("tempered", "tempered_shutdown", "discounted", "bayes_ucb"),
                       shutdown_z=e["shutdown_z"], temper=e["temper"], gamma=1.0 - 1.0 / T, ucb_c=e["ucb_c"], **kw)
    out.update({p: float(sol.regret[k, T]) for k, p in enumerate(sol.policies)})
    g_planted = 1.0 - PLANTED_HORIZON_FACTOR / T
    # the planted control only needs to be seen far outside the band: the 801-point grid (error ≲ 1e-3) suffices
    out["discounted_planted"] = float(solve_bandit(T, policies=("discounted",), gamma=g_planted,
                                                   **dict(kw, grid=(grid + 1) // 2 | 1)).regret[0, T])
    return out


def grid_halving(fine: Mapping[str, float], horizon: int = 200, *, grid: int = 1601,
                 device: str | torch.device | None = None) -> dict[str, float]:
    """Relative change |R_T(coarse)/R_T(fine) − 1| of each policy of :data:`GRID_CHECKED` (and of Bayes-UCB when
    ``fine`` holds it) when the DP's grid is halved (``grid`` → (grid + 1)/2 points); ``fine`` holds the policies'
    R_T at ``grid`` (e.g. :func:`competitor_regrets`)."""
    T = validate.integer("horizon", horizon, 20, 2000)
    G = validate.integer("grid", grid, 101, 20_001)
    if not isinstance(fine, Mapping):
        raise TypeError(f"Invalid fine: {type(fine).__name__} (must be a mapping policy → R_T, e.g. "
                        "competitor_regrets(...))")
    miss = [p for p in GRID_CHECKED if p not in fine]
    if miss:
        raise ValueError(f"Invalid fine: missing {miss} (must hold R_T of {GRID_CHECKED})")
    ref = {p: validate.number(f"fine[{p!r}]", fine[p], 0.0, math.inf, low_open=True) for p in GRID_CHECKED}
    e = EXPERIMENT
    pols = GRID_CHECKED + (("bayes_ucb",) if "bayes_ucb" in fine else ())
    if "bayes_ucb" in fine:
        ref["bayes_ucb"] = validate.number("fine['bayes_ucb']", fine["bayes_ucb"], 0.0, math.inf, low_open=True)
    coarse = solve_bandit(T, policies=pols, prior_var=e["prior_var"], noise_var=e["noise_var"],
                          shutdown_z=e["shutdown_z"], temper=e["temper"], ucb_c=e["ucb_c"], grid=(G + 1) // 2 | 1,
                          device=device)
    return {p: abs(float(coarse.regret[k, T]) / ref[p] - 1.0) for k, p in enumerate(pols)}


def tuning_scan(path: str | Path | None = None, ucb_path: str | Path | None = None) -> dict[str, Any]:
    """The committed horizon scan of ``bench/thompson_online_tuning.py`` (each policy's R_T at T ∈ {50, 200, 400},
    both tuning grids, the tuned values), with the Bayes-UCB tuning of ``bench/thompson_online_ucb.py`` merged in
    (``horizons[T]["bayes_ucb"]``, ``horizons[T]["ucb_best"]``, ``"ucb_grid"``) and its discount scan
    (``"discount_scan"``: R₂₀₀ of the discounted policy at γ = 1 − k/T, k in :data:`DISCOUNT_FACTORS`)."""
    files = []
    for name, arg, default in (("path", path, TUNING_JSON), ("ucb_path", ucb_path, UCB_JSON)):
        if arg is not None and not isinstance(arg, (str, Path)):
            raise TypeError(f"Invalid {name}: {arg!r} (must be a str or pathlib.Path to a JSON file, or None)")
        f = Path(default if arg is None else arg)
        if not f.is_file():
            raise ValueError(f"Invalid {name}: {str(f)!r} (must be an existing JSON file; None reads the committed "
                             f"{default})")
        files.append(f)
    out = json.loads(files[0].read_text())
    ucb = json.loads(files[1].read_text())
    out["ucb_grid"] = ucb["ucb_grid"]
    if "discount_scan" in ucb:
        out["discount_scan"] = ucb["discount_scan"]
    for h, row in ucb["horizons"].items():
        if h in out["horizons"]:
            out["horizons"][h].update(row)
    return out


def exact_verdicts(*, argmax_err: float, quad_err: float, foc: Any, pos_residual: Any, cov_residual: Any,
                   maxcov_residual: Any, pred_residual: Any, r2_value: Any, regret: Any, single_crossing: bool,
                   grid_change: Mapping[str, float], competitors: Mapping[str, float],
                   scan: Mapping[str, Any] | None = None, title: str = "Thompson sampling is regularised greed — "
                   "headline claims") -> Verdicts:
    """The chapter's deterministic rows, from its sympy derivations, its numerical identity checks, the exact
    DP regrets ``regret`` (array (P, T+1), policies in :data:`POLICIES` order, T ≥ 200), the competitors' exact
    R_T at T = 200 (:func:`competitor_regrets`) and the bench's horizon scan (:func:`tuning_scan`)."""
    regret = np.asarray(to_numpy(regret) if isinstance(regret, torch.Tensor) else regret, dtype=float)
    if regret.ndim != 2 or regret.shape[0] != len(POLICIES) or regret.shape[1] < 201:
        raise ValueError(f"Invalid regret: shape {regret.shape} (must be ({len(POLICIES)}, T + 1) with T ≥ 200)")
    if not np.all(np.isfinite(regret)):
        raise ValueError("Invalid regret: contains NaN/inf (must be finite)")
    P = {p: k for k, p in enumerate(POLICIES)}
    R_ts, R_gr = regret[P["ts"]], regret[P["greedy"]]
    miss = [p for p in GRID_CHECKED if p not in grid_change]
    if miss:
        raise ValueError(f"Invalid grid_change: missing {miss} (must be grid_halving(...)'s dict)")
    r2_exact = 7 / (4 * math.sqrt(2 * math.pi))
    v = Verdicts(title, display=False, claims=PAPER_CLAIMS)
    v.less("TS = argmax of x·m + s·φ(Φ⁻¹(x)): max |numerical argmax − Φ(m/s)| on a 41×20 grid of (m, s)",
           argmax_err, 1e-6, kind="consistency", source="reconstruction",
           basis="model: golden-section search (90 steps, bracket 0.618⁹⁰ ≈ 1e-19); float64 flatness of the "
                 "objective near its optimum limits the search to ~1e-7",
           note="our reconstruction of the paper's 'regularised online optimisation' form, checked without using "
                "the closed form (scipy's ndtri inside the search vs torch.erfc for Φ(m/s)). A wrong regulariser "
                "(e.g. s·x(1−x)) misses by ~0.1. It matters because every later statement about the regulariser "
                "rests on it.")
    v.less("TS's regret is the biserial covariance: max |quad − s·φ(m/s)| over 15 (m, s)", quad_err, 1e-11,
           kind="consistency", source="reconstruction",
           basis="model: 100× the quadrature's requested accuracy (epsabs 1e-13)",
           note="scipy.integrate.quad of (d − m)·N(d; m, s²) over d > 0; a wrong closed form would miss by ~0.1.")
    v.true("sympy: J'(x) = m − s·Φ⁻¹(x) = 0 only at Φ(m/s); J'' = −s/φ(Φ⁻¹(x)) < 0; J(Φ(m/s)) = E[D⁺]",
           foc.critical_q == [sp.Symbol("m", real=True) / sp.Symbol("s", positive=True)]
           and foc.second_derivative_residual == 0 and foc.value_minus_expected_positive_part == 0,
           kind="consistency", source="reconstruction", measured="residuals 0, 0")
    v.true("sympy: E[(u + σZ)⁺] = uΦ(u/σ) + σφ(u/σ)", pos_residual == 0, kind="consistency", source="derived",
           measured=f"residual {pos_residual}")
    v.true("sympy: Cov(1{D>0}, D) = s·φ(m/s); max Cov(Bernoulli(x), D) = s·φ(Φ⁻¹(x))",
           cov_residual == 0 and maxcov_residual == 0, kind="consistency", source="reconstruction",
           measured=f"residuals {cov_residual}, {maxcov_residual}")
    v.true("sympy: Var(m_{n+1} − mₙ) = sₙ² − s_{n+1}² (predictive step)", pred_residual == 0,
           kind="consistency", source="derived", measured=f"residual {pred_residual}")
    v.true("sympy: R₂(TS) = 7/(4√(2π)) at σ₀² = σ² = 1", sp.simplify(r2_value - 7 / (4 * sp.sqrt(2 * sp.pi))) == 0,
           kind="consistency", source="derived", measured=str(r2_value))
    v.close("DP on the grid: R₂(TS) = 7/(4√(2π))", float(R_ts[2]), r2_exact, atol=1e-4, kind="consistency",
            source="derived", basis="model: interpolation error O(Δ²) with Δ = 0.0075 is ~1e-6; 1e-4 leaves room",
            note="the DP against sympy's two-step value: an independent check of the backward induction.")
    shown = {"ts": "TS", "optimal": "optimum", "tempered_shutdown": "tempered + shutdown"}  # names, not keys
    for p in GRID_CHECKED:
        jump = p in ("shutdown", "tempered_shutdown")
        v.less(f"grid ÷2 (1601 → 801 points) changes R₂₀₀({shown.get(p, p)}) by (relative)", float(grid_change[p]),
               1e-3,
               kind="consistency", source="derived",
               basis="model: the DP's error shrinks at least linearly in the grid step Δ (O(Δ²) for a smooth "
                     "policy, O(Δ) where a policy jumps), so the 1601-point value lies within the halving change of "
                     "the limit; 1e-3 is the accuracy the figure and the shutdown row's 0.02 tolerance need",
               note="discretisation check of the DP" + (": the policy jumps to x = 0 at m/s = −z₀, so its error is "
                                                        "O(Δ), not O(Δ²) — the check the shutdown row's tolerance "
                                                        "rests on." if jump else "."))
    if "bayes_ucb" in grid_change:
        v.less("grid ÷2 (1601 → 801 points) changes R₂₀₀(Bayes-UCB) by (relative)", float(grid_change["bayes_ucb"]),
               0.05, kind="consistency", source="derived",
               basis="model: Bayes-UCB's threshold −c·sₙ is snapped up to the grid, an O(Δ) error in the threshold "
                     "and so in R; its control's margin over tempered TS is a third of its R₂₀₀, so a 5 % grid error "
                     "cannot change whether it passes",
               note="the discretisation check of the shutdown row's Bayes-UCB control (sceptic review).")
    v.true("the optimal policy is a threshold rule: pulls iff m ≥ bₕ(n), for every (h, n) reached",
           single_crossing, kind="consistency", source="derived")
    v.less("greedy beats TS at T = 10: R_(greedy)/R_(TS)", float(R_gr[10] / R_ts[10]), 1.0, kind="consistency",
           source="derived", basis="exact: exact DP values compared with each other",
           note="a regression guard on the figure's story (not a paper claim).")
    v.greater("greedy loses to TS at T = 200: R_(greedy)/R_(TS)", float(R_gr[200] / R_ts[200]), 1.0,
              kind="consistency", source="derived", basis="exact: exact DP values compared with each other",
              note="a regression guard on the figure's story; it is also why greedy is the shutdown row's control.")
    _shutdown_rows(v, competitors, tuning_scan() if scan is None else scan)
    return v


def _shutdown_rows(v: Verdicts, c: Mapping[str, float], scan: Mapping[str, Any]) -> None:
    """The rows of the shutdown and stationarization claims (exact DP at T = 200; the horizon scan from the bench)."""
    need = ("ts", "greedy", "optimal", "shutdown", "tempered", "tempered_shutdown", "discounted", "discounted_planted")
    miss = [k for k in need if k not in c]
    if miss:
        raise ValueError(f"Invalid competitors: missing {miss} (must be competitor_regrets(...)'s dict)")
    e = EXPERIMENT
    hs = sorted(scan["horizons"], key=int)
    tol = 0.02
    grid_basis = ("model: halving the grid (1601 → 801 points) moves the R₂₀₀ of the shutdown, tempered TS and "
                  "tempered TS with the shutdown by < 1e-3 relative (< 0.005 at R₂₀₀ < 5; grid rows above), and the "
                  "DP's error shrinks at least linearly in the grid step (O(Δ) at the shutdown's jump), so each "
                  "1601-point value lies within that change of the limit and a difference of two is exact to "
                  f"< 0.01; {tol:g} is fixed above that")
    adv = c["tempered"] - c["shutdown"]
    best = {h: {k: min(scan["horizons"][h][k].values()) for k in ("tempered", "bayes_ucb")}
            for h in hs if "bayes_ucb" in scan["horizons"][h]}
    ucb_scan = ", ".join(f"T = {h}: {b['tempered'] - b['bayes_ucb']:.3g}" for h, b in best.items())
    v.greater(f"conditional shutdown (z₀ = {e['shutdown_z']:g}) beats the best unconditional tempering (κ = "
              f"{e['temper']:g}), both tuned on 9-point grids: R_(tempered) − R_(shutdown) at T = 200 (exact DP)",
              adv, tol,
              kind="not_specific", source="secondary", tests="shutdown",
              control=[Control("greedy — the regulariser switched off everywhere, no condition — in the shutdown's "
                               "place: R_(tempered) − R_(greedy)", c["tempered"] - c["greedy"],
                               why="the ablation of the condition: the shutdown with its test m/s < −z₀ removed",
                               tuned="none needed: greedy has no parameter"),
                       Control(f"tempered TS (κ = {e['temper']:g}) in the shutdown's place: "
                               "R_(tempered) − R_(tempered)",
                               0.0,
                               why="the sceptic's alternative: explore less everywhere, without a condition (tuned, it "
                                   "beats the shutdown at z₀ = 2: 4.87 vs 5.27)",
                               tuned="the same 9-point grid on the same exact DP as z₀ "
                                     "(bench/thompson_online_tuning.py)",
                               weak="it is the measurement's reference, so 0 by construction; its regret "
                                    f"{c['tempered']:.4g} is shown in the note"),
                       Control(f"Bayes-UCB (pull iff m + c·s ≥ 0, c = {e['ucb_c']:g}) in the shutdown's place: "
                               "R_(tempered) − R_(Bayes-UCB)", c["tempered"] - c["bayes_ucb"],
                               why="the sceptic review's alternative: the standard Bayesian index rule, TS's usual "
                                   "competitor. In the chapter's own form it is greed plus the linear regulariser "
                                   "c·s·x applied everywhere — unconditional, like tempering, but of another shape",
                               tuned="c on the shutdown's 9-point grid (both are thresholds on m/s), on the same "
                                     "exact DP at T = 200 (bench/thompson_online_ucb.py)")],
              basis=grid_basis,
              scan=Scan("horizon T", tuple(int(h) for h in hs),
                        tuple(min(scan["horizons"][h]["tempered"].values())
                              - min(scan["horizons"][h]["shutdown"].values()) for h in hs),
                        tuple(min(scan["horizons"][h]["tempered"].values())
                              > min(scan["horizons"][h]["shutdown"].values()) + tol for h in hs)),
              note=(f"R₂₀₀: TS {c['ts']:.4g}, shutdown {c['shutdown']:.4g}, tempered {c['tempered']:.4g}, Bayes-UCB "
                    f"{c['bayes_ucb']:.4g}, optimum {c['optimal']:.4g}. Each tuned at T = 200 on its own grid; the "
                    "scan re-tunes both at every T (bench): the condition beats tempering at long horizons, not at "
                    "T = 50. The shutdown does move TS towards the optimum, but beating the best tempering is not "
                    "specific to the condition: Bayes-UCB, an unconditional regulariser linear in x (a threshold rule "
                    "like the optimum's), beats it by far more at every horizon (R_(tempered) − R_(Bayes-UCB), "
                    "re-tuned: "
                    f"{ucb_scan}). What TS lacks here is the regulariser's shape more than a condition."))
    v.greater("what the condition adds on top of the best tempering: R_(tempered) − R_(tempered+shutdown) at T = 200",
              c["tempered"] - c["tempered_shutdown"], tol, kind="consistency", source="derived", basis=grid_basis,
              note="the shutdown's test m/s < −z₀ applied to tempered TS: it removes exploration of a clearly worse "
                   "arm, which tempering only shrinks")
    excess = (c["discounted"] - c["optimal"]) / c["optimal"]
    ds = scan.get("discount_scan")
    d_scan = "" if ds is None else (
        " The closeness needs the discount matched to T: γ = 1 − k/T at T = 200 gives an excess of " + ", ".join(
            f"{100 * (r / ds['optimal'] - 1):.1f} % (k = {k})" for k, r in sorted(ds["discounted"].items(),
                                                                          key=lambda kv: float(kv[0])))
        + " — a factor-2 mismatch of the effective horizon comes to about the 5 % band, a factor 3 exceeds the 10 %.")
    planted = (c["discounted_planted"] - c["optimal"]) / c["optimal"]
    close = 0.05
    v.less("the discounted stationary policy (γ = 1 − 1/T, solved exactly) on the T = 200 problem: "
           "(R_(discounted) − R_(optimal))/R_(optimal)", excess, close, kind="differs", source="paper",
           tests="discounted",
           paper=2 * close, paper_shown="'changes the problem too much' (no number given; shown as 10 %, twice the "
                                        "5 % band)",
           planted=Planted(f"the discount with an effective horizon {PLANTED_HORIZON_FACTOR}× shorter "
                           f"(γ = 1 − {PLANTED_HORIZON_FACTOR}/T), same measurement", planted,
                           effect="a discounted stationarization that does change the problem, at about the 10 % "
                                  "shown as the paper's size: its stationary policy explores as if T/3 steps were "
                                  "left"),
           basis="paper: 'stays close to the original' read as a regret within 5 % of the finite-horizon optimum, "
                 "fixed before the solve (TS is 94 % above it)",
           scan=Scan("horizon T", tuple(int(h) for h in hs),
                     tuple((scan["horizons"][h]["discounted"] - scan["horizons"][h]["optimal"])
                           / scan["horizons"][h]["optimal"] for h in hs)),
           note=(f"R₂₀₀: discounted {c['discounted']:.4g}, optimum {c['optimal']:.4g}. Not pulling is absorbing, so "
                 "the discounted problem is solved by one backward pass over n (a Gittins-index rule); its "
                 "threshold at n = 0 matches the finite-horizon optimum's. The paper's own stationarization could not "
                 "be read: this is the discounted one it calls unfaithful, measured by regret." + d_scan))
