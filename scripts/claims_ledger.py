"""Sphinx extension: the claims ledger, built from every chapter's executed verdict tables.

Each ``theorybook.check.Verdicts`` table renders as HTML that carries its rows as JSON
(``<script type="application/json" class="theorybook-verdicts">``). When a chapter has been executed and read,
this extension finds those payloads in the chapter's raw-HTML output nodes and keeps them in the build
environment. The ``{claims-ledger}`` directive (in ``book/appendix_ledger.md``) is replaced, once every document has
been read, by the ledger: the 19 bottom lines first (each chapter's headline claim and the outcome of the row that
decides it), the paper claims counted by outcome (reproduces · holds, not specific · differs · inconclusive ·
quoted only), every row across the book that is not a plain reproduction (with its reason), then per chapter its
paper claims and every row, with a link to the chapter's verdict table. ``{book-overview}`` (the front page) leads
with the same bottom lines and counts; ``{bottom-line}`` (under each chapter's title) shows that chapter's. Nothing
in it is written by hand. The same data is written to ``_build/html/ledger.json`` (an ``outcome`` per row, totals
by outcome), which ``tests/test_verdict_rules.py`` checks against the verdict rules.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from theorybook.check import (  # noqa: E402 - scripts/ is on sys.path next to the installed package
    KINDS,
    OUTCOME_LABELS,
    OUTCOMES,
    REASON_CLASSES,
    bottom_line_html,
    claim_outcome,
    headline_claim,
    math_html,
    outcome_badge,
    render_rows,
    row_outcome,
)

CLAIM_STATES = (*OUTCOMES, "quoted", "untested", "fails")
_PAYLOAD = re.compile(
    r"<script type=['\"]application/json['\"] class=['\"]theorybook-verdicts['\"]>(.*?)</script>", re.S)


class ledger_placeholder(nodes.General, nodes.Element):
    """Replaced by the ledger's HTML once all chapters have been read."""


class overview_placeholder(nodes.General, nodes.Element):
    """Replaced by the front page's overview (ledger headline + one card per chapter)."""


class bottom_line_placeholder(nodes.General, nodes.Element):
    """Replaced by the chapter's bottom line (its headline claim and the outcome of the row that decides it)."""


class BottomLine(Directive):
    """``{bottom-line}``: under a chapter's title, its headline claim and the book's outcome for it."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        return [bottom_line_placeholder()]


class BookOverview(Directive):
    """``{book-overview}``: the ledger's headline and a card per chapter (headline figure, verdict status)."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        env = self.state.document.settings.env
        env.theorybook_ledger_docs = getattr(env, "theorybook_ledger_docs", set()) | {env.docname}
        return [overview_placeholder()]


class ClaimsLedger(Directive):
    has_content = False

    def run(self) -> list[nodes.Node]:
        env = self.state.document.settings.env
        env.theorybook_ledger_docs = getattr(env, "theorybook_ledger_docs", set()) | {env.docname}
        return [ledger_placeholder()]


def _store(env: BuildEnvironment) -> dict[str, Any]:
    if not hasattr(env, "theorybook_verdicts"):
        env.theorybook_verdicts = {}
    return env.theorybook_verdicts


def _doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    env = app.env
    tables = []
    for raw in doctree.findall(nodes.raw):
        if "html" not in raw.get("format", ""):
            continue
        for m in _PAYLOAD.finditer(raw.astext()):
            tables.append(json.loads(m.group(1).replace("<\\/", "</")))
    store = _store(env)
    if tables:
        title = next(iter(doctree.findall(nodes.title)), None)
        store[env.docname] = {"title": title.astext() if title else env.docname, "tables": tables}
    else:
        store.pop(env.docname, None)


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    _store(env).pop(docname, None)


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    _store(env).update(getattr(other, "theorybook_verdicts", {}))
    env.theorybook_ledger_docs = getattr(env, "theorybook_ledger_docs", set()) | getattr(
        other, "theorybook_ledger_docs", set())


def _outdated(app: Sphinx, env: BuildEnvironment, added, changed, removed) -> list[str]:
    # The ledger depends on every chapter: rebuild it whenever anything is rebuilt.
    return sorted(getattr(env, "theorybook_ledger_docs", set()))


