"""Verdicts: claims checked in the open.

A chapter records each headline claim as a row — claim · predicted · measured · tolerance · holds? — and the
table is shown to the reader. When the ``with`` block ends, the table is displayed and any failing row raises
``AssertionError`` carrying the numbers, so ``pytest --nbmake book/`` fails exactly when theory or code breaks.

Example
-------
>>> from theorybook.check import Verdicts
>>> with Verdicts("toy", display=False) as v:
...     _ = v.close("pi to 3 digits", measured=3.1416, predicted=3.14159, rtol=1e-4)
...     _ = v.less("error is small", measured=1e-9, bound=1e-6)
>>> v.passed
True
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

__all__ = ["Row", "Verdicts", "fmt"]


def fmt(value: Any, digits: int = 6) -> str:
    """Format a number (or anything) compactly for the verdict table."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Real):
        x = float(value)
        if math.isnan(x) or math.isinf(x):
            return str(x)
        if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e6):
            return f"{x:.{digits - 1}e}"
        return f"{x:.{digits}g}"
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        return fmt(value.item(), digits)
    return str(value)


@dataclass(frozen=True)
class Row:
    """One checked claim."""

    claim: str
    predicted: str
    measured: str
    tolerance: str
    holds: bool
    note: str = ""


@dataclass(repr=False)
class Verdicts:
    """A verdict table. Use as a context manager: the table is shown, then failures raise.

    Parameters
    ----------
    title:
        Caption of the table.
    display:
        Show the table with IPython's display when the block ends (default ``True``).
    """

    title: str
    display: bool = True
    rows: list[Row] = field(default_factory=list)

    # -- recording ---------------------------------------------------------------------------------------
    def _add(self, row: Row) -> bool:
        self.rows.append(row)
        return row.holds

    def close(
        self,
        claim: str,
        measured: float,
        predicted: float,
        *,
        rtol: float = 0.0,
        atol: float = 0.0,
        note: str = "",
    ) -> bool:
        """``|measured − predicted| ≤ atol + rtol·|predicted|`` (NaN never holds)."""
        if rtol < 0 or atol < 0:
            raise ValueError(f"Invalid tolerance: rtol={rtol}, atol={atol} (must be ≥ 0)")
        m, p = float(measured), float(predicted)
        ok = math.isfinite(m) and abs(m - p) <= atol + rtol * abs(p)
        parts = [f"rtol {rtol:g}"] if rtol else []
        parts += [f"atol {atol:g}"] if atol else []
        tol = ", ".join(parts) if parts else "exact"
        return self._add(Row(claim, fmt(p), fmt(m), tol, ok, note))

    def equal(self, claim: str, measured: Any, predicted: Any, *, note: str = "") -> bool:
        """Exact equality (integers, strings, sympy expressions after simplification)."""
        ok = bool(measured == predicted)
        return self._add(Row(claim, fmt(predicted), fmt(measured), "exact", ok, note))

    def less(self, claim: str, measured: float, bound: float, *, note: str = "") -> bool:
        """``measured ≤ bound``."""
        m = float(measured)
        ok = math.isfinite(m) and m <= float(bound)
        return self._add(Row(claim, f"≤ {fmt(bound)}", fmt(m), "bound", ok, note))

    def greater(self, claim: str, measured: float, bound: float, *, note: str = "") -> bool:
        """``measured ≥ bound``."""
        m = float(measured)
        ok = math.isfinite(m) and m >= float(bound)
        return self._add(Row(claim, f"≥ {fmt(bound)}", fmt(m), "bound", ok, note))

    def between(self, claim: str, measured: float, low: float, high: float, *, note: str = "") -> bool:
        """``low ≤ measured ≤ high`` (e.g. a Monte-Carlo confidence band)."""
        m = float(measured)
        ok = math.isfinite(m) and float(low) <= m <= float(high)
        return self._add(Row(claim, f"[{fmt(low)}, {fmt(high)}]", fmt(m), "interval", ok, note))

    def true(self, claim: str, condition: bool, *, predicted: str = "True", measured: Any = None,
             note: str = "") -> bool:
        """A boolean claim; ``measured`` shows the evidence (defaults to the condition itself)."""
        ok = bool(condition)
        shown = fmt(measured) if measured is not None else str(ok)
        return self._add(Row(claim, predicted, shown, "—", ok, note))

    # -- reporting ---------------------------------------------------------------------------------------
    @property
    def passed(self) -> bool:
        return all(r.holds for r in self.rows)

    @property
    def failures(self) -> list[Row]:
        return [r for r in self.rows if not r.holds]

    def _columns(self) -> Iterable[tuple[str, ...]]:
        yield ("claim", "predicted", "measured", "tolerance", "holds?", "note")
        for r in self.rows:
            yield (r.claim, r.predicted, r.measured, r.tolerance, "✅" if r.holds else "❌ FAILS", r.note)

    def _repr_html_(self) -> str:
        head, *body = list(self._columns())
        th = "".join(f"<th style='text-align:left'>{html.escape(h)}</th>" for h in head)
        trs = []
        for row, r in zip(body, self.rows, strict=True):
            style = "" if r.holds else " style='background:#fde2e1'"
            tds = "".join(f"<td style='text-align:left'>{html.escape(c)}</td>" for c in row)
            trs.append(f"<tr{style}>{tds}</tr>")
        n_ok = sum(r.holds for r in self.rows)
        cap = f"{html.escape(self.title)} — {n_ok}/{len(self.rows)} claims hold"
        return (f"<table class='verdicts'><caption style='caption-side:top;font-weight:bold'>{cap}</caption>"
                f"<thead><tr>{th}</tr></thead><tbody>{''.join(trs)}</tbody></table>")

    def __str__(self) -> str:
        cols = list(self._columns())
        widths = [max(len(c[i]) for c in cols) for i in range(len(cols[0]))]
        lines = [self.title]
        for j, c in enumerate(cols):
            lines.append(" | ".join(s.ljust(w) for s, w in zip(c, widths, strict=True)))
            if j == 0:
                lines.append("-+-".join("-" * w for w in widths))
        return "\n".join(lines)

    __repr__ = __str__  # text/plain fallback: the same table

    def raise_if_failed(self) -> None:
        """Raise ``AssertionError`` listing every failing claim with its numbers."""
        if not self.rows:
            raise AssertionError(f"{self.title}: no claims were checked")
        bad = self.failures
        if bad:
            msg = "; ".join(f"{r.claim}: predicted {r.predicted}, measured {r.measured} ({r.tolerance})"
                            for r in bad)
            raise AssertionError(f"{self.title}: {len(bad)} claim(s) failed — {msg}")

    def show(self) -> None:
        try:
            from IPython.display import display
        except ImportError:  # pragma: no cover - IPython is a dependency of the book extras
            print(self)
        else:
            display(self)

    def __enter__(self) -> Verdicts:
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self.display:
            self.show()
        if exc_type is None:
            self.raise_if_failed()
        return False
