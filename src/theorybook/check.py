"""Verdicts: claims checked in the open.

A chapter records each headline claim as a row — claim · source · predicted · measured · tolerance · holds? —
and the table is shown to the reader. When the ``with`` block ends, the table is displayed and any failing row
raises ``AssertionError`` carrying the numbers, so ``pytest --nbmake book/`` fails exactly when theory or code
breaks.

Every row says what kind of evidence it is (``kind``) and where the claim comes from (``source``):

``kind``
    ``"reproduces"`` — a paper's claim checked against an *independent* measurement (a simulation, a second
    numerical method, an exact solver). Predicted and measured never come from the same formula.

    ``"differs"`` — a paper's claim that does **not** reproduce here. The row shows the paper's value
    (``paper=``) and asserts what we measure instead, with a tolerance fixed before measuring, so a change in
    either direction fails.

    ``"consistency"`` — a check of our own code or algebra (a sympy identity, reference-vs-fast parity, an
    invariant). Shown apart, never counted as a reproduction.

``source``
    ``"paper"``, ``"secondary"``, ``"derived"`` or ``"reconstruction"`` — the provenance tags of the paper
    digests: the claim is stated in the paper, known from a secondary account, derived by us, or our
    reconstruction of something we could not read.

A statistical row states its error model and tolerance in ``note`` (one row's false-alarm probability ≤ 1e-3,
corrected for the number of comparisons when the row takes a maximum); :func:`z_threshold` gives the
two-sided Gaussian threshold for a family of ``m`` z-scores. Wall-clock time never enters a verdict.

Besides its HTML, a table carries its rows as JSON (``<script type="application/json"
class="theorybook-verdicts">`` inside the HTML and the ``application/vnd.theorybook.verdicts+json`` mime
type), from which ``make book`` builds the book-wide claims ledger (``scripts/claims_ledger.py``).

Example
-------
>>> from theorybook.check import Verdicts
>>> with Verdicts("toy", display=False) as v:
...     _ = v.close("pi to 3 digits", measured=3.1416, predicted=3.14159, rtol=1e-4,
...                 kind="consistency", source="derived")
...     _ = v.less("error is small", measured=1e-9, bound=1e-6, kind="consistency", source="derived")
>>> v.passed
True
>>> v.status()
'0 claims reproduce, 0 differ, 2 consistency checks — all hold'
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from numbers import Real
from statistics import NormalDist
from typing import Any

__all__ = ["KINDS", "SOURCES", "MIME", "Row", "Verdicts", "fmt", "z_threshold"]

KINDS = ("reproduces", "differs", "consistency")
SOURCES = ("paper", "secondary", "derived", "reconstruction")
MIME = "application/vnd.theorybook.verdicts+json"

_GROUP_TITLE = {
    "reproduces": "Reproduces the paper",
    "differs": "Differs from the paper (what we measure instead)",
    "consistency": "Consistency checks (our code and algebra; not reproductions)",
}


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


def z_threshold(alpha: float = 1e-3, m: int = 1) -> float:
    """Two-sided Gaussian threshold ``z`` with ``P(max_{i≤m} |Z_i| > z) ≤ alpha`` (Bonferroni over ``m``).

    Valid for any dependence between the ``m`` z-scores (a union bound), so a row that takes the maximum of
    ``m`` correlated z-scores keeps its false-alarm probability ≤ ``alpha``.

    >>> round(z_threshold(1e-3), 3)
    3.291
    """
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not 0 < float(alpha) < 1:
        raise ValueError(f"Invalid alpha: {alpha!r} (must be in (0, 1))")
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"Invalid m: {m!r} (must be an integer ≥ 1)")
    return NormalDist().inv_cdf(1.0 - float(alpha) / (2.0 * m))


def _number(x: Any) -> float | None:
    try:
        y = float(x)
    except (TypeError, ValueError):
        return None
    return y if math.isfinite(y) else None


@dataclass(frozen=True)
class Row:
    """One checked claim."""

    claim: str
    predicted: str
    measured: str
    tolerance: str
    holds: bool
    note: str = ""
    kind: str = "consistency"
    source: str = "derived"
    paper: str = ""
    measured_value: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "table"


@dataclass(repr=False)
class Verdicts:
    """A verdict table. Use as a context manager: the table is shown, then failures raise.

    Parameters
    ----------
    title:
        Caption of the table.
    display:
        Show the table with IPython's display when the block ends (default ``True``).

    Every recording method takes the keyword-only ``kind`` (one of :data:`KINDS`) and ``source`` (one of
    :data:`SOURCES`); a ``"differs"`` row also needs ``paper=`` (the paper's value or claim, as shown).
    """

    title: str
    display: bool = True
    rows: list[Row] = field(default_factory=list)

    # -- recording ---------------------------------------------------------------------------------------
    def _add(self, claim: str, predicted: str, measured: Any, tolerance: str, holds: bool, note: str,
             kind: str, source: str, paper: Any) -> bool:
        if kind not in KINDS:
            raise ValueError(f"Invalid kind: {kind!r} (must be one of {', '.join(map(repr, KINDS))})")
        if source not in SOURCES:
            raise ValueError(f"Invalid source: {source!r} (must be one of {', '.join(map(repr, SOURCES))})")
        if kind == "differs" and paper is None:
            raise ValueError(f"Row {claim!r}: a 'differs' row must show the paper's value (paper=...)")
        if not isinstance(claim, str) or not claim.strip():
            raise ValueError(f"Invalid claim: {claim!r} (must be a non-empty string)")
        row = Row(claim, predicted, fmt(measured) if not isinstance(measured, str) else measured, tolerance,
                  bool(holds), note, kind, source, "" if paper is None else fmt(paper),
                  _number(measured) if not isinstance(measured, str) else None)
        self.rows.append(row)
        return row.holds

    def close(self, claim: str, measured: float, predicted: float, *, rtol: float = 0.0, atol: float = 0.0,
              kind: str, source: str, paper: Any = None, note: str = "") -> bool:
        """``|measured − predicted| ≤ atol + rtol·|predicted|`` (NaN never holds)."""
        if not (rtol >= 0 and atol >= 0) or not (math.isfinite(rtol) and math.isfinite(atol)):
            raise ValueError(f"Invalid tolerance: rtol={rtol}, atol={atol} (must be finite and ≥ 0)")
        m, p = float(measured), float(predicted)
        ok = math.isfinite(m) and math.isfinite(p) and abs(m - p) <= atol + rtol * abs(p)
        parts = [f"rtol {rtol:g}"] if rtol else []
        parts += [f"atol {atol:g}"] if atol else []
        tol = ", ".join(parts) if parts else "exact"
        return self._add(claim, fmt(p), m, tol, ok, note, kind, source, paper)

    def equal(self, claim: str, measured: Any, predicted: Any, *, kind: str, source: str, paper: Any = None,
              note: str = "") -> bool:
        """Exact equality (integers, strings, sympy expressions after simplification)."""
        ok = bool(measured == predicted)
        return self._add(claim, fmt(predicted), measured, "exact", ok, note, kind, source, paper)

    def less(self, claim: str, measured: float, bound: float, *, kind: str, source: str, paper: Any = None,
             note: str = "") -> bool:
        """``measured ≤ bound``."""
        m = float(measured)
        ok = math.isfinite(m) and m <= float(bound)
        return self._add(claim, f"≤ {fmt(bound)}", m, "bound", ok, note, kind, source, paper)

    def greater(self, claim: str, measured: float, bound: float, *, kind: str, source: str, paper: Any = None,
                note: str = "") -> bool:
        """``measured ≥ bound``."""
        m = float(measured)
        ok = math.isfinite(m) and m >= float(bound)
        return self._add(claim, f"≥ {fmt(bound)}", m, "bound", ok, note, kind, source, paper)

    def between(self, claim: str, measured: float, low: float, high: float, *, kind: str, source: str,
                paper: Any = None, note: str = "") -> bool:
        """``low ≤ measured ≤ high`` (e.g. a Monte-Carlo confidence band)."""
        m = float(measured)
        ok = math.isfinite(m) and float(low) <= m <= float(high)
        return self._add(claim, f"[{fmt(low)}, {fmt(high)}]", m, "interval", ok, note, kind, source, paper)

    def true(self, claim: str, condition: bool, *, kind: str, source: str, predicted: str = "True",
             measured: Any = None, paper: Any = None, note: str = "") -> bool:
        """A boolean claim; ``measured`` shows the evidence (defaults to the condition itself)."""
        ok = bool(condition)
        shown = fmt(measured) if measured is not None else str(ok)
        return self._add(claim, predicted, shown, "—", ok, note, kind, source, paper)

    def extend(self, other: Verdicts | Iterable[Row]) -> None:
        """Append the rows of another table (e.g. one built by a seeded experiment function in ``src/``)."""
        self.rows.extend(other.rows if isinstance(other, Verdicts) else other)

    # -- reporting ---------------------------------------------------------------------------------------
    @property
    def passed(self) -> bool:
        return all(r.holds for r in self.rows)

    @property
    def failures(self) -> list[Row]:
        return [r for r in self.rows if not r.holds]

    def counts(self) -> dict[str, int]:
        """Rows per kind, plus ``"fails"``."""
        out = {k: sum(r.kind == k for r in self.rows) for k in KINDS}
        out["fails"] = len(self.failures)
        return out

    def status(self) -> str:
        """The one-line status that ends a chapter's verdict section."""
        c = self.counts()
        n_rep, n_dif, n_con = c["reproduces"], c["differs"], c["consistency"]
        head = (f"{n_rep} claim{'s' if n_rep != 1 else ''} reproduce{'s' if n_rep == 1 else ''}, "
                f"{n_dif} differ{'s' if n_dif == 1 else ''}, "
                f"{n_con} consistency check{'s' if n_con != 1 else ''}")
        return head + (" — all hold" if not c["fails"] else f" — {c['fails']} FAIL")

    @property
    def anchor(self) -> str:
        """HTML id of the rendered table (the claims ledger links to it)."""
        return "verdicts-" + _slug(self.title)

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "anchor": self.anchor, "status": self.status(), "counts": self.counts(),
                "rows": [r.as_dict() for r in self.rows]}

    _HEAD = ("claim", "source", "paper", "predicted", "measured", "tolerance", "holds?", "note")

    def _cells(self, r: Row) -> tuple[str, ...]:
        return (r.claim, r.source, r.paper, r.predicted, r.measured, r.tolerance,
                "holds" if r.holds else "FAILS", r.note)

    def _groups(self) -> Iterable[tuple[str, list[Row]]]:
        for kind in KINDS:
            rows = [r for r in self.rows if r.kind == kind]
            if rows:
                yield kind, rows

    def _repr_html_(self) -> str:
        th = "".join(f"<th style='text-align:left'>{h}</th>" for h in self._HEAD)
        body = []
        for kind, rows in self._groups():
            body.append(f"<tr class='verdict-group verdict-group-{kind}'><th colspan='{len(self._HEAD)}' "
                        f"style='text-align:left;background:#eef1f5'>{html.escape(_GROUP_TITLE[kind])} "
                        f"({len(rows)})</th></tr>")
            for r in rows:
                cls = "verdict-pass" if r.holds else "verdict-fail"
                mark_style = ("color:#1a7f37;font-weight:bold" if r.holds
                              else "color:#b42318;font-weight:bold")
                cells = []
                for j, c in enumerate(self._cells(r)):
                    text = html.escape(c)
                    if j == 6:
                        text = f"<span class='{cls}' style='{mark_style}'>{text}</span>"
                    cells.append(f"<td style='text-align:left'>{text}</td>")
                style = "" if r.holds else " style='background:#fde2e1'"
                body.append(f"<tr class='verdict-row {cls}' data-kind='{kind}'{style}>{''.join(cells)}</tr>")
        n_ok = sum(r.holds for r in self.rows)
        cap = f"{html.escape(self.title)} — {n_ok}/{len(self.rows)} claims hold"
        payload = json.dumps(self.to_json(), ensure_ascii=False).replace("</", "<\\/")
        return (f"<div class='verdicts-block' id='{self.anchor}'>"
                f"<table class='verdicts'><caption style='caption-side:top;font-weight:bold'>{cap}</caption>"
                f"<thead><tr>{th}</tr></thead><tbody>{''.join(body)}</tbody></table>"
                f"<p class='verdict-status'><strong>Status:</strong> {html.escape(self.status())}</p>"
                f"<script type='application/json' class='theorybook-verdicts'>{payload}</script></div>")

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        return {"text/html": self._repr_html_(), "text/plain": str(self), MIME: self.to_json()}

    def __str__(self) -> str:
        cols = [self._HEAD] + [self._cells(r) for _, rows in self._groups() for r in rows]
        widths = [max(len(c[i]) for c in cols) for i in range(len(cols[0]))]
        lines = [self.title]
        for j, c in enumerate(cols):
            lines.append(" | ".join(s.ljust(w) for s, w in zip(c, widths, strict=True)))
            if j == 0:
                lines.append("-+-".join("-" * w for w in widths))
        lines.append("Status: " + self.status())
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
