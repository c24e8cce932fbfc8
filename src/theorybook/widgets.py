"""One way to wire a chapter's control panel: controls → ``render(**values)`` → figure + status line.

Every chapter's ``widgets.explorer()`` builds its controls and a pure ``render`` function and hands both to
:func:`live_panel`, which redraws on each change. A setting that makes ``render`` raise is *shown* as a status
line, never raised: a widget must not crash at any slider position (a diverging run is drawn as diverging by
``render`` itself).

**Static explorer.** The built HTML book has no kernel, so a saved ipywidget is frozen at its default. When a
chapter is executed headless for the book (see :func:`_static_enabled`; ``scripts/offline_assets.py`` also sets
``THEORYBOOK_STATIC_PANELS=1`` for the build; ``live_panel(..., static=True)`` forces it), :func:`live_panel`
also evaluates ``render`` on a declared set of states and displays a :class:`StaticExplorer` before the live
widget: an HTML output with the frames and a JSON of states, which ``_static/static-panels.js`` turns into native
controls.

*Frames for the box they sit in* (:func:`_frame_image`): a frame is shown at the full width of the explorer's box
(:data:`FRAME_CSS_PX` CSS pixels at a 1400 px window) and drawn with :data:`DENSITY` times as many pixels; a figure
is shrunk (:func:`frame_scale`) until its smallest text is :data:`MIN_TEXT_PX` CSS pixels on screen. Identical
frames are stored once; the frames are exact palette PNGs when they fit :data:`PAGE_BYTES`, else all transcoded to
AVIF at the highest quality that fits (:func:`_fit_frames`).

*Which states* (:func:`derive_states`): the panel's two primary controls (``primary=``, default
:func:`default_primary`) at :data:`PRIMARY_VALUES` values each (sliders evenly over their range, the default
included; dropdowns all their options up to :data:`MAX_OPTIONS`) in their full product, and every other control
through :data:`OTHER_VALUES` values (or all its options) one at a time, the primaries at their defaults — at least
:data:`MIN_STATES` states for two primaries of 8 values. The set is declared: no time budget cuts it, so what a
reader can explore never depends on the load of the machine that built the book. The page weight is checked, not
cut: ``tests/test_site.py`` and ``bench/static_panels.py`` fail a page whose explorers add more than
:data:`PAGE_BYTES`. ``live_only`` controls stay at their value.

*What it costs, and when.* The states are rendered on ``THEORYBOOK_STATIC_WORKERS`` forked processes (default
``os.cpu_count()``; ``scripts/chapter_cache.py run`` sets it so that its parallel chapters share the cores), each
on one torch thread, and merged in order, so the explorer is the same bit for bit whatever the number of
processes; its wall and CPU seconds are in ``StaticExplorer.meta``. It runs only when the chapter executes: the
book's executed chapters are cached by fingerprint (``scripts/chapter_cache.py``, jupyter-cache: the chapter,
the packages it imports, this module), so an unchanged chapter is never executed again by ``make book`` or
``make test`` and its panel never recomputed. ``pytest --nbmake book/`` (``conftest.py``), which does not write
that cache, turns the precomputation off (``THEORYBOOK_STATIC_PANELS=0``). In a kernel of a Jupyter server
(JupyterLab, ``make live``) only the live panel is built, so a live kernel never pays for the precomputation.
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

__all__ = ["live_panel", "StaticExplorer", "ControlValues", "control_values", "default_primary", "derive_states",
           "precompute", "STATIC_ENV", "WORKERS_ENV", "MIN_STATES", "PAGE_BYTES"]

STATIC_ENV = "THEORYBOOK_STATIC_PANELS"  # "1": precompute the static explorer (set for the book build)
WORKERS_ENV = "THEORYBOOK_STATIC_WORKERS"  # processes that compute a panel's states (default: os.cpu_count())
PRIMARY_VALUES = 8  # values per primary slider (evenly spread over its range, the default included)
OTHER_VALUES = 4  # values per other slider
MAX_OPTIONS = 8  # a dropdown offers all its options up to this many
MIN_STATES = PRIMARY_VALUES ** 2  # what a panel with two primaries of PRIMARY_VALUES values each gets at least
# Encoded frames a panel may add to its page (base64 in the HTML). Not a cut: the state set never depends on it;
# tests/test_site.py and bench/static_panels.py fail a page whose explorers add more.
PAGE_BYTES = 2_000_000
# Frames are drawn for the box they are shown in: the explorer's content box is FRAME_CSS_PX wide in the book's
# column at a 1400 px window (_static/static-panels.css shows the frame at the box's full width), the PNG has
# DENSITY times as many pixels (sharp on a high-density screen), and a figure is shrunk until its smallest text is
# MIN_TEXT_PX CSS pixels on screen (see frame_scale).
FRAME_CSS_PX = 746
DENSITY = 2.0
MIN_TEXT_PX = 11.0
FRAME_COLORS = 128  # palette size of an exact (PNG) frame
# When a panel's exact frames do not fit PAGE_BYTES, every frame is transcoded at the highest of these qualities
# (AVIF) that fits: the most readable frames under the budget (see _fit_frames).
FRAME_QUALITIES = (80, 70, 60, 50, 45, 40, 35, 30, 25, 20, 15)
FRAME_BUDGET = 0.97  # share of PAGE_BYTES the frames of a page's explorer may take (the rest: states' JSON)
DPI = None  # no fixed dpi any more (it follows from FRAME_CSS_PX and the figure's width); kept for bench records
SCHEMA = 2


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


def control_values(name: str, c: Any, n: int = OTHER_VALUES, max_options: int = MAX_OPTIONS,
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


def _can_take(c: Any, n: int) -> bool:
    """Whether ``control_values(c, n)`` would offer ``n`` values (a slider with that many grid points, a dropdown
    with that many options)."""
    try:
        return len(control_values("", c, n=n, max_options=n).values) >= n
    except Exception:  # noqa: BLE001 - an unusual widget is simply not a primary
        return False


def default_primary(controls: Mapping[str, Any], order: Sequence[str]) -> tuple[str, ...]:
    """The panel's two primary controls when it declares none: the first two, in ``order`` (the panel's rows),
    that can take :data:`PRIMARY_VALUES` values; the first controls in order if fewer can."""
    rich = [n for n in order if _can_take(controls[n], PRIMARY_VALUES)]
    rest = [n for n in order if n not in rich]
    return tuple((rich + rest)[:2])


def derive_states(axes: Sequence[ControlValues], primary: Sequence[str] = ()) -> list[tuple[int, ...]]:
    """The panel's declared states, as tuples of value indices (one per axis), in a fixed order that depends on
    nothing but the axes: the default first; then the full product of the ``primary`` controls' values (every
    other control at its default), nearest to the default first; then every other control one at a time through
    each of its values (the primaries at their defaults). With primaries of 8 values that is at least 64 states.
    Nothing is cut: what a reader can explore never depends on the machine that built the book."""
    default = tuple(a.default for a in axes)
    order: list[tuple[int, ...]] = [default]
    seen = {default}

    def add(state):
        if state not in seen:
            seen.add(state)
            order.append(state)

    prim = [i for i, a in enumerate(axes) if a.name in primary]
    rest = [i for i, a in enumerate(axes) if a.name not in primary]
    grid = itertools.product(*(range(len(axes[i].values)) for i in prim))
    for g in sorted(grid, key=lambda g: (sum(abs(g[j] - axes[i].default) for j, i in enumerate(prim)), g)):
        s = list(default)
        for j, i in enumerate(prim):
            s[i] = g[j]
        add(tuple(s))
    for i in rest:
        for k in range(len(axes[i].values)):
            add(default[:i] + (k,) + default[i + 1:])
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


_RENDERERS: dict = {}  # one Agg renderer per frame size, shared by the frames of a panel (see _canvas)


def _canvas(fig: Any) -> Any:
    """An Agg canvas for ``fig`` that draws with a renderer shared by every frame of the same size and dpi, so that
    matplotlib's text-metrics cache (keyed by renderer) carries over from frame to frame: about a fifth less time
    per frame, the same pixels (the renderer is cleared before each draw)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg

    class _SharedRendererCanvas(FigureCanvasAgg):
        def get_renderer(self):
            w, h = self.figure.bbox.size
            key = (w, h, self.figure.dpi)
            r = _RENDERERS.get(key)
            if r is None:
                if len(_RENDERERS) > 8:
                    _RENDERERS.clear()
                r = _RENDERERS[key] = RendererAgg(w, h, self.figure.dpi)
            self.renderer, self._lastKey = r, key
            return r

    return _SharedRendererCanvas(fig)


