"""The verdict table's rendering: one line per row (claim · measured against predicted · controls · outcome), the
rest in a keyboard-operable disclosure, grouped by outcome; the same component renders the claims ledger's rows.
:func:`bottom_line_html` renders a chapter's bottom line: its headline claim and the outcome of the row that
decides it."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

from .outcomes import claim_outcome, headline_claim, outcome_counts, row_outcome
from .rows import KINDS, OUTCOME_LABELS, OUTCOMES

__all__ = ["GROUP_TITLE", "bottom_line_html", "math_html", "outcome_badge", "render_rows"]

GROUP_TITLE = {
    "reproduces": "Reproduces the paper (the claim's test holds; every control fails it)",
    "not_specific": "Holds, not specific (the claim's test holds — and so does a named alternative)",
    "differs": "Differs from the paper (the paper's value fails the test; the paper's effect, planted in the "
               "method's own arm, is caught)",
    "inconclusive": "Inconclusive (the paper's effect is not seen — and a plant of it would not have been seen, or "
                    "cannot be made)",
    "consistency": "Consistency checks (our code, algebra and reconstructions; not evidence for the paper)",
}
_OUTCOME_CLASS = {"reproduces": "outcome-reproduces", "not_specific": "outcome-not-specific",
                  "differs": "outcome-differs", "inconclusive": "outcome-inconclusive",
                  "consistency": "outcome-consistency", "fails": "outcome-fails", "quoted": "outcome-quoted",
                  "untested": "outcome-untested"}

_COLS = ("claim", "measured · predicted", "controls · plant", "outcome")
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
    return f"{c['label']}: {c['measured']} ({'passes too' if c['passes'] else 'fails'})"


def _planted_text(p: dict[str, Any]) -> str:
    return f"planted — {p['label']}: {p['measured']} ({'missed: not seen' if p['passes'] else 'caught'})"


def outcome_badge(outcome: str, *, stands: bool = True) -> str:
    """An outcome as a coloured label (``stands=False``: the row fails as registered)."""
    label = OUTCOME_LABELS.get(outcome, outcome)
    if outcome == "consistency":
        label = "holds" if stands else "FAILS"
    elif not stands:
        label = "FAILS" + (f" (evidence: {label})" if outcome not in ("fails", "") else "")
    cls = _OUTCOME_CLASS.get(outcome if stands else "fails", "outcome-fails")
    return f"<span class='verdict-outcome {cls}'>{html.escape(label)}</span>"


def _details(r: dict[str, Any]) -> str:
    """The disclosure under a row's claim: everything a reader needs to audit the row, one term per line."""
    esc = html.escape
    items: list[tuple[str, str]] = [("source", r.get("source", ""))]
    kind = r.get("kind", "")
    if kind in OUTCOMES:
        items.append(("outcome", f"{OUTCOME_LABELS[row_outcome(r)]} (registered: {OUTCOME_LABELS[kind]})"))
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
        items.append(("no plant possible", r["untestable"]))
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
    value), the controls' values and the plant, the outcome (for a ``not_specific`` row: "but so does …") — with the
    rest (source, tolerance and its basis, every control's why/tuned, the planted effect, the scan, the note) in a
    keyboard-operable ``<details>`` under the claim. Groups (one per registered outcome, then consistency) are
    collapsible ``<details>``; ``open_groups`` start open. Four columns of fixed share, wrapping text: never wider
    than the text column. The claims ledger renders its rows with the same component (``row_class='ledger-row'``)."""
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
            parts = [math_html(_control_text(c)) for c in r.get("controls") or ()]
            if r.get("planted"):
                parts.append(math_html(_planted_text(r["planted"])))
            if r.get("untestable"):
                parts.append("no plant possible")
            ctrl = "<br>".join(parts) or "—"
            ccls = "verdict-control" + (f" {control_class}" if control_class else "")
            tests = f" <span class='verdict-tests'>[{esc(r['tests'])}]</span>" if r.get("tests") else ""
            outcome = row_outcome(r)
            badge = outcome_badge(outcome, stands=ok)
            passing = [c["label"] for c in r.get("controls") or () if c.get("passes")]
            if kind == "not_specific" and passing:
                badge += f"<br><span class='verdict-also'>but so does {math_html(', '.join(passing))}</span>"
            body.append(
                f"<tr class='verdict-row {cls}{' ' + row_class if row_class else ''}' data-kind='{esc(kind)}' "
                f"data-outcome='{esc(outcome)}'>"
                f"<td class='verdict-claim' data-label='claim'>{math_html(r.get('claim', ''))}{tests}{_details(r)}</td>"
                f"<td class='verdict-value' data-label='measured · predicted'>{measured}</td>"
                f"<td class='{ccls}' data-label='controls · plant'>{ctrl}</td>"
                f"<td class='verdict-holds' data-label='outcome'><span class='{cls}' style='{_STATE_STYLE[ok]}'>"
                f"{badge}</span></td></tr>")
        opened = " open" if kind in open_groups else ""
        out.append(f"<details class='verdict-group verdict-group-{kind}'{opened}><summary>"
                   f"{esc(GROUP_TITLE[kind])} ({len(group)}; {n_ok} stand)</summary>"
                   f"<table class='verdicts'><colgroup><col class='c-claim'><col class='c-value'>"
                   f"<col class='c-control'><col class='c-holds'></colgroup><thead><tr>{head}</tr></thead>"
                   f"<tbody>{''.join(body)}</tbody></table></details>")
    return "".join(out)


def _row_evidence(r: dict[str, Any]) -> str:
    """A row's evidence in one sentence: measured against predicted, and what fixes its outcome."""
    text = f"{r.get('claim', '')}: measured {r.get('measured', '')} against {r.get('predicted', '')}"
    if r.get("paper"):
        text += f" (paper: {r['paper']})"
    passing = [f"{c['label']} ({c['measured']})" for c in r.get("controls") or () if c.get("passes")]
    failing = [c["label"] for c in r.get("controls") or () if not c.get("passes")]
    out = row_outcome(r)
    if out == "not_specific" and passing:
        text += " — but so does " + ", ".join(passing)
    elif out == "reproduces" and failing:
        text += " — while " + ", ".join(failing) + (" fails" if len(failing) == 1 else " fail") + " the same test"
    elif r.get("planted"):
        p = r["planted"]
        text += (f" — the paper's effect planted in the method's own arm ({p['label']}: {p['measured']}) "
                 + ("is caught" if not p.get("passes") else "would not have been seen"))
    elif r.get("untestable"):
        text += f" — no plant possible: {r['untestable']}"
    return text + "."


def bottom_line_html(claims: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]], *,
                     href: str = "") -> str:
    """A chapter's bottom line: the paper's headline claim, the book's outcome for it and the row that decides it,
    then the chapter's claims counted by outcome. ``href`` links the deciding row's table."""
    esc = html.escape
    claim = headline_claim(claims)
    if claim is None:
        return ""
    outcome, row = claim_outcome(claim, rows)
    counts = outcome_counts(claims, rows)
    count_text = " · ".join(f"{n} {OUTCOME_LABELS[k]}" for k, n in counts.items() if n or k in OUTCOMES)
    if row is not None:
        why = math_html(_row_evidence(row))
    elif outcome == "quoted":
        why = (f"Only quoted here ({esc(claim.get('reason_class', ''))}): {math_html(claim.get('why', ''))}")
    else:
        why = "No row tests it."
    link = f" <a class='bottom-line-link' href='{esc(href)}'>The verdicts</a>." if href else ""
    return (f"<div class='bottom-line' data-outcome='{esc(outcome)}' data-claim='{esc(claim['id'])}'>"
            f"<p class='bottom-line-title'><strong>Bottom line</strong> — {outcome_badge(outcome)}</p>"
            f"<p class='bottom-line-claim'><em>The paper:</em> {math_html(claim['text'])} "
            f"<span class='verdict-tests'>[{esc(claim['id'])}]</span></p>"
            f"<p class='bottom-line-row'><em>Deciding row:</em> {why}{link}</p>"
            f"<p class='bottom-line-counts'>The chapter's paper claims: {esc(count_text)}.</p></div>")
