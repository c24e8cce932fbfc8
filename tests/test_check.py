"""The verdict helpers: rows hold or fail as stated, and failures raise with the numbers."""

from __future__ import annotations

import json
import math
import re

import pytest

from theorybook.check import KINDS, MIME, SOURCES, Verdicts, fmt, z_threshold

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


K = {"kind": "consistency", "source": "derived"}


@pytest.mark.parametrize("method,args,kwargs,holds", CASES)
def test_row_semantics(method, args, kwargs, holds):
    v = Verdicts("t", display=False)
    assert getattr(v, method)(*args, **kwargs, **K) is holds
    assert v.rows[-1].holds is holds


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
    with pytest.raises(ValueError, match="paper's value"):
        v.less("x", 1.0, 2.0, kind="differs", source="paper")
    assert v.less("x", 1.0, 2.0, kind="differs", source="paper", paper="≤ 0.5")
    assert v.rows[-1].paper == "≤ 0.5"


def test_status_line_counts_kinds_and_failures():
    v = Verdicts("t", display=False)
    v.close("a", 1.0, 1.0, kind="reproduces", source="paper")
    v.close("b", 1.0, 1.0, kind="reproduces", source="secondary")
    v.between("c", 3.0, 2.0, 4.0, kind="differs", source="paper", paper=1.0)
    v.true("d", False, kind="consistency", source="derived")
    assert v.status() == "2 claims reproduce, 1 differs, 1 consistency check — 1 FAIL"
    assert v.counts() == {"reproduces": 2, "differs": 1, "consistency": 1, "fails": 1}


def test_html_groups_by_kind_with_text_marks_and_json_payload():
    v = Verdicts("My table", display=False)
    v.true("c1", True, kind="consistency", source="derived")
    v.close("r1", 1.0, 1.0, kind="reproduces", source="paper")
    v.close("r2", 2.0, 1.0, kind="reproduces", source="paper")
    v.less("d1", 1.0, 2.0, kind="differs", source="secondary", paper=0.1)
    h = v._repr_html_()
    # groups in the order reproduces, differs, consistency; marks are words, not emoji
    assert h.index("Reproduces the paper") < h.index("Differs from the paper") < h.index("Consistency checks")
    assert ">holds<" in h and ">FAILS<" in h and "✅" not in h and "❌" not in h
    assert "id='verdicts-my-table'" in h
    payload = re.search(r"<script type='application/json' class='theorybook-verdicts'>(.*?)</script>", h, re.S)
    data = json.loads(payload.group(1).replace("<\\/", "</"))
    assert data["anchor"] == "verdicts-my-table" and len(data["rows"]) == 4
    assert {r["kind"] for r in data["rows"]} == {"reproduces", "differs", "consistency"}
    assert data["counts"]["fails"] == 1
    bundle = v._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain", MIME}
    assert "Status:" in bundle["text/plain"]


def test_payload_survives_closing_script_tags_in_text():
    v = Verdicts("t", display=False)
    v.true("</script><b>x", True, kind="consistency", source="derived")
    h = v._repr_html_()
    assert h.count("</script>") == 1


def test_extend_merges_rows():
    a, b = Verdicts("a", display=False), Verdicts("b", display=False)
    b.close("x", 1.0, 1.0, kind="reproduces", source="paper")
    a.extend(b)
    assert len(a.rows) == 1 and a.rows[0].claim == "x"


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
