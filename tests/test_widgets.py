"""The shared panel wiring: draws at once, redraws on change, shows (never raises) a failing setting."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import json  # noqa: E402

import ipywidgets as w  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

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


# ---------------------------------------------------------------------------- the static explorer


from theorybook.widgets import (  # noqa: E402
    MIN_STATES,
    OTHER_VALUES,
    PRIMARY_VALUES,
    StaticExplorer,
    control_values,
    default_primary,
    derive_states,
    precompute,
)


def _render2(a: float, b: int = 1, mode: str = "x"):
    if a > 1.5:
        raise ValueError("a too large")
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, 1], [0, a * b])
    ax.set_title(mode)
    return fig, f"a = {a}, b = {b}, mode = {mode}"


def _controls():
    return {
        "a": w.FloatSlider(value=0.5, min=0.0, max=2.0, step=0.1),
        "b": w.IntSlider(value=3, min=1, max=9),
        "mode": w.Dropdown(options=["x", "y", "z"], value="y"),
        "lr": w.FloatLogSlider(value=1e-3, base=10, min=-5, max=0, step=0.25),
        "stage": w.SelectionSlider(options=[("one", 1), ("two", 2), ("three", 3), ("four", 4), ("five", 5),
                                            ("six", 6), ("seven", 7)], value=2),
        "flag": w.Checkbox(value=False),
    }


def test_control_values_cover_the_range_and_keep_the_default():
    c = _controls()
    a = control_values("a", c["a"], n=5)
    assert a.values[0] == 0.0 and a.values[-1] == 2.0 and len(a.values) == 5
    assert a.values[a.default] == 0.5
    a8 = control_values("a", c["a"], n=PRIMARY_VALUES)
    assert len(a8.values) == 8 and a8.values[0] == 0.0 and a8.values[-1] == 2.0 and a8.values[a8.default] == 0.5
    assert len(control_values("a", c["a"]).values) == OTHER_VALUES
    b = control_values("b", c["b"])
    assert b.values[0] == 1 and b.values[-1] == 9 and b.values[b.default] == 3
    assert all(isinstance(v, int) for v in b.values)
    lr = control_values("lr", c["lr"])
    assert lr.values[0] == pytest.approx(1e-5) and lr.values[-1] == pytest.approx(1.0)
    assert lr.values[lr.default] == 1e-3 and lr.kind == "range"
    mode = control_values("mode", c["mode"])
    assert mode.values == ["x", "y", "z"] and mode.default == 1 and mode.kind == "select"
    stage = control_values("stage", c["stage"], n=5)
    assert len(stage.values) == 5 and stage.values[0] == 1 and stage.values[-1] == 7
    assert stage.values[stage.default] == 2 and stage.labels[stage.default] == "two"
    flag = control_values("flag", c["flag"])
    assert flag.values == [False, True] and flag.default == 0
    fixed = control_values("a", c["a"], live_only=True)
    assert fixed.values == [0.5] and fixed.live_only


def _axes(c, primary):
    return [control_values(n, c[n], n=PRIMARY_VALUES if n in primary else OTHER_VALUES) for n in c]


def test_derive_states_full_product_of_the_primaries_and_each_other_control_on_its_own():
    c = _controls()
    primary = default_primary(c, list(c))
    assert primary == ("a", "b")  # the first two that can take 8 values
    assert default_primary(c, ["mode", "flag", "lr", "a"]) == ("lr", "a")
    axes = _axes(c, primary)
    states = derive_states(axes, primary)
    default = tuple(x.default for x in axes)
    assert states[0] == default
    assert len(states) == len(set(states)) >= MIN_STATES
    assert [len(x.values) for x in axes[:2]] == [PRIMARY_VALUES, PRIMARY_VALUES]
    # the full product of the two primary controls, every other control at its default
    grid = {(s[0], s[1]) for s in states if s[2:] == default[2:]}
    assert grid == {(i, j) for i in range(PRIMARY_VALUES) for j in range(PRIMARY_VALUES)}
    # every other control through all its values (≥ 4, or all its options), one at a time, primaries at default
    for i, x in enumerate(axes[2:], start=2):
        assert len(x.values) >= min(OTHER_VALUES, {"mode": 3, "flag": 2}.get(x.name, OTHER_VALUES))
        assert {s[i] for s in states} == set(range(len(x.values)))
    off = [s for s in states if s[2:] != default[2:]]
    assert all(s[:2] == default[:2] and sum(a != d for a, d in zip(s, default, strict=True)) == 1 for s in off)
    assert len(states) == PRIMARY_VALUES ** 2 + sum(len(x.values) - 1 for x in axes[2:])


def test_derive_states_is_declared_deterministic_and_independent_of_time(monkeypatch):
    import time

    c = _controls()
    primary = default_primary(c, list(c))
    first = derive_states(_axes(c, primary), primary)
    clock = iter(range(0, 10**9, 10**6))  # a clock that races: any time budget would be spent at once
    for name in ("perf_counter", "process_time", "thread_time", "monotonic", "time"):
        monkeypatch.setattr(time, name, lambda: float(next(clock)))
    assert derive_states(_axes(_controls(), primary), primary) == first
    # and precompute computes every declared state, however long each takes
    calls = []

    def slow(a: float, b: int = 1):
        calls.append((a, b))
        return plt.figure(figsize=(0.5, 0.5)), f"{a} {b}"

    monkeypatch.undo()
    ex = precompute({"a": w.FloatSlider(value=0.5, min=0.0, max=2.0, step=0.1),
                     "b": w.IntSlider(value=3, min=1, max=9)}, slow, workers=1)
    assert len(ex.states) == len(calls) == PRIMARY_VALUES ** 2


def test_precompute_stores_failing_setting_as_status_and_payload_is_consistent():
    c = {"a": w.FloatSlider(value=0.5, min=0.0, max=2.0, step=0.5), "b": w.IntSlider(value=1, min=1, max=2)}
    open_before = set(plt.get_fignums())  # figures other tests left open are not this test's
    ex = precompute(c, _render2, ["a", "b"], workers=1)
    assert isinstance(ex, StaticExplorer)
    assert ex.states[0] == (ex.axes[0].default, ex.axes[1].default)
    assert len(ex.states) == 5 * 2  # a: 0, .5, 1, 1.5, 2; b: 1, 2 — full product of the primary pair
    bad = [i for i in range(len(ex.states)) if ex.values(i)["a"] > 1.5]
    assert bad and ex.failed == len(bad)
    for i in bad:
        assert ex.statuses[i] == "cannot run this setting: a too large" and ex.frame_of[i] == -1
    for i in set(range(len(ex.states))) - set(bad):
        v = ex.values(i)
        assert ex.statuses[i] == f"a = {v['a']}, b = {v['b']}, mode = x"
        assert ex.frames[ex.frame_of[i]].startswith("data:image/")
    assert set(plt.get_fignums()) <= open_before  # every frame's figure is closed
    p = ex.payload()
    assert [x["name"] for x in p["controls"]] == ["a", "b"]
    assert p["controls"][0]["labels"] == [f"{v:.2f}" for v in (0, 0.5, 1, 1.5, 2)]
    assert len(p["states"]) == len(ex.states)
    keys = [tuple(s["v"]) for s in p["states"]]
    assert len(set(keys)) == len(keys)
    assert all(-1 <= s["frame"] < len(p["frames"]) for s in p["states"])
    page = ex.html()
    assert 'class="tb-static-panel"' in page and 'aria-live="polite"' in page
    assert 'alt="a = 0.5, b = 1, mode = x"' in page
    data = page.split('class="tb-static-data">', 1)[1].rsplit("</script>", 1)[0]
    assert json.loads(data) == json.loads(json.dumps(p))


def test_precompute_explicit_states_and_live_only():
    c = _controls()
    ex = precompute(c, _render2, list(c), states=[{"a": 1.0}, {"a": 1.0, "mode": "z"}], workers=1)
    assert [ex.values(i)["a"] for i in range(len(ex.states))] == [0.5, 1.0, 1.0]
    assert ex.values(2)["mode"] == "z"
    with pytest.raises(ValueError, match="Invalid states"):
        precompute(c, _render2, list(c), states=[{"nope": 1}])
    c = {n: c[n] for n in ("a", "b", "mode")}
    ex = precompute(c, _render2, list(c), live_only=("a",), workers=1)
    assert ex.axes[0].values == [0.5] and ex.payload()["controls"][0]["liveOnly"]
    assert ex.primary == ("b", "mode")  # a live-only control is never a primary
    with pytest.raises(ValueError, match="Invalid primary"):
        precompute(c, _render2, list(c), primary=("a", "nope"))


def test_parallel_precompute_gives_the_serial_payload_bit_for_bit():
    c = {"a": w.FloatSlider(value=0.5, min=0.0, max=2.0, step=0.1), "b": w.IntSlider(value=3, min=1, max=9),
         "mode": w.Dropdown(options=["x", "y", "z"], value="y")}
    serial = precompute(c, _render2, workers=1)
    forked = precompute(c, _render2, workers=3)
    assert forked.meta["workers"] == 3 and serial.meta["workers"] == 1
    assert len(serial.states) >= MIN_STATES and serial.failed > 0  # a > 1.5 raises: errors travel back too
    assert forked.html() == serial.html()
    assert len(serial.frames) < len(serial.states)  # identical figures (b·a equal, or errors) share a frame
    for ex in (serial, forked):
        assert ex.meta["wall_s"] > 0 and ex.meta["cpu_s"] > 0


def test_live_panel_static_switch(monkeypatch):
    monkeypatch.delenv("THEORYBOOK_STATIC_PANELS", raising=False)
    a = w.FloatSlider(value=0.5, min=0, max=2, step=0.5)
    assert live_panel({"a": a}, _render).static is None  # Jupyter, make live: the live panel only
    monkeypatch.setenv("THEORYBOOK_STATIC_PANELS", "1")  # the book build
    panel = live_panel({"a": a}, _render)
    assert panel.static is not None and len(panel.static.states) == 5
    assert panel.status.value == "<b>a = 0.5</b>"  # the live panel is unchanged
    assert live_panel({"a": a}, _render, static=False).static is None


def test_static_default_on_in_headless_kernels_off_under_a_jupyter_server(monkeypatch):
    import IPython

    from theorybook import widgets as tw

    class ZMQInteractiveShell:  # what ipykernel's shell is called; nbclient, nbmake and Jupyter all run one
        pass

    for var in (tw.STATIC_ENV, "JUPYTER_TOKEN", "JPY_SESSION_NAME", "JPY_PARENT_PID"):
        monkeypatch.delenv(var, raising=False)
    assert tw._static_enabled(None) is False  # a plain Python process: tests, benches
    monkeypatch.setattr(IPython, "get_ipython", lambda: ZMQInteractiveShell())
    assert tw._static_enabled(None) is True  # jupyter-book / jupyter-cache / nbmake executing a chapter
    monkeypatch.setenv("JUPYTER_TOKEN", "0" * 48)  # make live's server (scripts/live.py) runs the kernel
    assert tw._static_enabled(None) is False
    monkeypatch.delenv("JUPYTER_TOKEN")
    monkeypatch.setenv("JPY_SESSION_NAME", "book/x.md")  # JupyterLab / Notebook sessions
    assert tw._static_enabled(None) is False
    monkeypatch.setenv(tw.STATIC_ENV, "1")  # the explicit switch wins
    assert tw._static_enabled(None) is True
    monkeypatch.setenv(tw.STATIC_ENV, "0")
    monkeypatch.delenv("JPY_SESSION_NAME")
    assert tw._static_enabled(None) is False
    assert tw._static_enabled(True) is True


def test_payload_cannot_close_its_script_tag():
    def render(a: float):
        fig, _ = plt.subplots(figsize=(1, 1))
        return fig, f"</script><img src=x onerror=alert(1)> a = {a}"

    ex = precompute({"a": w.FloatSlider(value=0.0, min=0.0, max=1.0, step=0.5)}, render)
    page = ex.html()
    assert page.count("</script>") == 1 and page.count("<img") == 1  # the frame; the status is escaped
    data = page.split('class="tb-static-data">', 1)[1].rsplit("</script>", 1)[0]
    assert json.loads(data)["states"][0]["status"].startswith("</script><img src=x")


def test_explorer_text_repr_is_short():
    ex = precompute({"a": w.FloatSlider(value=0.5, min=0, max=1, step=0.5)}, _render)
    assert repr(ex).startswith("<StaticExplorer: 3 states") and len(repr(ex)) < 120


def test_precompute_runs_on_one_torch_thread_and_restores_it():
    torch = pytest.importorskip("torch")
    seen = []

    def render(a: float):
        seen.append(torch.get_num_threads())
        return plt.figure(figsize=(1, 1)), f"a = {a}"

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        precompute({"a": w.FloatSlider(value=0.0, min=0.0, max=1.0, step=0.5)}, render, workers=1)
        assert seen == [1, 1, 1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


# ---------------------------------------------------------------------------- every chapter's explorer, as the book

import importlib  # noqa: E402

import numpy as np  # noqa: E402

from theorybook import widgets as tw  # noqa: E402

CHAPTERS = ("adam_degenerate", "sam_saddle", "annealing_robustness", "grasp", "small_vs_large", "lmo_batch_scaling",
            "dash_shampoo", "pogo_orthogonal", "performative", "linear_contracts", "flat_minima", "thompson_online",
            "colora", "cdeq", "drut_hamiltonian", "jose_precoding", "opt_engine", "robust_lotteries", "gdro_grpo")


def _chapter_args(slug: str) -> tuple[tuple, dict]:
    """What the chapter passes to its ``explorer`` in the book, at a smoke scale (cdeq's run, lmo's maps, opt_engine's
    cached study: the book's panel reads it, so the instances it shows come from there)."""
    if slug == "cdeq":
        from theorybook.cdeq import run_experiment

        return (run_experiment(1, steps=30, width=16, batch=32, teacher_steps=20, nfe_max=16, solver_max=9),), {}
    if slug == "lmo_batch_scaling":
        import theorybook.lmo_batch_scaling as lbs

        return (lbs.chapter_maps(1, scale="tiny", muon=True),), {}
    if slug == "opt_engine":
        from theorybook.opt_engine.experiment import LADDER, accuracy_study

        return (), {"records": accuracy_study(0, classes=("tsp",), ladder={"tsp": LADDER["tsp"]},
                                              counts={"tsp": 2}), "omissions": []}
    return (), {}


def _declared_panel(slug: str, monkeypatch) -> dict:
    """The chapter's ``explorer(...)`` with ``live_panel`` recorded instead of built: its controls, render, rows
    and keyword arguments (primary, live_only, states)."""
    mod = importlib.import_module(f"theorybook.{slug}.widgets")
    got: dict = {}

    def record(controls, render, rows=None, **kw):
        got.update(controls=controls, render=render, rows=rows, kw=kw)

    monkeypatch.setattr(tw, "live_panel", record)
    if hasattr(mod, "live_panel"):
        monkeypatch.setattr(mod, "live_panel", record)
    args, kwargs = _chapter_args(slug)
    mod.explorer(*args, **kwargs)
    return got


def _drawn(fig, density: float = 1.0) -> np.ndarray:
    """What the setting draws apart from its words: the frame's pixels with every text hidden (titles, labels, tick
    labels, legend texts, annotations), the figure shrunk first by the :func:`~theorybook.widgets.frame_scale` of
    its texts, as the explorer draws it."""
    s = tw.frame_scale(fig)
    if s < 1.0:
        w, h = fig.get_size_inches()
        fig.set_size_inches(w * s, h * s)
    for t in fig.findobj(Text):
        t.set_visible(False)
    for ax in fig.axes:
        ax.tick_params(labelbottom=False, labeltop=False, labelleft=False, labelright=False)
    return np.asarray(tw._frame_image(fig, density=density))  # no visible text: not shrunk again


def _frame(render, kwargs: dict, density: float = 1.0) -> np.ndarray:
    fig, _ = render(**kwargs)
    try:
        return np.asarray(tw._frame_image(fig, density=density))
    finally:
        plt.close("all")


# Settings whose frame differs from the default's only in its words (pixel-identical with every text hidden), each
# with the reason why that is the model's behaviour and not a dead control. Any other such setting fails the test: a
# control must change what is drawn, not only a title.
TEXT_ONLY: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("grasp", "c"): (("0.000244140625", "0.001953125", "0.015625", "8.0", "64.0", "512.0", "4096.0"),
                     "scale-free by construction (η/η̄*, ‖∇F‖/‖∇F(x₀)‖); the Play prose says c changes nothing"),
    ("opt_engine", "size_rank"): (("6",), "TSP's ladder has 5 of the slider's 6 rungs: rung 6 draws rung 5, and "
                                          "the title says 'rung 6 asked: 5 rungs'"),
    ("drut_hamiltonian", "n_phases"): (("27", "40"), "M = 27 and 40 phases draw the exact twirl's (M = 0) curves "
                                                     "at the panel's Fock cutoff; the title names M"),
}


