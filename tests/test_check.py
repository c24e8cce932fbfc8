"""The verdict helpers: rows hold or fail as stated, and failures raise with the numbers."""

from __future__ import annotations

import math

import pytest

from theorybook.check import Verdicts, fmt

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


@pytest.mark.parametrize("method,args,kwargs,holds", CASES)
def test_row_semantics(method, args, kwargs, holds):
    v = Verdicts("t", display=False)
    assert getattr(v, method)(*args, **kwargs) is holds
    assert v.rows[-1].holds is holds


def test_context_manager_raises_with_numbers():
    with pytest.raises(AssertionError, match=r"rate: predicted 0\.982021, measured 0\.9"):
        with Verdicts("t", display=False) as v:
            v.close("rate", 0.9, 0.982021, rtol=1e-6)
            v.close("other", 1.0, 1.0)


def test_context_manager_passes_and_renders():
    with Verdicts("title here", display=False) as v:
        v.close("x", 1.0, 1.0)
    html = v._repr_html_()
    assert "title here" in html and "1/1 claims hold" in html
    assert "claim" in str(v)


def test_empty_table_is_a_failure():
    with pytest.raises(AssertionError, match="no claims"):
        with Verdicts("t", display=False):
            pass


def test_negative_tolerance_rejected():
    with pytest.raises(ValueError, match="tolerance"):
        Verdicts("t", display=False).close("x", 1.0, 1.0, rtol=-1)


def test_fmt():
    assert fmt(3384) == "3384"
    assert fmt(0.982021) == "0.982021"
    assert "e" in fmt(1e-20)
    assert fmt(float("nan")) == "nan"
