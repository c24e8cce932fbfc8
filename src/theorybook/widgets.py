"""One way to wire a chapter's control panel: controls → ``render(**values)`` → figure + status line.

Every chapter's ``widgets.explorer()`` builds its controls and a pure ``render`` function and hands both to
:func:`live_panel`, which redraws on each change. A setting that makes ``render`` raise is *shown* as a status
line, never raised: a widget must not crash at any slider position (a diverging run is drawn as diverging by
``render`` itself).

**Static explorer.** The built HTML book has no kernel, so a saved ipywidget is frozen at its default. When a
chapter is executed headless for the book (see :func:`_static_enabled`; ``scripts/offline_assets.py`` also sets
``THEORYBOOK_STATIC_PANELS=1`` for the build; ``live_panel(..., static=True)`` forces it), :func:`live_panel`
also evaluates ``render`` on a declared set of states (:func:`derive_states`: a handful of values per control,
the full product of the two primary controls, one-at-a-time variation around the default for the rest; at most
:data:`MAX_STATES`, and no more than a CPU-time and byte budget allow) and displays a :class:`StaticExplorer`
before the live widget: an HTML output with the frames (palette PNG at screen resolution) and a JSON of states,
which ``_static/static-panels.js`` turns into native controls that snap to the precomputed values. In a kernel
of a Jupyter server (JupyterLab, ``make live``) only the live panel is built, so a live kernel never pays for
the precomputation.
"""

from __future__ import annotations

import base64
import contextlib
import html
import io
import itertools
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["live_panel", "StaticExplorer", "ControlValues", "control_values", "derive_states", "precompute",
           "STATIC_ENV", "MAX_STATES"]

STATIC_ENV = "THEORYBOOK_STATIC_PANELS"  # "1": precompute the static explorer (set for the book build)
MAX_STATES = 64  # states per panel by default
PER_CONTROL = 5  # values per slider (evenly spaced over its range, the default included)
MAX_OPTIONS = 8  # a dropdown offers all its options up to this many
# CPU seconds (render + draw + encode) per panel: the remaining states are skipped, and the panel says so. CPU
# time of the thread doing it, not wall time (which grows with the load of the build machine) nor process time
# (which counts torch's worker threads spinning while they wait for a core): on an idle machine it is the wall time.
TIME_BUDGET_S = 4.0
BYTE_BUDGET = 1_200_000  # encoded frames per panel (base64 in the page)
DPI = 72  # frames at screen resolution: a two-panel 8.4 in figure is ~630 px wide
SCHEMA = 1


def _status(result: Any) -> str:
    return str(getattr(result, "label", getattr(result, "status", result)))


def _error_status(err: BaseException) -> str:
    return f"cannot run this setting: {err}"


# ------------------------------------------------------------------------------------ which states


@dataclass
class ControlValues:
    """The precomputed values of one control: Python ``values`` (passed to ``render``), their ``labels`` (shown),
    the index of the default, the widget ``kind`` in the static explorer ("range" or "select")."""

    name: str
    description: str
    kind: str
    values: list
    labels: list[str]
    default: int
    live_only: bool = False


def _fmt(c: Any, v: Any) -> str:
    fmt = getattr(c, "readout_format", None)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    try:
        return format(v, fmt) if fmt else f"{v:g}"
    except (TypeError, ValueError):
        return str(v)


def _spread(lo: float, hi: float, n: int, default: float, snap: Callable[[float], float]) -> list[float]:
    """``n`` evenly spaced points of [lo, hi] (snapped to the slider's grid), the endpoints and the default
    included: the default replaces the interior grid point nearest to it."""
    if n <= 1 or hi <= lo:
        return [default]
    pts = sorted({snap(lo + (hi - lo) * i / (n - 1)) for i in range(n)} | {default})
    while len(pts) > n:
        interior = [p for p in pts[1:-1] if p != default]
        if not interior:
            break
        pts.remove(min(interior, key=lambda p: abs(p - default)))
    return pts


def _tidy(x: float) -> float:
    return float(f"{x:.12g}")


