"""The outcome logic: what a row's evidence says, and what a paper claim's rows say together.

A row on a paper's claim has one of four outcomes (:data:`~theorybook.check.rows.OUTCOMES`), computed from its
evidence — never chosen:

==================== ================================ =========================== ====================================
outcome              the row's test                    controls (alternatives)     plant of the paper's effect
==================== ================================ =========================== ====================================
reproduces           the claim's test holds            every control fails it      —
holds, not specific  the claim's test holds            one passes too (named)      —
differs              what we measure instead holds     —                           caught by the same test
                     (the paper's value fails it)
inconclusive         what we measure instead holds     —                           missed, or cannot be planted
==================== ================================ =========================== ====================================

A row registers the outcome it expects (its ``kind``). When the computed outcome differs, or the claim's own
numbers fail (a ``reproduces``/``not_specific`` row whose test fails; a ``differs``/``inconclusive`` row whose
"measured instead" no longer holds), the row fails and the chapter raises — so a change in code or data still breaks
the build, while a strong control that passes, or a plant that is missed, costs only an honest change of the
registered outcome.

A paper claim tested by several rows takes the outcome of its least favourable row (:data:`SEVERITY`): a claim
with a ``differs`` row differs, whatever else reproduces; it reproduces only when all of its rows reproduce. That
row is the one that decides it (:func:`claim_outcome`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .rows import (
    CLAIM_FAILS,
    CLAIM_KINDS,
    CONTROL_PASSES,
    OTHERWISE_FAILS,
    OTHERWISE_KINDS,
    OUTCOME_CHANGED,
    OUTCOME_LABELS,
    OUTCOMES,
    PAPER_PASSES,
    PLANTED_PASSES,
    PaperClaim,
    Row,
)

__all__ = ["SEVERITY", "claim_outcome", "decide", "headline_claim", "outcome_counts", "row_outcome"]

SEVERITY = ("fails", "differs", "inconclusive", "not_specific", "reproduces")
"""Least to most favourable: a claim's outcome is that of its first row in this order."""


def decide(kind: str, test_holds: bool, controls: Sequence[dict[str, Any]], paper_passes: bool | None,
           planted: dict[str, Any] | None, untestable: str) -> tuple[str, list[str]]:
    """The outcome a row's evidence gives, and the reasons it does not stand as registered (empty when it does).

    ``kind`` is the registered outcome; ``test_holds`` the row's own test on the measurement; ``controls`` the
    controls as row dicts (``passes``: the row's test holds on the control); ``paper_passes`` the row's test on
    the paper's value (``None`` when not given); ``planted`` the plant (``passes``: the test holds on it, i.e. the
    plant is *missed*); ``untestable`` the reason no plant is possible.

    >>> decide("reproduces", True, [{"label": "SGD", "measured": "0.1", "passes": False}], None, None, "")
    ('reproduces', [])
    >>> decide("reproduces", True, [{"label": "SGD", "measured": "0.9", "passes": True}], None, None, "")[0]
    'not_specific'
    >>> decide("differs", True, [], False, {"label": "2×", "measured": "3", "passes": True}, "")[0]
    'inconclusive'
    """
    reasons: list[str] = []
    passing = [c for c in controls if c.get("passes")]
    if kind in CLAIM_KINDS:
        if not test_holds:
            outcome = "fails"
            reasons.append(CLAIM_FAILS)
        else:
            outcome = "not_specific" if passing else "reproduces"
    elif kind in OTHERWISE_KINDS:
        if paper_passes:
            reasons.append(PAPER_PASSES)
        reasons += _passing(passing)
        if not test_holds:
            outcome = "fails"
            reasons.append(OTHERWISE_FAILS)
        elif planted is not None and not planted.get("passes"):
            outcome = "differs"
        else:
            outcome = "inconclusive"
            if planted is not None and kind == "differs":
                reasons.append(f"{PLANTED_PASSES}: {planted['label']} = {planted['measured']} passes")
    else:  # consistency: a control, if any, must fail the test
        outcome = "consistency"
        reasons += _passing(passing)
        if not test_holds:
            reasons.append("the row's test fails")
    if outcome not in ("fails", "consistency") and outcome != kind:
        extra = ""
        if outcome == "not_specific":
            extra = (f" — {CONTROL_PASSES}: but so does "
                     + ", ".join(f"{c['label']} ({c['measured']})" for c in passing))
        reasons.append(f"{OUTCOME_CHANGED}: registered {OUTCOME_LABELS[kind]!r}, the evidence gives "
                       f"{OUTCOME_LABELS[outcome]!r}{extra}")
    return outcome, reasons


def _passing(controls: Sequence[dict[str, Any]]) -> list[str]:
    """One reason per control that passes a test it should fail."""
    return [f"{CONTROL_PASSES}: {c['label']} = {c['measured']} also passes" for c in controls]


def row_outcome(row: Row | dict[str, Any]) -> str:
    """A row's computed outcome (rows recorded before outcomes existed: from their kind and whether they held)."""
    d = row.as_dict() if isinstance(row, Row) else row
    if d.get("outcome"):
        return d["outcome"]
    kind = d.get("kind")
    if kind == "consistency":
        return "consistency"
    if not d.get("holds"):
        return "fails"
    if kind == "differs" and (d.get("untestable") or "").strip():
        return "inconclusive"
    return kind


def claim_outcome(claim: PaperClaim | dict[str, Any], rows: Iterable[Row | dict[str, Any]]
                  ) -> tuple[str, dict[str, Any] | None]:
    """A paper claim's outcome and the row that decides it: ``"quoted"`` for a quoted-only claim, ``"untested"``
    when no paper-claim row tests it, else the outcome of its least favourable testing row (:data:`SEVERITY`)."""
    c = claim.as_dict() if isinstance(claim, PaperClaim) else claim
    if c.get("quoted_only"):
        return "quoted", None
    mine = [r.as_dict() if isinstance(r, Row) else r for r in rows]
    mine = [r for r in mine if r.get("tests") == c["id"] and r.get("kind") in OUTCOMES]
    if not mine:
        return "untested", None
    decisive = min(mine, key=lambda r: SEVERITY.index(row_outcome(r)))
    return row_outcome(decisive), decisive


def headline_claim(claims: Sequence[PaperClaim | dict[str, Any]]) -> dict[str, Any] | None:
    """The chapter's headline claim: the one marked ``headline``, else the first abstract-level claim."""
    cs = [c.as_dict() if isinstance(c, PaperClaim) else c for c in claims]
    return (next((c for c in cs if c.get("headline")), None)
            or next((c for c in cs if c.get("where") == "abstract"), None))


def outcome_counts(claims: Sequence[PaperClaim | dict[str, Any]], rows: Sequence[Row | dict[str, Any]]
                   ) -> dict[str, int]:
    """Claims per outcome: the four outcomes, ``quoted`` (only quoted), ``untested`` and ``fails``."""
    out = {k: 0 for k in (*OUTCOMES, "quoted", "untested", "fails")}
    for c in claims:
        out[claim_outcome(c, rows)[0]] += 1
    return out
