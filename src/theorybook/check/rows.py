"""The pieces of a verdict row: the row types (:class:`Control`, :class:`Planted`, :class:`Scan`,
:class:`PaperClaim`, :class:`Row`), the vocabularies (kinds, outcomes, sources, tolerance bases, reason classes) and
the number formatting every table shares."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from numbers import Real
from statistics import NormalDist
from typing import Any

OUTCOMES = ("reproduces", "not_specific", "differs", "inconclusive")
"""The four outcomes of a row on a paper's claim, computed from its evidence (:mod:`theorybook.check.outcomes`):
the claim's test holds and every control fails it; it holds and so does a named alternative; the paper's value fails
the test and a plant of the paper's effect is caught; the effect is not seen and a plant would not have been seen
either (or cannot be planted)."""
CLAIM_KINDS = ("reproduces", "not_specific")
"""Rows whose test is the claim's own test (it must hold)."""
OTHERWISE_KINDS = ("differs", "inconclusive")
"""Rows whose test is what we measure instead of the paper's effect (the paper's value must fail it)."""
PAPER_KINDS = OUTCOMES
KINDS = (*OUTCOMES, "consistency")
OUTCOME_LABELS = {"reproduces": "reproduces", "not_specific": "holds, not specific", "differs": "differs",
                  "inconclusive": "inconclusive", "consistency": "consistency", "fails": "FAILS",
                  "quoted": "quoted only", "untested": "not tested"}
SOURCES = ("paper", "secondary", "derived", "reconstruction")
PAPER_SOURCES = ("paper", "secondary")
TOL_BASES = ("model", "pilot", "paper", "exact")
PILOT_SEEDS = range(9001, 9201)
"""Seeds reserved for pilot runs that set a tolerance: disjoint from the robustness seeds (7001–7040) and from
every chapter's ``CHAPTER_SEEDS`` (``tests/test_verdict_rules.py`` checks both)."""
MIME = "application/vnd.theorybook.verdicts+json"

CONTROL_PASSES = "cannot tell the claim from its control"
OUTCOME_CHANGED = "the computed outcome differs from the registered one"
CLAIM_FAILS = "the claim's own test fails"
OTHERWISE_FAILS = "what we measured instead no longer holds: the row's test fails"
PAPER_PASSES = "the paper's value passes this row's test — not a difference"
PLANTED_PASSES = "the planted effect passes this row's test — the experiment could not have seen the paper's effect"
MIN_SCAN = 3
REASON_CLASSES = ("language model", "paper-scale GPU", "data not shippable", "paper text unread",
                  "no measurable consequence", "underpowered here")
"""Why a paper claim is only quoted: it needs a language model, paper-scale GPU training, a data set that cannot be
shipped, the part of the paper that makes it measurable (a construction, a bound's constants, a convention) could
not be read, it is theory without a measurable consequence of its own here — an identity, a definition, a
property true by construction — or a test that tells it was built and piloted but needs more runs than a chapter
can afford to hold at the book's false-alarm level (its ``why`` gives the pilot's numbers)
(:attr:`PaperClaim.reason_class`)."""



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
    """A ``differs``/``inconclusive`` row's positive control: the row's own measurement on the method's own arm
    with the paper's effect planted at the paper's claimed size (or the smallest size the claim implies).

    ``effect`` says what was planted and at what size ("the method's own curves compressed 2× in time — the paper's
    claimed speed-up"); ``value`` is what the row's test is applied to. When it *fails* the test the plant is
    caught — the experiment could have seen the paper's effect, and the row's outcome is ``differs``; when it
    passes, the plant is missed and the outcome is ``inconclusive``. ``shown`` is optional evidence to display
    instead of ``value``.
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
    (:func:`claim_violations`). ``headline`` marks the paper's headline claim (from the abstract): the chapter's
    bottom line names it with the book's outcome for it (at most one per chapter; without one, the first
    abstract-level claim is the headline).
    """

    id: str
    text: str
    where: str = "abstract"
    source: str = "paper"
    quoted_only: bool = False
    why: str = ""
    reason_class: str = ""
    regime: str = ""
    headline: bool = False

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
        if not isinstance(self.headline, bool):
            raise TypeError(f"Invalid headline for paper claim {self.id!r}: {self.headline!r} (must be a bool)")
        if self.headline and self.where != "abstract":
            raise ValueError(f"Paper claim {self.id!r}: the headline claim must come from the abstract "
                             f"(where={self.where!r})")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Row:
    """One checked claim.

    ``kind`` is the registered outcome (one of :data:`KINDS`); ``outcome`` the one its evidence gives
    (:func:`theorybook.check.outcomes.decide`: one of :data:`OUTCOMES`, ``"consistency"`` or ``"fails"``);
    ``test_holds`` whether the row's own test holds on the measurement; ``holds`` whether the row stands as
    registered (outcome = kind, nothing malformed) — a row that does not raises when the table closes.
    ``controls``: ``{"label", "measured", "passes", "why", "tuned", "weak"}`` per control; ``planted``:
    ``{"label", "measured", "effect", "passes"}``; ``untestable``: why the paper's effect cannot be planted;
    ``scan``: the regime scan, :meth:`Scan.as_dict`."""

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
    outcome: str = ""
    test_holds: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["controls"] = [dict(c) for c in self.controls]
        return d