def _counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Rows per registered kind, rows that do not stand (``fails``) and all rows."""
    c = {k: sum(r["kind"] == k for r in rows) for k in KINDS}
    c["fails"] = sum(not r["holds"] for r in rows)
    c["rows"] = len(rows)
    return c


def _chapter_order(app: Sphinx, store: dict[str, Any]) -> list[str]:
    order = []
    try:
        order = [d for d in app.env.found_docs if d in store]
        toc = getattr(app.env, "toctree_includes", {})
        seq: list[str] = []

        def walk(doc: str) -> None:
            for child in toc.get(doc, []):
                if child not in seq:
                    seq.append(child)
                    walk(child)

        walk(app.config.root_doc)
        order = [d for d in seq if d in store] + sorted(d for d in store if d not in seq)
    except Exception:  # noqa: BLE001 - ordering is cosmetic; fall back to names
        order = sorted(store)
    return order


def _claims(tables: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chapter's paper claims (from whichever of its tables carries them), in declared order."""
    seen: dict[str, dict[str, Any]] = {}
    for t in tables:
        for c in t.get("claims", ()):
            seen.setdefault(c["id"], c)
    return list(seen.values())




def _claim_status(tables: list[dict[str, Any]]) -> dict[str, Any]:
    """Each paper claim's outcome (:func:`theorybook.check.claim_outcome`: its least favourable row, or quoted
    only, or untested), the chapter's claims grouped by outcome, and its bottom line (the headline claim)."""
    rows = [r for t in tables for r in t["rows"]]
    claims = _claims(tables)
    out: dict[str, Any] = {"claims": claims, **{k: [] for k in CLAIM_STATES}, "claim_outcome": {}}
    for c in claims:
        state, row = claim_outcome(c, rows)
        out[state].append(c["id"])
        out["claim_outcome"][c["id"]] = {"outcome": state, "row": row["claim"] if row else None}
    by_id = {c["id"]: c for c in claims}
    out["quoted_by_class"] = {k: sum(by_id[i].get("reason_class") == k for i in out["quoted"])
                              for k in REASON_CLASSES}
    abstract = [c for c in claims if c.get("where") == "abstract"]
    out["abstract"] = len(abstract)
    out["abstract_tested"] = sum(out["claim_outcome"][c["id"]]["outcome"] in OUTCOMES for c in abstract)
    out["abstract_reproduced"] = sum(out["claim_outcome"][c["id"]]["outcome"] == "reproduces" for c in abstract)
    head = headline_claim(claims)
    if head is not None:
        state, row = claim_outcome(head, rows)
        table = next((t for t in tables if row is not None and row in t["rows"]), tables[0] if tables else None)
        out["bottom_line"] = {"claim": head["id"], "text": head["text"], "outcome": state,
                              "row": row["claim"] if row else None, "anchor": table["anchor"] if table else ""}
    else:
        out["bottom_line"] = None
    return out


def ledger_data(app: Sphinx) -> dict[str, Any]:
    """The ledger as data (also written to ``_build/html/ledger.json`` for the rules test): per chapter its tables
    (every row with its computed ``outcome``), its claims' outcomes and bottom line; totals by outcome."""
    store = _store(app.env)
    docs = _chapter_order(app, store)
    chapters = []
    for d in docs:
        tables = store[d]["tables"]
        for t in tables:
            for r in t["rows"]:
                r["outcome"] = row_outcome(r)
        rows = [r for t in tables for r in t["rows"]]
        chapters.append({"doc": d, "title": store[d]["title"], "counts": _counts(rows), "tables": tables,
                         **_claim_status(tables)})
    total = _counts([r for ch in chapters for r in (r for t in ch["tables"] for r in t["rows"])])
    total["claims"] = sum(len(ch["claims"]) for ch in chapters)
    total["claims_by_outcome"] = {k: sum(len(ch[k]) for ch in chapters) for k in CLAIM_STATES}
    total["rows_by_outcome"] = {k: sum(r["outcome"] == k for ch in chapters for t in ch["tables"]
                                       for r in t["rows"] if r["kind"] in OUTCOMES)
                                for k in (*OUTCOMES, "fails")}
    total["bottom_lines_by_outcome"] = {k: sum(1 for ch in chapters if ch["bottom_line"]
                                               and ch["bottom_line"]["outcome"] == k) for k in CLAIM_STATES}
    total["quoted_by_class"] = {k: sum(ch["quoted_by_class"][k] for ch in chapters) for k in REASON_CLASSES}
    for key in ("abstract", "abstract_tested", "abstract_reproduced"):
        total[key] = sum(ch[key] for ch in chapters)
    return {"chapters": chapters, "totals": total}


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _quoted_text(by_class: dict[str, int]) -> str:
    parts = [f"{n} {'need' if n != 1 else 'needs'} a {k}" if k in ("language model",) else
             f"{n} {'need' if n != 1 else 'needs'} {k} training" if k == "paper-scale GPU" else
             f"{n}: {k}" for k, n in by_class.items() if n]
    return "; ".join(parts)


