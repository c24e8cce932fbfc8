"""Tests for theorybook.flat_minima: closed forms vs brute force and simulation, the ERMs' numbers, SA-GD/SAM
invariants, the trust-region inner maximum vs a direct search, stability shapes, validation errors, and the widget at
its slider extremes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from theorybook.device import to_numpy
from theorybook.flat_minima import (
    CHAPTER_SEEDS,
    HELDOUT_POINTS,
    chapter_rho,
    claim1_study,
    dynamics_study,
    empirical_risk,
    expected_unseen,
    flat_erm,
    heldout_risks,
    inner_max_quadratic,
    phi,
    population_risk,
    population_risk_mc,
    prob_some_unseen,
    rho_sharpness,
    sa_gd,
    sagd_sharpness_prediction,
    sam,
    seeded_verdicts,
    sharp_erm,
    sharpness_check,
    stability,
    theory,
    unseen_instance,
)


# -- the loss and the instance -------------------------------------------------------------------------------
def test_phi_values_and_smoothness():
    u = torch.linspace(-3, 3, 601, dtype=torch.float64)
    p = phi(u)
    assert torch.all(p >= 0)
    np.testing.assert_allclose(p[u < 0], 0.5 * u[u < 0] ** 2)
    assert torch.all(p[u >= 0] == 0)
    # φ' = min(u, 0) is 1-Lipschitz: finite differences of φ' never exceed 1
    dphi = torch.clamp(u, max=0)
    assert torch.all(torch.diff(dphi) <= torch.diff(u) + 1e-15)


def test_instance_and_risks_agree_with_definitions():
    inst = unseen_instance(64, 4, seed=3, device="cpu")
    assert set(torch.unique(inst.Z).tolist()) <= {0.0, 1.0}
    np.testing.assert_allclose(inst.a, inst.Z.mean(0))
    w = torch.randn(64, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    direct = sum(float((inst.Z[j] * phi(w)).sum()) for j in range(4)) / 4
    assert float(empirical_risk(w, inst.Z)) == pytest.approx(direct, rel=1e-13)
    assert float(population_risk(w)) == pytest.approx(0.5 * float(phi(w).sum()), rel=1e-13)


def test_unseen_counts():
    assert expected_unseen(4096, 10) == 4.0
    assert prob_some_unseen(4096, 10) == pytest.approx(1 - (1 - 2.0**-10) ** 4096, rel=1e-12)
    assert prob_some_unseen(1, 1) == pytest.approx(0.5)


def test_population_risk_mc_matches_closed_form():
    w = torch.tensor([-0.3, 0.2, -0.5, 0.0], dtype=torch.float64)
    mc = population_risk_mc(w, 40_000, seed=5)
    assert abs(mc.mean - float(population_risk(w))) < 4.5 * mc.stderr
    assert population_risk_mc(torch.ones(3, dtype=torch.float64), 10).mean == 0.0


# -- sharpness ----------------------------------------------------------------------------------------------
def test_closed_form_sharpness_matches_brute_force():
    chk = sharpness_check(points=12, seed=11)
    assert chk.max_rel < 1e-6


def test_sharpness_two_coordinates_by_dense_grid():
    """d = 2: S_ρ from a dense grid on the circle, refined — the maximiser sits at −ρe_{i*}."""
    Z = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    a = Z.mean(0)
    rho = 0.5
    for w in ([0.0, 0.0], [0.1, 0.3], [0.45, 0.05], [0.6, 0.1]):
        w = np.array(w)
        th = np.linspace(0, 2 * np.pi, 200_001)
        V = rho * np.stack([np.cos(th), np.sin(th)], 1)
        vals = (0.5 * np.minimum(w + V, 0) ** 2 * a).sum(1)
        closed = float(rho_sharpness(w, Z, rho))
        assert vals.max() == pytest.approx(closed, rel=1e-8, abs=1e-15)


def test_rho_sharpness_rejects_negative_seen_coordinates():
    Z = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    with pytest.raises(ValueError, match="seen coordinate"):
        rho_sharpness(torch.tensor([-0.1, 0.0]), Z, 0.1)
    assert float(rho_sharpness(torch.tensor([0.0, -5.0]), Z, 0.1)) == pytest.approx(0.005)  # unseen may be < 0


# -- the ERMs ------------------------------------------------------------------------------------------------
def test_flat_and_sharp_erm_numbers():
    inst = unseen_instance(256, 6, seed=0, device="cpu")
    k = int((~inst.seen).sum())
    assert k > 0
    rho, c = chapter_rho(256), 0.8
    w = flat_erm(inst, rho, c)
    assert float(empirical_risk(w, inst.Z)) == 0.0
    assert float(rho_sharpness(w, inst.Z, rho)) == 0.0
    assert float(population_risk(w)) == pytest.approx(c**2 / 4, rel=1e-12)
    assert float(torch.linalg.vector_norm(w)) <= 1.0
    z = sharp_erm(inst)
    assert float(population_risk(z)) == 0.0
    assert float(rho_sharpness(z, inst.Z, rho)) == pytest.approx(rho**2 * float(inst.a.max()) / 2, rel=1e-14)


def test_flat_erm_errors():
    inst = unseen_instance(16, 12, seed=0, device="cpu")  # 16·2⁻¹² ≈ 0.004 unseen expected
    assert int((~inst.seen).sum()) == 0
    with pytest.raises(ValueError, match="choose another seed"):
        flat_erm(inst, 0.1, 0.5)
    inst = unseen_instance(64, 2, seed=0, device="cpu")
    with pytest.raises(ValueError, match="unit ball"):
        flat_erm(inst, 0.5, 0.9)
    with pytest.raises(TypeError):
        flat_erm("not an instance", 0.1, 0.5)


# -- SA-GD and SAM -------------------------------------------------------------------------------------------
def test_sagd_matches_sorted_score_prediction_and_stays_in_orthant():
    inst = unseen_instance(128, 5, seed=2, device="cpu")
    rho = chapter_rho(128)
    tr = sa_gd(inst.Z, torch.zeros(128, dtype=torch.float64), 1.0, rho, 3000)
    pred = sagd_sharpness_prediction(inst.a, rho, tr.t)
    np.testing.assert_allclose(tr.sharpness, pred, rtol=1e-9, atol=0)
    assert np.all(tr.w >= 0) and np.all(tr.w <= rho + 1e-15)
    assert np.all(tr.empirical == 0) and np.all(tr.population == 0)


def test_sagd_batched_equals_single_runs():
    inst = unseen_instance(32, 3, seed=4, device="cpu")
    w0 = torch.rand(2, 32, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 0.05
    both = sa_gd(inst.Z, w0, 0.7, 0.1, 200)
    for b in range(2):
        one = sa_gd(inst.Z, w0[b], 0.7, 0.1, 200)
        np.testing.assert_array_equal(both.w[b], one.w)
        np.testing.assert_array_equal(both.sharpness[b], one.sharpness)


def test_sam_reaches_zero_loss_and_fixed_point():
    inst = unseen_instance(128, 5, seed=2, device="cpu")
    rho = chapter_rho(128)
    w0 = torch.where(inst.seen, torch.full_like(inst.a, -rho), torch.zeros_like(inst.a))
    tr = sam(inst.Z, w0, 1.0, rho, 2000)
    assert tr.empirical[-1] == 0.0 and tr.hit >= 1
    assert np.all(tr.w[~to_numpy(inst.seen)] == 0)  # SAM never touches an unseen coordinate here
    assert tr.sharpness[-1] > 100 * sa_gd(inst.Z, torch.zeros(128, dtype=torch.float64), 1.0, rho,
                                           4000).sharpness[-1]
    z = sam(inst.Z, torch.zeros(128, dtype=torch.float64), 1.0, rho, 50)  # zero gradient: no ascent, no move
    assert np.all(z.w == 0) and z.hit == 0


def test_dynamics_validation():
    Z = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    with pytest.raises(ValueError, match="lr"):
        sa_gd(Z, torch.zeros(2), 2.5, 0.1, 10)
    with pytest.raises(ValueError, match="seen coordinate"):
        sa_gd(Z, torch.tensor([-0.1, 0.0]), 1.0, 0.1, 10)
    with pytest.raises(ValueError, match="0 or 1"):
        sam(torch.tensor([[0.5, 1.0]]), torch.zeros(2), 1.0, 0.1, 10)
    with pytest.raises(ValueError, match="rho"):
        sam(Z, torch.zeros(2), 1.0, 0.0, 10)
    with pytest.raises(ValueError, match="d"):
        unseen_instance(0, 3)
    with pytest.raises(ValueError, match="c"):
        flat_erm(unseen_instance(64, 3, 0, "cpu"), 0.1, -0.1)


# -- the trust-region inner maximum --------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_inner_max_quadratic_vs_direct_search(seed):
    rng = np.random.default_rng(seed)
    d = 4
    M = rng.normal(size=(d, d))
    H = M @ M.T / d
    g = rng.normal(size=d) * (0.01 if seed % 2 else 1.0)
    rho = 0.7
    v = to_numpy(inner_max_quadratic(H, g, rho))
    assert np.linalg.norm(v) == pytest.approx(rho, rel=1e-10)
    obj = lambda x: float(g @ x + 0.5 * x @ H @ x)  # noqa: E731
    best = -np.inf
    for x0 in rng.normal(size=(30, d)):
        res = minimize(lambda x: -obj(x), rho * x0 / np.linalg.norm(x0), method="SLSQP",
                       constraints=[{"type": "ineq", "fun": lambda x: rho**2 - x @ x}], options={"ftol": 1e-14})
        best = max(best, obj(res.x * min(1.0, rho / np.linalg.norm(res.x))))
    assert obj(v) >= best - 1e-9


def test_inner_max_quadratic_hard_case_and_errors():
    H = np.diag([1.0, 0.5, 0.0])
    v = to_numpy(inner_max_quadratic(H, np.zeros(3), 0.5))
    assert abs(v[0]) == pytest.approx(0.5)
    v = to_numpy(inner_max_quadratic(H, np.array([0.0, 0.1, 0.0]), 0.5))  # g ⊥ top eigenvector, ‖off‖ < ρ
    assert np.linalg.norm(v) == pytest.approx(0.5) and v[1] == pytest.approx(0.2)
    with pytest.raises(ValueError, match="symmetric"):
        inner_max_quadratic(np.array([[1.0, 1.0], [0.0, 1.0]]), np.ones(2), 0.1)
    with pytest.raises(ValueError, match="semidefinite"):
        inner_max_quadratic(np.diag([1.0, -1.0]), np.ones(2), 0.1)


# -- claim 4 -------------------------------------------------------------------------------------------------
def test_stability_small_and_consistent():
    r_gd, r_sam = stability(("gd", "sam"), n=(40, 80, 160), steps=50, replacements=5, seed=1)
    single = stability("gd", n=(40, 80, 160), steps=50, replacements=5, seed=1)
    np.testing.assert_allclose(single.delta, r_gd.delta, rtol=1e-12)
    assert np.all(np.diff(r_gd.delta) < 0) and np.all(r_gd.delta <= r_gd.template)
    assert np.all(r_sam.delta <= r_sam.template)
    with pytest.raises(ValueError, match="algorithm"):
        stability("adam")
    with pytest.raises(ValueError, match="replacements"):
        stability("gd", n=(5, 10), replacements=6)


def test_gd_divergence_zero_when_nothing_replaced_far():
    """ρ → tiny: SAM and SA-GD follow GD (their perturbation vanishes)."""
    out = stability(("gd", "sa-gd", "sam"), n=(30, 60, 120), rho=1e-9, steps=30, replacements=3, seed=2)
    np.testing.assert_allclose(out[1].delta, out[0].delta, rtol=1e-6)
    np.testing.assert_allclose(out[2].delta, out[0].delta, rtol=1e-6)


# -- studies and verdicts ------------------------------------------------------------------------------------
def test_claim1_study_small():
    st = claim1_study(d=256, n=6, instances=40, seed=3, mc_samples=2000, steps=4000, device="cpu")
    assert st.flat_emp.size == int((st.unseen > 0).sum())
    assert np.all(st.flat_emp == 0) and np.all(st.flat_sharp == 0)
    np.testing.assert_allclose(st.flat_pop, 0.16, rtol=1e-12)
    h = st.heldout
    assert h.mean.shape == (len(HELDOUT_POINTS),) and h.m == 2000
    assert abs(h.mean[0] - 0.16) < 5 * h.stderr[0]
    assert h.mean[1] == 0.0 and h.mean[3] == 0.0  # w = 0 and SA-GD from 0: no negative coordinate
    assert h.mean[2] == h.mean[4] and 0 < h.mean[2] < 0.1  # SA-GD keeps the random start's unseen coordinates
    assert np.all(st.sagd_empirical == 0) and np.all(st.sagd_sharpness <= 1e-3)  # both SA-GD ends are flat ERMs
    with pytest.raises(ValueError, match="unit ball"):
        claim1_study(d=256, n=6, rho=0.2, instances=2)


def test_heldout_risks_measure_F_on_fresh_full_samples():
    w = torch.zeros(3, 40, dtype=torch.float64)
    w[0, 3], w[1, [5, 39]], w[2, 0] = -0.5, -0.3, 0.2  # the third point has F = 0
    h = heldout_risks(w, 40_000, seed=1, chunk=777)
    F = to_numpy(population_risk(w))
    assert np.all(np.abs(h.mean[:2] - F[:2]) < 4.5 * h.stderr[:2]) and h.mean[2] == 0.0 and h.stderr[2] == 0.0
    full = heldout_risks(w, 3000, seed=2, full_product=True)  # every column multiplied: the same numbers
    part = heldout_risks(w, 3000, seed=2)
    np.testing.assert_array_equal(full.mean, part.mean)
    np.testing.assert_array_equal(full.stderr, part.stderr)
    one = heldout_risks(w[1], 3000, seed=2)  # one point: the same draws, so the same estimate
    assert one.mean.shape == (1,) and one.mean[0] == part.mean[1]
    assert not np.array_equal(heldout_risks(w, 3000, seed=3).mean, part.mean)
    # the draws are Bernoulli(½) bits: the fraction of samples with coordinate 0 set is ½ ± 4 s.e.
    e0 = torch.zeros(1, 9, dtype=torch.float64)
    e0[0, 8] = -math.sqrt(2.0)  # f = z_8 · 1
    frac = heldout_risks(e0, 20_000, seed=4).mean[0]
    assert abs(frac - 0.5) < 4 * 0.5 / math.sqrt(20_000)
    with pytest.raises(ValueError, match="W"):
        heldout_risks(torch.zeros(2, 2, 2), 10)
    with pytest.raises(ValueError, match="m"):
        heldout_risks(w, 1)
    with pytest.raises(TypeError, match="full_product"):
        heldout_risks(w, 10, full_product=1)


def test_dynamics_rows_hold_on_other_instances():
    from theorybook.flat_minima import dynamics_verdicts

    for seed in (1, 5):
        assert dynamics_verdicts(dynamics_study(seed=seed, device="cpu"), pgd_seed=seed).passed


def test_perturbed_gd_stays_sharp_in_the_ball_and_is_seeded():
    from theorybook.flat_minima import perturbed_gd

    inst = unseen_instance(1024, 8, 4, "cpu")
    rho = chapter_rho(1024)
    a = perturbed_gd(inst.a, rho, 4096, seed=3)
    assert np.all(a > 1e-2) and np.array_equal(a, perturbed_gd(inst.a, rho, 4096, seed=3))
    with pytest.raises(ValueError):
        perturbed_gd(inst.a, rho, 10, radii=(0.0,))


def test_theory_rows_hold():
    D = theory.derive_all()
    from theorybook.flat_minima.verdicts import derivation_verdicts

    v = derivation_verdicts(D, 0.0, 1)
    assert v.passed and len(v.rows) == 8
    assert D.erms.flat_population == theory.sp.Symbol("c", positive=True) ** 2 / 4
    assert D.unseen.expected_value == 4


def test_chapter_seed_rows_hold_and_repeat():
    seed = CHAPTER_SEEDS[0]
    a, b = seeded_verdicts(seed), seeded_verdicts(seed)
    assert a.passed, [r.claim for r in a.failures]
    assert [r.measured for r in a.rows] == [r.measured for r in b.rows]
    kinds = a.counts()
    assert kinds["reproduces"] == 0 and kinds["not_specific"] == 3 and kinds["differs"] == 0
    # both claim-2 rows are 'holds, not specific': RWP (tuned like SA-GD) passes their own tests
    ns = {r.tests: r for r in a.rows if r.kind == "not_specific"}
    assert set(ns) == {"claim2-flat", "claim2-risk", "claim3-sharp"}
    for t in ("claim2-flat", "claim2-risk"):
        r = ns[t]
        assert r.holds and any(c["passes"] and "RWP" in c["label"] for c in r.controls)
        assert any(not c["passes"] and not c["weak"] for c in r.controls) or r.tests == "claim2-risk"
    # claim 3's sharp end: SA-GD's end fails it, plain GD from SAM's start (the ablation of the ascent) passes it
    c3 = ns["claim3-sharp"]
    assert c3.holds and [c["passes"] for c in c3.controls] == [False, True]
    assert c3.controls[1]["label"].startswith("plain GD") and float(c3.controls[1]["measured"]) >= 0.999
    # no hollow rows: the claim-1 row and the four true-by-construction consistency rows are gone
    labels = " | ".join(r.claim for r in a.rows)
    for gone in ("equals c²/4 on every instance", "F(w_T) − F(w₀)", "SAM minimises F̂", "F(w_T) of the SA-GD and SAM"):
        assert gone not in labels
    assert not any(r.tests == "claim1" for r in a.rows)
    # the claim-4 stand-in at a radius where the ascent step acts
    assert sum("ρ = 1, where the ascent step acts" in r.claim for r in a.rows) == 2


def test_claim1_is_quoted_and_the_headline():
    from theorybook.flat_minima import PAPER_CLAIMS

    heads = [c for c in PAPER_CLAIMS if c.headline]
    assert [c.id for c in heads] == ["claim1"]
    assert heads[0].quoted_only and heads[0].reason_class == "no measurable consequence"


# -- the widget ----------------------------------------------------------------------------------------------
def test_widget_extremes():
    pytest.importorskip("ipywidgets")
    import matplotlib

    matplotlib.use("Agg")
    from theorybook.flat_minima.widgets import explorer

    panel = explorer()
    for name, ctrl in panel.controls.items():
        values = ctrl.options if name == "algorithm" else (ctrl.min, ctrl.max)
        for val in values:
            ctrl.value = val
            assert panel.status.value and "cannot run" not in panel.status.value, (name, val, panel.status.value)
    for name, ctrl in panel.controls.items():  # every slider at its maximum with SAM, then at its minimum
        if name != "algorithm":
            ctrl.value = ctrl.max
    panel.controls["algorithm"].value = "SAM"
    assert "cannot run" not in panel.status.value
    for name, ctrl in panel.controls.items():
        if name != "algorithm":
            ctrl.value = ctrl.min
    assert "cannot run" not in panel.status.value


def test_widget_summarize_validates():
    from theorybook.flat_minima.widgets import summarize

    with pytest.raises(ValueError):
        summarize(d=1024)
    with pytest.raises(ValueError):
        summarize(algorithm="adam")
    s = summarize(d=512, n=12, log2_steps=14)
    assert s.flat_population is None and math.isfinite(s.empirical[-1])


def test_sagd_steps_equal_the_simulation_and_the_controls_fail():
    from theorybook.flat_minima import gd, sa_gd, sagd_steps
    from theorybook.flat_minima.verdicts import dynamics_verdicts

    inst = unseen_instance(256, 6, 3, "cpu")
    rho = chapter_rho(256)
    tr = sa_gd(inst.Z, torch.zeros(256, dtype=torch.float64), 1.0, rho, 4000)
    assert int(tr.hit) == sagd_steps(inst.a)
    g = gd(inst.Z, torch.zeros(256, dtype=torch.float64), 1.0, 50)  # GD never leaves 0: its sharpness stays
    assert np.allclose(g.sharpness, g.sharpness[0]) and int(g.hit) == 0
    v = dynamics_verdicts(dynamics_study(seed=2, device="cpu"))
    assert not any(r.kind == "reproduces" for r in v.rows)
    sharp = next(r for r in v.rows if r.tests == "claim3-sharp")
    assert sharp.kind == "not_specific" and sharp.holds
    assert [c["passes"] for c in sharp.controls] == [False, True]  # SA-GD's flat end fails, plain GD passes
    flat = next(r for r in v.rows if r.tests == "claim2-flat")
    assert flat.kind == "not_specific" and flat.holds
    assert [c["passes"] for c in flat.controls] == [True, False]  # RWP passes, perturbed GD does not


def test_rate_study_exponent_in_d():
    from theorybook.flat_minima import rate_study

    rs = rate_study(d=(256, 512, 1024), n=(6, 9, 12), d_fixed=256, n_fixed=6, instances=2)
    assert 0.8 < rs.slope_d < 1.2
    with pytest.raises((TypeError, ValueError)):
        rate_study(d=(256,))


# -- the coupled instance (claim 2's risk) -------------------------------------------------------------------
from theorybook.flat_minima import (  # noqa: E402
    COUPLING_LAMBDA,
    RWP_SIGMA_COUPLED,
    claim2_risk_test,
    coupled_empirical_risk,
    coupled_heldout,
    coupled_instance,
    coupled_population_risk,
    coupled_rwp,
    coupled_sa_gd,
    coupled_sharpness,
    coupled_sharpness_check,
    coupled_sharpness_search,
    coupled_study,
)


def _coupled_loss(w: np.ndarray, z: np.ndarray, inst) -> float:
    sig = w.sum() / math.sqrt(inst.d) - inst.tau
    return float(z @ (0.5 * np.minimum(w, 0.0) ** 2) + 0.5 * inst.lam * max(sig, 0.0) ** 2)


def _coupled_grad(w: np.ndarray, z: np.ndarray, inst) -> np.ndarray:
    sig = w.sum() / math.sqrt(inst.d) - inst.tau
    return z * np.minimum(w, 0.0) + inst.lam * max(sig, 0.0) / math.sqrt(inst.d)


def test_coupled_loss_is_nonnegative_convex_and_smooth():
    inst = coupled_instance(2, seed=5, unseen=2)  # d = 8
    rng = np.random.default_rng(0)
    beta = 1.0 + inst.lam
    for _ in range(300):
        z = rng.integers(0, 2, inst.d).astype(float)
        x, y = rng.normal(size=(2, inst.d)) * rng.choice([0.01, 0.3, 3.0])
        x += inst.b
        t = rng.uniform()
        fx, fy = _coupled_loss(x, z, inst), _coupled_loss(y, z, inst)
        assert fx >= 0 and fy >= 0
        assert _coupled_loss(t * x + (1 - t) * y, z, inst) <= t * fx + (1 - t) * fy + 1e-12
        # β-smoothness: the gradient is (1 + λ)-Lipschitz
        gd_ = np.linalg.norm(_coupled_grad(x, z, inst) - _coupled_grad(y, z, inst))
        assert gd_ <= beta * np.linalg.norm(x - y) * (1 + 1e-12)
    # along u with the coupling active, the gradient's Lipschitz ratio is λ (z = 0) — within β
    u = np.ones(inst.d) / math.sqrt(inst.d)
    x = (inst.tau + 1.0) * u
    ratio = np.linalg.norm(_coupled_grad(x + 0.1 * u, np.zeros(inst.d), inst)
                           - _coupled_grad(x, np.zeros(inst.d), inst)) / 0.1
    assert ratio == pytest.approx(inst.lam, rel=1e-9)


def test_coupled_risks_match_definitions():
    inst = coupled_instance(2, seed=7, unseen=2)
    rng = np.random.default_rng(1)
    W = rng.normal(size=(5, inst.d)) * 0.5
    Zn = to_numpy(inst.Z)
    emp = np.array([np.mean([_coupled_loss(w, z, inst) for z in Zn]) for w in W])
    np.testing.assert_allclose(coupled_empirical_risk(W, inst), emp, rtol=1e-12)
    # F = E_z f(w; z): exact expectation over all 2^d samples (d = 8)
    zs = np.array([[(j >> i) & 1 for i in range(inst.d)] for j in range(2**inst.d)], dtype=float)
    F = np.array([np.mean([_coupled_loss(w, z, inst) for z in zs]) for w in W])
    np.testing.assert_allclose(coupled_population_risk(W, inst), F, rtol=1e-12)
    mean, se = coupled_heldout(W, inst, m=20_000, seed=3)
    assert np.all(np.abs(mean - F) <= 4.5 * se + 1e-15)


def test_start_is_an_erm_with_zero_risk_and_zero_gradient():
    inst = coupled_instance(4, seed=11)
    w0 = np.full(inst.d, inst.b)
    assert float(coupled_empirical_risk(w0, inst)) == 0.0
    assert float(coupled_population_risk(w0, inst)) == 0.0
    assert np.all(np.stack([_coupled_grad(w0, z, inst) for z in to_numpy(inst.Z)]) == 0)


def test_coupled_sharpness_formula_matches_brute_force_and_is_attained():
    chk = coupled_sharpness_check(points=8, seed=4)
    assert chk.max_rel < 1e-6
    inst = coupled_instance(2, seed=2, unseen=2)
    rng = np.random.default_rng(2)
    w = np.where(inst.seen, rng.uniform(0, 2 * inst.rho, inst.d), -0.3)
    inst = inst._replace(tau=float(w.sum() / math.sqrt(inst.d)) + 0.5 * inst.rho)
    s = coupled_sharpness(w, inst)
    bf = coupled_sharpness_search(w, inst, directions=3000, seed=1)
    assert s == pytest.approx(bf, rel=1e-6)
    # the value at the formula's maximiser v = −r e_i + √(ρ² − r²)·u_{−i}/‖u_{−i}‖ is F̂(w + v) − F̂(w) ≤ S_ρ
    i = int(np.flatnonzero(inst.seen)[0])
    for r in np.linspace(0.1, 1.0, 5) * inst.rho:
        v = np.ones(inst.d)
        v[i] = 0.0
        v *= math.sqrt(inst.rho**2 - r**2) / np.linalg.norm(v)
        v[i] = -r
        val = float(coupled_empirical_risk(w + v, inst) - coupled_empirical_risk(w, inst))
        assert val <= s * (1 + 1e-12)


def test_flat_set_forces_negative_unseen_mass():
    inst = coupled_instance(4, seed=13)
    seen, d, rho, b = inst.seen, inst.d, inst.rho, inst.b
    bound = d * b - math.sqrt(d) * rho - int(seen.sum()) * rho
    assert bound < 0
    # a flat ERM: ρ on the seen coordinates, the unseen ones share exactly the bound
    w = np.where(seen, rho, bound / int((~seen).sum()))
    assert float(coupled_empirical_risk(w, inst)) == 0.0
    assert coupled_sharpness(w, inst) == pytest.approx(0.0, abs=1e-15)
    # raising the unseen coordinates at all (more mass than the bound allows) makes it sharp
    assert coupled_sharpness(w + np.where(seen, 0.0, 1e-3), inst) > 0


def test_coupled_sa_gd_reaches_a_flat_point_with_omega1_risk():
    inst = coupled_instance(4, seed=17)
    run = coupled_sa_gd(inst)
    assert run.hit and run.sharpness <= 1e-3 * run.sharpness0 and run.min_seen >= 0
    assert run.empirical <= 1e-3 * run.sharpness0
    F = float(coupled_population_risk(run.w, inst))
    assert F >= 0.1 * max(1.0, float(np.linalg.norm(run.w))) ** 2
    # a smaller radius (ρ' < b) reaches its flat point without touching the sign of any coordinate
    small = coupled_sa_gd(inst, rho=0.5 * inst.b)
    assert small.hit and np.all(small.w > 0) and float(coupled_population_risk(small.w, inst)) == 0.0
    # scale invariance: b, ρ, τ ×2 doubles the end point
    big = coupled_sa_gd(inst._replace(b=2 * inst.b, rho=2 * inst.rho, tau=2 * inst.tau))
    np.testing.assert_allclose(big.w, 2 * run.w, rtol=1e-9, atol=1e-12)


def test_claim2_risk_test_and_study_shapes():
    assert claim2_risk_test(0.0, 1e-3, 0.2, 1.2, 0.0, 1.1, 4)
    assert not claim2_risk_test(0.0, 1e-3, 0.1, 1.2, 0.0, 1.1, 4)  # 0.1 < 0.1·1.44
    assert not claim2_risk_test(0.0, 2e-3, 0.5, 1.0, 0.0, 1.1, 4)
    cs = coupled_study(seed=9101, n=2, unseen=(1, 2, 3), chapter_unseen=2, mc_samples=500, steps=5000)
    assert cs.d == (4, 8, 12) and len(cs.runs) == 3 and cs.start_grad == 0.0
    assert all(x == 0.0 for x in cs.small_risk) and cs.uncoupled_risk == 0.0
    assert COUPLING_LAMBDA == pytest.approx(0.1)
    assert len(cs.rwp_runs) == len(cs.flatmin_runs) == 3 and cs.rwp_sigma == RWP_SIGMA_COUPLED
    assert len(cs.rwp_risk) == len(cs.rwp_norm) == len(cs.flatmin_risk) == len(cs.flatmin_norm) == 3


def test_coupled_validation():
    inst = coupled_instance(2, seed=0, unseen=2)
    with pytest.raises(ValueError):
        coupled_sharpness(-np.ones(inst.d), inst)
    with pytest.raises(ValueError):
        coupled_sa_gd(inst, w0=-np.ones(inst.d))
    with pytest.raises(TypeError):
        coupled_sharpness(np.zeros(inst.d), "not an instance")
    with pytest.raises(ValueError):
        coupled_instance(0)
    with pytest.raises(ValueError):
        coupled_sa_gd(inst, lr=5.0)


# -- RWP: the rival of SA-GD (issue 57) ----------------------------------------------------------------------
def test_rwp_gd_steps_match_numpy_and_stay_on_the_orthant_in_the_ball():
    """An independent loop over the same noise stream: w ← Π(w − η a ⊙ min(w + σξ, 0))."""
    from theorybook.flat_minima import rwp_gd
    from theorybook.flat_minima.dynamics import RWP_STREAM

    inst = unseen_instance(64, 3, 5, "cpu")
    a = to_numpy(inst.a)
    rho, sigma, T = chapter_rho(64), 3 * chapter_rho(64), 40
    run = rwp_gd(inst.a, rho, sigma, T, seed=4, factor=1e-300, chunk=16)
    rng = np.random.default_rng(np.random.SeedSequence((4, RWP_STREAM)))
    xi = np.concatenate([rng.standard_normal((16, 64)) for _ in range(3)])[:T]
    w = np.zeros(64)
    for x in xi:
        w = w - a * np.minimum(w + sigma * x, 0.0)
        w = w / max(1.0, float(np.linalg.norm(w)))
    np.testing.assert_allclose(run.w, w, rtol=1e-12, atol=1e-15)
    assert run.steps == T and not run.hit
    assert np.all(run.w >= 0) and run.norm <= 1 + 1e-12
    assert np.all(run.w[a == 0] == 0)  # unseen coordinates get no gradient
    s = 0.5 * float((a * np.maximum(rho - run.w, 0.0) ** 2).max()) / (0.5 * a.max() * rho**2)
    assert run.ratio == pytest.approx(s, rel=1e-12)


def test_rwp_flattens_fast_at_the_chosen_scale_and_not_at_a_small_one():
    from theorybook.flat_minima import RWP_SIGMA_SEPARABLE, rwp_gd, sagd_steps

    inst = unseen_instance(1024, 8, 3, "cpu")
    rho = chapter_rho(1024)
    fast = rwp_gd(inst.a, rho, RWP_SIGMA_SEPARABLE * rho, 4096, seed=1)
    assert fast.hit and fast.ratio <= 1e-3 and fast.steps < sagd_steps(inst.a) / 10
    slow = rwp_gd(inst.a, rho, rho / 16, 2000, seed=1)
    assert not slow.hit and slow.ratio > 0.1
    again = rwp_gd(inst.a, rho, RWP_SIGMA_SEPARABLE * rho, 4096, seed=1)
    np.testing.assert_array_equal(again.w, fast.w)
    with pytest.raises(ValueError, match="sigma"):
        rwp_gd(inst.a, rho, 0.0)
    with pytest.raises(ValueError, match="a"):
        rwp_gd(np.zeros(4), rho, rho)


def test_coupled_rwp_steps_match_numpy_and_reach_a_flat_point_with_omega1_risk():
    from theorybook.flat_minima.coupled import RWP_STREAM_COUPLED

    inst = coupled_instance(4, seed=17)
    sigma = RWP_SIGMA_COUPLED * inst.rho
    few = coupled_rwp(inst, sigma, steps=30, seed=2)
    rng = np.random.default_rng(np.random.SeedSequence((2, RWP_STREAM_COUPLED)))
    w = np.full(inst.d, inst.b)
    Zn = to_numpy(inst.Z)
    for x in rng.standard_normal((30, inst.d)):
        y = w + sigma * x
        g = np.mean([_coupled_grad(y, z, inst) for z in Zn], axis=0)  # sample by sample
        w = w - g / (1 + inst.lam)
    np.testing.assert_allclose(few.w, w, rtol=1e-10, atol=1e-13)
    run = coupled_rwp(inst, sigma, seed=2)
    assert run.hit and run.sharpness <= 1e-3 * run.sharpness0
    assert run.sharpness == pytest.approx(coupled_sharpness(run.w, inst), rel=1e-9, abs=1e-300)
    assert run.empirical <= 1e-3 * run.sharpness0
    F = float(coupled_population_risk(run.w, inst))
    assert F >= 0.1 * max(1.0, float(np.linalg.norm(run.w))) ** 2  # flat, so it carries the risk too
    with pytest.raises(ValueError):
        coupled_rwp(inst, 0.0)
    with pytest.raises(TypeError):
        coupled_rwp("not an instance", 0.1)


def test_least_risk_flat_erm_is_flat_and_no_flat_erm_has_less_risk():
    from theorybook.flat_minima.coupled import _least_risk_flat_erm

    inst = coupled_instance(4, seed=13)
    run = _least_risk_flat_erm(inst, 1.0)
    k = int((~inst.seen).sum())
    bound = inst.d * inst.b - math.sqrt(inst.d) * inst.rho - int(inst.seen.sum()) * inst.rho
    F = float(coupled_population_risk(run.w, inst))
    assert F == pytest.approx(bound**2 / (4 * k), rel=1e-12)
    assert run.empirical == 0.0 and run.sharpness == pytest.approx(0.0, abs=1e-15)
    rng = np.random.default_rng(0)
    for _ in range(200):  # random flat ERMs: seen ≥ ρ, unseen anywhere with Σ_all w ≤ √d(τ − ρ)
        w = np.where(inst.seen, inst.rho + rng.exponential(0.05, inst.d), rng.normal(0, 1, inst.d))
        excess = w.sum() - math.sqrt(inst.d) * (inst.tau - inst.rho)
        w[~inst.seen] -= max(excess, 0.0) / k + rng.exponential(0.05)
        assert float(coupled_empirical_risk(w, inst)) == 0.0
        assert float(coupled_population_risk(w, inst)) >= F * (1 - 1e-12)


def test_stability_wide_rows_use_the_same_data():
    from theorybook.flat_minima.verdicts import WIDE_ALGORITHMS, WIDE_RHO, stability_verdicts

    base = stability(("gd", "sa-gd", "sam"), n=(40, 80, 160), steps=50, replacements=5, seed=1)
    wide = stability(WIDE_ALGORITHMS, n=(40, 80, 160), rho=WIDE_RHO, steps=50, replacements=5, seed=1)
    gd_again = stability("gd", n=(40, 80, 160), rho=WIDE_RHO, steps=50, replacements=5, seed=1)
    np.testing.assert_array_equal(gd_again.delta, base[0].delta)  # GD ignores ρ: the same data
    assert not np.allclose(wide[0].delta, base[1].delta)  # the ascent step acts at ρ = 1
    v = stability_verdicts(base, wide)
    assert len(v.rows) == 5 and all(r.kind == "consistency" for r in v.rows)
    with pytest.raises(TypeError):
        stability_verdicts(base, base)  # GD has no ρ-dependent band