@pytest.mark.slow
@pytest.mark.parametrize("slug", CHAPTERS)
def test_every_explorer_control_changes_the_frame_and_text_fits_the_box(slug, monkeypatch):
    """For every chapter's static explorer: the default frame, drawn for the explorer's box, has its smallest text
    (legends included) at ≥ MIN_TEXT_PX CSS pixels and twice the box's pixels across (less the crop); and every
    control that is not live-only changes the picture — each of its static values (the others at the default)
    draws a frame whose pixels differ from the default's (drawn at 1×, the reader's screen, to keep it fast), and
    differ still with every text hidden (a setting that changes only a title or a legend's number fails unless
    :data:`TEXT_ONLY` lists it with its reason). Each setting is drawn once with its texts hidden; only one whose
    text-hidden frame equals the default's is drawn again whole, to tell a dead control (the whole frame equal too)
    from a text-only one. The one case the old whole-frame comparison judged otherwise: a change drawn entirely
    under opaque text pixels (the whole frame equal to the default's, the text-hidden one not) counts as drawn here,
    not as dead. A text's ``bbox=`` patch (hidden with its text) would make that possible, so the default's figure
    must have none (a legend's frame is a patch of its own and stays drawn); what is left is a change no larger than
    a glyph and wholly under one."""
    got = _declared_panel(slug, monkeypatch)
    controls, render, kw = got["controls"], got["render"], got["kw"]
    order = [n for row in (got["rows"] or [list(controls)]) for n in row]
    names = order + [n for n in controls if n not in order]
    live_only = set(kw.get("live_only", ()))
    primary = tuple(kw.get("primary") or tw.default_primary(controls, [n for n in names if n not in live_only]))
    axes = [tw.control_values(n, controls[n], n=tw.PRIMARY_VALUES if n in primary else tw.OTHER_VALUES,
                              live_only=n in live_only) for n in names]
    default = {a.name: a.values[a.default] for a in axes}
    fig, _ = render(**default)
    img = tw._frame_image(fig)
    px = tw.text_px(fig)
    plt.close("all")
    assert px >= tw.MIN_TEXT_PX - 1e-9, f"{slug}: smallest text {px:.1f} CSS px at {tw.FRAME_CSS_PX} px"
    assert 0.95 * tw.DENSITY * tw.FRAME_CSS_PX <= img.size[0] <= tw.DENSITY * tw.FRAME_CSS_PX + 1, img.size
    fig, _ = render(**default)
    boxed = [t.get_text()[:30] for t in fig.findobj(Text) if t.get_visible() and t.get_bbox_patch() is not None]
    assert not boxed, f"{slug}: texts with a bbox patch would hide what they cover from the control test: {boxed}"
    base_drawn = _drawn(fig)
    plt.close("all")
    base = None  # the default's whole frame: drawn only when a setting draws the default's picture
    dead, words, allowed = [], [], []
    for a in axes:
        if a.live_only:
            continue
        for k, v in enumerate(a.values):
            if k == a.default:
                continue
            fig, _ = render(**{**default, a.name: v})
            drawn = _drawn(fig)
            plt.close("all")
            if drawn.shape != base_drawn.shape or not np.array_equal(drawn, base_drawn):
                continue  # it draws something else
            if base is None:
                base = _frame(render, default)
            frame = _frame(render, {**default, a.name: v})
            if frame.shape == base.shape and np.array_equal(frame, base):
                dead.append(f"{a.name} = {a.labels[k]}")
            elif a.labels[k] in TEXT_ONLY.get((slug, a.name), ((), ''))[0]:
                allowed.append((a.name, a.labels[k]))
            else:
                words.append(f"{a.name} = {a.labels[k]}")
    assert not dead, f"{slug}: these settings draw the default's frame (the control changes nothing visible): {dead}"
    assert not words, f"{slug}: these settings change only the frame's text, not what it draws: {words}"
    stale = [(n, v) for (s, n), (vs, _) in TEXT_ONLY.items() if s == slug for v in vs if (n, v) not in allowed]
    assert not stale, f"{slug}: TEXT_ONLY lists settings that draw more than text now (remove them): {stale}"


