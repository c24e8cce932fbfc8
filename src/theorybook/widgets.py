"""One way to wire a chapter's control panel: controls → ``render(**values)`` → figure + status line.

Every chapter's ``widgets.explorer()`` builds its controls and a pure ``render`` function and hands both to
:func:`live_panel`, which redraws on each change. A setting that makes ``render`` raise is *shown* as a status
line, never raised: a widget must not crash at any slider position (a diverging run is drawn as diverging by
``render`` itself).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["live_panel"]


def _status(result: Any) -> str:
    return str(getattr(result, "label", getattr(result, "status", result)))


def live_panel(
    controls: Mapping[str, Any],
    render: Callable[..., tuple[Any, Any]],
    rows: Sequence[Sequence[str]] | None = None,
):
    """Return an ``ipywidgets.VBox``: the controls (laid out in ``rows`` of control names), a status line and
    the figure. ``render(**{name: control.value})`` returns ``(fig, result)``; the status line shows
    ``result.label`` (or ``result.status``, or ``str(result)``). The panel is drawn once immediately, so a
    headless run of the chapter shows the default setting.
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
    panel = w.VBox([*(w.HBox([controls[n] for n in row]) for row in rows), status, out])
    # Handles for tests and bench/widgets.py: time or drive the callback without a front end.
    panel.controls, panel.render, panel.status = dict(controls), render, status
    return panel