def _visible_text_sizes(fig: Any) -> list[float]:
    """Font sizes (points) of every visible, non-empty text of ``fig``: legends, tick labels, titles, labels,
    annotations."""
    from matplotlib.text import Text

    return [float(t.get_fontsize()) for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip() and t.get_figure() is not None]


def frame_scale(fig: Any, box_px: float = FRAME_CSS_PX, min_text_px: float = MIN_TEXT_PX) -> float:
    """The factor (≤ 1) by which ``fig``'s size in inches is reduced so that, shown ``box_px`` CSS pixels wide, its
    smallest text is at least ``min_text_px`` CSS pixels: a figure of width ``w`` inches shown ``box_px`` wide draws a
    ``p``-point text ``p × box_px / (72 w)`` pixels high. The whole figure shrinks (text, lines and markers keep
    their proportions, as when zooming), the aspect is kept; a figure narrow enough already is left as it is."""
    sizes = _visible_text_sizes(fig)
    if not sizes:
        return 1.0
    width = float(fig.get_size_inches()[0])
    return min(1.0, min(sizes) * box_px / (72.0 * min_text_px * width))


def text_px(fig: Any, box_px: float = FRAME_CSS_PX) -> float:
    """The smallest text of ``fig`` in CSS pixels when the figure is shown ``box_px`` wide (at its current size)."""
    sizes = _visible_text_sizes(fig)
    return min(sizes) * box_px / (72.0 * float(fig.get_size_inches()[0])) if sizes else float("inf")