def control_values(name: str, c: Any, n: int = PER_CONTROL, max_options: int = MAX_OPTIONS,
                   live_only: bool = False) -> ControlValues:
    """The values a control takes in the static explorer: selection widgets (dropdowns, toggle buttons) all their
    options up to ``max_options``, a selection slider ``n`` evenly spaced options; numeric sliders ``n`` evenly
    spaced values over [min, max] on the slider's step grid (log sliders evenly in the exponent); a checkbox
    both values; anything else (and a ``live_only`` control) only its current value."""
    desc = str(getattr(c, "description", "") or name)
    value = c.value
    if live_only:
        return ControlValues(name, desc, "select", [value], [_fmt(c, value)], 0, live_only=True)
    opts_values = getattr(c, "_options_values", None)
    if opts_values is not None:  # Dropdown, SelectionSlider, ToggleButtons, RadioButtons, Select
        labels = list(getattr(c, "_options_labels", [str(v) for v in opts_values]))
        vals = list(opts_values)
        idx = c.index if isinstance(getattr(c, "index", None), int) else 0
        limit = n if "Slider" in type(c).__name__ else max_options
        if len(vals) > limit:
            keep = sorted({round(i * (len(vals) - 1) / (limit - 1)) for i in range(limit)} | {idx})
            while len(keep) > limit:
                interior = [k for k in keep[1:-1] if k != idx]
                keep.remove(min(interior, key=lambda k: abs(k - idx)))
        else:
            keep = list(range(len(vals)))
        kind = "range" if "Slider" in type(c).__name__ else "select"
        return ControlValues(name, desc, kind, [vals[k] for k in keep], [labels[k] for k in keep],
                             keep.index(idx), live_only=False)
    if isinstance(value, bool):
        return ControlValues(name, desc, "select", [False, True], ["off", "on"], int(value))
    if all(hasattr(c, a) for a in ("min", "max")) and isinstance(value, (int, float)):
        step = getattr(c, "step", None) or 0
        if hasattr(c, "base"):  # FloatLogSlider: min/max/step are exponents
            base = float(c.base)
            e0 = math.log(value, base) if value > 0 else float(c.min)

            def snap_e(e: float) -> float:
                if step:
                    e = c.min + round((e - c.min) / step) * step
                return _tidy(min(max(e, c.min), c.max))

            exps = _spread(float(c.min), float(c.max), n, _tidy(e0), snap_e)
            vals = [value if e == _tidy(e0) else _tidy(base ** e) for e in exps]
        else:
            is_int = isinstance(value, int)

            def snap(x: float) -> float:
                if step:
                    x = c.min + round((x - c.min) / step) * step
                x = min(max(x, c.min), c.max)
                return int(round(x)) if is_int else _tidy(x)

            vals = _spread(c.min, c.max, n, value, snap)
        return ControlValues(name, desc, "range", vals, [_fmt(c, v) for v in vals], vals.index(value))
    return ControlValues(name, desc, "select", [value], [_fmt(c, value)], 0, live_only=True)


def derive_states(axes: Sequence[ControlValues], primary: Sequence[str] = (),
                  max_states: int = MAX_STATES) -> list[tuple[int, ...]]:
    """States as tuples of value indices (one per axis), most informative first, at most ``max_states``:
    the default; then one control at a time away from the default, round-robin over the controls (extremes
    first), so that a cut-off keeps every control movable; then the rest of the product of the ``primary``
    controls, nearest to the default first."""
    default = tuple(a.default for a in axes)
    order: list[tuple[int, ...]] = [default]
    seen = {default}

    def add(state):
        if state not in seen and len(order) < max_states:
            seen.add(state)
            order.append(state)

    prim = [i for i, a in enumerate(axes) if a.name in primary]
    rest = [i for i, a in enumerate(axes) if a.name not in primary]
    moves = []
    for i in prim + rest:
        a = axes[i]
        others = [k for k in range(len(a.values)) if k != a.default]
        # extremes first, then outward from the default
        others.sort(key=lambda k: (k not in (0, len(a.values) - 1), abs(k - a.default)))
        moves.append((i, others))
    for r in itertools.count():
        if not any(r < len(m) for _, m in moves):
            break
        for i, m in moves:
            if r < len(m):
                add(default[:i] + (m[r],) + default[i + 1:])
    if len(prim) >= 2:
        grid = itertools.product(*(range(len(axes[i].values)) for i in prim))
        dist = sorted(grid, key=lambda g: sum(abs(g[j] - axes[i].default) for j, i in enumerate(prim)))
        for g in dist:
            s = list(default)
            for j, i in enumerate(prim):
                s[i] = g[j]
            add(tuple(s))
    return order


