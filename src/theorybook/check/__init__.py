"""Verdicts: claims checked in the open, each row's outcome computed from its evidence.

A chapter records each claim as a row — claim · source · predicted · measured · controls · plant · tolerance ·
outcome — and the table is shown to the reader. When the ``with`` block ends, the table is displayed and any row
that does not stand as registered raises ``AssertionError`` carrying the numbers, so ``pytest --nbmake book/``
fails exactly when theory, code or data change what a row says.

The package follows its parts: :mod:`~theorybook.check.rows` (the row types and vocabularies),
:mod:`~theorybook.check.outcomes` (the outcome logic), :mod:`~theorybook.check.rules` (the rules of form),
:mod:`~theorybook.check.table` (:class:`Verdicts`) and :mod:`~theorybook.check.render` (the HTML).

Four outcomes for a paper's claim
---------------------------------
A row on a *paper's* claim (``source`` ``"paper"`` or ``"secondary"``) has one of four outcomes, computed from its
evidence (:func:`~theorybook.check.outcomes.decide`); the row's ``kind`` registers the outcome it expects:

``"reproduces"``
    the claim's own test holds, and every control (``control=``) fails it: the experiment tells the claim from
    the strongest alternatives — the competitor the paper beats, the rival law with as many free parameters, the
    simplest method without the paper's idea, the ablation — each tuned like the method (``why=``, ``tuned=``).
``"not_specific"`` (shown "holds, not specific")
    the claim's test holds, and so does a strong alternative, which the row names ("but so does …").
``"differs"``
    the row's test asserts what we measure instead; the paper's value (``paper=``) fails it, and the paper's effect
    planted in the method's own arm at the paper's size (``planted=Planted(...)``) is caught by the same test.
``"inconclusive"``
    what we measure instead holds, but a plant of the paper's effect would not have been seen either (the plant
    passes the test), or no plant is possible (``untestable=``, with the reason).

When the evidence gives another outcome than the registered one — or the claim's own numbers fail — the row fails
and the chapter raises; adding a strong control that passes, or a plant that is missed, costs only an honest change
of the registered outcome. A claim about a regime (``PaperClaim(regime=...)``) is tested by a row with a
``scan=Scan(...)`` over ≥ 3 values of the regime parameter.

``"consistency"`` rows check our own code, algebra, derivation or reconstruction (a sympy identity,
reference-vs-fast parity, an invariant, a claim of source ``"derived"``/``"reconstruction"``). Shown apart, never
counted as evidence for the paper. A row true by construction is not a check at all: it is dropped.

``basis`` — where a tolerance comes from. Every row whose test has a tolerance or a bound states it, prefixed by
one of :data:`TOL_BASES`: ``"model: …"`` (an error model: round-off, a CLT band with its false-alarm rate, a
truncation bound), ``"pilot: …"`` (pilot seeds from :data:`PILOT_SEEDS`, disjoint from every chapter's seeds and
from the robustness seeds), ``"paper: …"`` (the paper's own statement) or ``"exact: …"``.

``tests`` — the id of the paper claim (a :class:`PaperClaim` of the chapter's ``PAPER_CLAIMS``) a paper-claim row
tests. A claim's outcome is that of its least favourable row (:func:`~theorybook.check.outcomes.claim_outcome`);
the chapter's headline claim (``PaperClaim(headline=True)``) and its outcome make the chapter's **bottom line**
(:meth:`Verdicts.bottom_line`), which the book shows under the chapter's title and on the front page.

A statistical row states its error model and tolerance in ``basis`` (false-alarm probability ≤ 1e-3, corrected for
the number of comparisons when the row takes a maximum); :func:`z_threshold` gives the two-sided Gaussian
threshold for a family of ``m`` z-scores. Wall-clock time never enters a verdict, and the measured value is shown
as measured.

Besides its HTML, a table carries its rows as JSON (``<script type="application/json"
class="theorybook-verdicts">`` inside the HTML and the ``application/vnd.theorybook.verdicts+json`` mime type),
from which ``make book`` builds the book-wide claims ledger (``scripts/claims_ledger.py``).

Example
-------
>>> from theorybook.check import Control, Verdicts
>>> with Verdicts("toy", display=False) as v:
...     _ = v.close("pi to 3 digits", measured=3.1416, predicted=3.14159, rtol=1e-4,
...                 kind="consistency", source="derived", basis="model: 5-digit rounding")
...     _ = v.less("the method's error is small", measured=1e-9, bound=1e-6, kind="reproduces",
...                source="paper", control=Control("the competitor the paper beats", 0.3,
...                why="the baseline of the paper's table", tuned="same grid and budget as the method"),
...                basis="paper: Theorem 1's 1e-6", tests="T1")
...     _ = v.less("the method's error is small (vs a slower SGD)", measured=1e-9, bound=1e-6,
...                kind="not_specific", source="paper", control=Control("SGD at a smaller step", 1e-8,
...                why="the simplest method without the paper's idea", tuned="same grid and budget"),
...                basis="paper: Theorem 1's 1e-6", tests="T1")
>>> v.passed
True
>>> v.status()
'paper-claim rows: 1 reproduces, 1 holds, not specific, 0 differs; 1 consistency check — every row as registered'
>>> with Verdicts("toy", display=False) as w:  # doctest: +ELLIPSIS
...     _ = w.less("cannot tell", 1e-9, 1e-6, kind="reproduces", source="paper",
...                control=Control("do nothing", 1e-8, why="the null", tuned="none needed: no parameter"),
...                basis="paper: 1e-6", tests="T1")
Traceback (most recent call last):
AssertionError: toy: 1 claim(s) failed — cannot tell: ... 'holds, not specific' — ...: but so does do nothing ...
"""

from __future__ import annotations

from .outcomes import SEVERITY, claim_outcome, decide, headline_claim, outcome_counts, row_outcome
from .render import GROUP_TITLE, bottom_line_html, math_html, outcome_badge, render_rows
from .rows import (
    CLAIM_FAILS,
    CLAIM_KINDS,
    CONTROL_PASSES,
    KINDS,
    MIME,
    MIN_SCAN,
    OTHERWISE_FAILS,
    OTHERWISE_KINDS,
    OUTCOME_CHANGED,
    OUTCOME_LABELS,
    OUTCOMES,
    PAPER_KINDS,
    PAPER_PASSES,
    PAPER_SOURCES,
    PILOT_SEEDS,
    PLANTED_PASSES,
    REASON_CLASSES,
    SOURCES,
    TOL_BASES,
    Control,
    PaperClaim,
    Planted,
    Row,
    Scan,
    fmt,
    z_threshold,
)
from .rules import claim_violations, rule_violations
from .table import Verdicts

__all__ = ["CLAIM_FAILS", "CLAIM_KINDS", "CONTROL_PASSES", "GROUP_TITLE", "KINDS", "MIME", "MIN_SCAN",
           "OTHERWISE_FAILS", "OTHERWISE_KINDS", "OUTCOMES", "OUTCOME_CHANGED", "OUTCOME_LABELS", "PAPER_KINDS",
           "PAPER_PASSES", "PAPER_SOURCES", "PILOT_SEEDS", "PLANTED_PASSES", "REASON_CLASSES", "SEVERITY", "SOURCES",
           "TOL_BASES", "Control", "PaperClaim", "Planted", "Row", "Scan", "Verdicts", "bottom_line_html",
           "claim_outcome", "claim_violations", "decide", "fmt", "headline_claim", "math_html", "outcome_badge",
           "outcome_counts", "render_rows", "row_outcome", "rule_violations", "z_threshold"]
