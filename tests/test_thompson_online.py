"""Tests for theorybook.thompson_online: closed forms vs scipy, the sympy derivations, the exact DP against closed
forms, a plain reference and Monte Carlo, validation, and the widget at its extremes."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch
from scipy import stats

from theorybook.thompson_online import (
    CHAPTER_SEEDS,
    POLICIES,
    bayes_regret,
    biserial_covariance,
    expected_positive_part,
    numerical_argmax,
    optimal_boundary,
    posterior_sd,
    predictive_sd,
    regularised_objective,
    seeded_verdicts,
    simulate_policies,
    simulate_regret,
    solve_bandit,
    theory,
    ts_probability,
    two_step_ts_regret,
)

PHI0 = 1.0 / math.sqrt(2.0 * math.pi)


# ------------------------------------------------------------------------------------------------ closed forms
@pytest.mark.parametrize("m,s", [(0.0, 1.0), (-0.7, 0.3), (1.3, 2.0), (-4.0, 0.5), (0.2, 1e-3)])
def test_closed_forms_match_scipy(m, s):
    assert ts_probability(m, s) == pytest.approx(stats.norm.cdf(m / s), rel=1e-12, abs=1e-300)
    assert biserial_covariance(m, s) == pytest.approx(s * stats.norm.pdf(m / s), rel=1e-12, abs=1e-300)
    e_pos = m * stats.norm.cdf(m / s) + s * stats.norm.pdf(m / s)
    assert expected_positive_part(m, s) == pytest.approx(e_pos, rel=1e-12, abs=1e-300)
    # TS's instantaneous regret E[D⁺] − Φ(m/s)·m is the biserial covariance
    assert e_pos - ts_probability(m, s) * m == pytest.approx(biserial_covariance(m, s), rel=1e-9, abs=1e-15)


def test_objective_value_at_the_maximiser_is_expected_positive_part():
    for m, s in [(-0.5, 0.5), (0.0, 1.0), (0.8, 1.5)]:
        x = ts_probability(m, s)
        assert regularised_objective(x, m, s) == pytest.approx(expected_positive_part(m, s), rel=1e-10)
    # the ends: φ(Φ⁻¹(0)) = φ(Φ⁻¹(1)) = 0
    assert regularised_objective(0.0, 0.3, 1.0) == 0.0
    assert regularised_objective(1.0, 0.3, 1.0) == pytest.approx(0.3)


def test_numerical_argmax_is_phi():
    m, s = np.meshgrid(np.linspace(-3, 3, 13), np.linspace(0.1, 2.0, 7), indexing="ij")
    err = np.abs(numerical_argmax(m, s) - stats.norm.cdf(m / s)).max()
    assert err < 1e-6


def test_tensor_inputs_broadcast_and_stay_tensors():
    m = torch.linspace(-1, 1, 5, dtype=torch.float64)
    out = ts_probability(m, 0.5)
    assert isinstance(out, torch.Tensor) and out.shape == (5,)
    assert isinstance(ts_probability(0.1, 0.5), float)


def test_quadrature_and_monte_carlo_covariance():
    assert theory.covariance_by_quadrature(-0.3, 1.0) == pytest.approx(biserial_covariance(-0.3, 1.0), abs=1e-11)
    est, se = theory.monte_carlo_covariance(-0.3, 1.0, 200_000, seed=1)
    assert abs(est - biserial_covariance(-0.3, 1.0)) < 5 * se


def test_posterior_and_predictive_sd():
    assert posterior_sd(0) == 1.0
    assert posterior_sd(3, prior_var=2.0, noise_var=0.5) == pytest.approx((0.5 + 6.0) ** -0.5)
    assert predictive_sd(0) ** 2 == pytest.approx(1.0 - 0.5)
    expected = posterior_sd(4, 2.0, 3.0) ** 2 - posterior_sd(5, 2.0, 3.0) ** 2
    assert predictive_sd(4, 2.0, 3.0) ** 2 == pytest.approx(expected)


# ------------------------------------------------------------------------------------------------ sympy
def test_sympy_derivations_are_exact():
    foc = theory.derive_first_order()
    assert foc.second_derivative_residual == 0 and foc.value_minus_expected_positive_part == 0
    assert len(foc.critical_q) == 1
    assert theory.derive_positive_part()[1] == 0
    assert theory.derive_covariances() == (0, 0)
    assert theory.derive_predictive_variance()[1] == 0


def test_two_step_ts_regret_sympy_matches_numeric():
    import sympy as sp

    general, value = theory.derive_two_step_ts()
    assert sp.simplify(value - 7 / (4 * sp.sqrt(2 * sp.pi))) == 0
    s0, v = sp.Symbol("sigma_0", positive=True), sp.Symbol("sigma^2", positive=True)
    for v0_, v_ in [(1.0, 1.0), (2.0, 0.5), (0.3, 4.0)]:
        assert float(general.subs({s0: math.sqrt(v0_), v: v_})) == pytest.approx(two_step_ts_regret(v0_, v_), rel=1e-12)


# ------------------------------------------------------------------------------------------------ DP
def _reference_dp(policy: str, T: int, G: int, z0: float = 2.0, v0: float = 1.0, v: float = 1.0,
                  kappa: float = 1.0) -> float:
    """Plain per-(h, n) numpy reference for the same piecewise-linear model: the expectation of the interpolant is
    taken by a fine trapezoid rule in y (40001 points over m ± 10δ for every grid point m) instead of the closed-form
    FFT kernel — an independent numerical method. Small sizes only."""
    half = 6.0 * math.sqrt(v0)
    g = np.linspace(-half, half, G)
    s = [(1 / v0 + n / v) ** -0.5 for n in range(T + 2)]
    u = np.linspace(-10.0, 10.0, 40001)
    w = np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi) * (u[1] - u[0])
    w[0] *= 0.5
    w[-1] *= 0.5
    V = np.zeros((T + 2, G))
    for h in range(1, T + 1):
        Vn = np.zeros_like(V)
        for n in range(0, T - h + 1):
            d = math.sqrt(s[n] ** 2 - s[n + 1] ** 2)
            f = V[n + 1]
            y = g[:, None] + d * u[None, :]
            if policy == "greedy":
                # greedy's value jumps at m = 0 (left of it V_{h-1} = (h-1)·s·φ(0): never pulled again). A trapezoid
                # rule across a jump is only O(step) accurate, so the jump J·1{y ≥ 0} is integrated exactly (J·Φ(m/δ))
                # and the continuous remainder by the trapezoid rule
                jump = f[G // 2] - (h - 1) * s[n + 1] * PHI0
                fc = f - jump * (np.arange(G) >= G // 2)
                cont = np.interp(y, g, fc) @ w + jump * stats.norm.cdf(g / d)
            else:
                cont = np.interp(y, g, f) @ w
            z = g / s[n]
            e_pos = g * stats.norm.cdf(z) + s[n] * stats.norm.pdf(z)
            if policy == "optimal":
                x = (g + V[n] - cont >= 0).astype(float)
            elif policy == "ts":
                x = stats.norm.cdf(z)
            elif policy == "greedy":
                x = (g >= 0).astype(float)
            elif policy == "tempered":
                x = stats.norm.cdf(z / kappa)
            elif policy == "tempered_shutdown":
                x = stats.norm.cdf(z / kappa) * (z >= -z0)
            else:
                x = stats.norm.cdf(z) * (z >= -z0)
            Vn[n] = e_pos - x * g + x * cont + (1 - x) * V[n]
        V = Vn
    return float(V[0, G // 2])


@pytest.mark.parametrize("policy", POLICIES)
def test_dp_matches_plain_reference(policy):
    T, G = 6, 101
    fast = float(bayes_regret(policy, T, grid=G, shutdown_z=2.0 if policy == "shutdown" else None, device="cpu")[T])
    assert fast == pytest.approx(_reference_dp(policy, T, G), abs=1e-6)


def test_dp_first_steps_closed_form():
    sol = solve_bandit(4, shutdown_z=2.0, grid=801, device="cpu")
    assert torch.all(sol.regret[:, 0] == 0)
    assert torch.allclose(sol.regret[:, 1], torch.full((4,), PHI0, dtype=torch.float64), atol=1e-12)
    assert float(sol.regret[POLICIES.index("ts"), 2]) == pytest.approx(two_step_ts_regret(), abs=1e-5)
    # with another prior and noise
    r = bayes_regret("ts", 2, prior_var=2.0, noise_var=0.5, grid=801, device="cpu")
    assert float(r[2]) == pytest.approx(two_step_ts_regret(2.0, 0.5), abs=1e-4)


def test_reference_numbers_and_ordering():
    """The issue's prototype numbers (R_10: greedy 1.20 vs TS 1.83; R_200: TS 5.70, shutdown 5.27) on an 801 grid;
    greedy's R_200 is 16.88 here (the prototype's 16.5 smeared greedy's jump at m = 0)."""
    sol = solve_bandit(200, shutdown_z=2.0, grid=801, device="cpu")
    R = {p: sol.regret[k] for k, p in enumerate(POLICIES)}
    assert float(R["ts"][10]) == pytest.approx(1.83, abs=5e-3)
    assert float(R["greedy"][10]) == pytest.approx(1.206, abs=5e-3)
    assert float(R["ts"][200]) == pytest.approx(5.695, abs=5e-3)
    assert float(R["shutdown"][200]) == pytest.approx(5.27, abs=5e-3)
    assert float(R["greedy"][200]) == pytest.approx(16.88, abs=2e-2)
    for t in (10, 50, 200):
        assert R["optimal"][t] <= min(R["ts"][t], R["greedy"][t], R["shutdown"][t])
    assert sol.single_crossing


