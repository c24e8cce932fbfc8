"""The verdict helpers: rows hold or fail as stated, failures raise with the numbers, and every rule of
``theorybook.check`` (controls, paper-only reproductions, differs that contradict, tolerance provenance) raises
when broken."""

from __future__ import annotations

import json
import math
import re

import pytest

from theorybook.check import (
    CONTROL_PASSES,
    KINDS,
    MIME,
    PAPER_PASSES,
    PLANTED_PASSES,
    REASON_CLASSES,
    SOURCES,
    TOL_BASES,
    Control,
    PaperClaim,
    Planted,
    Scan,
    Verdicts,
    claim_violations,
    fmt,
    rule_violations,
    z_threshold,
)


def C(label: str, value, **kw) -> Control:  # noqa: N802 - a control a sceptic would accept, for the tables below
    kw.setdefault("why", "the competitor the paper beats")
    kw.setdefault("tuned", "same grid, budget and pilot seeds as the method")
    return Control(label, value, **kw)


def P(value, label: str = "the paper's effect planted") -> Planted:  # noqa: N802
    return Planted(label, value, effect="the paper's claimed size")

CASES = [
    # (method, args, kwargs, holds)
    ("close", ("a", 1.0, 1.0), {}, True),
    ("close", ("a", 1.0 + 1e-10, 1.0), {"rtol": 1e-9}, True),
    ("close", ("a", 1.1, 1.0), {"rtol": 1e-3}, False),
    ("close", ("a", 0.01, 0.0), {"atol": 0.02}, True),
    ("close", ("a", math.nan, 0.0), {"atol": 1e9}, False),
    ("close", ("a", math.inf, math.inf), {"rtol": 1.0}, False),
    ("equal", ("a", 3384, 3384), {}, True),
    ("equal", ("a", 3385, 3384), {}, False),
    ("less", ("a", 1e-9, 1e-6), {}, True),
    ("less", ("a", 1e-3, 1e-6), {}, False),
    ("less", ("a", math.nan, 1.0), {}, False),
    ("greater", ("a", 2.0, 1.0), {}, True),
    ("greater", ("a", 0.5, 1.0), {}, False),
    ("between", ("a", 0.5, 0.0, 1.0), {}, True),
    ("between", ("a", 1.5, 0.0, 1.0), {}, False),
    ("true", ("a", True), {}, True),
    ("true", ("a", False), {}, False),
]

K = {"kind": "consistency", "source": "derived", "basis": "model: test"}
R = {"kind": "reproduces", "source": "paper", "basis": "paper: stated bound", "tests": "C1"}


@pytest.mark.parametrize("method,args,kwargs,holds", CASES)
def test_row_semantics(method, args, kwargs, holds):
    v = Verdicts("t", display=False)
    assert getattr(v, method)(*args, **kwargs, **K) is holds
    assert v.rows[-1].holds is holds


# A control that fails the same test, for each method: the reproduction holds.
CONTROLS = [
    ("close", ("a", 1.0, 1.0), {"rtol": 1e-3}, 1.5),
    ("equal", ("a", 3, 3), {}, 4),
    ("less", ("a", 1e-9, 1e-6), {}, 1e-3),
    ("greater", ("a", 2.0, 1.0), {}, 0.5),
    ("between", ("a", 0.5, 0.0, 1.0), {}, 1.5),
    ("true", ("a", True), {}, False),
]


@pytest.mark.parametrize("method,args,kwargs,control", CONTROLS)
def test_reproduction_holds_when_its_control_fails(method, args, kwargs, control):
    v = Verdicts("t", display=False)
    assert getattr(v, method)(*args, **kwargs, **R, control=C("baseline", control)) is True
    row = v.rows[-1]
    assert row.controls[0]["label"] == "baseline" and row.controls[0]["passes"] is False
    assert rule_violations(row) == []