# ---------------------------------------------------------------------------- what the new panels draw


def test_linear_contracts_marks_the_best_attained_contract_where_it_is_attained():
    """Under agent ties the panel's open triangle is the best utility the principal can attain: the brute-force
    best response (``principal_utility``, not the panel's kink sums) at the drawn α must give the drawn value, and
    no kink near α* may give more. The triangle was drawn at α* = 0.5747, where agent ties give 0.1174711, not
    the 0.1174980 it showed (attained at α = 0.5744)."""
    from theorybook.device import to_numpy
    from theorybook.linear_contracts.engine import kinks, principal_utility
    from theorybook.linear_contracts.widgets import _population, render

    for tie, marker in (("agent", "v"), ("principal", "o")):
        fig, res = render(tie=tie)
        (mark,) = [ln for ln in fig.axes[0].lines if ln.get_marker() == marker]
        plt.close(fig)
        x, y = float(mark.get_xdata()[0]), float(mark.get_ydata()[0])
        types = _population(10, 6)
        assert abs(float(principal_utility(types, x, tie=tie)) - y) < 1e-12, (tie, x, y)
        pts = kinks(types).points
        near = pts[np.argsort(np.abs(to_numpy(pts) - res.alpha_star))[:200]]
        assert float(principal_utility(types, near, tie=tie).max()) <= y + 1e-12, tie


