"""Tests for theorybook.opt_engine: exact solvers vs brute force / DP / each other, generators deterministic and in
range, text round trip, stand-ins and feasibility, grading, the omission semantics, validation errors, the sympy
derivations and the widget at its extremes."""

from __future__ import annotations

import hashlib
import itertools
import json

import numpy as np
import pytest

from theorybook.opt_engine import (
    CLASSES,
    SIZE_RANGE,
    from_text,
    generate,
    grade,
    held_karp,
    is_feasible,
    knapsack_dp,
    objective,
    solve,
    stand_in,
    theory,
    to_text,
)
from theorybook.opt_engine.experiment import accuracy_study, binomial_se, decay_test, summarize
from theorybook.opt_engine.problems import _dist


def _brute_tsp(d: np.ndarray) -> float:
    n = d.shape[0]
    return min(sum(d[t[i], t[(i + 1) % n]] for i in range(n)) for t in ([0, *p] for p in
                                                                        itertools.permutations(range(1, n))))


def _brute_knapsack(w, v, C) -> float:
    best = 0.0
    for mask in itertools.product((0, 1), repeat=len(w)):
        m = np.array(mask)
        if m @ w <= C:
            best = max(best, float(m @ v))
    return best


@pytest.mark.parametrize("n", [4, 5, 6, 7])
def test_tsp_exact_methods_match_brute_force(n):
    for seed in range(2):
        inst = generate("tsp", n, seed=seed)
        d = _dist(inst.params["coords"])
        bf = _brute_tsp(d)
        assert held_karp(d) == pytest.approx(bf, rel=1e-12)
        for form in ("mtz", "dfj"):
            sol = solve("tsp", inst.params, formulation=form)
            assert sol.objective == pytest.approx(bf, rel=1e-9)
            assert is_feasible("tsp", inst.params, sol.x)
            assert objective("tsp", inst.params, sol.x) == pytest.approx(sol.objective, rel=1e-9)


@pytest.mark.parametrize("n", [5, 8, 12])
def test_knapsack_dp_and_milp_match_brute_force(n):
    inst = generate("knapsack", n, seed=3)
    p = inst.params
    bf = _brute_knapsack(p["weights"], p["values"], p["capacity"])
    assert knapsack_dp(p["weights"], p["values"], p["capacity"]) == bf == inst.answer
    sol = solve("knapsack", p)
    assert sol.objective == pytest.approx(bf) and is_feasible("knapsack", p, sol.x)


@pytest.mark.parametrize("n", [10, 14])
def test_bin_packing_formulations_agree(n):
    inst = generate("bin_packing", n, seed=1)
    a = solve("bin_packing", inst.params)  # the paper's assignment model
    b = solve("bin_packing", inst.params, formulation="arcflow")
    assert a.objective == b.objective == inst.answer
    assert is_feasible("bin_packing", inst.params, b.x) and objective("bin_packing", inst.params, b.x) == b.objective
    # every big item (> 50) needs its own bin: a lower bound
    assert b.objective >= np.sum(inst.params["sizes"] > 50)


def test_job_shop_solution_is_a_schedule_and_beats_spt():
    inst = generate("job_shop", 3, seed=0)
    sol = solve("job_shop", inst.params)
    assert is_feasible("job_shop", inst.params, sol.x)
    assert objective("job_shop", inst.params, sol.x) == pytest.approx(sol.objective)
    spt = stand_in("job_shop", inst.params)
    assert is_feasible("job_shop", inst.params, spt)
    assert objective("job_shop", inst.params, spt) >= sol.objective - 1e-9
    lb = max(inst.params["times"].sum(1).max(), 0)  # the longest job is a lower bound
    assert sol.objective >= lb - 1e-9