@pytest.mark.parametrize("method,args,kwargs,control", CONTROLS)
def test_reproduction_fails_when_its_control_passes(method, args, kwargs, control):
    v = Verdicts("t", display=False)
    same = args[1]  # the control measures exactly what the method measures
    assert getattr(v, method)(*args, **kwargs, **R, control=C("x0 unchanged", same)) is False
    row = v.rows[-1]
    assert CONTROL_PASSES in row.reason and "x0 unchanged" in row.reason
    with pytest.raises(AssertionError, match=CONTROL_PASSES):
        v.raise_if_failed()


def test_every_control_must_fail():
    v = Verdicts("t", display=False)
    ok = v.less("grasp vs oracle", 1.0, 2.0, **R, control=[C("x0", 50.0), C("fixed step", 1.5)])
    assert ok is False and "fixed step" in v.rows[-1].reason and "x0 =" not in v.rows[-1].reason
    assert [c["passes"] for c in v.rows[-1].controls] == [False, True]


def test_a_reproduction_must_name_its_control():
    v = Verdicts("t", display=False)
    with pytest.raises(ValueError, match="must name its control"):
        v.less("x", 1.0, 2.0, **R)
    with pytest.raises(TypeError, match="Control"):
        v.less("x", 1.0, 2.0, **R, control=("x0", 3.0))


@pytest.mark.parametrize("kind", ["reproduces", "differs"])
@pytest.mark.parametrize("source", ["derived", "reconstruction"])
def test_only_paper_claims_reproduce_or_differ(kind, source):
    v = Verdicts("t", display=False)
    with pytest.raises(ValueError, match="must be a paper's claim"):
        v.less("x", 1.0, 2.0, kind=kind, source=source, basis="model: m", control=C("c", 3.0), paper=9.0,
                 tests="C1")
    assert v.less("x", 1.0, 2.0, kind="consistency", source=source, basis="model: m")


def test_differs_requires_the_paper_value_and_that_it_fails_the_test():
    v = Verdicts("t", display=False)
    with pytest.raises(ValueError, match="paper's value"):
        v.less("x", 1.0, 2.0, kind="differs", source="paper", basis="model: m", tests="C1")
    assert v.less("x", 1.0, 2.0, kind="differs", source="paper", paper=5.0, basis="model: m", tests="C1",
                  planted=P(4.0))
    assert v.rows[-1].paper_passes is False
    assert v.less("y", 1.0, 2.0, kind="differs", source="paper", paper=0.1, basis="model: m", tests="C1",
                  planted=P(4.0)) is False
    assert PAPER_PASSES in v.rows[-1].reason


def test_a_string_paper_value_no_longer_skips_the_test():
    v = Verdicts("t", display=False)
    with pytest.raises(ValueError, match="not put through the row's test"):
        v.less("z", 1.0, 2.0, kind="differs", source="paper", paper="≤ 0.5", basis="model: m", tests="C1",
               planted=P(4.0))
    # worded with paper_shown=, tested by value
    assert v.less("z", 1.0, 2.0, kind="differs", source="paper", paper=5.0, paper_shown="≈ 5 (Fig. 2)",
                  basis="model: m", tests="C1", planted=P(4.0))
    assert v.rows[-1].paper == "≈ 5 (Fig. 2)" and v.rows[-1].paper_passes is False
    # a boolean claim's paper value is the condition the paper asserts
    assert v.true("w", True, kind="differs", source="paper", paper=False, tests="C1", planted=P(False))