def _explicit_axes(axes: list[ControlValues], controls: Mapping[str, Any],
                   states: Iterable[Mapping[str, Any]]) -> tuple[list[ControlValues], list[tuple[int, ...]]]:
    """Axes and index states from an explicit list of (partial) settings; missing names take the default."""
    base = {a.name: a.values[a.default] for a in axes}
    full = [{**base, **dict(s)} for s in states]
    unknown = {n for s in full for n in s} - set(base)
    if unknown:
        raise ValueError(f"Invalid states: unknown control names {sorted(unknown)}")
    new_axes = []
    full = [base, *full]  # the default setting comes first, as in the live panel
    for a in axes:
        vals: list = []
        for s in full:
            if not any(_same(s[a.name], v) for v in vals):
                vals.append(s[a.name])
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            vals.sort()
        labels = [a.labels[a.values.index(v)] if v in a.values else _fmt(controls[a.name], v) for v in vals]
        new_axes.append(ControlValues(a.name, a.description, a.kind if len(vals) > 1 else "select", vals,
                                      labels, _index(vals, base[a.name]), a.live_only))
    idx = [tuple(_index(ax.values, s[ax.name]) for ax in new_axes) for s in full]
    out, seen = [], set()
    for s in idx:
        if s not in seen:
            seen.add(s)
            out.append(s)
    return new_axes, out


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _index(vals: list, v: Any) -> int:
    return next(i for i, x in enumerate(vals) if _same(x, v))


# ------------------------------------------------------------------------------------ precomputation