def test_boundary_last_step_is_greedy_and_explores_earlier():
    b = optimal_boundary(30, grid=401, device="cpu")
    assert torch.allclose(b[1, :30], torch.zeros(30, dtype=torch.float64), atol=1e-12)
    assert torch.isinf(b[0]).all() and torch.isinf(b[30, 1:]).all()
    assert float(b[30, 0]) < float(b[10, 0]) < float(b[2, 0]) < 0  # longer horizons explore more


def test_monte_carlo_agrees_with_dp():
    T = 30
    sol = solve_bandit(T, shutdown_z=2.0, grid=801, device="cpu")
    mc = simulate_policies(POLICIES, T, 20_000, seed=11, shutdown_z=2.0, grid=801, device="cpu")
    z = ((mc.mean[:, T] - sol.regret[:, T]) / mc.se[:, T]).abs()
    assert float(z.max()) < 4.0
    one = simulate_regret("ts", T, 20_000, seed=11, grid=801, device="cpu")
    assert one.mean.shape == (1, T + 1)


def test_monte_carlo_is_seeded():
    a = simulate_policies(("ts", "greedy"), 10, 500, seed=3, grid=201)
    b = simulate_policies(("ts", "greedy"), 10, 500, seed=3, grid=201)
    assert torch.equal(a.mean, b.mean) and torch.equal(a.final, b.final)


