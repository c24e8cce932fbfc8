"""Linear contracts: closed forms, the exact engine against brute force, validation, and the panel's extremes."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import mpmath  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import sympy as sp  # noqa: E402
import torch  # noqa: E402

from theorybook.linear_contracts import (  # noqa: E402
    CHAPTER_SEEDS,
    ContractTypes,
    attainment_gap,
    best_response,
    brute_force_parity,
    deviation_bound,
    engine_utility,
    eum,
    eum_samples,
    expected_reward,
    kinks,
    monotonicity_gap,
    optimal_contract,
    principal_utility,
    quantile_band,
    random_types,
    sample_complexity_sweep,
    sample_types,
    sup_deviation,
    theory,  # noqa: E402
    uniform_convergence_samples,
)


def _one_type(cost: float = 0.25) -> ContractTypes:
    """m = 2, r = (0, 1): idle (R = 0, c = 0) or work (R = 1, c = cost) — a single kink at α = cost."""
    F = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]], dtype=torch.float64)
    return ContractTypes(F, torch.tensor([[0.0, cost]]), torch.tensor([0.0, 1.0]), device="cpu")


# -- closed forms ---------------------------------------------------------------------------------------------
def test_sympy_derivations():
    Ri, Rj, ci, cj = sp.symbols("R_i R_j c_i c_j", real=True)
    assert sp.simplify(theory.derive_indifference_point() - (ci - cj) / (Ri - Rj)) == 0
    assert theory.derive_exchange_argument().residual == 0
    assert theory.derive_eum_decomposition() == 0
    c = theory.derive_constants()
    assert (int(c.thm11), int(c.cor12_proof), int(c.cor12_stated_times_2)) == (3456, 13824, 13824)
    ch = theory.derive_chaining_integral()
    assert ch.derivative_residual == 0 and ch.limit_at_zero == 0
    quad = float(mpmath.quad(lambda t: mpmath.sqrt(mpmath.log(1 / t)), [0, 1 / (2 * mpmath.sqrt(12))]))
    assert ch.value == pytest.approx(quad, rel=1e-12) and ch.value < 0.25


@pytest.mark.parametrize("eps, delta, constant, expected", [
    (0.05, 0.05, 3456, math.ceil(3456 * math.log(80) / 0.05**2)),
    (0.5, 0.01, 3456, math.ceil(3456 * math.log(400) / 0.25)),
    (0.1, 0.2, 1.0, math.ceil(math.log(20) / 0.01)),
])
def test_uniform_convergence_samples_table(eps, delta, constant, expected):
    assert uniform_convergence_samples(eps, delta, constant) == expected


def test_bound_inverts_sample_count_and_cor12_is_four_times():
    s = uniform_convergence_samples(0.1, 0.05)
    assert deviation_bound(s, 0.05) <= 0.1 < deviation_bound(s - 1, 0.05)
    assert eum_samples(0.1, 0.05) == uniform_convergence_samples(0.1, 0.05, 13824)
    assert deviation_bound(math.ceil(3456 * math.log(80)), 0.05) <= 1.0


# -- the engine -----------------------------------------------------------------------------------------------
def test_single_kink_by_hand():
    t = _one_type(0.25)
    kk = kinks(t)
    assert kk.alpha.tolist() == [0.25] and kk.jump.tolist() == [1.0]
    a, u = optimal_contract(t)
    assert (a, u) == (0.25, 0.75)
    assert int(best_response(t, 0.25)) == 1 and int(best_response(t, 0.25, tie="agent")) == 0
    assert principal_utility(t, 0.25) == 0.75 and principal_utility(t, 0.25, tie="agent") == 0.0
    gap = attainment_gap(t)  # agent ties: U = 0 up to α = 0.25, then (1 − α) < 0.75 — sup not attained
    assert gap["sup"] == 0.75 and gap["agent_max"] == 0.0 and gap["shortfall"] == 0.75


@pytest.mark.parametrize("n, T", [(1, 20), (2, 50), (5, 40), (30, 15)])
def test_engine_matches_brute_force(n, T):
    par = brute_force_parity(random_types(T, n, 4, seed=3), n_grid=1001)
    for key in ("grid", "kinks", "left_limits", "alpha_star", "u_star"):
        assert par[key] <= 1e-12, (key, par[key])


@pytest.mark.parametrize("tie", ["principal", "agent"])
def test_reward_is_monotone_for_either_tie_rule(tie):
    assert monotonicity_gap(random_types(60, 8, 5, seed=4), tie) >= -1e-12


def test_sup_deviation_and_eum_against_brute_force():
    t = random_types(40, 6, 4, seed=5)
    idx = sample_types(40, 25, 3, seed=6)
    sup = sup_deviation(t, idx)
    e = eum(t, idx)
    kk = kinks(t)
    grid = torch.linspace(0, 1, 2001, dtype=torch.float64)
    cand = torch.cat([grid, kk.points])
    U = principal_utility(t, cand)
    for b in range(3):
        w = torch.bincount(idx[b], minlength=40).double() / 25
        emp = ContractTypes(t.F, t.costs, t.rewards, w, device="cpu")
        U_hat = principal_utility(emp, cand)
        assert float((U_hat - U).abs().max()) == pytest.approx(float(sup[b]), abs=1e-12)
        assert float(U_hat.max()) == pytest.approx(float(e.empirical_utility[b]), abs=1e-12)
        assert float(principal_utility(t, float(e.alpha_hat[b]))) == pytest.approx(float(e.utility[b]), abs=1e-12)
        assert float(e.suboptimality[b]) <= 2 * float(sup[b]) + 1e-12
        assert float(e.suboptimality[b]) >= -1e-15


def test_engine_utility_matches_brute_force_with_weights():
    t = random_types(30, 5, 3, seed=7)
    w = torch.rand(30, dtype=torch.float64)
    w /= w.sum()
    grid = torch.linspace(0, 1, 501, dtype=torch.float64)
    emp = ContractTypes(t.F, t.costs, t.rewards, w, device="cpu")
    assert torch.allclose(engine_utility(t, grid, w), principal_utility(emp, grid), atol=1e-12, rtol=0)
    assert expected_reward(t, 0.5) == pytest.approx(float(engine_utility(t, 0.5)[0]) / 0.5, abs=1e-12)


def test_sweep_matches_direct_computation_and_is_reproducible():
    t = random_types(50, 4, 3, seed=8)
    B, s = 5, 40
    res = sample_complexity_sweep(t, [s], B, seed=9)
    g = torch.Generator().manual_seed(9)
    idx = torch.randint(50, (B, s), generator=g, dtype=torch.int32).long()
    assert np.allclose(res.sup_dev[:, 0], np.asarray(sup_deviation(t, idx).tolist()), atol=1e-15)
    again = sample_complexity_sweep(t, [10, s], B, seed=9)
    assert np.array_equal(again.sup_dev, sample_complexity_sweep(t, [10, s], B, seed=9).sup_dev)
    both = sample_complexity_sweep([t, random_types(50, 7, 3, seed=1)], [10, 20], 4, seed=2)
    assert len(both) == 2 and both[0].sup_dev.shape == (4, 2)


def test_quantile_band():
    x = np.exp(np.random.default_rng(0).normal(size=(400, 3)))
    q, se = quantile_band(x, 0.95)
    assert np.allclose(q, np.quantile(x, 0.95, axis=0)) and (se > 0).all() and (se < 0.5).all()


# -- validation -----------------------------------------------------------------------------------------------
def _valid():
    F = torch.tensor([[[1.0, 0.0], [0.3, 0.7]]], dtype=torch.float64)
    return F, torch.tensor([[0.0, 0.1]]), torch.tensor([0.0, 1.0])


@pytest.mark.parametrize("mutate, match", [
    (lambda F, c, r: (F, c, torch.tensor([0.0, 1.5])), "rewards"),
    (lambda F, c, r: (F, c, torch.tensor([0.1, 1.0])), "r_1"),
    (lambda F, c, r: (F * torch.tensor([1.0, -1.0])[None, None], c, r), "F"),
    (lambda F, c, r: (F * 1.1, c, r), "sum"),
    (lambda F, c, r: (F, -c - 0.1, r), "costs"),
    (lambda F, c, r: (F[..., :1] / F[..., :1].clamp(min=1), c, r[:1]), "outcome"),
])
def test_contract_types_rejects_bad_inputs(mutate, match):
    with pytest.raises(ValueError, match=match):
        ContractTypes(*mutate(*_valid()), device="cpu")


def test_weights_must_lie_on_the_simplex():
    with pytest.raises(ValueError, match="weights"):
        ContractTypes(*_valid(), weights=torch.tensor([0.5]), device="cpu")


@pytest.mark.parametrize("call", [
    lambda t: best_response(t, 1.5),
    lambda t: best_response(t, -0.1),
    lambda t: best_response(t, float("nan")),
    lambda t: best_response(t, 0.5, tie="random"),
    lambda t: sup_deviation(t, torch.tensor([[0, 3]])),
    lambda t: eum(t, torch.tensor([-1])),
    lambda t: uniform_convergence_samples(0.0, 0.1),
    lambda t: uniform_convergence_samples(0.1, 1.0),
    lambda t: uniform_convergence_samples(1e-300, 0.1),
    lambda t: random_types(0, 2, 2),
    lambda t: random_types(2, 0, 2),
    lambda t: random_types(2, 2, 1),
    lambda t: sample_complexity_sweep(t, [20, 10]),
])
def test_public_functions_raise_value_error(call):
    with pytest.raises(ValueError):
        call(_one_type())


@pytest.mark.parametrize("call", [
    lambda t: best_response(t, True),
    lambda t: best_response(t, "0.5"),
    lambda t: uniform_convergence_samples(True, 0.1),
    lambda t: best_response("types", 0.5),
])
def test_public_functions_raise_type_error(call):
    with pytest.raises(TypeError):
        call(_one_type())


def test_numpy_and_zero_dim_scalars_are_numbers():
    t = _one_type()
    assert principal_utility(t, np.float64(0.5)) == principal_utility(t, torch.tensor(0.5)) == 0.5
    assert random_types(np.int64(3), 2, 2, seed=np.int64(1)).n_types == 3


def test_chapter_seeds_declared():
    assert CHAPTER_SEEDS and all(isinstance(s, int) for s in CHAPTER_SEEDS)


# -- the panel ------------------------------------------------------------------------------------------------
def test_explorer_survives_every_extreme():
    from theorybook.linear_contracts.widgets import explorer, render

    fig, res = render()
    plt.close(fig)
    assert res.sup_deviation >= 0 and "α*" in res.label
    from theorybook.linear_contracts.widgets import panel as compute

    bands = [compute(delta=d)[0].band for d in (0.5, 0.05, 0.001)]  # δ acts: a wider band at higher confidence
    assert 0 < bands[0] < bands[1] < bands[2] and all(f"{1 - d:.1%}" in compute(delta=d)[0].label
                                                      for d in (0.5, 0.001))
    panel = explorer()
    status = panel.children[-2]
    controls = [c for box in panel.children[:-2] for c in box.children]
    for c in controls:
        opts = getattr(c, "options", None)
        values = (opts[0], opts[-1]) if opts else (c.min, c.max)
        for value in values:
            c.value = value
            assert status.value and "cannot run" not in status.value, (c.description, value, status.value)
    plt.close("all")


def test_pareto_prune_keeps_the_kinks(monkeypatch):
    from theorybook.linear_contracts import engine

    p = random_types(300, 60, 6, seed=4)
    R, _ = engine._pareto_actions(p.R, p.costs)
    assert R.shape[1] < 60  # dominated actions were dropped
    pruned = engine._envelope(p)
    monkeypatch.setattr(engine, "_pareto_actions", lambda R, c: (R, c))  # the walk over all n actions
    full = engine._envelope(p)
    assert all(torch.equal(a, b) for a, b in zip(pruned, full, strict=True))
    brute = brute_force_parity(random_types(30, 60, 6, seed=4))
    assert max(brute["grid"], brute["kinks"], brute["left_limits"]) < 1e-12


def test_required_samples_and_growth_slope():
    from theorybook.linear_contracts import SweepResult, growth_slope, required_samples

    s = np.array([100, 200, 400, 800])
    dev = np.tile(0.1 / np.sqrt(s), (50, 1))  # a deterministic q ∝ s^(−1/2)
    r = SweepResult(s, dev, 0 * dev, 2)
    assert math.isclose(required_samples(r, eps=0.1 / math.sqrt(300), delta=0.05), 300, rel_tol=1e-9)
    assert required_samples(r, eps=1e-6) == math.inf
    n = np.array([2, 20, 200, 2000])
    flat = np.full(4, 1000.0)
    assert abs(growth_slope(n, flat)) < 1e-12
    assert math.isclose(growth_slope(n, flat * np.log(n)), 1.0, rel_tol=1e-12)  # the ln n control
    with pytest.raises(ValueError):
        growth_slope([2, 2], [1.0, 2.0])


def test_headline_controls_fail_on_a_small_design():
    from theorybook.linear_contracts import chapter_sweeps, nindep_study, verdicts

    sw = chapter_sweeps(3, reps=40, actions=(2, 20, 200))
    st = nindep_study(sw, eps=0.01)
    assert np.all(np.isfinite(st.s_star)) and np.all(np.isfinite(st.mean_s_star))
    # the measured union-bound alternative (the n per-action mean rewards) grows with n, s*(n) does not
    assert st.mean_slope > 0.2 and st.slope <= 0.0
    assert np.all(np.diff(st.mean_s_star) > 0)
    assert st.growth <= 1 + verdicts.GROWTH_C < st.mean_growth
    # the union bound's factor planted in the method's own sup-deviations (sceptic's review): s* grows by ≈ the
    # factor squared (the quantiles fall as s^(−1/2)), from the same draws
    from theorybook.linear_contracts.experiment import union_factor

    assert st.union_s_star[0] == st.s_star[0] and np.all(st.union_s_star[1:] > st.s_star[1:])
    ratio = st.union_s_star / st.s_star
    want = np.array([union_factor(n) ** 2 for n in st.n])
    assert np.allclose(ratio, want, rtol=0.35)


def test_growth_ratio_table():
    from theorybook.linear_contracts import growth_ratio

    n = np.array([2, 20, 200, 2000])
    assert growth_ratio(n, np.full(4, 1000.0)) == 1.0  # flat
    assert math.isclose(growth_ratio(n, [1000.0, 900.0, 1100.0, 800.0]), 1.1)  # the largest, not the last
    assert growth_ratio(n, [4000.0, 2000.0, 1500.0, 1000.0]) == 0.5  # falling: below 1
    union = np.log(2 * n / 0.05)  # a union bound over the actions, s* ∝ ln(2n/δ)
    assert math.isclose(growth_ratio(n, union), math.log(4000 / 0.05) / math.log(4 / 0.05))
    assert math.isclose(growth_ratio(n[::-1], union[::-1]), growth_ratio(n, union))  # order-free
    for bad in (([2, 2], [1.0, 2.0]), ([2, 20], [1.0, 0.0]), ([2, 20], [1.0, math.inf]), ([2], [1.0])):
        with pytest.raises(ValueError):
            growth_ratio(*bad)


def test_flat_family_leaves_u_unchanged_and_grows_the_per_action_means():
    from theorybook.linear_contracts import flat_types

    live = random_types(300, 2, 6, seed=5)
    for n in (2, 7, 40):  # 40 > 8: the Pareto prune runs too
        f = flat_types(300, n, 6, seed=5)
        assert f.n_actions == n and torch.equal(f.F[:, :2], live.F) and torch.equal(f.costs[:, :2], live.costs)
        assert torch.equal(kinks(f).alpha, kinks(live).alpha) and torch.equal(kinks(f).jump, kinks(live).jump)
        assert optimal_contract(f) == optimal_contract(live)
        alphas = torch.linspace(0, 1, 101, dtype=torch.float64)
        assert torch.all(best_response(f, alphas) <= 1)  # a dominated action is never played
        assert torch.all(best_response(f, alphas, tie="agent") <= 1)
        idx = sample_types(300, 50, 4, seed=1)
        assert torch.equal(sup_deviation(f, idx), sup_deviation(live, idx))
    f = flat_types(300, 40, 6, seed=5)
    assert float(f.costs[:, 2:].min()) > 1.0 and float(f.R[:, 2:].std()) > 0.05  # dominated, yet varied
    r = sample_complexity_sweep([live, f], [50, 200], reps=20, seed=2)
    assert np.array_equal(r[0].sup_dev, r[1].sup_dev) and np.all(r[1].mean_dev >= r[0].mean_dev - 1e-6)
    assert np.mean(r[1].mean_dev) > 1.5 * np.mean(r[0].mean_dev)  # 39 more varied means to estimate
    with pytest.raises(ValueError):
        flat_types(10, 1, 6)


def test_flat_sweeps_reproducible_with_their_own_streams():
    from theorybook.linear_contracts import chapter_sweeps, flat_population, flat_sweeps

    a = flat_sweeps(4, reps=6, s_values=(50, 100), actions=(2, 20))
    b = flat_sweeps(4, reps=6, s_values=(50, 100), actions=(2, 20))
    assert all(np.array_equal(a[n].sup_dev, b[n].sup_dev) for n in a)
    c = chapter_sweeps(4, reps=6, s_values=(50, 100), actions=(2, 20))
    assert not np.array_equal(a[2].sup_dev, c[2].sup_dev)  # streams apart from the chapter sweep's
    assert not torch.equal(flat_population(2).F, flat_population(20).F[:, :2])  # own live part per n
    with pytest.raises(TypeError):
        flat_sweeps(4, actions=2)
    with pytest.raises(ValueError):
        flat_sweeps(4, reps=2, s_values=(50,), actions=(1, 20))


def test_bernoulli_deviations():
    from theorybook.fit import loglog_slope
    from theorybook.linear_contracts import bernoulli_deviations

    s = (50, 100, 200, 400, 800, 1600)
    x = bernoulli_deviations(3, reps=400, s_values=s)
    assert x.shape == (400, 6) and np.all(x >= 0) and np.all(x <= 0.5)
    assert np.array_equal(x, bernoulli_deviations(3, reps=400, s_values=s))
    k = 2 * x * np.array(s)
    assert np.allclose(k, np.round(k), atol=1e-6)  # |k/s − ½|: multiples of 1/(2s)
    assert -0.6 < loglog_slope(np.array(s), x.mean(0)).slope < -0.4  # the CLT rate
    for bad in ({"reps": 1}, {"s_values": (20, 10)}, {"p": 1.0}, {"p": True}):
        with pytest.raises((ValueError, TypeError)):
            bernoulli_deviations(3, **{"reps": 4, "s_values": (10, 20), **bad})
    with pytest.raises(TypeError):
        bernoulli_deviations(3, s_values="10")


def test_mean_dev_is_the_per_action_mean_deviation():
    from theorybook.linear_contracts import sample_complexity_sweep

    p = random_types(50, 4, 5, seed=1)
    r = sample_complexity_sweep(p, [5, 20], reps=3, seed=7)
    g = torch.Generator().manual_seed(7)
    counts = torch.zeros(3, 50, dtype=torch.float64)
    prev = 0
    for k, s_ in enumerate((5, 20)):
        idx = torch.randint(50, (3, s_ - prev), generator=g, dtype=torch.int32)
        for b in range(3):
            counts[b] += torch.bincount(idx[b].long(), minlength=50).double()
        prev = s_
        dev = ((counts / s_ - p.weights) @ p.R).abs().amax(1)
        assert np.allclose(r.mean_dev[:, k], dev.numpy(), atol=1e-6)


def test_lemma_control_is_not_monotone():
    p = random_types(200, 10, 6, seed=2)
    assert monotonicity_gap(p, "principal") >= -1e-12
    assert monotonicity_gap(p, "principal", quantity="utility") < -1e-3
    # a non-linear contract (α·r_j²): R is not monotone for a few of the chapter's 2,000 types at n = 10
    from theorybook.linear_contracts import chapter_population

    assert monotonicity_gap(chapter_population(10), "principal", contract="quadratic") < -1e-4
    # the sceptic's bonus contract (α on the top outcome): monotone on the chapter's types, whose costs rise with R …
    assert monotonicity_gap(chapter_population(10), "principal", contract="bonus") >= -1e-12
    # … but not in general: idle; A (R = 0.84, top-outcome mass 0.2, cost 0.01); B (R = 0.5, mass 0.5, cost 0.2).
    # Under the bonus contract the agent idles, takes A above α = 0.05 and B above 19/30: R goes 0 → 0.84 → 0.5
    F = torch.tensor([[[1.0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0.8, 0.2], [0.5, 0, 0, 0, 0, 0.5]]], dtype=torch.float64)
    t = ContractTypes(F, torch.tensor([[0.0, 0.01, 0.2]]), torch.linspace(0, 1, 6, dtype=torch.float64),
                      device="cpu")
    assert monotonicity_gap(t, "principal", contract="bonus") == pytest.approx(-0.34, abs=1e-12)
    assert monotonicity_gap(t, "principal") >= 0.0  # the linear contract: B is dominated by A


# -- Corollary 1.2's confidence scan and the rate row -----------------------------------------------------------
def test_law_misfit_table():
    from theorybook.linear_contracts import CONFIDENCE_LAWS, law_misfit

    d = np.array([0.3, 0.1, 0.03, 0.01, 0.003, 0.001])
    exact_ln = 40.0 + 120.0 * np.log(1 / d)
    assert law_misfit(np.log(1 / d), exact_ln) < 1e-12  # the claim's law fits its own data exactly
    assert law_misfit(1 / d, exact_ln) > 0.3  # Chebyshev's rival misses it
    assert law_misfit(1 / d, 5.0 + 2.0 / d) < 1e-12 and law_misfit(np.log(1 / d), 5.0 + 2.0 / d) > 0.3
    assert law_misfit(d, np.full(6, 7.0)) == 0.0  # a flat s*: every law fits (the row then cannot tell)
    assert set(CONFIDENCE_LAWS) == {"ln(1/δ)", "1/δ", "δ^(−1/2)"}
    with pytest.raises(ValueError):
        law_misfit([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        law_misfit([1.0, 2.0], [1.0, 2.0])


def test_confidence_study_small_and_validated():
    from theorybook.linear_contracts import confidence_study

    cs = confidence_study(5, reps=200, s_values=(24, 48, 96, 192, 384, 768, 1536), deltas=(0.3, 0.1, 0.03),
                          eps=0.006)
    assert np.all(np.isfinite(cs.s_star)) and np.all(np.diff(cs.s_star) >= 0)  # smaller δ never needs fewer agents
    assert cs.subopt_quantiles.shape == (3, 7) and set(cs.misfit) == {"ln(1/δ)", "1/δ", "δ^(−1/2)"}
    again = confidence_study(5, reps=200, s_values=(24, 48, 96, 192, 384, 768, 1536), deltas=(0.3, 0.1, 0.03),
                             eps=0.006)
    assert np.array_equal(cs.s_star, again.s_star)
    for bad in ({"deltas": (0.1, 0.01)}, {"deltas": (0.1, 0.1, 0.01)}, {"deltas": (0.1, 1.0, 0.01)},
                {"eps": 0.0}, {"eps": 1e-9}, {"reps": 1}):
        with pytest.raises(ValueError):
            confidence_study(5, **{"reps": 20, "s_values": (24, 48), **bad})
    with pytest.raises(TypeError):
        confidence_study(5, deltas=0.1)
    with pytest.raises(TypeError):
        confidence_study(True)


def test_rate_and_cor12_are_tested_claims():
    from theorybook.check import claim_violations
    from theorybook.linear_contracts import verdicts

    claims = {c.id: c for c in verdicts.PAPER_CLAIMS}
    assert not claims["rate"].quoted_only and not claims["Cor1.2"].quoted_only
    with pytest.raises(TypeError):
        verdicts.seeded_verdicts(0, None, "not a study")
    with pytest.raises(TypeError):
        verdicts.seeded_verdicts(0, None, None, "not a sweep")
    # the rows on a fake run: both hold, and the Bernoulli mean passes each row's test too (not specific)
    from theorybook.linear_contracts import ConfidenceStudy, SweepResult

    s = np.array([50.0, 100.0, 200.0, 400.0, 800.0])
    rng = np.random.default_rng(0)
    noise = np.exp(0.05 * rng.normal(size=(40, 5)))
    sw = {n: SweepResult(s, noise / np.sqrt(s), 0.3 * noise / s ** 0.75, n, noise / np.sqrt(s)) for n in (2, 20)}
    v = verdicts.Verdicts("t", display=False)
    verdicts._rate_row(v, sw, np.exp(0.05 * rng.normal(size=(40, 5))) / np.sqrt(s))
    d = np.array([0.3, 0.1, 0.03, 0.01, 0.003, 0.001])
    ss = 40.0 + 120.0 * np.log(1 / d)
    bs = 90.0 + 150.0 * np.log(1 / d)
    from theorybook.linear_contracts import CONFIDENCE_LAWS, law_misfit

    mis = {k: law_misfit(f(d), ss) for k, f in CONFIDENCE_LAWS.items()}
    cs = ConfidenceStudy(d, ss, mis, s, np.ones((6, 5)), 0.004, 100, bs,
                         {k: law_misfit(f(d), bs) for k, f in CONFIDENCE_LAWS.items()})
    verdicts._confidence_row(v, cs)
    assert [r.tests for r in v.rows] == ["rate", "Cor1.2"]
    assert all(r.kind == "not_specific" and r.outcome == "not_specific" and r.holds for r in v.rows)
    rate, cor = v.rows
    assert [c["passes"] for c in rate.controls] == [True, False]  # Bernoulli passes, EUM's fast rate does not
    assert "Bernoulli" in rate.controls[0]["label"]
    assert [c["passes"] for c in cor.controls] == [False, mis["δ^(−1/2)"] <= verdicts.COR_MISFIT_MAX, True]
    assert "Chebyshev" in cor.controls[0]["label"] and "Bernoulli" in cor.controls[2]["label"]
    assert cor.scan is not None and len(cor.scan["values"]) == 6
    assert not [m for m in claim_violations(verdicts.PAPER_CLAIMS, v.rows) if "rate" in m or "Cor1.2" in m]
    # a confidence study without its Bernoulli control is refused, not silently shown without it
    with pytest.raises(ValueError):
        verdicts._confidence_row(verdicts.Verdicts("t", display=False), cs._replace(bernoulli_misfit=None))
    # had the Bernoulli mean failed (a heavy-tailed s*(δ)), the row would raise: the outcome is computed
    with pytest.raises(AssertionError, match="not specific|reproduces"):
        with verdicts.Verdicts("t", display=False) as w:
            verdicts._confidence_row(w, cs._replace(bernoulli_misfit={**cs.bernoulli_misfit, "ln(1/δ)": 0.9},
                                                    misfit={**mis, "δ^(−1/2)": 0.9}))


def test_headline_rows_on_fake_studies():
    from theorybook.check import Verdicts, claim_violations
    from theorybook.linear_contracts import NIndepStudy, verdicts

    claims = [c for c in verdicts.PAPER_CLAIMS if c.headline]
    assert [c.id for c in claims] == ["Thm1.1-n"] and claims[0].regime
    n = np.array([2.0, 20.0, 200.0, 2000.0])

    lnf = np.log(2 * n / 0.05) / np.log(4 / 0.05)  # the union bound's factor on s*

    def study(s_star, alt):
        from theorybook.linear_contracts import growth_ratio, growth_slope

        s_star, alt = np.asarray(s_star, float), np.asarray(alt, float)
        planted = s_star * lnf  # the union bound's growth planted on the measured s* (sceptic's review)
        return NIndepStudy(n, s_star, growth_slope(n, s_star), alt, growth_slope(n, alt), 0.005, 0.05,
                           growth_ratio(n, s_star), growth_ratio(n, alt), planted, growth_ratio(n, planted))

    union = 1000 * lnf
    v = Verdicts("t", display=False)
    verdicts._nindep_rows(v, study([4000, 2400, 1500, 1000], union), study([1000, 1050, 980, 1020], union))
    head, flat = v.rows
    assert head.tests == "Thm1.1-n" and head.kind == head.outcome == "not_specific" and head.holds
    assert head.scan is not None and len(head.scan["values"]) == 4
    # a falling s* hides the planted union factor (G = 0.92); the per-action means do not pass
    assert [c["passes"] for c in head.controls] == [False, True]
    assert flat.kind == "consistency" and flat.holds and not flat.tests
    assert not any(c["passes"] for c in flat.controls)  # where nothing falls, the same plant is caught
    assert not [m for m in claim_violations(verdicts.PAPER_CLAIMS, v.rows) if "Thm1.1-n" in m]
    # a flat s* passes — the old slope ≤ 0 test failed it half the time — and there the planted union factor is
    # caught: on a family without a fall the row would reproduce (and the registered 'not_specific' would fail)
    w = Verdicts("t", display=False)
    verdicts._nindep_rows(w, study([1000, 1100, 1000, 1050], union), study(union, union))
    assert w.rows[0].test_holds and w.rows[0].outcome == "reproduces" and not w.rows[0].holds
    assert not w.rows[1].holds
    assert 1 + verdicts.GROWTH_C < verdicts.UNION_G
    with pytest.raises(ValueError):
        verdicts._nindep_rows(Verdicts("t", display=False), study([4000, 2400, 1500, 1000], union)._replace(
            union_growth=None), study([1000, 1050, 980, 1020], union))


def test_headline_tolerance_is_the_committed_pilot():
    """GROWTH_C and the basis numbers are those of bench/results/linear_contracts_pilot.json (pilot seeds only)."""
    import json
    from pathlib import Path

    from theorybook.check import PILOT_SEEDS, z_threshold
    from theorybook.linear_contracts import verdicts

    d = json.loads((Path(__file__).parents[1] / "bench/results/linear_contracts_pilot.json").read_text())
    seeds = [r["seed"] for r in d["flat"]] + [r["seed"] for r in d["bernoulli"]]
    assert all(s in PILOT_SEEDS for s in seeds) and not set(seeds) & set(CHAPTER_SEEDS)
    lg = np.log([r["growth"] for r in d["flat"]])
    assert len(lg) == 40
    c = math.ceil(100 * (math.exp(lg.mean() + z_threshold(1e-3) * lg.std(ddof=1)) - 1)) / 100
    assert verdicts.GROWTH_C == c == d["flat_summary"]["c"]
    assert verdicts.GROWTH_PILOT_LN.startswith(f"{lg.mean():+.3f} ± {lg.std(ddof=1):.3f}")
    assert f"largest G {np.exp(lg.max()):.2f}" in verdicts.GROWTH_PILOT_LN
    assert min(r["mean_growth"] for r in d["flat"]) >= verdicts.GROWTH_PILOT_MEAN_MIN
    assert verdicts.GROWTH_PILOT_OLD_FAILS == f"{sum(r['slope'] > 0 for r in d['flat'])} of {len(d['flat'])}"
    assert 1 + c < verdicts.UNION_G < verdicts.GROWTH_PILOT_MEAN_MIN
