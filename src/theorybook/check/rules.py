"""The verdict rules, stated once: :func:`rule_violations` for a row, :func:`claim_violations` for a chapter's
paper claims and all of its rows. ``Verdicts`` applies them to every row it records; ``tests/test_verdict_rules.py``
re-applies them to every builder and to the executed ledger."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .rows import (
    CLAIM_KINDS,
    KINDS,
    MIN_SCAN,
    OTHERWISE_KINDS,
    OUTCOMES,
    PAPER_SOURCES,
    REASON_CLASSES,
    SOURCES,
    TOL_BASES,
    PaperClaim,
    Row,
)

__all__ = ["claim_violations", "rule_violations"]


def rule_violations(row: Row | dict[str, Any]) -> list[str]:
    """The verdict rules for one row (or its JSON): an empty list when the row obeys them.

    These are rules of *form*: whether the row is honest about what it tested. Whether the evidence gives the
    registered outcome is not a rule violation but a failing row (:func:`theorybook.check.outcomes.decide`).

    1. ``kind`` and ``source`` are known; the four outcomes only for a paper's claim (``paper`` or ``secondary``).
    2. A ``reproduces``/``not_specific`` row names at least one control; every control says why a sceptic would
       pick it and how it was tuned (``why=``, ``tuned=``); at least one control is not ``weak`` (failing by
       construction or equal to the method at a degenerate setting). A ``reproduces`` row that holds has no
       passing control; a ``not_specific`` row that holds has one (the alternative it names).
    3. A ``differs``/``inconclusive`` row shows the paper's value as a value the row's test was applied to (a
       string is not tested, so it is refused), and that value fails the test. A ``differs`` row carries a plant
       (``planted=``) of the paper's effect in the method's own arm; an ``inconclusive`` row a plant or the reason
       none is possible (``untestable=``), not both.
    4. A paper-claim row names the paper claim it tests (``tests=``).
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
    if kind in OUTCOMES and source not in PAPER_SOURCES:
        out.append(f"{name!r}: a {kind!r} row must be a paper's claim (source 'paper' or 'secondary'), not "
                   f"{source!r} — a claim of our own is a 'consistency' row")
    controls = d.get("controls") or ()
    holds = bool(d.get("holds"))
    if kind in CLAIM_KINDS:
        if not controls:
            out.append(f"{name!r}: a {kind!r} row must name its control (control=Control(label, value))")
        for c in controls:
            if not (c.get("why") or "").strip() or not (c.get("tuned") or "").strip():
                out.append(f"{name!r}: control {c.get('label')!r} must say why a sceptic would pick it and how it "
                           "was tuned (Control(..., why=..., tuned=...))")
        if controls and all((c.get("weak") or "").strip() for c in controls):
            out.append(f"{name!r}: every control is weak (fails by construction or is the method at a degenerate "
                       "setting) — add the strongest natural alternative")
        if holds and kind == "reproduces" and any(c.get("passes") for c in controls):
            out.append(f"{name!r}: a control passes the row's test, yet the row stands as 'reproduces'")
        if holds and kind == "not_specific" and not any(c.get("passes") for c in controls):
            out.append(f"{name!r}: a 'not_specific' row that holds must name the alternative that passes too")
    elif holds:
        for c in controls:
            if c.get("passes"):
                out.append(f"{name!r}: control {c.get('label')!r} passes the row's test, yet the row holds")
    if kind in OUTCOMES and not d.get("tests"):
        out.append(f"{name!r}: a {kind!r} row must say which paper claim it tests (tests='<PaperClaim id>')")
    planted, untestable = d.get("planted"), (d.get("untestable") or "").strip()
    if kind in OTHERWISE_KINDS:
        if d.get("paper", "") == "":
            out.append(f"{name!r}: a {kind!r} row must show the paper's value (paper=...)")
        elif d.get("paper_passes") is None:
            out.append(f"{name!r}: the paper's value {d.get('paper')!r} was not put through the row's test — give "
                       "it as a number (or the condition/object the test takes), and its wording as paper_shown=")
        if d.get("paper_passes") and holds:
            out.append(f"{name!r}: the paper's value passes the row's test, yet the {kind!r} row holds")
        if kind == "differs" and planted is None:
            out.append(f"{name!r}: a 'differs' row must plant the paper's effect in the method's own arm "
                       "(planted=Planted(...)); without a plant it is 'inconclusive' (untestable=...)")
        if kind == "inconclusive" and planted is None and not untestable:
            out.append(f"{name!r}: an 'inconclusive' row carries the plant that was missed (planted=...) or says "
                       "why none is possible (untestable=...)")
        if planted is not None and untestable:
            out.append(f"{name!r}: a row is either planted or untestable, not both")
        if holds and kind == "differs" and planted is not None and planted.get("passes"):
            out.append(f"{name!r}: the planted effect passes the row's test, yet the 'differs' row holds")
    elif planted is not None or untestable:
        out.append(f"{name!r}: planted=/untestable= belong to 'differs'/'inconclusive' rows only")
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

    1. A claim that is not quoted only is tested by at least one paper-claim row; a quoted-only claim is tested by
       none, and has a reason class (:data:`REASON_CLASSES`).
    2. A claim about a regime (``regime=``) that is tested has at least one testing row with a :class:`Scan` of
       ≥ 3 values of that parameter.
    3. Every row's ``tests=`` names a declared claim.
    4. At most one claim is the headline.
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
        if t and r.get("kind") in OUTCOMES:
            testing.setdefault(t, []).append(r)
    heads = [c["id"] for c in cs if c.get("headline")]
    if len(heads) > 1:
        out.append(f"claims {heads} are all marked headline — a chapter has one headline claim")
    for c in cs:
        rows_c = testing.get(c["id"], [])
        if c.get("quoted_only"):
            if rows_c:
                out.append(f"claim {c['id']!r} is marked quoted only but {len(rows_c)} row(s) test it")
            if c.get("reason_class") not in REASON_CLASSES:
                out.append(f"claim {c['id']!r} is quoted only without a reason class ({REASON_CLASSES})")
            continue
        if not rows_c:
            out.append(f"claim {c['id']!r} is declared tested but no paper-claim row tests it — test it or mark it "
                       "quoted_only with its reason")
        if c.get("regime") and rows_c and not any(
                r.get("scan") and len({str(v) for v in r["scan"].get("values", ())}) >= MIN_SCAN for r in rows_c):
            out.append(f"claim {c['id']!r} is about a regime ({c['regime']}) but no row testing it scans ≥ "
                       f"{MIN_SCAN} values")
    return out