def test_seeded_verdicts_small_scale():
    v = seeded_verdicts(CHAPTER_SEEDS[0] + 1, trials=4000, horizon=200, grid=401)
    assert v.passed and {r.kind for r in v.rows} == {"consistency"}


def test_bayes_ucb_matches_monte_carlo():
    """The sceptic review's control, Bayes-UCB (pull iff m + c·s_n ≥ 0, threshold snapped up to the grid), evaluated
    exactly against a plain Monte Carlo of the same snapped rule."""
    T, G, N, c = 40, 401, 40_000, 1.5
    sol = solve_bandit(T, policies=("bayes_ucb",), ucb_c=c, grid=G, device="cpu")
    exact = float(sol.regret[0, T])
    s = (1.0 + torch.arange(T + 1, dtype=torch.float64)).rsqrt()
    b = sol.m[torch.searchsorted(sol.m, -c * s)]
    g = torch.Generator().manual_seed(7)
    mu = torch.randn(N, generator=g, dtype=torch.float64)
    m = torch.zeros(N, dtype=torch.float64)
    n = torch.zeros(N, dtype=torch.long)
    reg = torch.zeros(N, dtype=torch.float64)
    for _ in range(T):
        a = (m >= b[n]).to(torch.float64)
        y = mu + torch.randn(N, generator=g, dtype=torch.float64)
        m = m + a * (y - m) / (2.0 + n.to(torch.float64))
        n = n + a.long()
        reg += mu.clamp_min(0.0) - a * mu
    assert abs(float(reg.mean()) - exact) < 4.5 * float(reg.std()) / math.sqrt(N)
    with pytest.raises(ValueError, match="ucb_c"):
        solve_bandit(T, policies=("bayes_ucb",), grid=G)
    with pytest.raises(ValueError, match="bayes_ucb"):
        simulate_policies(("bayes_ucb",), T, 10, 0)