def _frame_image(fig: Any, box_px: float = FRAME_CSS_PX, density: float = DENSITY) -> Any:
    """``fig`` drawn for the explorer's box (a Pillow RGB image): shrunk by :func:`frame_scale` so that its smallest
    text reaches :data:`MIN_TEXT_PX` on screen, drawn by Agg ``density × box_px`` pixels wide (twice the CSS pixels:
    sharp on a high-density screen), cropped to its content as the inline backend's tight bbox."""
    import numpy as np
    from PIL import Image, ImageChops

    s = frame_scale(fig, box_px)
    w, h = fig.get_size_inches()
    if s < 1.0:
        fig.set_size_inches(w * s, h * s)
    fig.set_dpi(density * box_px / float(fig.get_size_inches()[0]))
    canvas = _canvas(fig)
    canvas.draw()
    img = Image.fromarray(np.asarray(canvas.buffer_rgba())[..., :3].copy())
    bbox = ImageChops.difference(img, Image.new("RGB", img.size, img.getpixel((0, 0)))).getbbox()
    if bbox:
        pad = 4
        img = img.crop((max(0, bbox[0] - pad), max(0, bbox[1] - pad),
                        min(img.size[0], bbox[2] + pad), min(img.size[1], bbox[3] + pad)))
    return img