@pytest.mark.parametrize("problem", CLASSES)
def test_generate_is_deterministic_and_text_round_trips(problem):
    lo, hi = SIZE_RANGE[problem]
    n = min(lo + 1, hi) if problem != "job_shop" else 3
    a, b = generate(problem, n, seed=5), generate(problem, n, seed=5)
    h = lambda inst: hashlib.sha256(json.dumps({k: np.asarray(v).tolist() for k, v in inst.params.items()},  # noqa: E731
                                               sort_keys=True).encode()).hexdigest()
    assert h(a) == h(b) and a.text == b.text and a.answer == b.answer
    parsed = from_text(problem, a.text)
    for k, v in a.params.items():
        np.testing.assert_array_equal(np.asarray(parsed[k], float), np.asarray(v, float))
    assert to_text(problem, parsed) == a.text
    assert generate(problem, n, seed=6).text != a.text


@pytest.mark.parametrize("problem", CLASSES)
def test_stand_in_is_never_better_than_the_optimum(problem):
    lo, hi = SIZE_RANGE[problem]
    n = lo if problem != "job_shop" else 3
    for seed in range(3):
        inst = generate(problem, n, seed=seed)
        x = stand_in(problem, inst.params)
        if is_feasible(problem, inst.params, x):
            val = objective(problem, inst.params, x)
            if inst.sense == "min":
                assert val >= inst.answer * (1 - 1e-9)
            else:
                assert val <= inst.answer * (1 + 1e-9)


def test_ratio_greedy_definition():
    p = {"weights": [5, 4, 3], "values": [10, 12, 3], "capacity": 8}  # ratios 2, 3, 1: take 1 (w 4), then 2? 4+5>8
    assert list(stand_in("knapsack", p)) == [0, 1, 1]


def test_network_flow_and_transportation_optima_are_integral():
    for c in ("transportation", "network_flow"):
        for n in (3, 6):
            sol = solve(c, generate(c, n, seed=2).params)
            np.testing.assert_allclose(sol.x, np.round(sol.x), atol=1e-9)


def test_mtz_omission_is_a_relaxation_with_subtours():
    inst = generate("tsp", 8, seed=0)
    sol = solve("tsp", inst.params, omit="mtz")
    assert sol.objective <= inst.answer + 1e-9
    assert (sol.objective < inst.answer - 1e-9) == (not is_feasible("tsp", inst.params, sol.x))


def test_added_constraints_bind_and_are_checked():
    for c in ("tsp", "knapsack", "inventory"):
        inst = generate(c, SIZE_RANGE[c][0] + 2, seed=0)
        with_add = solve(c, inst.params, add={"tsp": "forced_arc", "knapsack": "conflict",
                                              "inventory": "order_cap"}[c])
        worse = with_add.objective >= inst.answer - 1e-9 if inst.sense == "min" else \
            with_add.objective <= inst.answer + 1e-9
        assert worse


@pytest.mark.parametrize("pred,truth,ok", [(100.19, 100.0, True), (100.21, 100.0, False), (-99.81, -100.0, True),
                                           (float("inf"), 1.0, False), (None, 1.0, False), (0.0, 0.0, True)])
def test_grade_is_the_paper_rule(pred, truth, ok):
    assert grade(pred, truth) is ok