def test_differs_needs_a_planted_control_or_a_reason():
    v = Verdicts("t", display=False)
    with pytest.raises(ValueError, match="must plant the paper's effect"):
        v.less("x", 1.0, 2.0, kind="differs", source="paper", paper=5.0, basis="model: m", tests="C1")
    with pytest.raises(ValueError, match="must plant the paper's effect"):
        v.less("x", 1.0, 2.0, kind="differs", source="paper", paper=5.0, basis="model: m", tests="C1",
               untestable="the effect needs the paper's language model")
    assert v.less("x", 1.0, 2.0, kind="inconclusive", source="paper", paper=5.0, basis="model: m", tests="C1",
                  untestable="the effect needs the paper's language model")
    assert v.rows[-1].untestable and v.rows[-1].planted is None and v.rows[-1].outcome == "inconclusive"
    with pytest.raises(ValueError, match="either planted or untestable"):
        v.less("x", 1.0, 2.0, kind="inconclusive", source="paper", paper=5.0, basis="model: m", tests="C1",
               planted=P(1.0), untestable="both")
    with pytest.raises(ValueError, match="'inconclusive' rows only"):
        v.less("x", 1.0, 2.0, kind="consistency", source="derived", basis="model: m", planted=P(4.0))
    with pytest.raises(TypeError, match="Planted"):
        v.less("x", 1.0, 2.0, kind="differs", source="paper", paper=5.0, basis="model: m", tests="C1",
               planted=4.0)


def test_a_planted_effect_the_test_misses_fails_the_row():
    """The experiment could not have seen the paper's effect: the negative result is not a result."""
    v = Verdicts("t", display=False)
    ok = v.less("no speed-up", 1.05, 1.3, kind="differs", source="paper", paper=100.0, basis="pilot: p",
                tests="C1", planted=P(1.2, "fresh curves compressed 1.2×"))
    assert ok is False and PLANTED_PASSES in v.rows[-1].reason
    assert v.rows[-1].planted["passes"] is True and v.rows[-1].planted["effect"]
    with pytest.raises(AssertionError, match="could not have seen"):
        v.raise_if_failed()
    assert v.less("no speed-up", 1.05, 1.1, kind="differs", source="paper", paper=100.0, basis="pilot: p",
                  tests="C1", planted=P(1.2))
    assert rule_violations(v.rows[-1]) == []


def test_a_control_says_why_and_how_it_was_tuned():
    v = Verdicts("t", display=False)
    for bad in (Control("c", 3.0), Control("c", 3.0, why="strong"), Control("c", 3.0, tuned="same grid")):
        with pytest.raises(ValueError, match="why a sceptic would pick it"):
            v.less("x", 1.0, 2.0, **R, control=bad)
    with pytest.raises(TypeError, match="why"):
        Control("c", 3.0, why=1)  # type: ignore[arg-type]
    # a consistency row's control needs neither
    assert v.less("x", 1.0, 2.0, kind="consistency", source="derived", basis="model: m", control=Control("c", 3.0))


def test_a_weak_control_is_never_the_only_one():
    v = Verdicts("t", display=False)
    weak = C("the method at ρ = 0", 3.0, weak="equals the method at a degenerate setting")
    with pytest.raises(ValueError, match="every control is weak"):
        v.less("x", 1.0, 2.0, **R, control=weak)
    assert v.less("x", 1.0, 2.0, **R, control=[weak, C("the tuned competitor", 2.5)])
    assert [bool(c["weak"]) for c in v.rows[-1].controls] == [True, False]


def test_a_regime_scan_has_three_values():
    v = Verdicts("t", display=False)
    with pytest.raises(ValueError, match="≥ 3 distinct values"):
        v.less("x", 1.0, 2.0, **R, control=C("c", 3.0), scan=Scan("N", (1, 2), (0.5, 0.6)))
    with pytest.raises(ValueError, match="equally long"):
        Scan("N", (1, 2, 3), (0.5,))
    assert v.less("x", 1.0, 2.0, **R, control=C("c", 3.0), scan=Scan("N", (1, 2, 4), (0.5, 0.6, 1.0),
                                                                      effect=(False, False, True)))
    assert v.rows[-1].scan == {"parameter": "N", "values": ["1", "2", "4"], "measured": ["0.5", "0.6", "1"],
                               "effect": [False, False, True]}
    with pytest.raises(TypeError, match="Scan"):
        v.less("x", 1.0, 2.0, **R, control=C("c", 3.0), scan=(1, 2, 3))