def _headline_parts(total: dict[str, Any], n_chapters: int) -> list[str]:
    """The headline, one clause a line: the chapters' bottom lines by outcome, the paper claims by outcome, then
    the rows (paper-claim rows by outcome; our own consistency checks counted apart)."""
    bl, cl, rw = total["bottom_lines_by_outcome"], total["claims_by_outcome"], total["rows_by_outcome"]

    def by(counts: dict[str, int], keys: tuple[str, ...]) -> str:
        return " · ".join(f"{counts[k]} {OUTCOME_LABELS[k]}" for k in keys if counts[k] or k in OUTCOMES)

    quoted = _quoted_text(total["quoted_by_class"])
    return [
        f"The {n_chapters} chapters' bottom lines (each paper's headline claim): "
        f"{by(bl, (*OUTCOMES, 'quoted', 'untested', 'fails'))}.",
        f"All {total['claims']} paper claims the chapters declare: {by(cl, (*OUTCOMES, 'untested', 'fails'))} · "
        f"{cl['quoted']} quoted only" + (f" ({quoted})" if quoted else "") + ".",
        f"Verdict rows on paper claims: {by(rw, (*OUTCOMES, 'fails'))}; {total['consistency']} consistency checks "
        f"of our own code, algebra and reconstructions, counted apart. "
        f"{total['rows'] - total['fails']} of {total['rows']} rows stand as registered.",
    ]


def _anchor(doc: str) -> str:
    return "ledger-" + re.sub(r"[^a-z0-9]+", "-", doc.lower())


