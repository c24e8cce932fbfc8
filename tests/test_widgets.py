"""The shared panel wiring: draws at once, redraws on change, shows (never raises) a failing setting."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import ipywidgets as w  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from theorybook.widgets import live_panel  # noqa: E402


def _render(a: float):
    if a > 1:
        raise ValueError("a too large")
    fig = plt.figure()
    return fig, f"a = {a}"


def test_panel_draws_and_redraws_and_survives_errors():
    a = w.FloatSlider(value=0.5, min=0, max=2)
    panel = live_panel({"a": a}, _render)
    status = panel.children[-2]
    assert status.value == "<b>a = 0.5</b>"
    a.value = 0.75
    assert status.value == "<b>a = 0.75</b>"
    a.value = 1.5  # render raises: shown, not raised
    assert "cannot run this setting" in status.value and "a too large" in status.value


def test_unknown_row_name_rejected():
    with pytest.raises(ValueError, match="Invalid rows"):
        live_panel({"a": w.FloatSlider()}, _render, rows=[["b"]])