def test_claim_rules_over_a_chapter():
    regime = PaperClaim("R", "faster at large N", regime="N")
    quoted = PaperClaim("Q", "Rouge on LLaMA", quoted_only=True, why="needs an LLM", reason_class="language model")
    untested = PaperClaim("U", "never tested")
    v = Verdicts("t", display=False)
    v.less("one instance", 1.0, 2.0, **{**R, "tests": "R"}, control=C("c", 3.0))
    bad = claim_violations((regime, quoted, untested), v.rows)
    assert any("'R'" in b and "regime" in b for b in bad) and any("'U'" in b for b in bad)
    v.less("the scan", 1.0, 2.0, **{**R, "tests": "R"}, control=C("c", 3.0), scan=Scan("N", (1, 2, 4), (1, 1, 1)))
    v.less("quoted but tested", 1.0, 2.0, **{**R, "tests": "Q"}, control=C("c", 3.0))
    bad = claim_violations((regime, quoted), v.rows)
    assert bad == ["claim 'Q' is marked quoted only but 1 row(s) test it"]
    assert claim_violations((regime,), [r.as_dict() for r in v.rows[:2]]) == []
    assert any("unknown paper claim" in b for b in claim_violations((regime,), v.rows))


@pytest.mark.parametrize("basis", ["", "because", "guess: 3", "model:", "pilot:  "])
def test_a_tolerance_must_state_its_provenance(basis):
    v = Verdicts("t", display=False)
    with pytest.raises(ValueError, match="provenance"):
        v.close("x", 1.0, 1.0, rtol=1e-3, kind="consistency", source="derived", basis=basis)
    with pytest.raises(ValueError, match="provenance"):
        v.greater("x", 1.0, 0.0, kind="consistency", source="derived", basis=basis)


def test_exact_rows_need_no_basis():
    v = Verdicts("t", display=False)
    assert v.close("x", 1.0, 1.0, kind="consistency", source="derived")
    assert v.equal("x", 1, 1, kind="consistency", source="derived")
    assert v.true("x", True, kind="consistency", source="derived")
    assert set(TOL_BASES) == {"model", "pilot", "paper", "exact"}


def test_rule_violations_reads_json_rows():
    v = Verdicts("t", display=False)
    v.less("x", 1.0, 2.0, **R, control=C("c", 3.0))
    d = json.loads(json.dumps(v.to_json()))["rows"][0]
    assert rule_violations(d) == []
    assert rule_violations({**d, "source": "derived"})
    assert rule_violations({**d, "controls": []})
    assert rule_violations({**d, "basis": ""})
    assert rule_violations({**d, "controls": [{"label": "c", "measured": "1", "passes": True}]})
    assert rule_violations({**d, "kind": "differs", "paper": "0.1", "paper_passes": True})
    assert rule_violations({**d, "kind": "differs", "paper": "0.1", "paper_passes": None, "controls": []})
    assert rule_violations({**d, "tests": ""})
    assert rule_violations({**d, "controls": [{**d["controls"][0], "why": ""}]})
    assert rule_violations({**d, "controls": [{**d["controls"][0], "weak": "degenerate"}]})
    assert rule_violations({**d, "scan": {"parameter": "N", "values": ["1", "1", "2"], "measured": []}})
    dif = {**d, "kind": "differs", "controls": [], "paper": "5", "paper_passes": False}
    assert any("must plant" in m for m in rule_violations(dif))
    assert rule_violations({**dif, "planted": {"label": "p", "measured": "4", "effect": "e", "passes": False}}) == []
    assert rule_violations({**dif, "planted": {"label": "p", "measured": "1", "effect": "e", "passes": True}})
    assert rule_violations({**dif, "untestable": "needs an LLM"})
    inc = {**dif, "kind": "inconclusive"}
    assert rule_violations({**inc, "untestable": "needs an LLM"}) == []
    assert rule_violations({**inc, "planted": {"label": "p", "measured": "1", "effect": "e", "passes": True}}) == []
    assert any("carries the plant" in m for m in rule_violations(inc))
    ns = {**d, "kind": "not_specific"}
    assert any("must name the alternative" in m for m in rule_violations(ns))
    assert rule_violations({**ns, "controls": [{**d["controls"][0], "passes": True}]}) == []