def test_opt_engine_gap_legend_hides_no_instance_and_no_tick_label():
    """The middle panel's legend sits where no gap can be drawn: no instance's dot and no y tick label falls inside
    it, at the frame's size (it covered instance 0's dot, gap 0.065, and the 10⁰ label at the default)."""
    from theorybook.opt_engine.widgets import render

    for kw in ({}, {"rtol": 0.1}, {"problem": "knapsack", "size_rank": 1}, {"problem": "transportation"}):
        fig, s = render(**kw)
        tw._frame_image(fig, density=1.0)  # drawn at the frame's size: the layout the reader sees
        r = fig.canvas.get_renderer()
        ax3 = fig.axes[1]
        box = ax3.get_legend().get_window_extent(r)
        (dots,) = [ln for ln in ax3.lines if ln.get_marker() == "o"]
        xy = ax3.transData.transform(np.column_stack([dots.get_xdata(), dots.get_ydata()]))
        assert len(xy) == s.n and not any(box.contains(x, y) for x, y in xy), (kw, box, xy)
        labels = [t for t in ax3.get_yticklabels() if t.get_visible() and t.get_text()
                  and ax3.get_ylim()[0] <= t.get_position()[1] <= ax3.get_ylim()[1]]
        assert labels and not any(box.overlaps(t.get_window_extent(r)) for t in labels), kw
        plt.close(fig)
