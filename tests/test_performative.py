"""Tests for theorybook.performative: closed forms vs numerics, the authors' reference numbers, validation,
batched vs single fits, and the widget's pure callback at extreme slider values."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from theorybook.performative import (
    NOTEBOOK_38,
    cor38_bound,
    drift_bound,
    dro_risk,
    fit_logistic,
    flip_distance,
    flip_top_positives,
    fulfil_top_negatives,
    loss_lipschitz,
    population,
    retrain,
    risk,
    thm313_bound,
    thm313_radius,
    thm315_bound,
    tradeoff,
    wasserstein,
)
from theorybook.performative.widgets import panel


@pytest.fixture(scope="module")
def small():
    pop = population(600, seed=11)
    return pop, fit_logistic(pop.X, pop.y)


# --- the authors' notebook formulas at their reference points (n = 41,585) ---------------------------------
REFERENCE = [
    # (r, R, Thm 3.13 total, complexity, performative, Thm 3.15 total)
    (0.01, 0.529, 23.82, 18.21, 5.60, 7.41),
    (0.50, 3.741, 43.67, 4.07, 39.59, 41.34),
]


@pytest.mark.parametrize("r, R, total13, comp13, perf13, total15", REFERENCE)
def test_notebook_reference_values(r, R, total13, comp13, perf13, total15):
    b13, b15 = thm313_bound(41_585, r), thm315_bound(41_585, r)
    assert b13.R == pytest.approx(R, abs=5e-4)
    assert b13.total == pytest.approx(total13, abs=5e-3)
    assert b13.complexity == pytest.approx(comp13, abs=5e-3)
    assert b13.performative == pytest.approx(perf13, abs=5e-3)
    assert b13.sampling == pytest.approx(0.013, abs=5e-4)
    assert b15.total == pytest.approx(total15, abs=5e-3)
    assert b15.performative == b13.performative and b15.sampling == b13.sampling


def test_cor38_sampling_term_matches_case_study():
    c = cor38_bound(0.0, 60_147, 1_816 / 60_147, T=2, **NOTEBOOK_38)
    assert c.sampling == pytest.approx(0.0124, abs=1e-4)
    assert c.performative == pytest.approx(NOTEBOOK_38["L_loss"] * math.sqrt(1_816 / 60_147) / 3, rel=1e-12)


def test_cor38_last_term_vanishes_at_T1_and_eps1_limit():
    assert cor38_bound(0.3, 1000, 0.1, T=1).performative == 0.0
    near = cor38_bound(0.3, 1000, 0.1, T=4, eps=1 + 1e-7, L_a=0.0).performative
    at = cor38_bound(0.3, 1000, 0.1, T=4, eps=1.0, L_a=0.0).performative
    assert near == pytest.approx(at, rel=1e-5)


def test_radius_switches_to_sampling_branch_for_tiny_r():
    r = 1e-7
    q = 1.959963984540054
    assert thm313_radius(100, r) == pytest.approx((q * math.sqrt(r * (1 - r) / 100)) ** 0.5 * 5.29)


@pytest.mark.parametrize("rounds, rho, expected", [(0, 2.0, 0.0), (1, 5.0, 1.0), (4, 1.0, 4.0), (3, 2.0, 7.0),
                                                    (3, 0.5, 1.75)])
def test_drift_bound_geometric_sum(rounds, rho, expected):
    assert drift_bound(rounds, rho, 1.0) == pytest.approx(expected)


# --- Wasserstein identities --------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_label_flips_move_exactly_m_over_n(small, p):
    pop, model = small
    X, y = pop.X[:200], pop.y[:200]
    y1, flipped = flip_top_positives(model, X, y, 0.3)
    z0, z1 = torch.cat([X, y[:, None]], 1), torch.cat([X, y1[:, None]], 1)
    assert wasserstein(z0, z1, p) == pytest.approx(flip_distance(int(flipped.sum()), 200, p), rel=1e-9)


def test_wasserstein_translation_equals_shift_norm():
    a = torch.rand(50, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    shift = torch.tensor([0.3, -0.4, 0.0], dtype=torch.float64)
    assert wasserstein(a, a + shift, 2.0) == pytest.approx(0.5, rel=1e-9)


def test_retrain_drift_is_exact_w2():
    pop = population(150, seed=4)
    tr = retrain(pop.X, pop.y, 1, 1.2)
    assert float(tr.step_drift[0]) == pytest.approx(wasserstein(pop.X, tr.features, 2.0), rel=1e-8)


@pytest.mark.parametrize("eps, growing", [(1.15, True), (1.0, None)])
def test_retrain_regimes(eps, growing):
    pop = population(3000, seed=3)
    tr = retrain(pop.X, pop.y, 6, eps)
    ratio = tr.step_drift[1:] / tr.step_drift[:-1]
    if growing:
        assert bool((ratio > 1.0).all()) and float(ratio[-1]) < eps
    else:
        assert float(ratio.max() - ratio.min()) < 1e-2
    assert bool((tr.total_drift <= torch.cumsum(tr.step_drift, 0) + 1e-12).all())


# --- logistic RERM -----------------------------------------------------------------------------------------
def test_newton_fit_is_stationary(small):
    pop, model = small
    theta = model.theta.clone().requires_grad_(True)
    Z = torch.cat([pop.X, torch.ones(len(pop.X), 1, dtype=torch.float64)], 1)
    s = Z @ theta
    obj = torch.nn.functional.binary_cross_entropy_with_logits(s, pop.y) + model.lam / 2 * theta.pow(2).sum()
    (g,) = torch.autograd.grad(obj, theta)
    assert float(g.abs().max()) < 1e-10


def test_batched_fit_equals_single_fits(small):
    pop, _ = small
    gen = torch.Generator().manual_seed(2)
    Y = (torch.rand(3, len(pop.y), generator=gen, dtype=torch.float64) < 0.4).to(torch.float64)
    batched = fit_logistic(pop.X, Y)
    for i in range(3):
        single = fit_logistic(pop.X, Y[i])
        torch.testing.assert_close(batched.theta[i], single.theta, rtol=1e-10, atol=1e-12)


def test_population_base_rate_and_range():
    pop = population(20_000, seed=0)
    assert 0.30 <= float(pop.y.mean()) <= 0.40
    assert float(pop.X.min()) >= 0.0 and float(pop.X.max()) <= 1.0


def test_loss_lipschitz_dominates_finite_differences(small):
    _, model = small
    gen = torch.Generator().manual_seed(5)
    z = torch.rand(400, 5, generator=gen, dtype=torch.float64)
    z2 = (z + 0.01 * torch.randn(400, 5, generator=gen, dtype=torch.float64)).clamp(0, 1)

    def loss(zz):
        s = zz[:, :4] @ model.w + model.b
        return zz[:, 4] * torch.nn.functional.softplus(-s) + (1 - zz[:, 4]) * torch.nn.functional.softplus(s)

    slopes = (loss(z) - loss(z2)).abs() / torch.linalg.vector_norm(z - z2, dim=1).clamp(min=1e-12)
    assert float(slopes.max()) <= float(loss_lipschitz(model))


# --- flips and DRO -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn, before, after",
                         [(flip_top_positives, 1.0, 0.0), (fulfil_top_negatives, 0.0, 1.0)])
def test_flips_move_only_eligible_highest_risk_units(small, fn, before, after):
    pop, model = small
    y1, flipped = fn(model, pop.X, pop.y, 0.25)
    assert bool((pop.y[flipped] == before).all()) and bool((y1[flipped] == after).all())
    assert int(flipped.sum()) == round(0.25 * int((pop.y == before).sum()))
    s = pop.X @ model.w + model.b
    rest = (pop.y == before) & ~flipped
    assert float(s[flipped].min()) >= float(s[rest].max())


def test_self_negation_equals_dro_sup_restricted_to_positives(small):
    pop, model = small
    y1, flipped = flip_top_positives(model, pop.X, pop.y, 0.2)
    radius = math.sqrt(int(flipped.sum()) / len(pop.y))
    sup = float(dro_risk(model, pop.X, pop.y, radius, "max"))
    inf = float(dro_risk(model, pop.X, pop.y, radius, "min"))
    base = float(risk(model, pop.X, pop.y))
    assert inf <= base <= float(risk(model, pop.X, y1)) <= sup + 1e-12
    assert sup <= base + float(loss_lipschitz(model)) * radius


def test_dro_zero_radius_is_risk(small):
    pop, model = small
    base = float(risk(model, pop.X, pop.y))
    for sense in ("max", "min"):
        assert float(dro_risk(model, pop.X, pop.y, 0.0, sense)) == pytest.approx(base, abs=1e-14)


@settings(max_examples=25, deadline=None)
@given(r1=st.floats(0.0, 1.0), r2=st.floats(0.0, 1.0))
def test_dro_monotone_in_radius(r1, r2):
    pop = population(300, seed=9)
    model = fit_logistic(pop.X, pop.y)
    lo, hi = sorted((r1, r2))
    def at(r, sense):
        return float(dro_risk(model, pop.X, pop.y, r, sense))

    assert at(lo, "max") <= at(hi, "max") + 1e-12
    assert at(lo, "min") >= at(hi, "min") - 1e-12


def test_tradeoff_bound_holds_and_gap_grows():
    from theorybook.performative.widgets import synthetic_bound

    pop = population(20_000, seed=0)
    tr = tradeoff(pop, 5_000, [0.05, 0.3], mode="full")
    for i in range(2):
        assert float(tr.gap[i]) <= synthetic_bound(tr, i, n=5_000)[0].total
    assert float(tr.gap[1]) > float(tr.gap[0])
    assert float(tr.emp_risk[1]) < float(tr.emp_risk[0])  # the echo chamber: the sample looks easier


# --- validation --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda m, X, y: flip_top_positives(m, X, y, 0.0),
    lambda m, X, y: flip_top_positives(m, X, y, 1.0),
    lambda m, X, y: fulfil_top_negatives(m, X, y, -0.1),
    lambda m, X, y: wasserstein(X, X, 0.5),
    lambda m, X, y: dro_risk(m, X, y, 0.1, "median"),
    lambda m, X, y: dro_risk(m, X, y, -1.0),
    lambda m, X, y: dro_risk(m, X, y, 0.1, p=0.9),
    lambda m, X, y: thm313_bound(0, 0.1),
    lambda m, X, y: thm313_bound(100, 0.1, delta=1.0),
    lambda m, X, y: thm315_bound(100, 0.1, p=0.5),
    lambda m, X, y: cor38_bound(0.1, 100, 0.1, delta=0.0),
    lambda m, X, y: population(0, 1),
    lambda m, X, y: fit_logistic(X, y, lam=0.0),
    lambda m, X, y: retrain(X, y, 0, 1.0),
    lambda m, X, y: retrain(X, y, 2, 1.0, kappa=1.5),
    lambda m, X, y: tradeoff(population(50, 0), 100, [0.1]),
    lambda m, X, y: flip_distance(5, 3),
])
def test_bad_arguments_raise_value_error(small, call):
    pop, model = small
    with pytest.raises(ValueError, match="Invalid"):
        call(model, pop.X, pop.y)


@given(share=st.floats(allow_nan=True, allow_infinity=True).filter(lambda s: not 0 < s < 1))
@settings(max_examples=30, deadline=None)
def test_share_outside_unit_interval_raises(share):
    pop = population(50, seed=0)
    model = fit_logistic(pop.X, pop.y)
    with pytest.raises(ValueError, match="Invalid share"):
        flip_top_positives(model, pop.X, pop.y, share)


# --- widget callback ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [
    dict(),
    dict(share=0.01, n=1_000, p=1.0, delta=1e-4, rounds=30, rho=3.0),
    dict(share=0.5, n=1_000, p=4.0, delta=10 ** -0.1, rounds=1, rho=0.5),
    dict(share=0.5, n=100_000, p=1.0, delta=0.05, rounds=30, rho=0.5),
])
def test_widget_callback_never_raises(kw):
    res = panel(**kw)
    assert math.isfinite(res.measured_gap) and res.total > 0 and res.label


def test_widget_builds():
    from theorybook.performative.widgets import explorer

    assert explorer() is not None


def test_dro_vector_of_radii_equals_scalar_calls(small):
    pop, model = small
    radii = [0.0, 0.05, 0.3, 0.77, 1.5]
    vec = dro_risk(model, pop.X, pop.y, radii, "max")
    for r, v in zip(radii, vec, strict=True):
        assert float(dro_risk(model, pop.X, pop.y, r, "max")) == pytest.approx(float(v), abs=1e-14)