def _encode(fig: Any, dpi: int) -> str | None:
    """The figure as a PNG data URI at ``dpi``: drawn once by Agg, cropped to its content (as the inline
    backend's tight bbox) and reduced to a 128-colour palette (Pillow; matplotlib's own PNG without it)."""
    if not hasattr(fig, "savefig"):
        return None
    try:
        import numpy as np
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from PIL import Image, ImageChops
    except ImportError:  # pragma: no cover - Pillow is a matplotlib dependency
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
        return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
    fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    img = Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3])
    bbox = ImageChops.difference(img, Image.new("RGB", img.size, img.getpixel((0, 0)))).getbbox()
    if bbox:
        pad = 4
        img = img.crop((max(0, bbox[0] - pad), max(0, bbox[1] - pad),
                        min(img.size[0], bbox[2] + pad), min(img.size[1], bbox[3] + pad)))
    out = io.BytesIO()
    img.quantize(colors=128, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(
        out, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode("ascii")


@dataclass(repr=False)
class StaticExplorer:
    """The precomputed panel: axes (one per control), states (index tuples), their status lines and frames
    (indices into ``frames``, -1 when ``render`` raised), and what the precomputation cost."""

    axes: list[ControlValues]
    states: list[tuple[int, ...]]
    statuses: list[str]
    frame_of: list[int]
    frames: list[str]
    seconds: float
    planned: int
    skipped_reason: str = ""
    failed: int = 0
    meta: dict = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        return len(self.html())

    def values(self, i: int) -> dict:
        """State ``i`` as the keyword arguments ``render`` got."""
        return {a.name: a.values[k] for a, k in zip(self.axes, self.states[i], strict=True)}

    def payload(self) -> dict:
        """The JSON the browser script reads (labels only: Python values never reach the page)."""
        return {
            "schema": SCHEMA,
            "controls": [{"name": a.name, "description": a.description, "kind": a.kind, "labels": a.labels,
                          "default": a.default, "liveOnly": a.live_only} for a in self.axes],
            "states": [{"v": list(s), "status": st, "frame": f}
                       for s, st, f in zip(self.states, self.statuses, self.frame_of, strict=True)],
            "frames": self.frames,
            "planned": self.planned,
            "skipped": self.skipped_reason,
        }

    def note(self) -> str:
        n = len(self.states)
        text = (f"Precomputed explorer: {n} setting{'s' * (n != 1)} of this panel, computed when the book was "
                "built; the controls snap to them. Run live for other values (Live Code, with make live).")
        if self.skipped_reason:
            text += f" ({self.skipped_reason}.)"
        return text

    def html(self) -> str:
        data = json.dumps(self.payload(), separators=(",", ":"), ensure_ascii=True).replace("<", "\\u003c")
        status = self.statuses[0] if self.statuses else ""
        f0 = self.frame_of[0] if self.frame_of else -1
        img = (f'<img class="tb-static-frame" src="{self.frames[f0]}" alt="{html.escape(status)}">'
               if f0 >= 0 else '<img class="tb-static-frame" alt="" hidden>')
        return (
            '<div class="tb-static-panel" data-tb-static-schema="1">'
            '<div class="tb-static-controls"></div>'
            f'<p class="tb-static-note">{html.escape(self.note())}</p>'
            f'<div class="tb-static-status" role="status" aria-live="polite"><b>{html.escape(status)}</b></div>'
            f"{img}"
            f'<script type="application/json" class="tb-static-data">{data}</script>'
            "</div>"
        )

    def _repr_html_(self) -> str:
        return self.html()

    def __repr__(self) -> str:  # the text/plain of the output: short, not the frames
        return (f"<StaticExplorer: {len(self.states)} of {self.planned} planned states, {len(self.frames)} frames, "
                f"{self.seconds:.1f} s>")


def precompute(controls: Mapping[str, Any], render: Callable[..., tuple[Any, Any]],
               order: Sequence[str] | None = None, *, states: Iterable[Mapping[str, Any]] | None = None,
               primary: Sequence[str] | None = None, live_only: Sequence[str] = (),
               max_states: int = MAX_STATES, time_budget_s: float | None = TIME_BUDGET_S,
               byte_budget: int | None = BYTE_BUDGET, dpi: int = DPI) -> StaticExplorer:
    """Evaluate ``render`` on the panel's states (``states``, or :func:`derive_states`) until the states, the
    time budget or the byte budget run out. A state whose ``render`` raises is kept, with the error as its
    status line and no frame."""
    order = list(order or controls)
    names = order + [n for n in controls if n not in order]
    if primary is None:
        primary = tuple(names[:2])
    bad = (set(primary) | set(live_only)) - set(controls)
    if bad:
        raise ValueError(f"Invalid primary/live_only: unknown control names {sorted(bad)}")
    axes = [control_values(n, controls[n], live_only=n in live_only) for n in names]
    if states is not None:
        axes, planned = _explicit_axes(axes, controls, states)
        planned = planned[:max_states]
    else:
        planned = derive_states(axes, primary, max_states)

    with _one_torch_thread():
        return _precompute(axes, planned, render, time_budget_s, byte_budget, dpi)


@contextlib.contextmanager
def _one_torch_thread():
    """Precompute on one torch thread: the states are small problems, and a second intra-op thread would spin
    (burning the budget's CPU time) whenever the build machine is busy. Restored afterwards."""
    torch = sys.modules.get("torch")
    n = torch.get_num_threads() if torch is not None else None
    if n is not None and n > 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if n is not None and n > 1:
            torch.set_num_threads(n)


def _precompute(axes, planned, render, time_budget_s, byte_budget, dpi) -> StaticExplorer:
    import matplotlib.pyplot as plt

    t0, c0 = time.perf_counter(), time.thread_time()
    done: list[tuple[int, ...]] = []
    statuses: list[str] = []
    frame_of: list[int] = []
    frames: list[str] = []
    index: dict[str, int] = {}
    used, failed, reason = 0, 0, ""
    for s in planned:
        spent = time.thread_time() - c0
        # stop before a state that would, at the mean cost so far, overrun the budget
        if done and time_budget_s is not None and spent + spent / len(done) > time_budget_s:
            reason = (f"time budget of {time_budget_s:g} CPU s spent after {len(done)} of {len(planned)} "
                      "planned settings")
            break
        if done and byte_budget is not None and used > byte_budget:
            reason = f"page-weight budget spent after {len(done)} of {len(planned)} planned settings"
            break
        kwargs = {a.name: a.values[k] for a, k in zip(axes, s, strict=True)}
        before = set(plt.get_fignums())
        uri = None
        # A setting far from the default may warn (overflow of a diverging run, ...) or print: that belongs to
        # its status line, not to the chapter's output.
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            try:
                fig, result = render(**kwargs)
                status = _status(result)
                uri = _encode(fig, dpi)
            except Exception as err:  # noqa: BLE001 - a failing setting is shown, never raised
                status, failed = _error_status(err), failed + 1
            finally:
                for num in set(plt.get_fignums()) - before:
                    plt.close(num)
        if uri is None:
            frame_of.append(-1)
        else:
            if uri not in index:
                index[uri] = len(frames)
                frames.append(uri)
                used += len(uri)
            frame_of.append(index[uri])
        done.append(s)
        statuses.append(status)
    # Offer only values some computed state has: every position of every control then shows a frame.
    present = [sorted({s[i] for s in done}) for i in range(len(axes))]
    new_axes = []
    for a, keep in zip(axes, present, strict=True):
        d = keep.index(a.default) if a.default in keep else 0
        new_axes.append(ControlValues(a.name, a.description, a.kind if len(keep) > 1 else "select",
                                      [a.values[k] for k in keep], [a.labels[k] for k in keep], d, a.live_only))
    remap = [{k: j for j, k in enumerate(keep)} for keep in present]
    done = [tuple(remap[i][k] for i, k in enumerate(s)) for s in done]
    return StaticExplorer(new_axes, done, statuses, frame_of, frames, time.perf_counter() - t0,
                          len(planned), reason, failed, {"cpu_s": time.thread_time() - c0})


_SERVER_MARKS = ("jupyter_server", "jupyter-server", "jupyter-lab", "jupyterlab", "jupyter-notebook",
                 "notebook.app", "voila")


def _under_jupyter_server() -> bool:
    """True in a kernel a Jupyter server started (JupyterLab, Notebook, ``make live``'s server for thebe)."""
    if os.environ.get("JPY_SESSION_NAME") or os.environ.get("JUPYTER_TOKEN"):
        return True
    try:
        cmd = Path(f"/proc/{int(os.environ['JPY_PARENT_PID'])}/cmdline").read_bytes().replace(b"\0", b" ")
    except (KeyError, ValueError, OSError):
        return False
    return any(m.encode() in cmd for m in _SERVER_MARKS)


def _static_enabled(static: bool | None) -> bool:
    """``static`` if given; else ``THEORYBOOK_STATIC_PANELS`` (``1``/``0``) if set; else on in a headless kernel
    (jupyter-book, jupyter-cache, nbmake, ``tests/test_chapters.py``: they share one cache, so the book's outputs
    hold the explorer whichever of them ran the chapter) and off in a plain Python process (tests, benches) and
    in a kernel of a Jupyter server (the reader has the live panel there)."""
    if static is not None:
        return bool(static)
    env = os.environ.get(STATIC_ENV, "").strip().lower()
    if env:
        return env in ("1", "true", "yes", "on")
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return False
    shell = get_ipython()
    return type(shell).__name__ == "ZMQInteractiveShell" and not _under_jupyter_server()


# ------------------------------------------------------------------------------------ the panel


def live_panel(
    controls: Mapping[str, Any],
    render: Callable[..., tuple[Any, Any]],
    rows: Sequence[Sequence[str]] | None = None,
    *,
    states: Iterable[Mapping[str, Any]] | None = None,
    primary: Sequence[str] | None = None,
    live_only: Sequence[str] = (),
    max_states: int = MAX_STATES,
    static: bool | None = None,
):
    """Return an ``ipywidgets.VBox``: the controls (laid out in ``rows`` of control names), a status line and
    the figure. ``render(**{name: control.value})`` returns ``(fig, result)``; the status line shows
    ``result.label`` (or ``result.status``, or ``str(result)``). The panel is drawn once immediately, so a
    headless run of the chapter shows the default setting.

    With ``static`` (default: on when the chapter is executed headless for the book, see :func:`_static_enabled`),
    the panel is also precomputed (:func:`precompute`) on ``states`` (default: :func:`derive_states` with the
    ``primary`` pair, default the first two controls in ``rows``; ``live_only`` controls stay at their value;
    at most ``max_states``) and the :class:`StaticExplorer` is displayed before the panel is returned, for the
    static HTML book. ``panel.static`` holds it (``None`` when off).
    """
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from IPython.display import display

    if rows is None:
        rows = [list(controls)]
    unknown = {n for row in rows for n in row} - set(controls)
    if unknown:
        raise ValueError(f"Invalid rows: unknown control names {sorted(unknown)}")
    status = w.HTML()
    out = w.Output()

    def update(*_):
        values = {name: c.value for name, c in controls.items()}
        with out:
            out.clear_output(wait=True)
            try:
                fig, result = render(**values)
            except Exception as err:  # noqa: BLE001 - shown to the reader instead of crashing the panel
                status.value = f"<b>cannot run this setting:</b> {html.escape(str(err))}"
                return
            status.value = f"<b>{html.escape(_status(result))}</b>"
            display(fig)
            plt.close(fig)

    for c in controls.values():
        c.observe(update, names="value")
    update()
    explorer = None
    if _static_enabled(static):
        order = [n for row in rows for n in row]
        explorer = precompute(controls, render, order, states=states, primary=primary, live_only=live_only,
                              max_states=max_states)
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - IPython comes with ipywidgets
            get_ipython = None
        if get_ipython is not None and get_ipython() is not None:
            display(explorer)
    panel = w.VBox([*(w.HBox([controls[n] for n in row]) for row in rows), status, out])
    # Handles for tests and bench/widgets.py: time or drive the callback without a front end.
    panel.controls, panel.render, panel.status = dict(controls), render, status
    panel.static = explorer
    return panel
