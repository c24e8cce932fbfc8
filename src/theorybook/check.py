"""Verdicts: claims checked in the open, each reproduction against a control that must fail the same test.

A chapter records each headline claim as a row — claim · source · predicted · measured · control · tolerance ·
holds? — and the table is shown to the reader. When the ``with`` block ends, the table is displayed and any
failing row raises ``AssertionError`` carrying the numbers, so ``pytest --nbmake book/`` fails exactly when
theory or code breaks.

Every row says what kind of evidence it is (``kind``) and where the claim comes from (``source``):

``kind``
    ``"reproduces"`` — a *paper's* claim (``source`` ``"paper"`` or ``"secondary"``) checked against an
    independent measurement **and against a control** (``control=``): the same measurement on something that
    must not satisfy the claim — the do-nothing method, the competitor the paper beats, the alternative
    hypothesis' exponent, an ablated model, shuffled labels. The row's own test is applied to every control;
    a control that passes makes the row fail with "cannot tell the claim from its control".

    Every control says ``why`` a sceptic would pick it and how it was ``tuned`` (the same budget as the method);
    a ``weak`` control (failing by construction, or the method at a degenerate setting) is never the only one.

    ``"differs"`` — a paper's claim that does **not** reproduce here. The row shows the paper's value
    (``paper=``, a value the row's test is applied to — never a bare string; ``paper_shown=`` words it), which
    must fail the row's own test (else the row fails: "the paper's value passes this test — not a
    difference"). The row asserts what we measure instead, and carries a positive control
    (``planted=Planted(...)``): the same measurement on an instance with the paper's effect planted at the
    paper's size, which must fail the test too — the experiment could have seen the effect. A row that cannot
    plant it says why (``untestable=``) and the ledger shows it as "not testable here", not as a difference.
    A claim about a regime (``PaperClaim(regime=...)``) is tested by a row with a ``scan=Scan(...)`` over ≥ 3
    values of the regime parameter (:func:`claim_violations`).

    ``"consistency"`` — a check of our own code, algebra, derivation or reconstruction (a sympy identity,
    reference-vs-fast parity, an invariant, a claim of source ``"derived"``/``"reconstruction"``). Shown apart,
    never counted as a reproduction. A control is optional here.

``source``
    ``"paper"``, ``"secondary"``, ``"derived"`` or ``"reconstruction"`` — the provenance tags of the paper
    digests. Only ``"paper"`` and ``"secondary"`` may be ``reproduces`` or ``differs``.

``basis`` — where a tolerance comes from. Every row whose test has a tolerance or a bound (``close`` with
    ``rtol``/``atol``, ``less``, ``greater``, ``between``) states it, prefixed by one of :data:`TOL_BASES`:
    ``"model: …"`` (an error model: round-off, a CLT band with its false-alarm rate, a truncation bound),
    ``"pilot: …"`` (pilot seeds from :data:`PILOT_SEEDS`, disjoint from every chapter's seeds and from the
    robustness seeds), ``"paper: …"`` (the threshold is the paper's own statement, e.g. its log factor) or
    ``"exact: …"`` (an identity, integer or closed form checked exactly). A band fitted to the chapter's own run,
    or widened after a failure, is a defect this field makes visible.

``tests`` — the id of the paper claim (a :class:`PaperClaim` of the chapter's ``PAPER_CLAIMS``) that a
    ``reproduces``/``differs`` row tests, so the ledger can say which abstract-level claims are tested and which
    are only quoted.

A statistical row states its error model and tolerance in ``basis`` (one row's false-alarm probability ≤ 1e-3,
corrected for the number of comparisons when the row takes a maximum); :func:`z_threshold` gives the
two-sided Gaussian threshold for a family of ``m`` z-scores. Wall-clock time never enters a verdict, and the
measured value is shown as measured (never a display floor in its place).

Besides its HTML, a table carries its rows as JSON (``<script type="application/json"
class="theorybook-verdicts">`` inside the HTML and the ``application/vnd.theorybook.verdicts+json`` mime
type), from which ``make book`` builds the book-wide claims ledger (``scripts/claims_ledger.py``).
:func:`rule_violations` states the rules once; ``Verdicts`` applies them to every row it records and
``tests/test_verdict_rules.py`` re-applies them to every builder and to the executed ledger.

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
>>> v.passed
True
>>> v.status()
'1 claim reproduces (against its control), 0 differ, 1 consistency check — all hold'
>>> with Verdicts("toy", display=False) as w:  # doctest: +ELLIPSIS
...     _ = w.less("cannot fail", 1e-9, 1e-6, kind="reproduces", source="paper",
...                control=Control("do nothing", 1e-8, why="the null", tuned="none needed: no parameter"),
...                basis="paper: 1e-6", tests="T1")
Traceback (most recent call last):
AssertionError: toy: 1 claim(s) failed — cannot fail: ... cannot tell the claim from its control: ...
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from numbers import Real
from statistics import NormalDist
from typing import Any

__all__ = ["KINDS", "SOURCES", "PAPER_SOURCES", "TOL_BASES", "PILOT_SEEDS", "MIME", "REASON_CLASSES", "Control",
           "PaperClaim", "Planted", "Row", "Scan", "Verdicts", "claim_violations", "fmt", "math_html", "render_rows",
           "rule_violations", "z_threshold"]

KINDS = ("reproduces", "differs", "consistency")
SOURCES = ("paper", "secondary", "derived", "reconstruction")
PAPER_SOURCES = ("paper", "secondary")
TOL_BASES = ("model", "pilot", "paper", "exact")
PILOT_SEEDS = range(9001, 9201)
"""Seeds reserved for pilot runs that set a tolerance: disjoint from the robustness seeds (7001–7040) and from
every chapter's ``CHAPTER_SEEDS`` (``tests/test_verdict_rules.py`` checks both)."""
MIME = "application/vnd.theorybook.verdicts+json"