def test_tempered_policies_match_plain_reference():
    T, G = 6, 201
    for pol, kw in (("tempered", {"temper": 0.6}), ("tempered_shutdown", {"temper": 0.6, "shutdown_z": 1.0})):
        fast = float(solve_bandit(T, policies=(pol,), grid=G, device="cpu", **kw).regret[0, T])
        assert fast == pytest.approx(_reference_dp(pol, T, G, z0=kw.get("shutdown_z", 2.0), kappa=0.6), rel=2e-6)


def test_discounted_solution_is_a_stationary_threshold_rule():
    from theorybook.thompson_online import discounted_solution

    d = discounted_solution(0.99, grid=401)
    b = d.boundary.numpy()
    assert d.single_crossing and b[0] < b[5] < 0.0 and b[-1] == 0.0
    # a longer effective horizon explores more at the prior
    assert float(discounted_solution(0.995, grid=401).boundary[0]) < b[0]
    sol = solve_bandit(60, policies=("optimal", "discounted", "ts"), gamma=1 - 1 / 60, grid=401, device="cpu")
    R = sol.regret[:, 60]
    assert float(R[0]) <= float(R[1]) < float(R[2])


def test_discounted_evaluation_matches_monte_carlo():
    """The exact evaluation of the discounted threshold policy (jumps split off at its thresholds) against a plain
    Monte Carlo of the same rule (pull iff m ≥ grid-snapped b(n))."""
    from theorybook.thompson_online import discounted_solution

    T, G, N = 40, 401, 40_000
    exact = float(solve_bandit(T, policies=("discounted",), gamma=1 - 1 / T, grid=G, device="cpu").regret[0, T])
    d = discounted_solution(1 - 1 / T, grid=G)
    b = d.m[torch.searchsorted(d.m, d.boundary[: T + 1]).clamp_max(G - 1)]
    b = torch.where(torch.searchsorted(d.m, d.boundary[: T + 1]) >= G, torch.full_like(b, math.inf), b)
    g = torch.Generator().manual_seed(5)
    mu = torch.randn(N, generator=g, dtype=torch.float64)
    m = torch.zeros(N, dtype=torch.float64)
    n = torch.zeros(N, dtype=torch.long)
    reg = torch.zeros(N, dtype=torch.float64)
    for _ in range(T):
        a = (m >= b[n]).to(torch.float64)
        y = mu + torch.randn(N, generator=g, dtype=torch.float64)
        tau = 1.0 + n.to(torch.float64)
        m = m + a * (y - m) / (tau + 1.0)
        n = n + a.long()
        reg += mu.clamp_min(0.0) - a * mu
    se = float(reg.std()) / math.sqrt(N)
    assert abs(float(reg.mean()) - exact) < 4.5 * se


def test_tuning_json_agrees_with_experiment_and_grids():
    from theorybook.thompson_online.verdicts import (
        DISCOUNT_FACTORS,
        EXPERIMENT,
        KAPPA_GRID,
        UCB_GRID,
        Z0_GRID,
        tuning_scan,
    )

    sc = tuning_scan()
    assert sc["z0_grid"] == list(Z0_GRID) and sc["kappa_grid"] == list(KAPPA_GRID) and sc["ucb_grid"] == list(UCB_GRID)
    h = sc["horizons"]["200"]
    assert h["z0_best"] == EXPERIMENT["shutdown_z"] and h["kappa_best"] == EXPERIMENT["temper"]
    assert h["ucb_best"] == EXPERIMENT["ucb_c"] and all("bayes_ucb" in r for r in sc["horizons"].values())
    assert sorted(float(k) for k in sc["discount_scan"]["discounted"]) == sorted(map(float, DISCOUNT_FACTORS))
    assert len({int(k) for k in sc["horizons"]}) >= 3