def _bottom_lines_table(app: Sphinx, fromdoc: str, chapters: list[dict[str, Any]]) -> str:
    """One line per chapter: the paper's headline claim, the outcome, the row that decides it."""
    esc = html.escape
    out = ["<table class='ledger-bottom-lines'><thead><tr><th>chapter</th><th>the paper's headline claim</th>"
           "<th>outcome</th><th>deciding row</th></tr></thead><tbody>"]
    for ch in chapters:
        b = ch.get("bottom_line")
        if not b:
            continue
        uri = app.builder.get_relative_uri(fromdoc, ch["doc"])
        row = (f"<a href='{esc(uri)}#{esc(b['anchor'])}'>{math_html(b['row'])}</a>" if b["row"] else "—")
        out.append(f"<tr class='ledger-bottom-line' data-outcome='{esc(b['outcome'])}'>"
                   f"<td data-label='chapter'><a href='{esc(uri)}'>{esc(ch['title'])}</a></td>"
                   f"<td data-label='claim'>{math_html(b['text'])} <span class='verdict-tests'>[{esc(b['claim'])}]"
                   f"</span></td><td data-label='outcome'>{outcome_badge(b['outcome'])}</td>"
                   f"<td data-label='deciding row'>{row}</td></tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _across_the_book(app: Sphinx, fromdoc: str, chapters: list[dict[str, Any]]) -> str:
    """Every paper-claim row of the book that is not a plain reproduction — holds, not specific · differs ·
    inconclusive — with the chapter, the paper's value, ours and the reason, filterable by outcome."""
    esc = html.escape
    rows = []
    for ch in chapters:
        uri = app.builder.get_relative_uri(fromdoc, ch["doc"])
        for t in ch["tables"]:
            for r in t["rows"]:
                if r["kind"] not in ("not_specific", "differs", "inconclusive"):
                    continue
                if r["outcome"] == "not_specific":
                    why = "but so does " + ", ".join(f"{c['label']} ({c['measured']})" for c in r["controls"]
                                                     if c.get("passes"))
                elif r.get("untestable"):
                    why = "no plant possible: " + r["untestable"]
                elif r.get("planted"):
                    p = r["planted"]
                    why = f"planted {p['label']}: {p['measured']} ({'caught' if not p['passes'] else 'missed'})"
                else:
                    why = ""
                rows.append(
                    f"<tr class='ledger-across' data-outcome='{esc(r['outcome'])}'>"
                    f"<td data-label='outcome'>{outcome_badge(r['outcome'], stands=bool(r['holds']))}</td>"
                    f"<td data-label='claim'><a href='{esc(uri)}#{esc(t['anchor'])}'>{math_html(r['claim'])}</a> "
                    f"<span class='verdict-tests'>[{esc(r.get('tests', ''))}]</span></td>"
                    f"<td data-label='chapter'>{esc(ch['title'])}</td>"
                    f"<td data-label='paper · ours'>{math_html(r.get('paper') or '—')} · "
                    f"{math_html(str(r['measured']))}</td><td data-label='why'>{math_html(why)}</td></tr>")
    n = {k: sum(f"data-outcome='{k}'" in x for x in rows) for k in ("not_specific", "differs", "inconclusive")}
    filt = "".join(f"<label><input type='checkbox' class='ledger-filter' value='{k}' checked> "
                   f"{esc(OUTCOME_LABELS[k])} ({n[k]})</label> " for k in n)
    script = ("<script>document.addEventListener('change',function(e){if(!e.target.classList.contains("
              "'ledger-filter'))return;var on=new Set(Array.from(document.querySelectorAll('.ledger-filter:checked'))"
              ".map(function(x){return x.value}));document.querySelectorAll('tr.ledger-across').forEach(function(r)"
              "{r.hidden=!on.has(r.dataset.outcome)})});</script>")
    return (f"<h2 id='ledger-across-the-book'>Across the book: what holds but is not specific, what differs, "
            f"what is inconclusive</h2><p class='ledger-filters'>{filt}</p>"
            "<table class='ledger-across-table'><thead><tr><th>outcome</th><th>row</th><th>chapter</th>"
            "<th>paper · ours</th><th>why</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>" + script)


def _render(app: Sphinx, fromdoc: str) -> str:
    data = ledger_data(app)
    total = data["totals"]
    esc = html.escape
    out = ["<div class='claims-ledger'>"]
    cl = total["claims_by_outcome"]
    out.append(
        f"<div class='ledger-totals' data-rows='{total['rows']}' data-fails='{total['fails']}' "
        f"data-chapters='{len(data['chapters'])}' "
        + "".join(f"data-{k.replace('_', '-')}='{total[k]}' " for k in KINDS)
        + "".join(f"data-claims-{k.replace('_', '-')}='{cl[k]}' " for k in CLAIM_STATES) + ">"
        + "".join(f"<p>{esc(t)}</p>" for t in _headline_parts(total, len(data["chapters"]))) + "</div>")
    out.append("<h2 id='ledger-bottom-lines'>The bottom lines</h2>")
    out.append(_bottom_lines_table(app, fromdoc, data["chapters"]))
    out.append(_across_the_book(app, fromdoc, data["chapters"]))
    cols = ("chapter", *(OUTCOME_LABELS[k] for k in OUTCOMES), "only quoted (reason)", "abstract claims tested",
            "our consistency checks", "rows as registered")
    out.append("<h2 id='ledger-by-chapter'>By chapter</h2><table class='ledger-summary'><thead><tr>"
               + "".join(f"<th>{h}</th>" for h in cols) + "</tr></thead><tbody>")
    by_id = {}
    for ch in data["chapters"]:
        by_id.update({(ch["doc"], c["id"]): c for c in ch["claims"]})
    for ch in data["chapters"]:
        c = ch["counts"]
        quoted = ", ".join(f"{i} ({by_id[(ch['doc'], i)].get('reason_class') or '?'})" for i in ch["quoted"])
        quoted += (", " if quoted and ch["untested"] else "") + ", ".join(f"{i} (untested)" for i in ch["untested"])
        cells = (f"<a href='#{_anchor(ch['doc'])}'>{esc(ch['title'])}</a>",
                 *(str(len(ch[k])) for k in OUTCOMES), esc(quoted) or "—",
                 f"{ch['abstract_tested']} of {ch['abstract']}", str(c["consistency"]),
                 f"{c['rows'] - c['fails']} of {c['rows']}")
        out.append("<tr>" + "".join(f"<td data-label='{h}'>{v}</td>" for h, v in zip(cols, cells, strict=True))
                   + "</tr>")
    out.append("</tbody></table>")
    for ch in data["chapters"]:
        d, c = ch["doc"], ch["counts"]
        uri = app.builder.get_relative_uri(fromdoc, d)
        out.append(f"<section class='ledger-chapter' data-doc='{esc(d)}' data-rows='{c['rows']}'>"
                   f"<h2 id='{_anchor(d)}'>{esc(ch['title'])}</h2>")
        summary = " · ".join(f"{len(ch[k])} {OUTCOME_LABELS[k]}" for k in (*OUTCOMES, "quoted"))
        out.append(f"<p class='ledger-chapter-summary'>Paper claims: {esc(summary)} · {c['consistency']} "
                   f"consistency checks · {c['rows'] - c['fails']} of {c['rows']} rows as registered</p>")
        if ch["claims"]:
            out.append("<ul class='ledger-claims'>")
            for pc in ch["claims"]:
                state = ch["claim_outcome"][pc["id"]]["outcome"]
                why = ""
                if pc.get("quoted_only"):
                    why = f" — {esc(pc.get('reason_class', ''))}: {math_html(pc.get('why', ''))}"
                deciding = ch["claim_outcome"][pc["id"]]["row"]
                dec = f" (deciding row: {math_html(deciding)})" if deciding else ""
                out.append(f"<li class='ledger-claim' data-state='{esc(state)}'><strong>{esc(pc['id'])}</strong> "
                           f"({esc(pc.get('where', ''))}, {esc(pc.get('source', ''))}): {math_html(pc['text'])} "
                           f"{outcome_badge(state)}{dec}{why}</li>")
            out.append("</ul>")
        out.append(f"<details class='ledger-chapter-rows'><summary>Every row ({c['rows']})</summary>")
        for t in ch["tables"]:
            href = f"{uri}#{t['anchor']}"
            out.append(f"<p><a class='ledger-link' href='{esc(href)}'>{esc(t['title'])}</a> — "
                       f"{esc(t['status'])}</p>")
            out.append(render_rows(t["rows"], row_class="ledger-row", control_class="ledger-control",
                                   open_groups=OUTCOMES))
        out.append("</details></section>")
    out.append("</div>")
    return "\n".join(out)


def _headline(total: dict[str, Any], n_chapters: int) -> str:
    return " ".join(_headline_parts(total, n_chapters))


def _first_image(app: Sphinx, doc: str) -> str | None:
    """The chapter's first figure, as the path the HTML builder copies it to (``_images/…``)."""
    try:
        tree = app.env.get_doctree(doc)
    except Exception:  # noqa: BLE001 - no doctree (not read yet): no figure on the card
        return None
    for img in tree.findall(nodes.image):
        uri = img.get("uri", "")
        if uri in app.env.images:
            return "_images/" + app.env.images[uri][1]
    return None


def _render_overview(app: Sphinx, fromdoc: str) -> str:
    data = ledger_data(app)
    esc = html.escape
    ledger_doc = next((d for d in sorted(getattr(app.env, "theorybook_ledger_docs", ())) if d != fromdoc
                       and "ledger" in d), None)
    out = ["<div class='book-overview'>"]
    ledger_uri = app.builder.get_relative_uri(fromdoc, ledger_doc) if ledger_doc else ""
    link = (f" <a href='{esc(ledger_uri)}'>The claims ledger</a> lists every row; "
            f"<a href='{esc(ledger_uri)}#ledger-across-the-book'>across the book</a> lists every claim that holds but "
            "is not specific, differs or is inconclusive, with its reason." if ledger_doc else "")
    parts = _headline_parts(data["totals"], len(data["chapters"]))
    out.append(f"<div class='overview-headline' data-bottom-lines='{len(data['chapters'])}'>"
               f"<p><strong>{esc(parts[0])}</strong></p><p>{esc(parts[1])} {esc(parts[2])}{link}</p></div>")
    out.append(_bottom_lines_table(app, fromdoc, data["chapters"]))
    out.append("<div class='chapter-cards' style='display:grid;grid-template-columns:repeat(auto-fill,"
               "minmax(15rem,1fr));gap:0.8rem;margin:1rem 0'>")
    prefix = "../" * fromdoc.count("/")  # _images/ sits at the site's root
    for ch in data["chapters"]:
        c = ch["counts"]
        uri = app.builder.get_relative_uri(fromdoc, ch["doc"])
        img = _first_image(app, ch["doc"])
        b = ch.get("bottom_line")
        status = (" · ".join(f"{len(ch[k])} {OUTCOME_LABELS[k]}" for k in (*OUTCOMES, "quoted")) + " · "
                  f"{c['consistency']} own checks · "
                  + ("every row as registered" if not c["fails"] else f"{c['fails']} FAIL"))
        head = (f"<span class='card-bottom-line' style='display:block;margin-top:0.2rem'>Headline: "
                f"{outcome_badge(b['outcome'])}</span>" if b else "")
        fig = (f"<img src='{esc(prefix + img)}' alt='{esc('Headline figure of ' + ch['title'])}' loading='lazy' "
               f"style='width:100%;height:8.5rem;object-fit:contain;background:#fff'>" if img else "")
        out.append(f"<a class='chapter-card' href='{esc(uri)}' data-doc='{esc(ch['doc'])}' style='display:block;"
                   f"border:1px solid #d0d7de;border-radius:6px;padding:0.5rem;text-decoration:none;color:inherit'>"
                   f"{fig}<span style='display:block;font-weight:600;margin-top:0.3rem'>{esc(ch['title'])}</span>"
                   f"{head}<span class='card-status' style='display:block;font-size:0.85em'>Paper claims: "
                   f"{esc(status)}</span></a>")
    out.append("</div></div>")
    return "\n".join(out)


def _write_json(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html" and _store(app.env):
        import pathlib

        path = pathlib.Path(app.outdir) / "ledger.json"
        path.write_text(json.dumps(ledger_data(app), ensure_ascii=False, indent=1))


def _doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    for node in list(doctree.findall(bottom_line_placeholder)):
        chapter = _store(app.env).get(docname)
        if app.builder.format == "html" and chapter:
            rows = [r for t in chapter["tables"] for r in t["rows"]]
            st = _claim_status(chapter["tables"])
            anchor = st["bottom_line"]["anchor"] if st["bottom_line"] else ""
            node.replace_self(nodes.raw("", bottom_line_html(st["claims"], rows, href=f"#{anchor}"),
                                        format="html"))
        else:
            node.replace_self(nodes.paragraph(text="The bottom line is built from the chapter's executed verdicts."))
    for node in list(doctree.findall(overview_placeholder)):
        if app.builder.format == "html":
            node.replace_self(nodes.raw("", _render_overview(app, docname), format="html"))
        else:
            node.replace_self(nodes.paragraph(text="The book overview is built for HTML output."))
    for node in list(doctree.findall(ledger_placeholder)):
        if app.builder.format == "html":
            node.replace_self(nodes.raw("", _render(app, docname), format="html"))
        else:
            node.replace_self(nodes.paragraph(text="The claims ledger is built for HTML output."))


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(ledger_placeholder)
    app.add_node(overview_placeholder)
    app.add_node(bottom_line_placeholder)
    app.add_directive("bottom-line", BottomLine)
    app.add_directive("book-overview", BookOverview)
    app.add_directive("claims-ledger", ClaimsLedger)
    app.connect("doctree-read", _doctree_read)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-outdated", _outdated)
    app.connect("doctree-resolved", _doctree_resolved)
    app.connect("build-finished", _write_json)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