CONTROL_PASSES = "cannot tell the claim from its control"
PAPER_PASSES = "the paper's value passes this row's test — not a difference"
PLANTED_PASSES = "the planted effect passes this row's test — the experiment could not have seen the paper's effect"
MIN_SCAN = 3
REASON_CLASSES = ("language model", "paper-scale GPU", "data not shippable", "paper text unread",
                  "no measurable consequence")
"""Why a paper claim is only quoted: it needs a language model, paper-scale GPU training, a data set that cannot be
shipped, the part of the paper that makes it measurable (a construction, a bound's constants, a convention) could
not be read, or it is theory without a measurable consequence of its own here — an identity, a definition, a
property true by construction (:attr:`PaperClaim.reason_class`)."""

_GROUP_TITLE = {
    "reproduces": "Reproduces the paper (each against a control that fails the same test)",
    "differs": "Differs from the paper (the paper's value fails the test; what we measure instead)",
    "consistency": "Consistency checks (our code, algebra and reconstructions; not reproductions)",
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
    if isinstance(x, bool):
        return None
    try:
        y = float(x)
    except (TypeError, ValueError):
        return None
    return y if math.isfinite(y) else None


@dataclass(frozen=True)
class Control:
    """The same measurement on something that must *not* satisfy the claim.

    ``label`` names it ("returns x₀", "exponent 1/2", "explicit distillation", "shuffled labels");
    ``value`` is what the row's own test is applied to (a number for ``close``/``less``/``greater``/
    ``between``, the compared object for ``equal``, a bool for ``true``); ``shown`` is optional evidence to
    display instead of ``value`` (e.g. the numbers behind a ``true`` row's condition).

    ``why`` says why a sceptic in the field would pick this alternative (the competitor the paper beats, the rival
    law with as many free parameters, the ablation); ``tuned`` how it was tuned — the same grid, budget and pilot
    seeds as the method, or ``"none needed: …"`` with the reason. A ``reproduces`` row's controls all state both.
    ``weak`` is non-empty (the reason) for a control that fails by construction or equals the method at a
    degenerate setting: it may stay as an extra control, never as a row's only one.
    """

    label: str
    value: Any
    shown: str | None = None
    why: str = ""
    tuned: str = ""
    weak: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label.strip():
            raise ValueError(f"Invalid control label: {self.label!r} (must be a non-empty string)")
        for name in ("why", "tuned", "weak"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Invalid control {name}: {getattr(self, name)!r} (must be a string)")


@dataclass(frozen=True)
class Planted:
    """A ``differs`` row's positive control: the row's own measurement on an instance where the paper's effect is
    present by construction, at the paper's claimed size (or the smallest size the claim implies).

    ``effect`` says what was planted and at what size ("fresh curves compressed 2× in time — the paper's claimed
    speed-up"); ``value`` is what the row's test is applied to, and it must *fail* that test: the row would have
    seen the paper's effect had it been there. ``shown`` is optional evidence to display instead of ``value``.
    """

    label: str
    value: Any
    effect: str
    shown: str | None = None

    def __post_init__(self) -> None:
        for name in ("label", "effect"):
            v = getattr(self, name)
            if not isinstance(v, str) or not v.strip():
                raise ValueError(f"Invalid planted {name}: {v!r} (must be a non-empty string)")


@dataclass(frozen=True)
class Scan:
    """A regime scan behind a row: the row's measurement at each of ≥ 3 values of the regime parameter.

    ``parameter`` names it ("N", "parity dimension d", "ε"); ``values`` and ``measured`` are equally long (the
    measured value at each); ``effect`` optionally marks where the paper's effect appears (one bool per value).
    The values are pre-registered in the chapter's prose, before the results.
    """

    parameter: str
    values: tuple[Any, ...]
    measured: tuple[Any, ...]
    effect: tuple[bool, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.parameter, str) or not self.parameter.strip():
            raise ValueError(f"Invalid scan parameter: {self.parameter!r} (must be a non-empty string)")
        object.__setattr__(self, "values", tuple(self.values))
        object.__setattr__(self, "measured", tuple(self.measured))
        if self.effect is not None:
            object.__setattr__(self, "effect", tuple(bool(e) for e in self.effect))
        if len(self.values) != len(self.measured) or (self.effect is not None
                                                       and len(self.effect) != len(self.values)):
            raise ValueError(f"Invalid scan over {self.parameter!r}: {len(self.values)} values, "
                             f"{len(self.measured)} measurements (must be equally long)")

    def as_dict(self) -> dict[str, Any]:
        return {"parameter": self.parameter, "values": [fmt(x) for x in self.values],
                "measured": [fmt(x) for x in self.measured],
                "effect": None if self.effect is None else list(self.effect)}


@dataclass(frozen=True)
class PaperClaim:
    """One claim of the paper (abstract level unless ``where`` says otherwise).

    ``id`` is what a row's ``tests=`` names; ``where="abstract"`` exactly when the paper's abstract states it;
    ``quoted_only`` (with the reason in ``why`` and its class in ``reason_class``, one of
    :data:`REASON_CLASSES`) marks a claim the chapter states but does not test — the ledger lists it as quoted,
    with its reason class. ``regime`` names the parameter a claim about a regime is about (sizes, dimensions,
    noise, budgets): at least one row testing it carries a :class:`Scan` over ≥ 3 values
    (:func:`claim_violations`).
    """

    id: str
    text: str
    where: str = "abstract"
    source: str = "paper"
    quoted_only: bool = False
    why: str = ""
    reason_class: str = ""
    regime: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not re.fullmatch(r"[A-Za-z0-9_.\-]+", self.id):
            raise ValueError(f"Invalid claim id: {self.id!r} (letters, digits, '_', '.', '-')")
        if self.source not in PAPER_SOURCES:
            raise ValueError(f"Invalid source for paper claim {self.id!r}: {self.source!r} "
                             f"(must be one of {PAPER_SOURCES})")
        if self.quoted_only and not self.why.strip():
            raise ValueError(f"Paper claim {self.id!r} is quoted only: say why (why=...)")
        if self.quoted_only and self.reason_class not in REASON_CLASSES:
            raise ValueError(f"Paper claim {self.id!r} is quoted only: reason_class={self.reason_class!r} (must be "
                             f"one of {REASON_CLASSES})")
        if not self.quoted_only and self.reason_class:
            raise ValueError(f"Paper claim {self.id!r} is tested: reason_class={self.reason_class!r} is only for "
                             "quoted-only claims")
        if not isinstance(self.regime, str):
            raise TypeError(f"Invalid regime for paper claim {self.id!r}: {self.regime!r} (must be a string)")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Row:
    """One checked claim (``controls``: ``{"label", "measured", "passes", "why", "tuned", "weak"}`` per control;
    ``planted``: ``{"label", "measured", "effect", "passes"}`` for a ``differs`` row; ``untestable``: why a
    ``differs`` row could not plant the paper's effect — the ledger shows it as not testable here; ``scan``: the
    regime scan, :meth:`Scan.as_dict`)."""

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
    controls: tuple[dict[str, Any], ...] = ()
    basis: str = ""
    tests: str = ""
    reason: str = ""
    paper_passes: bool | None = None
    planted: dict[str, Any] | None = None
    untestable: str = ""
    scan: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["controls"] = [dict(c) for c in self.controls]
        return d


def rule_violations(row: Row | dict[str, Any]) -> list[str]:
    """The verdict rules, stated once, for a row or its JSON: an empty list when the row obeys them.

    1. ``kind`` and ``source`` are known; ``reproduces``/``differs`` only for a paper's claim (``paper`` or
       ``secondary``).
    2. A ``reproduces`` row names at least one control, every control fails the row's test (a row whose control
       passes must itself be failing, with the reason said), every control says why a sceptic would pick it and how
       it was tuned (``why=``, ``tuned=``), and at least one control is not ``weak`` (failing by construction or
       equal to the method at a degenerate setting).
    3. A ``differs`` row shows the paper's value as a value the row's test was applied to (a string is not tested,
       so it is refused), and that value fails the test; it carries a ``planted`` control — the measurement on an
       instance with the paper's effect planted at the paper's size — that fails the test too, or says why it
       cannot (``untestable=``: shown as "not testable here").
    4. A ``reproduces``/``differs`` row names the paper claim it tests (``tests=``).
    5. A row with a tolerance or bound says where it comes from (``basis`` with a prefix of :data:`TOL_BASES`).
    6. A regime scan has ≥ 3 distinct values of its parameter.
    """
    d = row.as_dict() if isinstance(row, Row) else dict(row)
    out: list[str] = []
    kind, source = d.get("kind"), d.get("source")
    name = d.get("claim", "?")
    if kind not in KINDS:
        out.append(f"{name!r}: unknown kind {kind!r}")
    if source not in SOURCES:
        out.append(f"{name!r}: unknown source {source!r}")
    if kind in ("reproduces", "differs") and source not in PAPER_SOURCES:
        out.append(f"{name!r}: a {kind!r} row must be a paper's claim (source 'paper' or 'secondary'), not "
                   f"{source!r} — a claim of our own is a 'consistency' row")
    controls = d.get("controls") or ()
    if kind == "reproduces":
        if not controls:
            out.append(f"{name!r}: a 'reproduces' row must name its control (control=Control(label, value))")
        for c in controls:
            if not (c.get("why") or "").strip() or not (c.get("tuned") or "").strip():
                out.append(f"{name!r}: control {c.get('label')!r} must say why a sceptic would pick it and how it "
                           "was tuned (Control(..., why=..., tuned=...))")
        if controls and all((c.get("weak") or "").strip() for c in controls):
            out.append(f"{name!r}: every control is weak (fails by construction or is the method at a degenerate "
                       "setting) — add the strongest natural alternative")
    for c in controls:
        if c.get("passes") and d.get("holds"):
            out.append(f"{name!r}: control {c.get('label')!r} passes the row's test, yet the row holds")
    if kind in ("reproduces", "differs") and not d.get("tests"):
        out.append(f"{name!r}: a {kind!r} row must say which paper claim it tests (tests='<PaperClaim id>')")
    if kind == "differs":
        if d.get("paper", "") == "":
            out.append(f"{name!r}: a 'differs' row must show the paper's value (paper=...)")
        elif d.get("paper_passes") is None:
            out.append(f"{name!r}: the paper's value {d.get('paper')!r} was not put through the row's test — give "
                       "it as a number (or the condition/object the test takes), and its wording as paper_shown=")
        if d.get("paper_passes") and d.get("holds"):
            out.append(f"{name!r}: the paper's value passes the row's test, yet the 'differs' row holds")
        planted, untestable = d.get("planted"), (d.get("untestable") or "").strip()
        if planted is None and not untestable:
            out.append(f"{name!r}: a 'differs' row must plant the paper's effect (planted=Planted(...)) or say why "
                       "it cannot (untestable=...)")
        if planted is not None and untestable:
            out.append(f"{name!r}: a 'differs' row is either planted or untestable, not both")
        if planted is not None and planted.get("passes") and d.get("holds"):
            out.append(f"{name!r}: the planted effect passes the row's test, yet the 'differs' row holds")
    elif d.get("planted") is not None or (d.get("untestable") or "").strip():
        out.append(f"{name!r}: planted=/untestable= belong to 'differs' rows only")
    scan = d.get("scan")
    if scan is not None and len({str(v) for v in scan.get("values", ())}) < MIN_SCAN:
        out.append(f"{name!r}: a regime scan needs ≥ {MIN_SCAN} distinct values of {scan.get('parameter')!r}, got "
                   f"{scan.get('values')}")
    tol = d.get("tolerance", "")
    if tol not in ("exact", "—"):
        basis = d.get("basis") or ""
        if basis.split(":", 1)[0].strip() not in TOL_BASES or not basis.split(":", 1)[-1].strip():
            out.append(f"{name!r}: tolerance {tol!r} needs its provenance (basis='model: …', 'pilot: …', "
                       f"'paper: …' or 'exact: …'), got {basis!r}")
    return out


def claim_violations(claims: Iterable[PaperClaim | dict[str, Any]],
                     rows: Iterable[Row | dict[str, Any]]) -> list[str]:
    """The chapter-level rules over a chapter's paper claims and all of its rows (builders or executed JSON).

    1. A claim that is not quoted only is tested by at least one ``reproduces``/``differs`` row; a quoted-only
       claim is tested by none, and has a reason class (:data:`REASON_CLASSES`).
    2. A claim about a regime (``regime=``) that is tested has at least one testing row with a :class:`Scan` of
       ≥ 3 values of that parameter.
    3. Every row's ``tests=`` names a declared claim.
    """
    cs = [c.as_dict() if isinstance(c, PaperClaim) else dict(c) for c in claims]
    rs = [r.as_dict() if isinstance(r, Row) else dict(r) for r in rows]
    ids = {c["id"] for c in cs}
    out: list[str] = []
    testing: dict[str, list[dict[str, Any]]] = {}
    for r in rs:
        t = r.get("tests") or ""
        if t and t not in ids:
            out.append(f"row {r.get('claim')!r} tests unknown paper claim {t!r}")
        if t and r.get("kind") in ("reproduces", "differs"):
            testing.setdefault(t, []).append(r)
    for c in cs:
        rows_c = testing.get(c["id"], [])
        if c.get("quoted_only"):
            if rows_c:
                out.append(f"claim {c['id']!r} is marked quoted only but {len(rows_c)} row(s) test it")
            if c.get("reason_class") not in REASON_CLASSES:
                out.append(f"claim {c['id']!r} is quoted only without a reason class ({REASON_CLASSES})")
            continue
        if not rows_c:
            out.append(f"claim {c['id']!r} is declared tested but no reproduces/differs row tests it — test it or "
                       "mark it quoted_only with its reason")
        if c.get("regime") and rows_c and not any(
                r.get("scan") and len({str(v) for v in r["scan"].get("values", ())}) >= MIN_SCAN for r in rows_c):
            out.append(f"claim {c['id']!r} is about a regime ({c['regime']}) but no row testing it scans ≥ "
                       f"{MIN_SCAN} values")
    return out


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

    Every recording method takes the keyword-only ``kind`` (one of :data:`KINDS`), ``source`` (one of
    :data:`SOURCES`), ``control=`` (a :class:`Control` or a sequence of them; required for ``reproduces``),
    ``basis=`` (the tolerance's provenance; required when the test has a tolerance or bound), ``tests=`` (the
    paper claim's id), ``paper=`` (the paper's value, put through the row's test; required for ``differs``) with
    ``paper_shown=`` (its wording), and for ``differs`` rows ``planted=`` (a :class:`Planted`) or ``untestable=``
    (why not); ``scan=`` (a :class:`Scan`) for a row over a regime.
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
        holds = bool(_safe(test, measured))
        reasons = []
        cdicts = []
        for c in controls:
            passes = bool(_safe(test, c.value))
            cdicts.append({"label": c.label, "measured": c.shown if c.shown is not None else fmt(c.value),
                           "passes": passes, "why": c.why, "tuned": c.tuned, "weak": c.weak})
            if passes:
                reasons.append(f"{CONTROL_PASSES}: {c.label} = {cdicts[-1]['measured']} also passes")
        paper_passes = None
        if paper is not None and not isinstance(paper, str):
            paper_passes = bool(_safe(test, paper))
            if kind == "differs" and paper_passes:
                reasons.append(f"{PAPER_PASSES} (paper {fmt(paper)})")
        if planted is not None and not isinstance(planted, Planted):
            raise TypeError(f"Invalid planted: {planted!r} (must be a theorybook.check.Planted)")
        if scan is not None and not isinstance(scan, Scan):
            raise TypeError(f"Invalid scan: {scan!r} (must be a theorybook.check.Scan)")
        if not isinstance(untestable, str):
            raise TypeError(f"Invalid untestable: {untestable!r} (must be a string)")
        pdict = None
        if planted is not None:
            p_passes = bool(_safe(test, planted.value))
            pdict = {"label": planted.label, "effect": planted.effect, "passes": p_passes,
                     "measured": planted.shown if planted.shown is not None else fmt(planted.value)}
            if p_passes:
                reasons.append(f"{PLANTED_PASSES}: {planted.label} = {pdict['measured']} passes")
        paper_text = "" if paper is None else (paper_shown if paper_shown is not None else fmt(paper))
        row = Row(claim, predicted, shown if shown is not None else (fmt(measured) if not isinstance(
            measured, str) else measured), tolerance, holds and not reasons, note, kind, source,
            paper_text, _number(measured) if not isinstance(measured, str) else None,
            tuple(cdicts), basis, tests, "; ".join(reasons), paper_passes, pdict, untestable,
            None if scan is None else scan.as_dict())
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
        """Rows per kind, plus ``"fails"``."""
        out = {k: sum(r.kind == k for r in self.rows) for k in KINDS}
        out["fails"] = len(self.failures)
        return out

    def status(self) -> str:
        """The one-line status that ends a chapter's verdict section."""
        c = self.counts()
        n_rep, n_dif, n_con = c["reproduces"], c["differs"], c["consistency"]
        head = (f"{n_rep} claim{'s' if n_rep != 1 else ''} reproduce{'s' if n_rep == 1 else ''} "
                f"(against {'its' if n_rep == 1 else 'their'} control{'s' if n_rep != 1 else ''}), "
                f"{n_dif} differ{'s' if n_dif == 1 else ''}, "
                f"{n_con} consistency check{'s' if n_con != 1 else ''}")
        return head + (" — all hold" if not c["fails"] else f" — {c['fails']} FAIL")

    @property
    def anchor(self) -> str:
        """HTML id of the rendered table (the claims ledger links to it)."""
        return "verdicts-" + _slug(self.title)

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "anchor": self.anchor, "status": self.status(), "counts": self.counts(),
                "rows": [r.as_dict() for r in self.rows], "claims": [c.as_dict() for c in self.claims]}

    _HEAD = ("claim", "source", "paper", "predicted", "measured", "control (must fail)", "tolerance", "holds?",
             "note")

    @staticmethod
    def _control_cell(r: Row) -> str:
        if not r.controls:
            return ""
        return "; ".join(f"{c['label']}: {c['measured']} ({'PASSES' if c['passes'] else 'fails'})"
                         for c in r.controls)

    def _cells(self, r: Row) -> tuple[str, ...]:
        tol = r.tolerance + (f" — {r.basis}" if r.basis else "")
        note = r.note + (f" [{r.reason}]" if r.reason else "")
        if r.planted:
            note += (f" [planted — {r.planted['label']}: {r.planted['measured']} "
                     f"({'PASSES' if r.planted['passes'] else 'caught'})]")
        if r.untestable:
            note += f" [not testable here: {r.untestable}]"
        return (r.claim + (f" [{r.tests}]" if r.tests else ""), r.source, r.paper, r.predicted, r.measured,
                self._control_cell(r), tol, "holds" if r.holds else "FAILS", note)

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
                f"claims hold</p>{render_rows([r.as_dict() for r in self.rows])}"
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

_COLS = ("claim", "measured · predicted", "control (must fail)", "holds?")
_STATE_STYLE = {True: "color:#1a7f37;font-weight:bold", False: "color:#b42318;font-weight:bold"}


def _nested(o: str, c: str, depth: int = 2) -> str:
    """A regex for text with balanced ``o``…``c`` pairs nested up to ``depth`` levels (no recursion in ``re``)."""
    inner = f"[^{re.escape(o + c)}]"
    for _ in range(depth):
        inner = f"(?:[^{re.escape(o + c)}]|{re.escape(o)}{inner}*{re.escape(c)})"
    return inner


# up to two levels of nesting inside the braces or parentheses: β₂^{k/(2(k−2))}, β₂^(−k/(2(k−2))), e^(t(−ln β₂))
_SUBSUP = re.compile(rf"([_^])(\{{({_nested('{', '}')}{{1,40}})\}}|\(({_nested('(', ')')}{{1,40}})\))")


def math_html(text: str) -> str:
    """Escape ``text`` for HTML and typeset its ASCII sub- and superscripts: ``x_{t+1}`` and ``x_(t+1)`` become
    x<sub>t+1</sub>, ``β₂^{−k/2}`` and ``e^(−t)`` become superscripts — so no verdict cell, ledger cell or claim
    shows raw braces.

    >>> math_html("x_(t+1)/x_t ≤ 2^{−j/4} & more")
    'x<sub>t+1</sub>/x_t ≤ 2<sup>−j/4</sup> &amp; more'
    >>> math_html("O(ρ^(1/(2p+1))/√T), β₂^{k/(2(k−2))}, β₂^(−k/(2(k−2)))")
    'O(ρ<sup>1/(2p+1)</sup>/√T), β₂<sup>k/(2(k−2))</sup>, β₂<sup>−k/(2(k−2))</sup>'
    """
    out, pos = [], 0
    for m in _SUBSUP.finditer(text):
        out.append(html.escape(text[pos:m.start()]))
        tag = "sub" if m.group(1) == "_" else "sup"
        out.append(f"<{tag}>{math_html(m.group(3) if m.group(3) is not None else m.group(4))}</{tag}>")
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


def _control_text(c: dict[str, Any]) -> str:
    return f"{c['label']}: {c['measured']} ({'PASSES' if c['passes'] else 'fails'})"


def _planted_text(p: dict[str, Any]) -> str:
    return f"planted — {p['label']}: {p['measured']} ({'PASSES: not seen' if p['passes'] else 'caught'})"


def _details(r: dict[str, Any]) -> str:
    """The disclosure under a row's claim: everything a reader needs to audit the row, one term per line."""
    esc = html.escape
    items: list[tuple[str, str]] = [("source", r.get("source", ""))]
    if r.get("tests"):
        items.append(("tests paper claim", r["tests"]))
    if r.get("paper"):
        items.append(("paper's value", r["paper"]))
    tol = r.get("tolerance", "")
    items.append(("tolerance", tol + (f" — {r['basis']}" if r.get("basis") else "")))
    for c in r.get("controls") or ():
        extra = "".join(f" · {k}: {c[k]}" for k in ("why", "tuned", "weak") if c.get(k))
        items.append(("control" + (" (weak)" if c.get("weak") else ""), _control_text(c) + extra))
    if r.get("planted"):
        items.append(("planted control", _planted_text(r["planted"]) + f" · effect: {r['planted']['effect']}"))
    if r.get("untestable"):
        items.append(("not testable here", r["untestable"]))
    sc = r.get("scan")
    if sc:
        pairs = ", ".join(f"{v} → {m}" for v, m in zip(sc["values"], sc["measured"], strict=False))
        items.append((f"scan over {sc['parameter']}", pairs))
    if r.get("note"):
        items.append(("note", r["note"]))
    if r.get("reason"):
        items.append(("why it fails", r["reason"]))
    body = "".join(f"<dt>{esc(k)}</dt><dd>{math_html(v)}</dd>" for k, v in items if v)
    return (f"<details class='verdict-more'><summary>details</summary><dl class='verdict-dl'>{body}</dl>"
            "</details>")


def render_rows(rows: Sequence[dict[str, Any]], *, row_class: str = "", control_class: str = "",
                open_groups: Sequence[str] = KINDS) -> str:
    """Rows (as JSON dicts) for reading: one line per row — the claim, measured against predicted (and the paper's
    value), the control's value (a ``differs`` row's planted control), holds — with the rest (source, tolerance
    and its basis, every control's why/tuned, the planted effect, the scan, the note) in a keyboard-operable
    ``<details>`` under the claim. Groups (reproduces · differs · consistency) are collapsible ``<details>``;
    ``open_groups`` start open. Four columns of fixed share, wrapping text: never wider than the text column.
    The claims ledger renders its rows with the same component (``row_class='ledger-row'``)."""
    esc = html.escape
    out = []
    for kind in KINDS:
        group = [r for r in rows if r.get("kind") == kind]
        if not group:
            continue
        n_ok = sum(bool(r.get("holds")) for r in group)
        head = "".join(f"<th scope='col'>{h}</th>" for h in _COLS)
        body = []
        for r in group:
            ok = bool(r.get("holds"))
            cls = "verdict-pass" if ok else "verdict-fail"
            measured = f"<span class='verdict-measured'>{math_html(str(r.get('measured', '')))}</span>"
            measured += f" <span class='verdict-vs'>vs</span> {math_html(str(r.get('predicted', '')))}"
            if r.get("paper"):
                measured += f"<br><span class='verdict-paper'>paper: {math_html(str(r['paper']))}</span>"
            if r.get("controls"):
                ctrl = "<br>".join(math_html(_control_text(c)) for c in r["controls"])
            elif r.get("planted"):
                ctrl = math_html(_planted_text(r["planted"]))
            elif r.get("untestable"):
                ctrl = "not testable here"
            else:
                ctrl = "—"
            if r.get("controls") and r.get("planted"):
                ctrl += "<br>" + math_html(_planted_text(r["planted"]))
            ccls = "verdict-control" + (f" {control_class}" if control_class else "")
            tests = f" <span class='verdict-tests'>[{esc(r['tests'])}]</span>" if r.get("tests") else ""
            body.append(
                f"<tr class='verdict-row {cls}{' ' + row_class if row_class else ''}' data-kind='{esc(kind)}'>"
                f"<td class='verdict-claim' data-label='claim'>{math_html(r.get('claim', ''))}{tests}{_details(r)}</td>"
                f"<td class='verdict-value' data-label='measured · predicted'>{measured}</td>"
                f"<td class='{ccls}' data-label='control'>{ctrl}</td>"
                f"<td class='verdict-holds' data-label='holds?'><span class='{cls}' style='{_STATE_STYLE[ok]}'>"
                f"{'holds' if ok else 'FAILS'}</span></td></tr>")
        opened = " open" if kind in open_groups else ""
        out.append(f"<details class='verdict-group verdict-group-{kind}'{opened}><summary>"
                   f"{esc(_GROUP_TITLE[kind])} ({len(group)}; {n_ok} hold)</summary>"
                   f"<table class='verdicts'><colgroup><col class='c-claim'><col class='c-value'>"
                   f"<col class='c-control'><col class='c-holds'></colgroup><thead><tr>{head}</tr></thead>"
                   f"<tbody>{''.join(body)}</tbody></table></details>")
    return "".join(out)


def _safe(test: Callable[[Any], bool], x: Any) -> bool:
    """A test applied to a value that may not be a number (a control of the wrong type never passes)."""
    try:
        return bool(test(x))
    except (TypeError, ValueError):
        return False
