"""The verdict table a chapter shows: :class:`Verdicts` records rows (``close``, ``equal``, ``less``, ``greater``,
``between``, ``true``), computes each row's outcome from its evidence (:mod:`theorybook.check.outcomes`), shows
the table and raises when a row does not stand as registered."""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .outcomes import decide, outcome_counts, row_outcome
from .render import bottom_line_html, render_rows
from .rows import (
    KINDS,
    MIME,
    OUTCOME_LABELS,
    OUTCOMES,
    SOURCES,
    Control,
    PaperClaim,
    Planted,
    Row,
    Scan,
    _number,
    fmt,
)
from .rules import rule_violations

__all__ = ["Verdicts"]


def _safe(test: Callable[[Any], bool], x: Any) -> bool:
    """A test applied to a value that may not be a number (a control of the wrong type never passes)."""
    try:
        return bool(test(x))
    except (TypeError, ValueError):
        return False


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "table"


def _as_controls(control: Control | Sequence[Control] | None) -> tuple[Control, ...]:
    if control is None:
        return ()
    items = (control,) if isinstance(control, Control) else tuple(control)
    for c in items:
        if not isinstance(c, Control):
            raise TypeError(f"Invalid control: {c!r} (must be a theorybook.check.Control)")
    return items


@dataclass(repr=False)
class Verdicts:
    """A verdict table. Use as a context manager: the table is shown, then failures raise.

    Parameters
    ----------
    title:
        Caption of the table.
    display:
        Show the table with IPython's display when the block ends (default ``True``).
    claims:
        The chapter's :class:`PaperClaim` s (usually its ``PAPER_CLAIMS``), carried in the JSON so the ledger
        can count which are tested; give them on one table of the chapter.

    Every recording method takes the keyword-only ``kind`` — the outcome the row registers (one of
    :data:`KINDS`: ``reproduces``, ``not_specific``, ``differs``, ``inconclusive`` or ``consistency``) —,
    ``source`` (one of :data:`SOURCES`), ``control=`` (a :class:`Control` or a sequence of them; required for
    ``reproduces``/``not_specific``), ``basis=`` (the tolerance's provenance; required when the test has a
    tolerance or bound), ``tests=`` (the paper claim's id), ``paper=`` (the paper's value, put through the row's
    test; required for ``differs``/``inconclusive``) with ``paper_shown=`` (its wording), ``planted=`` (a
    :class:`Planted`) or ``untestable=`` (why no plant is possible) for ``differs``/``inconclusive`` rows, and
    ``scan=`` (a :class:`Scan`) for a row over a regime. Each returns whether the row stands as registered.
    """

    title: str
    display: bool = True
    rows: list[Row] = field(default_factory=list)
    claims: Sequence[PaperClaim] = ()

    # -- recording ---------------------------------------------------------------------------------------
    def _add(self, claim: str, predicted: str, measured: Any, tolerance: str, test: Callable[[Any], bool],
             note: str, kind: str, source: str, paper: Any, control: Any, basis: str, tests: str,
             shown: str | None = None, *, planted: Planted | None = None, untestable: str = "",
             scan: Scan | None = None, paper_shown: str | None = None) -> bool:
        if not isinstance(claim, str) or not claim.strip():
            raise ValueError(f"Invalid claim: {claim!r} (must be a non-empty string)")
        if kind not in KINDS:
            raise ValueError(f"Invalid kind: {kind!r} (must be one of {', '.join(map(repr, KINDS))})")
        if source not in SOURCES:
            raise ValueError(f"Invalid source: {source!r} (must be one of {', '.join(map(repr, SOURCES))})")
        if not isinstance(basis, str) or not isinstance(tests, str) or not isinstance(note, str):
            raise TypeError(f"Row {claim!r}: basis, tests and note must be strings")
        controls = _as_controls(control)
        test_holds = bool(_safe(test, measured))
        cdicts = []
        for c in controls:
            cdicts.append({"label": c.label, "measured": c.shown if c.shown is not None else fmt(c.value),
                           "passes": bool(_safe(test, c.value)), "why": c.why, "tuned": c.tuned, "weak": c.weak})
        paper_passes = None
        if paper is not None and not isinstance(paper, str):
            paper_passes = bool(_safe(test, paper))
        if planted is not None and not isinstance(planted, Planted):
            raise TypeError(f"Invalid planted: {planted!r} (must be a theorybook.check.Planted)")
        if scan is not None and not isinstance(scan, Scan):
            raise TypeError(f"Invalid scan: {scan!r} (must be a theorybook.check.Scan)")
        if not isinstance(untestable, str):
            raise TypeError(f"Invalid untestable: {untestable!r} (must be a string)")
        pdict = None
        if planted is not None:
            pdict = {"label": planted.label, "effect": planted.effect, "passes": bool(_safe(test, planted.value)),
                     "measured": planted.shown if planted.shown is not None else fmt(planted.value)}
        outcome, reasons = decide(kind, test_holds, cdicts, paper_passes, pdict, untestable)
        paper_text = "" if paper is None else (paper_shown if paper_shown is not None else fmt(paper))
        row = Row(claim, predicted, shown if shown is not None else (fmt(measured) if not isinstance(
            measured, str) else measured), tolerance, not reasons, note, kind, source,
            paper_text, _number(measured) if not isinstance(measured, str) else None,
            tuple(cdicts), basis, tests, "; ".join(reasons), paper_passes, pdict, untestable,
            None if scan is None else scan.as_dict(), outcome, test_holds)
        bad = rule_violations(row)
        if bad:
            raise ValueError("; ".join(bad))
        self.rows.append(row)
        return row.holds

    def close(self, claim: str, measured: float, predicted: float, *, rtol: float = 0.0, atol: float = 0.0,
              kind: str, source: str, paper: Any = None, note: str = "", control: Any = None, basis: str = "",
              tests: str = "", **extra: Any) -> bool:
        """``|measured − predicted| ≤ atol + rtol·|predicted|`` (NaN never holds)."""
        if not (rtol >= 0 and atol >= 0) or not (math.isfinite(rtol) and math.isfinite(atol)):
            raise ValueError(f"Invalid tolerance: rtol={rtol}, atol={atol} (must be finite and ≥ 0)")
        p = float(predicted)

        def test(x: Any) -> bool:
            m = float(x)
            return math.isfinite(m) and math.isfinite(p) and abs(m - p) <= atol + rtol * abs(p)

        parts = [f"rtol {rtol:g}"] if rtol else []
        parts += [f"atol {atol:g}"] if atol else []
        tol = ", ".join(parts) if parts else "exact"
        return self._add(claim, fmt(p), float(measured), tol, test, note, kind, source, paper, control, basis,
                         tests, **extra)

    def equal(self, claim: str, measured: Any, predicted: Any, *, kind: str, source: str, paper: Any = None,
              note: str = "", control: Any = None, basis: str = "", tests: str = "", **extra: Any) -> bool:
        """Exact equality (integers, strings, sympy expressions after simplification)."""
        return self._add(claim, fmt(predicted), measured, "exact", lambda x: bool(x == predicted), note, kind,
                         source, paper, control, basis, tests, **extra)

    def less(self, claim: str, measured: float, bound: float, *, kind: str, source: str, paper: Any = None,
             note: str = "", control: Any = None, basis: str = "", tests: str = "", **extra: Any) -> bool:
        """``measured ≤ bound``."""
        b = float(bound)
        return self._add(claim, f"≤ {fmt(bound)}", float(measured), "bound",
                         lambda x: math.isfinite(float(x)) and float(x) <= b, note, kind, source, paper, control,
                         basis, tests, **extra)

    def greater(self, claim: str, measured: float, bound: float, *, kind: str, source: str, paper: Any = None,
                note: str = "", control: Any = None, basis: str = "", tests: str = "", **extra: Any) -> bool:
        """``measured ≥ bound``."""
        b = float(bound)
        return self._add(claim, f"≥ {fmt(bound)}", float(measured), "bound",
                         lambda x: math.isfinite(float(x)) and float(x) >= b, note, kind, source, paper, control,
                         basis, tests, **extra)

    def between(self, claim: str, measured: float, low: float, high: float, *, kind: str, source: str,
                paper: Any = None, note: str = "", control: Any = None, basis: str = "", tests: str = "",
                **extra: Any) -> bool:
        """``low ≤ measured ≤ high`` (e.g. a Monte-Carlo confidence band)."""
        lo, hi = float(low), float(high)
        return self._add(claim, f"[{fmt(low)}, {fmt(high)}]", float(measured), "interval",
                         lambda x: math.isfinite(float(x)) and lo <= float(x) <= hi, note, kind, source, paper,
                         control, basis, tests, **extra)

    def true(self, claim: str, condition: bool, *, kind: str, source: str, predicted: str = "True",
             measured: Any = None, paper: Any = None, note: str = "", control: Any = None, basis: str = "",
             tests: str = "", **extra: Any) -> bool:
        """A boolean claim; ``measured`` shows the evidence (defaults to the condition itself). A control's
        ``value`` is its condition (it must be false)."""
        shown = fmt(measured) if measured is not None else str(bool(condition))
        return self._add(claim, predicted, bool(condition), "—", bool, note, kind, source, paper, control, basis,
                         tests, shown=shown, **extra)

    def extend(self, other: Verdicts | Iterable[Row]) -> None:
        """Append the rows of another table (e.g. one built by a seeded experiment function in ``src/``)."""
        if isinstance(other, Verdicts):
            self.claims = tuple(self.claims) + tuple(c for c in other.claims if c not in self.claims)
            other = other.rows
        for r in other:
            bad = rule_violations(r)
            if bad:
                raise ValueError("; ".join(bad))
            self.rows.append(r)

    # -- reporting ---------------------------------------------------------------------------------------
    @property
    def passed(self) -> bool:
        return all(r.holds for r in self.rows)

    @property
    def failures(self) -> list[Row]:
        return [r for r in self.rows if not r.holds]

    def counts(self) -> dict[str, int]:
        """Rows per registered kind, plus ``"fails"`` (rows that do not stand as registered)."""
        out = {k: sum(r.kind == k for r in self.rows) for k in KINDS}
        out["fails"] = len(self.failures)
        return out

    def claim_counts(self) -> dict[str, int]:
        """The table's paper claims per outcome (:func:`theorybook.check.outcomes.outcome_counts`)."""
        return outcome_counts(self.claims, self.rows)

    def status(self) -> str:
        """The one-line status that ends a chapter's verdict section: paper-claim rows by outcome, then our own
        consistency checks, then whether every row stands as registered."""
        c = self.counts()
        parts = [f"{c[k]} {OUTCOME_LABELS[k]}" for k in OUTCOMES if c[k] or k in ("reproduces", "differs")]
        head = (f"paper-claim rows: {', '.join(parts)}; {c['consistency']} consistency "
                f"check{'s' if c['consistency'] != 1 else ''}")
        return head + (" — every row as registered" if not c["fails"] else f" — {c['fails']} FAIL")

    def bottom_line(self) -> str:
        """The chapter's bottom line as HTML (:func:`theorybook.check.render.bottom_line_html`)."""
        return bottom_line_html([c.as_dict() for c in self.claims], [r.as_dict() for r in self.rows],
                                href=f"#{self.anchor}")

    @property
    def anchor(self) -> str:
        """HTML id of the rendered table (the claims ledger links to it)."""
        return "verdicts-" + _slug(self.title)

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "anchor": self.anchor, "status": self.status(), "counts": self.counts(),
                "rows": [r.as_dict() for r in self.rows], "claims": [c.as_dict() for c in self.claims]}

    _HEAD = ("claim", "source", "paper", "predicted", "measured", "controls", "tolerance", "outcome", "note")

    @staticmethod
    def _control_cell(r: Row) -> str:
        if not r.controls:
            return ""
        return "; ".join(f"{c['label']}: {c['measured']} ({'passes too' if c['passes'] else 'fails'})"
                         for c in r.controls)

    def _cells(self, r: Row) -> tuple[str, ...]:
        tol = r.tolerance + (f" — {r.basis}" if r.basis else "")
        note = r.note + (f" [{r.reason}]" if r.reason else "")
        if r.planted:
            note += (f" [planted — {r.planted['label']}: {r.planted['measured']} "
                     f"({'missed' if r.planted['passes'] else 'caught'})]")
        if r.untestable:
            note += f" [no plant possible: {r.untestable}]"
        return (r.claim + (f" [{r.tests}]" if r.tests else ""), r.source, r.paper, r.predicted, r.measured,
                self._control_cell(r), tol, _outcome_text(r), note)

    def _groups(self) -> Iterable[tuple[str, list[Row]]]:
        for kind in KINDS:
            rows = [r for r in self.rows if r.kind == kind]
            if rows:
                yield kind, rows

    def _repr_html_(self) -> str:
        n_ok = sum(r.holds for r in self.rows)
        payload = json.dumps(self.to_json(), ensure_ascii=False).replace("</", "<\\/")
        return (f"<div class='verdicts-block' id='{self.anchor}'>"
                f"<p class='verdicts-caption'><strong>{html.escape(self.title)}</strong> — {n_ok}/{len(self.rows)} "
                f"rows stand as registered</p>{render_rows([r.as_dict() for r in self.rows])}"
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
                            + (f" — {r.reason}" if r.reason else "") for r in bad)
            raise AssertionError(f"{self.title}: {len(bad)} claim(s) failed — {msg}")

    def show(self) -> None:
        try:
            from IPython.display import display
        except ImportError:  # pragma: no cover - IPython is a dependency of the book extras
            print(self)
        else:
            display(self)

    def report(self) -> None:
        """Show the table, then raise on any failing row — what a chapter calls on a table built by its package's
        ``verdicts.py`` (builders make ``display=False`` tables, so that tests do not print them; ``report`` always
        shows)."""
        self.show()
        self.raise_if_failed()

    def __enter__(self) -> Verdicts:
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if self.display:
            self.show()
        if exc_type is None:
            self.raise_if_failed()
        return False


def _outcome_text(r: Row) -> str:
    out = row_outcome(r)
    if r.kind == "consistency":
        return "holds" if r.holds else "FAILS"
    label = OUTCOME_LABELS[out]
    if not r.holds:
        return f"FAILS (registered {OUTCOME_LABELS[r.kind]}, evidence: {label})"
    if out == "not_specific":
        label += " — but so does " + ", ".join(c["label"] for c in r.controls if c["passes"])
    return label