def test_context_manager_raises_with_numbers():
    with pytest.raises(AssertionError, match=r"rate: predicted 0\.982021, measured 0\.9"):
        with Verdicts("t", display=False) as v:
            v.close("rate", 0.9, 0.982021, rtol=1e-6, **K)
            v.close("other", 1.0, 1.0, **K)


def test_context_manager_passes_and_renders():
    with Verdicts("title here", display=False) as v:
        v.close("x", 1.0, 1.0, **K)
    html = v._repr_html_()
    assert "title here" in html and "1/1 rows stand as registered" in html
    assert "claim" in str(v)


def test_empty_table_is_a_failure():
    with pytest.raises(AssertionError, match="no claims"):
        with Verdicts("t", display=False):
            pass


def test_negative_tolerance_rejected():
    with pytest.raises(ValueError, match="tolerance"):
        Verdicts("t", display=False).close("x", 1.0, 1.0, rtol=-1, **K)


def test_fmt():
    assert fmt(3384) == "3384"
    assert fmt(0.982021) == "0.982021"
    assert "e" in fmt(1e-20)
    assert fmt(float("nan")) == "nan"


def test_kind_and_source_are_required_and_checked():
    v = Verdicts("t", display=False)
    with pytest.raises(TypeError):
        v.close("x", 1.0, 1.0)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="Invalid kind"):
        v.close("x", 1.0, 1.0, kind="reproduced", source="paper")
    with pytest.raises(ValueError, match="Invalid source"):
        v.close("x", 1.0, 1.0, kind="reproduces", source="folklore")


def test_status_line_counts_kinds_and_failures():
    v = Verdicts("t", display=False)
    v.close("a", 1.0, 1.0, **R, control=C("c", 2.0))
    v.close("b", 1.0, 1.0, kind="reproduces", source="secondary", control=C("c", 2.0), tests="C1")
    v.between("c", 3.0, 2.0, 4.0, kind="differs", source="paper", paper=1.0, basis="model: m", tests="C1",
              planted=P(5.0))
    v.true("d", False, kind="consistency", source="derived")
    assert v.status() == "paper-claim rows: 2 reproduces, 1 differs; 1 consistency check — 1 FAIL"
    assert v.counts() == {"reproduces": 2, "not_specific": 0, "differs": 1, "inconclusive": 0, "consistency": 1,
                          "fails": 1}


def test_html_groups_by_kind_with_controls_and_json_payload():
    v = Verdicts("My table", display=False, claims=(PaperClaim("C1", "the main claim"),))
    v.true("c1", True, kind="consistency", source="derived")
    v.close("r1", 1.0, 1.0, **R, control=C("do nothing", 7.0))
    v.close("r2", 2.0, 1.0, **R, control=C("do nothing", 7.0))
    v.less("d1", 1.0, 2.0, kind="differs", source="secondary", paper=3.0, basis="model: m", tests="C1",
           planted=P(4.0))
    h = v._repr_html_()
    assert h.index("Reproduces the paper") < h.index("Differs from the paper") < h.index("Consistency checks")
    assert ">holds<" in h and ">FAILS" in h and ">reproduces<" in h and "✅" not in h and "❌" not in h
    assert "do nothing: 7 (fails)" in h and "controls · plant" in h
    assert "id='verdicts-my-table'" in h
    payload = re.search(r"<script type='application/json' class='theorybook-verdicts'>(.*?)</script>", h, re.S)
    data = json.loads(payload.group(1).replace("<\\/", "</"))
    assert data["anchor"] == "verdicts-my-table" and len(data["rows"]) == 4
    assert {r["kind"] for r in data["rows"]} == {"reproduces", "differs", "consistency"}
    assert data["counts"]["fails"] == 1
    assert data["claims"][0]["id"] == "C1" and data["rows"][1]["tests"] == "C1"
    assert data["rows"][1]["controls"] == [{"label": "do nothing", "measured": "7", "passes": False,
                                            "why": "the competitor the paper beats",
                                            "tuned": "same grid, budget and pilot seeds as the method", "weak": ""}]
    bundle = v._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain", MIME}
    assert "Status:" in bundle["text/plain"]