def _encode_image(img: Any) -> str:
    """A frame as an exact data URI: the image reduced to a :data:`FRAME_COLORS`-colour palette, as PNG. Settings
    that draw the same figure give the same URI (one frame); :func:`_fit_frames` may transcode it afterwards."""
    from PIL import Image

    pal = img.quantize(colors=FRAME_COLORS, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    pal.save(out, format="PNG", compress_level=1)  # fast: _fit_frames compresses it fully if it is kept as PNG
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def _optimize_png(uri: str) -> str:
    """The same PNG, fully compressed (the same pixels, about a tenth fewer bytes)."""
    from PIL import Image

    out = io.BytesIO()
    Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).save(out, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode("ascii")


def _lossy_format() -> str:
    """AVIF where Pillow can write it (Chromium, Firefox and Safari show it), else WebP."""
    from PIL import features

    return "avif" if features.check("avif") else "webp"


def _transcode(uri: str, quality: int) -> str:
    """A PNG frame URI re-encoded lossily at ``quality`` (:func:`_lossy_format`; full chroma for AVIF, so thin
    coloured lines keep their colour; one thread, so the bytes do not depend on the machine)."""
    from PIL import Image

    img = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGB")
    out = io.BytesIO()
    fmt = _lossy_format()
    if fmt == "avif":
        img.save(out, format="AVIF", quality=quality, speed=8, subsampling="4:4:4", max_threads=1)
    else:  # pragma: no cover - Pillow without libavif
        img.save(out, format="WEBP", quality=quality, method=4)
    return f"data:image/{fmt};base64," + base64.b64encode(out.getvalue()).decode("ascii")


def _fit_frames(frames: list[str], first: int, budget: int, workers: int = 1) -> tuple[list[str], dict]:
    """The panel's frames within ``budget`` bytes (frame ``first`` counts twice: it is also the ``<img>``'s
    source): the exact palette PNGs when they fit; else every frame transcoded (:func:`_transcode`) at the highest
    of :data:`FRAME_QUALITIES` whose total fits (chosen on a sample of frames, then checked on all of them; the
    lowest quality when none fits — the page-weight tests then fail). Returns the frames and what was chosen."""

    def total(fs: list[str]) -> int:
        return sum(map(len, fs)) + (len(fs[first]) if 0 <= first < len(fs) else 0)

    if not frames or total(frames) <= budget * 1.3:  # fully compressed, PNG frames take ~0.9 of these bytes
        png = _fork_map(lambda i: _optimize_png(frames[i]), len(frames), workers)
        if total(png) <= budget:
            return png, {"format": "png", "quality": None, "frame_bytes": total(png)}
    sample = sorted({round(i * (len(frames) - 1) / 7) for i in range(8)}) if len(frames) > 8 else \
        list(range(len(frames)))
    share = total(frames) / max(1, sum(len(frames[i]) for i in sample))  # PNG bytes of all vs of the sample

    def fits(j: int) -> bool:  # the sample's estimate at FRAME_QUALITIES[j] (bytes grow with the quality)
        return sum(len(_transcode(frames[i], FRAME_QUALITIES[j])) for i in sample) * share <= budget * 1.02

    lo, hi = 0, len(FRAME_QUALITIES) - 1  # bisection for the first (highest) quality that fits: ~4 samples
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid + 1
    out: list[str] = frames
    for q in FRAME_QUALITIES[lo:]:
        out = _fork_map(lambda i, q=q: _transcode(frames[i], q), len(frames), workers)
        if total(out) <= budget:
            break
    return out, {"format": _lossy_format(), "quality": q, "frame_bytes": total(out)}


def _encode(fig: Any, box_px: float = FRAME_CSS_PX) -> str | None:
    """The figure as a frame for the explorer's box (:func:`_frame_image`, :func:`_encode_image`); ``None`` for
    something that is not a figure."""
    if not hasattr(fig, "savefig"):
        return None
    return _encode_image(_frame_image(fig, box_px))


@dataclass(repr=False)
class StaticExplorer:
    """The precomputed panel: axes (one per control), states (index tuples), their status lines and frames
    (indices into ``frames``, -1 when ``render`` raised), the primary controls, and what the precomputation cost
    (``seconds`` of wall time; ``meta``: ``wall_s``, ``cpu_s`` of every process that took part, ``workers``)."""

    axes: list[ControlValues]
    states: list[tuple[int, ...]]
    statuses: list[str]
    frame_of: list[int]
    frames: list[str]
    seconds: float
    primary: tuple[str, ...] = ()
    failed: int = 0
    meta: dict = field(default_factory=dict)

    @property
    def planned(self) -> int:  # every declared state is computed
        return len(self.states)

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
                          "default": a.default, "liveOnly": a.live_only, "primary": a.name in self.primary}
                         for a in self.axes],
            "states": [{"v": list(s), "status": st, "frame": f}
                       for s, st, f in zip(self.states, self.statuses, self.frame_of, strict=True)],
            "frames": self.frames,
        }

    def note(self) -> str:
        n = len(self.states)
        desc = {a.name: a.description for a in self.axes}
        prim = [desc[p] for p in self.primary if p in desc]
        text = f"Precomputed explorer: {n} setting{'s' * (n != 1)} of this panel, computed when the book was built"
        if len(prim) >= 2:
            text += (f": every combination of {' and '.join(prim)}, and each other control on its own (with "
                     f"{' and '.join(prim)} at their defaults)")
        return text + ". Run live for any combination (Live Code, with make live)."

    def html(self) -> str:
        data = json.dumps(self.payload(), separators=(",", ":"), ensure_ascii=True).replace("<", "\\u003c")
        status = self.statuses[0] if self.statuses else ""
        f0 = self.frame_of[0] if self.frame_of else -1
        img = (f'<img class="tb-static-frame" src="{self.frames[f0]}" alt="{html.escape(status)}">'
               if f0 >= 0 else '<img class="tb-static-frame" alt="" hidden>')
        return (
            f'<div class="tb-static-panel" data-tb-static-schema="{SCHEMA}">'
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
        return (f"<StaticExplorer: {len(self.states)} states, {len(self.frames)} frames, "
                f"{self.seconds:.1f} s on {self.meta.get('workers', 1)} processes>")


def precompute(controls: Mapping[str, Any], render: Callable[..., tuple[Any, Any]],
               order: Sequence[str] | None = None, *, states: Iterable[Mapping[str, Any]] | None = None,
               primary: Sequence[str] | None = None, live_only: Sequence[str] = (),
               box_px: float = FRAME_CSS_PX, workers: int | None = None) -> StaticExplorer:
    """Evaluate ``render`` on every one of the panel's states (``states``, or :func:`derive_states` on the
    ``primary`` controls at :data:`PRIMARY_VALUES` values and the others at :data:`OTHER_VALUES`), on ``workers``
    processes (default: ``THEORYBOOK_STATIC_WORKERS``, else ``os.cpu_count()``; forked, so they inherit
    ``render``). A state whose ``render`` raises is kept, with the error as its status line and no frame. The
    result does not depend on ``workers`` (bit for bit: each state is rendered on its own, the frames are merged
    and de-duplicated in the states' order)."""
    order = list(order or controls)
    names = order + [n for n in controls if n not in order]
    if primary is None:
        primary = default_primary(controls, [n for n in names if n not in live_only])
    primary = tuple(primary)
    bad = (set(primary) | set(live_only)) - set(controls)
    if bad:
        raise ValueError(f"Invalid primary/live_only: unknown control names {sorted(bad)}")
    axes = [control_values(n, controls[n], n=PRIMARY_VALUES if n in primary else OTHER_VALUES,
                           live_only=n in live_only) for n in names]
    if states is not None:
        axes, planned = _explicit_axes(axes, controls, states)
    else:
        planned = derive_states(axes, primary)
    if workers is None:
        env = os.environ.get(WORKERS_ENV, "").strip()
        workers = int(env) if env else (os.cpu_count() or 1)
    workers = max(1, min(int(workers), len(planned)))
    if not hasattr(os, "fork"):  # pragma: no cover - Windows: one process
        workers = 1
    t0, c0, k0 = time.perf_counter(), time.process_time(), _children_cpu()
    kwargs = [{a.name: a.values[k] for a, k in zip(axes, s, strict=True)} for s in planned]
    results = _fork_map(lambda i: _render_state(render, kwargs[i], box_px), len(kwargs), workers)
    statuses: list[str] = []
    frame_of: list[int] = []
    frames: list[str] = []
    index: dict[str, int] = {}
    failed = 0
    for status, uri in results:
        status = str(status)
        statuses.append(status)
        if uri is None:
            failed += 1
            frame_of.append(-1)
            continue
        if uri not in index:  # settings that draw the same figure share one frame
            index[uri] = len(frames)
            frames.append(uri)
        frame_of.append(index[uri])
    ex = StaticExplorer(axes, list(planned), statuses, frame_of, frames, 0.0, primary, failed)
    first = frame_of[0] if frame_of else -1
    rest = ex.nbytes - sum(map(len, frames)) - (len(frames[first]) if first >= 0 else 0)  # states, controls
    ex.frames, chosen = _fit_frames(frames, first, int(PAGE_BYTES * FRAME_BUDGET) - rest, workers)
    ex.seconds = wall = time.perf_counter() - t0
    ex.meta = {"wall_s": round(wall, 3), "cpu_s": round(time.process_time() - c0 + _children_cpu() - k0, 3),
               "workers": workers, **chosen}
    return ex


def _children_cpu() -> float:
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return 0.0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _render_state(render: Callable[..., tuple[Any, Any]], kwargs: dict,
                  box_px: float = FRAME_CSS_PX) -> tuple[str, str | None]:
    """``(status line, frame as a PNG data URI)`` of one setting; ``(error, None)`` when ``render`` raised (or drew
    no figure)."""
    import matplotlib.pyplot as plt

    before = set(plt.get_fignums())
    uri = None
    # A setting far from the default may warn (overflow of a diverging run, ...) or print: that belongs to its
    # status line, not to the chapter's output.
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            fig, result = render(**kwargs)
            status = _status(result)
            uri = _encode(fig, box_px)
        except Exception as err:  # noqa: BLE001 - a failing setting is shown, never raised
            status = _error_status(err)
        finally:
            for num in set(plt.get_fignums()) - before:
                plt.close(num)
    return status, uri


def _fork_map(fn: Callable[[int], Any], n: int, workers: int) -> list:
    """``[fn(0), …, fn(n − 1)]`` (JSON values), on ``workers`` forked children: child ``w`` computes items
    ``w, w + workers, …`` (the costly ones are spread evenly) on one torch thread and sends back JSON through a
    pipe; it never returns into the kernel (``os._exit``). A child that fails has its items computed here. With one
    worker (or no ``os.fork``) everything runs here, on one torch thread."""
    if workers <= 1 or n <= 1 or not hasattr(os, "fork"):
        with _one_torch_thread():
            return [fn(i) for i in range(n)]
    workers = min(workers, n)
    results: list = [None] * n
    children = []
    sys.stdout.flush()
    sys.stderr.flush()
    for w in range(workers):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: compute, send, exit without running the parent's clean-up
            code = 1
            try:
                os.close(rfd)
                torch = sys.modules.get("torch")
                if torch is not None:
                    torch.set_num_threads(1)
                out = [fn(i) for i in range(w, n, workers)]
                with os.fdopen(wfd, "wb") as f:
                    f.write(json.dumps(out).encode("utf-8"))
                code = 0
            finally:
                os._exit(code)
        os.close(wfd)
        children.append((w, pid, rfd))
    for w, pid, rfd in children:
        with os.fdopen(rfd, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
        mine = range(w, n, workers)
        try:
            got = json.loads(data) if status == 0 else None
        except ValueError:
            got = None
        if got is None or len(got) != len(mine):  # pragma: no cover - a crashed child: do its share here
            with _one_torch_thread():
                got = [fn(i) for i in mine]
        for i, r in zip(mine, got, strict=True):
            results[i] = r
    return results


@contextlib.contextmanager
def _one_torch_thread():
    """Precompute on one torch thread: the states are small problems, and a second intra-op thread would spin
    whenever the build machine is busy. Restored afterwards."""
    torch = sys.modules.get("torch")
    n = torch.get_num_threads() if torch is not None else None
    if n is not None and n > 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if n is not None and n > 1:
            torch.set_num_threads(n)


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
    static: bool | None = None,
):
    """Return an ``ipywidgets.VBox``: the controls (laid out in ``rows`` of control names), a status line and
    the figure. ``render(**{name: control.value})`` returns ``(fig, result)``; the status line shows
    ``result.label`` (or ``result.status``, or ``str(result)``). The panel is drawn once immediately, so a
    headless run of the chapter shows the default setting.

    With ``static`` (default: on when the chapter is executed headless for the book, see :func:`_static_enabled`),
    the panel is also precomputed (:func:`precompute`) on ``states`` (default: :func:`derive_states` with the
    ``primary`` pair, default :func:`default_primary` of the controls in ``rows``; ``live_only`` controls stay at
    their value) and the :class:`StaticExplorer` is displayed before the panel is returned, for the static HTML
    book. ``panel.static`` holds it (``None`` when off).
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
        explorer = precompute(controls, render, order, states=states, primary=primary, live_only=live_only)
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