def test_exact_shutdown_and_discounted_rows():
    from theorybook.check import Verdicts
    from theorybook.thompson_online.verdicts import _shutdown_rows, competitor_regrets, tuning_scan

    c = competitor_regrets(200, grid=801)
    v = Verdicts("t", display=False)
    _shutdown_rows(v, c, tuning_scan())
    rows = {r.kind: r for r in v.rows}
    assert v.passed and rows["not_specific"].tests == "shutdown" and rows["differs"].tests == "discounted"
    # sceptic review: greedy and tempered TS fail the shutdown row's test, Bayes-UCB (tuned on the same grid) passes
    passes = {ct["label"].split(" (")[0].split(" —")[0]: ct["passes"] for ct in rows["not_specific"].controls}
    assert passes == {"greedy": False, "tempered TS": False, "Bayes-UCB": True}, passes
    # the plant (a discount 3× too short) is caught, at about the paper's shown size (10 %)
    planted = (c["discounted_planted"] - c["optimal"]) / c["optimal"]
    assert 0.08 < planted < 0.25
    # a world where the condition does not help: greedy in the shutdown's place fails the row
    bad = dict(c, shutdown=c["greedy"])
    w = Verdicts("t", display=False)
    _shutdown_rows(w, bad, tuning_scan())
    assert not w.passed


def test_grid_halving_covers_every_policy_a_row_compares():
    """Review 2026-12-06: the grid-halving rows checked TS and the optimum, not the discontinuous shutdown the
    shutdown row's 0.02 tolerance rests on. They now check every policy a row compares."""
    from theorybook.thompson_online.verdicts import GRID_CHECKED, competitor_regrets, grid_halving

    assert {"shutdown", "tempered", "tempered_shutdown"} <= set(GRID_CHECKED)
    c = competitor_regrets(200, grid=801)
    ch = grid_halving(c, 200, grid=801)  # 801 → 401 points
    assert set(ch) == set(GRID_CHECKED) | {"bayes_ucb"}  # Bayes-UCB: the shutdown row's control (sceptic review)
    assert all(0.0 <= ch[p] < 5e-3 for p in GRID_CHECKED), ch  # the coarser pair: still well inside 1e-3 × 5
    assert 0.0 < ch["bayes_ucb"] < 0.05  # its threshold is snapped to the grid: O(Δ), within its row's 5 %
    assert ch["shutdown"] > 0.0  # a different grid gives a different number: the check is not vacuous
    with pytest.raises(ValueError, match="Invalid fine"):
        grid_halving({"ts": 1.0}, 200, grid=801)
    with pytest.raises(TypeError, match="Invalid fine"):
        grid_halving([1.0], 200, grid=801)
    with pytest.raises(ValueError, match="Invalid grid"):
        grid_halving(c, 200, grid=11)


def test_exact_rows_drop_the_hollow_ordering_row_and_check_the_shutdown_grid():
    """'Bayes-optimal ≤ TS, greedy' held for any correct DP (hollow): dropped. The headline claim is the (quoted)
    regularised-greed identity."""
    from theorybook.check import claim_outcome, headline_claim
    from theorybook.thompson_online.verdicts import (
        GRID_CHECKED,
        PAPER_CLAIMS,
        competitor_regrets,
        exact_verdicts,
    )

    foc = theory.derive_first_order()
    _, pos_residual = theory.derive_positive_part()
    cov_residual, maxcov_residual = theory.derive_covariances()
    _, pred_residual = theory.derive_predictive_variance()
    _, r2_value = theory.derive_two_step_ts()
    sol = solve_bandit(200, policies=POLICIES, shutdown_z=1.25, grid=801, device="cpu")
    kw = dict(argmax_err=1e-8, quad_err=1e-13, foc=foc, pos_residual=pos_residual, cov_residual=cov_residual,
              maxcov_residual=maxcov_residual, pred_residual=pred_residual, r2_value=r2_value, regret=sol.regret,
              single_crossing=sol.single_crossing, competitors=competitor_regrets(200, grid=801))
    v = exact_verdicts(grid_change={p: 2e-4 for p in GRID_CHECKED}, **kw)
    assert v.passed, [(r.claim, r.reason) for r in v.failures]
    assert not any("Bayes-optimal ≤" in r.claim for r in v.rows)
    grid_rows = [r for r in v.rows if r.claim.startswith("grid ÷2")]
    assert len(grid_rows) == len(GRID_CHECKED) and any("(shutdown)" in r.claim for r in grid_rows)
    bad = exact_verdicts(grid_change={**{p: 2e-4 for p in GRID_CHECKED}, "shutdown": 2e-3}, **kw)
    assert [r.claim for r in bad.failures] == ["grid ÷2 (1601 → 801 points) changes R₂₀₀(shutdown) by (relative)"]
    with pytest.raises(ValueError, match="Invalid grid_change"):
        exact_verdicts(grid_change={"ts": 1e-4, "optimal": 1e-4}, **kw)
    head = headline_claim(PAPER_CLAIMS)
    assert head["id"] == "regularised-greed" and claim_outcome(head, v.rows)[0] == "quoted"