def test_payload_survives_closing_script_tags_in_text():
    v = Verdicts("t", display=False)
    v.true("</script><b>x", True, kind="consistency", source="derived")
    h = v._repr_html_()
    assert h.count("</script>") == 1


def test_extend_merges_rows_and_claims():
    a = Verdicts("a", display=False)
    b = Verdicts("b", display=False, claims=(PaperClaim("C1", "x"),))
    b.close("x", 1.0, 1.0, **R, control=C("c", 3.0))
    a.extend(b)
    assert len(a.rows) == 1 and a.rows[0].claim == "x" and a.claims[0].id == "C1"


def test_paper_claims_validate():
    with pytest.raises(ValueError, match="claim id"):
        PaperClaim("C 1", "x")
    with pytest.raises(ValueError, match="source"):
        PaperClaim("C1", "x", source="derived")
    with pytest.raises(ValueError, match="why"):
        PaperClaim("C1", "x", quoted_only=True)
    with pytest.raises(ValueError, match="reason_class"):
        PaperClaim("C1", "x", quoted_only=True, why="needs the paper's LLM")
    with pytest.raises(ValueError, match="reason_class"):
        PaperClaim("C1", "x", quoted_only=True, why="needs the paper's LLM", reason_class="too hard")
    with pytest.raises(ValueError, match="only for quoted-only"):
        PaperClaim("C1", "x", reason_class="language model")
    assert PaperClaim("C1", "x", quoted_only=True, why="needs the paper's LLM",
                      reason_class="language model").quoted_only
    assert len(REASON_CLASSES) == 6 and {"paper text unread", "underpowered here"} <= set(REASON_CLASSES)
    with pytest.raises(ValueError, match="label"):
        Control("", 1.0)


def test_z_threshold():
    assert abs(z_threshold(1e-3) - 3.2905) < 1e-3
    assert z_threshold(1e-3, 360) > z_threshold(1e-3, 1)
    for bad in (0.0, 1.0, True, float("nan")):
        with pytest.raises(ValueError):
            z_threshold(bad)
    with pytest.raises(ValueError):
        z_threshold(1e-3, 0)


def test_kinds_and_sources_constants():
    assert KINDS == ("reproduces", "not_specific", "differs", "inconclusive", "consistency")
    assert SOURCES == ("paper", "secondary", "derived", "reconstruction")


# -- the four outcomes ------------------------------------------------------------------------------------------
# (registered kind, the row's test on the measurement, a control's value, a plant's value or "untestable",
#  the outcome the evidence gives, whether the row stands as registered)
OUTCOME_CASES = [
    # the claim's test holds, the strong control fails it: reproduces
    ("reproduces", 1e-9, 0.3, None, "reproduces", True),
    # ... and the control passes too: holds, not specific — registered as such it stands, as reproduces it fails
    ("not_specific", 1e-9, 1e-8, None, "not_specific", True),
    ("reproduces", 1e-9, 1e-8, None, "not_specific", False),
    ("not_specific", 1e-9, 0.3, None, "reproduces", False),
    # the claim's own numbers fail: the row fails whatever it registered
    ("reproduces", 0.5, 0.3, None, "fails", False),
    ("not_specific", 0.5, 1e-8, None, "fails", False),
]
OTHERWISE_CASES = [
    # what we measure instead holds (≤ 2 while the paper says 5), the plant (4) is caught: differs
    ("differs", 1.0, 4.0, "differs", True),
    ("inconclusive", 1.0, 4.0, "differs", False),
    # the plant is missed (1.5 passes ≤ 2): inconclusive
    ("inconclusive", 1.0, 1.5, "inconclusive", True),
    ("differs", 1.0, 1.5, "inconclusive", False),
    # no plant possible: inconclusive
    ("inconclusive", 1.0, "untestable", "inconclusive", True),
    # we no longer measure otherwise: the row fails
    ("differs", 3.0, 4.0, "fails", False),
    ("inconclusive", 3.0, 1.5, "fails", False),
]


