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
    SOURCES,
    TOL_BASES,
    Control,
    PaperClaim,
    Verdicts,
    fmt,
    rule_violations,
    z_threshold,
)

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
    assert getattr(v, method)(*args, **kwargs, **R, control=Control("baseline", control)) is True
    row = v.rows[-1]
    assert row.controls[0]["label"] == "baseline" and row.controls[0]["passes"] is False
    assert rule_violations(row) == []


@pytest.mark.parametrize("method,args,kwargs,control", CONTROLS)
def test_reproduction_fails_when_its_control_passes(method, args, kwargs, control):
    v = Verdicts("t", display=False)
    same = args[1]  # the control measures exactly what the method measures
    assert getattr(v, method)(*args, **kwargs, **R, control=Control("x0 unchanged", same)) is False
    row = v.rows[-1]
    assert CONTROL_PASSES in row.reason and "x0 unchanged" in row.reason
    with pytest.raises(AssertionError, match=CONTROL_PASSES):
        v.raise_if_failed()


def test_every_control_must_fail():
    v = Verdicts("t", display=False)
    ok = v.less("grasp vs oracle", 1.0, 2.0, **R, control=[Control("x0", 50.0), Control("fixed step", 1.5)])
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
        v.less("x", 1.0, 2.0, kind=kind, source=source, basis="model: m", control=Control("c", 3.0), paper=9.0,
                 tests="C1")
    assert v.less("x", 1.0, 2.0, kind="consistency", source=source, basis="model: m")


def test_differs_requires_the_paper_value_and_that_it_fails_the_test():
    v = Verdicts("t", display=False)
    with pytest.raises(ValueError, match="paper's value"):
        v.less("x", 1.0, 2.0, kind="differs", source="paper", basis="model: m", tests="C1")
    assert v.less("x", 1.0, 2.0, kind="differs", source="paper", paper=5.0, basis="model: m", tests="C1")
    assert v.rows[-1].paper_passes is False
    assert v.less("y", 1.0, 2.0, kind="differs", source="paper", paper=0.1, basis="model: m", tests="C1") is False
    assert PAPER_PASSES in v.rows[-1].reason
    # a qualitative paper value cannot be tested numerically: shown, not asserted
    assert v.less("z", 1.0, 2.0, kind="differs", source="paper", paper="≤ 0.5", basis="model: m", tests="C1")
    assert v.rows[-1].paper == "≤ 0.5"


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
    v.less("x", 1.0, 2.0, **R, control=Control("c", 3.0))
    d = json.loads(json.dumps(v.to_json()))["rows"][0]
    assert rule_violations(d) == []
    assert rule_violations({**d, "source": "derived"})
    assert rule_violations({**d, "controls": []})
    assert rule_violations({**d, "basis": ""})
    assert rule_violations({**d, "controls": [{"label": "c", "measured": "1", "passes": True}]})
    assert rule_violations({**d, "kind": "differs", "paper": "0.1", "paper_passes": True})
    assert rule_violations({**d, "tests": ""})


def test_context_manager_raises_with_numbers():
    with pytest.raises(AssertionError, match=r"rate: predicted 0\.982021, measured 0\.9"):
        with Verdicts("t", display=False) as v:
            v.close("rate", 0.9, 0.982021, rtol=1e-6, **K)
            v.close("other", 1.0, 1.0, **K)


def test_context_manager_passes_and_renders():
    with Verdicts("title here", display=False) as v:
        v.close("x", 1.0, 1.0, **K)
    html = v._repr_html_()
    assert "title here" in html and "1/1 claims hold" in html
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
    v.close("a", 1.0, 1.0, **R, control=Control("c", 2.0))
    v.close("b", 1.0, 1.0, kind="reproduces", source="secondary", control=Control("c", 2.0), tests="C1")
    v.between("c", 3.0, 2.0, 4.0, kind="differs", source="paper", paper=1.0, basis="model: m", tests="C1")
    v.true("d", False, kind="consistency", source="derived")
    assert v.status() == "2 claims reproduce (against their controls), 1 differs, 1 consistency check — 1 FAIL"
    assert v.counts() == {"reproduces": 2, "differs": 1, "consistency": 1, "fails": 1}


def test_html_groups_by_kind_with_controls_and_json_payload():
    v = Verdicts("My table", display=False, claims=(PaperClaim("C1", "the main claim"),))
    v.true("c1", True, kind="consistency", source="derived")
    v.close("r1", 1.0, 1.0, **R, control=Control("do nothing", 7.0))
    v.close("r2", 2.0, 1.0, **R, control=Control("do nothing", 7.0))
    v.less("d1", 1.0, 2.0, kind="differs", source="secondary", paper=3.0, basis="model: m", tests="C1")
    h = v._repr_html_()
    assert h.index("Reproduces the paper") < h.index("Differs from the paper") < h.index("Consistency checks")
    assert ">holds<" in h and ">FAILS<" in h and "✅" not in h and "❌" not in h
    assert "do nothing: 7 (fails)" in h and "control (must fail)" in h
    assert "id='verdicts-my-table'" in h
    payload = re.search(r"<script type='application/json' class='theorybook-verdicts'>(.*?)</script>", h, re.S)
    data = json.loads(payload.group(1).replace("<\\/", "</"))
    assert data["anchor"] == "verdicts-my-table" and len(data["rows"]) == 4
    assert {r["kind"] for r in data["rows"]} == {"reproduces", "differs", "consistency"}
    assert data["counts"]["fails"] == 1
    assert data["claims"][0]["id"] == "C1" and data["rows"][1]["tests"] == "C1"
    assert data["rows"][1]["controls"] == [{"label": "do nothing", "measured": "7", "passes": False}]
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
    b.close("x", 1.0, 1.0, **R, control=Control("c", 3.0))
    a.extend(b)
    assert len(a.rows) == 1 and a.rows[0].claim == "x" and a.claims[0].id == "C1"


def test_paper_claims_validate():
    with pytest.raises(ValueError, match="claim id"):
        PaperClaim("C 1", "x")
    with pytest.raises(ValueError, match="source"):
        PaperClaim("C1", "x", source="derived")
    with pytest.raises(ValueError, match="why"):
        PaperClaim("C1", "x", quoted_only=True)
    assert PaperClaim("C1", "x", quoted_only=True, why="needs the paper's LLM").quoted_only
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
    assert KINDS == ("reproduces", "differs", "consistency")
    assert SOURCES == ("paper", "secondary", "derived", "reconstruction")
