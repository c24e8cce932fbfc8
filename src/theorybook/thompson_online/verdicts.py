"""Every verdict row of the Thompson-sampling chapter, with the paper claims they test.

Only the abstract, a TL;DR and one figure caption of the paper could be read, so the regularised-greed identity
and the shutdown rule are **our reconstruction**: the rows that check the identity are ``consistency`` rows (our
algebra, proved by sympy and checked numerically). The one paper claim tested as a reproduction is the secondary
account's "conditional regularizer shutdown moves TS towards the optimum", against the unconditional shutdown
(greedy) as its control: switching the regulariser off *everywhere* must not pass the same test.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy as sp
import torch

from .. import validate
from ..check import Control, PaperClaim, Verdicts, z_threshold
from ..device import to_numpy
from .dynamics import POLICIES, BanditSolution, MonteCarloRegret, simulate_policies, solve_bandit

__all__ = ["EXPERIMENT", "PAPER_CLAIMS", "experiment", "exact_verdicts", "seeded_verdicts"]

#: The chapter's experiment B (the paper's figure): prior N(0, 1), noise variance 1, T = 200, shutdown z₀ = 2,
#: 1601-point grid, 20K Monte Carlo trials per policy (as in the paper's caption).
EXPERIMENT = {"horizon": 200, "prior_var": 1.0, "noise_var": 1.0, "shutdown_z": 2.0, "grid": 1601, "trials": 20_000}

PAPER_CLAIMS = (
    PaperClaim("regularised-greed", "TS solves an online optimisation problem: instantaneous regret plus a "
               "'biserial covariance' regulariser ν̃ that measures the residual uncertainty about which arm is "
               "better — the same form as the stationary Bellman-optimal policy, with a different regulariser ν.",
               quoted_only=True,
               why="the paper's ν̃ and objective ℛ² could not be read; the chapter proves and checks its own "
                   "reconstruction of the identity (consistency rows), which is not a test of the paper's form"),
    PaperClaim("stationarization", "A 'faithful stationarization' of the finite-horizon regret problem has a "
               "stationary Bellman-optimal policy x*(π).", quoted_only=True,
               why="the stationarized objective could not be read; the chapter uses the finite-horizon "
                   "Bayes-optimal policy (exact DP) as a stand-in"),
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
    g_mean, g_se, g_z = _paired_z(mc, "ts", "greedy")
    ts, sd = POLICIES.index("ts"), POLICIES.index("shutdown")
    dp_gap = float(sol.regret[ts, T] - sol.regret[sd, T])
    z_one = z_threshold(2e-3)  # one-sided 1e-3
    v = Verdicts(f"Thompson sampling, Monte Carlo (seed {seed})", display=False)
    v.less(f"Monte Carlo ({mc.trials} trials/policy) = exact DP at T = {T}: max over 4 policies of |MC − DP|/SE",
           float(z.max()), zt, kind="consistency", source="derived",
           basis=(f"model: each MC mean averages {mc.trials} i.i.d. realised regrets, so (MC − DP)/SE ≈ N(0, 1); "
                  f"Bonferroni over 4 policies, false alarm ≤ 1e-3"),
           note=(f"worst: {POLICIES[worst]}. The DP's grid error (< 1e-3 relative, checked by doubling the grid) "
                 f"is < 0.02 SE. Why it matters: the exact DP is what every other regret number rests on."))
    v.greater(f"conditional shutdown lowers TS's regret at T = {T}: paired z of R_TS − R_shutdown", d_z, z_one,
              kind="reproduces", source="secondary", tests="shutdown",
              control=Control("unconditional shutdown (greedy): paired z of R_TS − R_greedy", g_z),
              basis="model: paired CLT z-score; one-sided threshold z_threshold(2e-3) = 3.09, false alarm ≤ 1e-3 "
                    "under 'no improvement'",
              note=(f"[secondary] the paper's 'conditional regularizer shutdown'; the rule (x = 0 once m/s < "
                    f"−{EXPERIMENT['shutdown_z']:g}) is our operationalisation. Paired difference {d_mean:.4g} ± "
                    f"{d_se:.2g} (exact DP gap {dp_gap:.4g}); the control's difference is {g_mean:.4g} ± {g_se:.2g}: "
                    f"switching the regulariser off everywhere makes TS worse, so the condition is what helps."))
    return v


def exact_verdicts(*, argmax_err: float, quad_err: float, foc: Any, pos_residual: Any, cov_residual: Any,
                   maxcov_residual: Any, pred_residual: Any, r2_value: Any, regret: Any, single_crossing: bool,
                   grid_change: Mapping[str, float], title: str = "Thompson sampling is regularised greed — "
                   "headline claims") -> Verdicts:
    """The chapter's deterministic rows, from its sympy derivations, its numerical identity checks and the exact
    DP regrets ``regret`` (array (P, T+1), policies in :data:`POLICIES` order, T ≥ 200)."""
    regret = np.asarray(to_numpy(regret) if isinstance(regret, torch.Tensor) else regret, dtype=float)
    if regret.ndim != 2 or regret.shape[0] != len(POLICIES) or regret.shape[1] < 201:
        raise ValueError(f"Invalid regret: shape {regret.shape} (must be ({len(POLICIES)}, T + 1) with T ≥ 200)")
    if not np.all(np.isfinite(regret)):
        raise ValueError("Invalid regret: contains NaN/inf (must be finite)")
    P = {p: k for k, p in enumerate(POLICIES)}
    R_opt, R_ts, R_gr = regret[P["optimal"]], regret[P["ts"]], regret[P["greedy"]]
    ordering = min(min(float(R_ts[t] - R_opt[t]), float(R_gr[t] - R_opt[t])) for t in (10, 50, 200))
    r2_exact = 7 / (4 * math.sqrt(2 * math.pi))
    v = Verdicts(title, display=False, claims=PAPER_CLAIMS)
    v.less("TS = argmax of x·m + s·φ(Φ⁻¹(x)): max |numerical argmax − Φ(m/s)| on a 41×20 grid of (m, s)",
           argmax_err, 1e-6, kind="consistency", source="reconstruction",
           basis="model: golden-section search (90 steps, bracket 0.618^90 ≈ 1e-19); float64 flatness of the "
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
    v.true("sympy: Var(m_{n+1} − m_n) = s_n² − s_{n+1}² (predictive step)", pred_residual == 0,
           kind="consistency", source="derived", measured=f"residual {pred_residual}")
    v.true("sympy: R₂(TS) = 7/(4√(2π)) at σ₀² = σ² = 1", sp.simplify(r2_value - 7 / (4 * sp.sqrt(2 * sp.pi))) == 0,
           kind="consistency", source="derived", measured=str(r2_value))
    v.close("DP on the grid: R₂(TS) = 7/(4√(2π))", float(R_ts[2]), r2_exact, atol=1e-4, kind="consistency",
            source="derived", basis="model: interpolation error O(Δ²) with Δ = 0.0075 is ~1e-6; 1e-4 leaves room",
            note="the DP against sympy's two-step value: an independent check of the backward induction.")
    for p in ("ts", "optimal"):
        v.less(f"grid ×2 (1601 → 3201 points) changes R₂₀₀({p}) by (relative)", float(grid_change[p]), 1e-3,
               kind="consistency", source="derived",
               basis="model: the piecewise-linear value function converges as O(Δ²); 1e-3 is the accuracy the "
                     "figure needs",
               note="discretisation check of the DP.")
    v.greater("Bayes-optimal ≤ TS and ≤ greedy at T = 10, 50, 200 (smallest gap)", ordering, 0.0,
              kind="consistency", source="derived",
              basis="exact: an exact DP on a monotone grid operator cannot be beaten by another policy",
              note="holds by construction for a correct DP: a check of the code, not of the paper.")
    v.true("the optimal policy is a threshold rule: pulls iff m ≥ b_h(n), for every (h, n) reached",
           single_crossing, kind="consistency", source="derived")
    v.less("greedy beats TS at T = 10: R_greedy/R_TS", float(R_gr[10] / R_ts[10]), 1.0, kind="consistency",
           source="derived", basis="exact: exact DP values compared with each other",
           note="a regression guard on the figure's story (not a paper claim).")
    v.greater("greedy loses to TS at T = 200: R_greedy/R_TS", float(R_gr[200] / R_ts[200]), 1.0,
              kind="consistency", source="derived", basis="exact: exact DP values compared with each other",
              note="a regression guard on the figure's story; it is also why greedy is the shutdown row's control.")
    return v