@pytest.mark.parametrize("kind,measured,control,_,outcome,stands", OUTCOME_CASES)
def test_claim_rows_outcome_from_evidence(kind, measured, control, _, outcome, stands):
    v = Verdicts("t", display=False)
    assert v.less("error is small", measured, 1e-6, kind=kind, source="paper", basis="paper: 1e-6", tests="C1",
                  control=C("a slower SGD", control)) is stands
    r = v.rows[-1]
    assert r.outcome == outcome and r.holds is stands and rule_violations(r) == []
    if outcome == "not_specific" and stands:
        assert "but so does a slower SGD" in str(v) and "but so does" in v._repr_html_()
    if not stands:
        with pytest.raises(AssertionError):
            v.raise_if_failed()


@pytest.mark.parametrize("kind,measured,plant,outcome,stands", OTHERWISE_CASES)
def test_otherwise_rows_outcome_from_evidence(kind, measured, plant, outcome, stands):
    v = Verdicts("t", display=False)
    extra = {"untestable": "needs the paper's GPU budget"} if plant == "untestable" else {"planted": P(plant)}
    assert v.less("speed-up ≤ 2", measured, 2.0, kind=kind, source="paper", paper=5.0, basis="model: m",
                  tests="C1", **extra) is stands
    r = v.rows[-1]
    assert r.outcome == outcome and r.holds is stands and rule_violations(r) == []


def test_claim_outcome_is_the_least_favourable_row_and_drives_the_bottom_line():
    from theorybook.check import claim_outcome, headline_claim, outcome_counts

    claims = (PaperClaim("C1", "a speed-up", headline=True), PaperClaim("C2", "a bound"),
              PaperClaim("C3", "needs an LLM", quoted_only=True, why="LLM", reason_class="language model"))
    v = Verdicts("t", display=False, claims=claims)
    v.less("C1 at small scale", 1e-9, 1e-6, **R, control=C("SGD", 0.3))
    v.less("C1 at a larger budget", 1e-9, 1e-6, kind="not_specific", source="paper", basis="paper: b",
           tests="C1", control=C("SGD at a smaller step", 1e-8))
    v.less("C2", 1.0, 2.0, kind="differs", source="paper", paper=5.0, basis="model: m", tests="C2",
           planted=P(4.0))
    assert v.passed
    outcome, row = claim_outcome(claims[0], v.rows)
    assert outcome == "not_specific" and row["claim"] == "C1 at a larger budget"
    assert claim_outcome(claims[1], v.rows)[0] == "differs" and claim_outcome(claims[2], v.rows)[0] == "quoted"
    assert headline_claim(claims)["id"] == "C1"
    assert headline_claim([PaperClaim("X", "x", where="Thm 1"), PaperClaim("Y", "y")])["id"] == "Y"
    assert outcome_counts(claims, v.rows) == {"reproduces": 0, "not_specific": 1, "differs": 1, "inconclusive": 0,
                                             "quoted": 1, "untested": 0, "fails": 0}
    html = v.bottom_line()
    assert "Bottom line" in html and "holds, not specific" in html and "but so does SGD at a smaller step" in html
    assert "data-claim='C1'" in html
    with pytest.raises(ValueError, match="headline claim must come from the abstract"):
        PaperClaim("X", "x", where="Thm 1", headline=True)
    assert claim_violations([PaperClaim("A", "a", headline=True), PaperClaim("B", "b", headline=True)], [])