@pytest.mark.parametrize("call", [
    lambda: generate("tsp", 3, seed=0), lambda: generate("tsp", 20, seed=0), lambda: generate("lp", 5, seed=0),
    lambda: generate("knapsack", 5, seed=-1), lambda: grade(1.0, 1.0, rtol=-0.1),
    lambda: solve("knapsack", {"weights": [1, -2], "values": [1, 2], "capacity": 2}),
    lambda: solve("knapsack", {"weights": [1, 2], "values": [1], "capacity": 2}),
    lambda: solve("tsp", {"coords": np.zeros((4, 3))}), lambda: solve("knapsack", {"weights": [1]}),
    lambda: solve("tsp", generate("tsp", 4, seed=0).params, omit="capacity"),
    lambda: solve("knapsack", generate("knapsack", 5, seed=0).params, add="forced_arc"),
    lambda: held_karp(np.ones((2, 3))), lambda: knapsack_dp([1, 2], [1, 2], -1),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_error_message_names_parameter_and_range():
    with pytest.raises(ValueError, match=r"size.*≥ 4.*≤ 19"):
        generate("tsp", 25, seed=0)


def test_theory_derivations():
    mtz = theory.derive_mtz(4, 5)
    assert all(e == -k for k, e in mtz.subtour_slack.items()) and mtz.max_violation == 0
    tu = theory.derive_tu()
    assert tu.values == {-1, 0, 1} and tu.values_bounded == {-1, 0, 1} and tu.n_minors == 5004
    gb = theory.derive_greedy_bound(10)
    assert gb.gap_positive and gb.worst_ratio < 1
    A = theory.transport_matrix(2, 2)
    A[0, 0] = 2  # no longer unimodular
    assert 2 in theory.minors_in_unit_set(A)[1]


def test_decay_and_summaries_small_scale():
    d = decay_test(1, "tsp", sizes=(4, 8, 12), count=10, sir_count=2)
    assert d.acc[0] == 1.0 and d.n == 10 and d.sir == (1.0, 1.0) and len(d.acc) == 3
    recs = accuracy_study(1, ("knapsack",), {"knapsack": (5,)}, {"knapsack": 3})
    S = summarize(recs)
    assert S["knapsack"][5]["n"] == 3 and S["knapsack"][5]["sir_acc"] == 1.0
    assert binomial_se(0.5, 100) == pytest.approx(0.05)


def test_decay_row_has_the_rival_as_a_real_control():
    """A small decay run: the rival is the stronger search (never below the stand-in on the same records), the row's
    first control is the rival (non-weak), the second the repeated sample (weak); the SIR proxy is no control."""
    from theorybook.opt_engine.verdicts import bench_verdicts

    d = decay_test(7001, "knapsack", count=60, sir_count=2)
    assert len(d.rival) == len(d.acc) and all(r >= a for r, a in zip(d.rival, d.acc, strict=True))
    from theorybook.check import Verdicts
    from theorybook.opt_engine.verdicts import _decay_row

    v = Verdicts("t", display=False)
    _decay_row(v, d, "test.")
    row = v.rows[0]
    assert [bool(c["weak"]) for c in row.controls] == [False, True]
    assert "random-restart" in row.controls[0]["label"] and "greedy + add/1-swap" in row.claim
    assert not any("SIR" in c["label"] for c in row.controls)
    with pytest.raises(TypeError):
        bench_verdicts({"knapsack": {}})


def _bench(name):
    import pathlib

    return json.loads((pathlib.Path(__file__).parents[1] / "bench" / "results" / name).read_text())


def test_bench_decay_rows_read_the_committed_results():
    from theorybook.opt_engine.verdicts import Z_DECAY, bench_verdicts, load_bench

    res = load_bench()
    v = bench_verdicts(res)
    assert v.passed and [r.tests for r in v.rows] == ["scaling", "scaling"]
    tsp, kn = v.rows
    assert "Or-opt" in tsp.controls[0]["label"] and not tsp.controls[0]["weak"] and tsp.kind == "not_specific"
    assert "random-restart" in kn.controls[0]["label"] and not kn.controls[0]["weak"] and kn.kind == "not_specific"
    assert not tsp.controls[0]["passes"] and kn.controls[0]["passes"]  # as registered: the knapsack rival decays too
    # the sceptic's review: the TSP rival fails at 1000 records but passes pooled over the unseen seeds
    assert "pooled over" in tsp.controls[2]["label"] and not tsp.controls[2]["weak"] and tsp.controls[2]["passes"]
    assert res["tsp"]["z"] > Z_DECAY and res["knapsack"]["z"] > Z_DECAY
    assert res["tsp"]["n"] == 1000 and res["knapsack"]["n"] == 5000


@pytest.mark.parametrize("c, n, file", [("tsp", 6, "opt_engine_decay.json"),
                                        ("knapsack", 5, "opt_engine_decay_knapsack.json")])
def test_bench_decay_recomputes_one_entry(c, n, file):
    """Each committed decay json: re-run one size in full — both arms on the bench's streams — same counts."""
    from theorybook.opt_engine.experiment import CHAPTER_SEEDS, CLASSES, _decay_hits

    res = _bench(file)
    t = res[c]
    assert res["seed"] == CHAPTER_SEEDS[0] and res["design"]["count"] == t["n"]
    i, k = t["sizes"].index(n), CLASSES.index(c)
    h, _, r = _decay_hits(c, n, t["n"], np.random.default_rng([CHAPTER_SEEDS[0], k, n, 7]), 0,
                          np.random.default_rng([CHAPTER_SEEDS[0], k, n, 9]))
    assert h == round(t["acc"][i] * t["n"]) and r == round(t["rival"][i] * t["n"])


def test_rival_search_is_feasible_and_at_least_as_good():
    from theorybook.opt_engine import rival_search, strong_stand_in
    from theorybook.opt_engine.solvers import held_karp, knapsack_dp
    from theorybook.opt_engine.spec import _dist
    from theorybook.opt_engine.standins import _or_opt, _tour_len

    for r in range(4):
        q = generate("tsp", 9, seed=r).params
        a, b = rival_search("tsp", q), strong_stand_in("tsp", q)
        assert is_feasible("tsp", q, a) and objective("tsp", q, a) <= objective("tsp", q, b) + 1e-9
        assert objective("tsp", q, a) >= held_karp(_dist(q["coords"])) - 1e-9
        k = generate("knapsack", 20, seed=r).params
        a, b = rival_search("knapsack", k, seed=r), strong_stand_in("knapsack", k)
        assert is_feasible("knapsack", k, a) and objective("knapsack", k, a) >= objective("knapsack", k, b) - 1e-9
        assert objective("knapsack", k, a) <= knapsack_dp(k["weights"], k["values"], k["capacity"]) + 1e-9
    # Or-opt from the definition: on a tour where one city is visibly out of place, moving it is the gain
    pts = np.array([[0, 0], [1, 0], [2, 0], [3, 0], [3, 1], [2, 1], [1, 1], [0, 1]], dtype=float)
    d = np.linalg.norm(pts[:, None] - pts[None], axis=-1)
    bad = [0, 5, 1, 2, 3, 4, 6, 7]  # city 5 visited between 0 and 1
    good = _or_opt(d, bad)
    assert sorted(good) == list(range(8)) and _tour_len(d, good) == pytest.approx(8.0)
    with pytest.raises(ValueError, match="seed"):
        rival_search("knapsack", k, seed=-1)


def test_strong_stand_ins_are_at_least_as_good_as_the_plain_ones():
    from theorybook.opt_engine import strong_stand_in
    from theorybook.opt_engine.standins import _tour_len

    for r in range(5):
        for c, n in (("tsp", 9), ("knapsack", 20)):
            q = generate(c, n, seed=r).params
            a, b = strong_stand_in(c, q), stand_in(c, q)
            assert is_feasible(c, q, a)
            if c == "tsp":
                assert objective(c, q, a) <= objective(c, q, b) + 1e-9
            else:
                assert objective(c, q, a) >= objective(c, q, b) - 1e-9
    assert _tour_len(np.zeros((3, 3)), [0, 1, 2]) == 0.0


def test_split_modules_share_one_import_path():
    from theorybook.opt_engine import problems, solvers, standins, text

    assert problems.solve is solvers.solve and problems.stand_in is standins.stand_in
    assert problems.to_text is text.to_text
    for m in (problems, solvers, standins, text):
        assert len(open(m.__file__).read().splitlines()) < 600
    # the imports run one way: spec ← solvers ← standins, spec ← text, all ← problems (no module imports problems)
    import re

    from theorybook.opt_engine import spec

    for m in (spec, solvers, standins, text):
        src = open(m.__file__).read()
        assert not re.search(r"from \.problems import", src), m.__name__
    assert not re.search(r"from \.(solvers|standins|text|problems) import", open(spec.__file__).read())


def test_paper_claims_and_study_rows():
    from theorybook.opt_engine import PAPER_CLAIMS, study_verdicts
    from theorybook.opt_engine.experiment import omission_study, pollution_audit

    assert {c.id for c in PAPER_CLAIMS if not c.quoted_only} == {"scaling"}
    recs = accuracy_study(3, ("tsp", "knapsack"), {"tsp": (5,), "knapsack": (5,)}, {"tsp": 2, "knapsack": 2})
    v = study_verdicts(recs, omission_study(3, count=1), pollution_audit(3, count=1))
    assert v.passed and all(r.kind == "consistency" for r in v.rows)


def test_widget_extremes():
    import matplotlib

    matplotlib.use("Agg")
    from theorybook.opt_engine.widgets import explorer

    panel = explorer()
    c = panel.controls
    for prob in ("tsp", "knapsack", "inventory", "job_shop", "production"):
        c["problem"].value = prob
        for attr, values in (("size_rank", (c["size_rank"].min, c["size_rank"].max)),
                             ("instances", (c["instances"].min, c["instances"].max)),
                             ("perturb", ("omit family", "forget added constraint", "none")),
                             ("rtol", (c["rtol"].min and 10 ** c["rtol"].min, 10 ** c["rtol"].max))):
            for val in values:
                if attr == "rtol":
                    c[attr].value = val
                else:
                    c[attr].value = val
                assert "cannot run" not in panel.status.value and panel.status.value


def test_widget_without_cache_never_runs_a_solve_over_budget():
    """No cached study and a class whose one exact solve exceeds the budget (job shop): feasibility only, said so."""
    from theorybook.opt_engine import widgets as W

    saved = dict(W._CACHE)
    W._CACHE.update(records=None, omissions=None)
    try:
        s = W.panel_summary("job_shop", size_rank=10, instances=6)
    finally:
        W._CACHE.update(saved)
    assert s.mode.startswith("feasibility only") and list(s.bars) == ["stand-in (PTR proxy)"]
    assert 0.0 <= s.bars["stand-in (PTR proxy)"][0] <= 1.0 and s.bars["stand-in (PTR proxy)"][1] != s.bars[
        "stand-in (PTR proxy)"][1]  # accuracy NaN: not computed


def test_tsp_unseen_seed_scan_recomputes_and_pools():
    """bench/results/opt_engine_decay_seeds.json (the sceptic's scan of the TSP row on unseen seeds): one entry re-run
    in full (the first seed at 6 cities, both arms on decay_test's streams), and the pooled rival's z — the row's third
    control — recomputed from the pooled counts by the two-proportion formula."""
    from theorybook.opt_engine.experiment import CHAPTER_SEEDS, CLASSES, _decay_hits
    from theorybook.opt_engine.verdicts import _pooled_rival

    scan = _bench("opt_engine_decay_seeds.json")
    k, sizes = scan["design"]["count"], scan["design"]["sizes"]
    assert str(CHAPTER_SEEDS[0]) not in scan["seeds"] and len(scan["seeds"]) >= 2
    s0, r0 = next(iter(scan["seeds"].items()))
    ci = CLASSES.index("tsp")
    h, _, r = _decay_hits("tsp", 6, k, np.random.default_rng([int(s0), ci, 6, 7]), 0,
                          np.random.default_rng([int(s0), ci, 6, 9]))
    assert h == round(r0["acc"][1] * k) and r == round(r0["rival"][1] * k)
    zp, ks, miss, _, _ = _pooled_rival(scan)
    runs = list(scan["seeds"].values())
    assert all(x["rival"][0] == 1.0 for x in runs)  # both searches are exact at 4 cities
    n0, n1 = k * ks, k * (len(sizes) - 1) * ks
    p1 = 1 - sum(miss) / n1
    assert ks == len(runs) and zp == pytest.approx((1 - p1) / np.sqrt(p1 * (1 - p1) / n1), rel=1e-9)
    assert n0 == sum(k for _ in runs)