# ------------------------------------------------------------------------------------------------ validation
@pytest.mark.parametrize("call", [
    lambda: ts_probability(0.1, 0.0),
    lambda: ts_probability(0.1, -1.0),
    lambda: biserial_covariance(0.1, 0.0),
    lambda: regularised_objective(1.2, 0.0, 1.0),
    lambda: regularised_objective(-0.1, 0.0, 1.0),
    lambda: posterior_sd(2, prior_var=0.0),
    lambda: posterior_sd(2, noise_var=-1.0),
    lambda: bayes_regret("ts", 0),
    lambda: bayes_regret("ts", 1.5),
    lambda: bayes_regret("ts", 5, grid=49),
    lambda: bayes_regret("ts", 5, grid=100),
    lambda: bayes_regret("thompson", 5),
    lambda: bayes_regret("shutdown", 5),
    lambda: bayes_regret("shutdown", 5, shutdown_z=0.0),
    lambda: bayes_regret("ts", 5, prior_var=0.0),
    lambda: simulate_regret("ts", 5, 0, 1),
    lambda: simulate_regret("ts", 5, 10, -1),
    lambda: solve_bandit(10**9, grid=1601),
])
def test_invalid_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_bool_and_string_are_not_numbers():
    with pytest.raises(TypeError):
        ts_probability(True, 1.0)
    with pytest.raises((TypeError, ValueError)):
        bayes_regret("ts", True)
    with pytest.raises(TypeError):
        posterior_sd(2, prior_var="1")


# ------------------------------------------------------------------------------------------------ widget
def test_widget_extremes_never_crash():
    import matplotlib

    matplotlib.use("Agg")
    from theorybook.thompson_online.widgets import explorer

    panel = explorer()
    status = panel.children[-2]
    sliders = [c for row in panel.children[:-2] for c in row.children]
    for sl in sliders:
        for value in (sl.min, sl.max):
            sl.value = value
            assert status.value and "cannot run" not in status.value, (sl.description, value, status.value)
        sl.value = (sl.min + sl.max) / 2 if not isinstance(sl.value, int) else (sl.min + sl.max) // 2


def test_widget_update_is_fast():
    """A new σ₀² re-solves all four policies (401 grid, T ≤ 100); moving m, s or T only redraws."""
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.use("Agg")
    from theorybook.thompson_online.widgets import render

    fig, _ = render(prior_var=0.5)  # warm-up (imports, kernels of another σ₀²)
    plt.close(fig)
    times = []
    for v0 in (0.61, 0.73, 0.89):
        t0 = time.process_time()
        fig, _ = render(prior_var=v0)
        times.append(time.process_time() - t0)
        plt.close(fig)
    t0 = time.process_time()
    fig, _ = render(m=1.0, s=0.3, horizon=20, prior_var=0.89)
    cached = time.process_time() - t0
    plt.close(fig)
    assert cached < 0.25  # moving m, s or T (and z₀ re-solves one policy only)
    # A new σ₀² re-solves all four policies: ~0.4 s of CPU measured on the shared 2-core machine under load ≈ 12
    # (over the 0.25 s budget there; not measured idle). Asserted loosely so a regression of several × still fails.
    assert min(times) < 1.0, f"render with a new prior variance took {times} s of CPU"
