"""Sphinx extension: the claims ledger, built from every chapter's executed verdict tables.

Each ``theorybook.check.Verdicts`` table renders as HTML that carries its rows as JSON
(``<script type="application/json" class="theorybook-verdicts">``). When a chapter has been executed and read,
this extension finds those payloads in the chapter's raw-HTML output nodes and keeps them in the build
environment. The ``{claims-ledger}`` directive (in ``book/appendix_ledger.md``) is replaced, once every document has
been read, by the ledger: the headline at the top (paper claims reproduced against a control, paper claims that
differ, consistency checks, abstract-level claims tested or only quoted), then per chapter its paper claims and per
row the claim, source, kind, predicted, measured, control and holds, with a link to the chapter's verdict table.
Nothing in it is written by hand. The same data is written to ``_build/html/ledger.json``, which
``tests/test_verdict_rules.py`` checks against the verdict rules.
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

KINDS = ("reproduces", "differs", "consistency")
_PAYLOAD = re.compile(
    r"<script type=['\"]application/json['\"] class=['\"]theorybook-verdicts['\"]>(.*?)</script>", re.S)


class ledger_placeholder(nodes.General, nodes.Element):
    """Replaced by the ledger's HTML once all chapters have been read."""


class overview_placeholder(nodes.General, nodes.Element):
    """Replaced by the front page's overview (ledger headline + one card per chapter)."""


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
    """Which paper claims the chapter's rows test: reproduced (a holding ``reproduces`` row), differs (a holding
    ``differs`` row whose planted effect the test catches), not testable here (``differs`` rows that could not plant
    the effect), only quoted (with its reason class), or declared but untested."""
    rows = [r for t in tables for r in t["rows"]]
    claims = _claims(tables)
    out: dict[str, Any] = {"claims": claims, "reproduced": [], "differs": [], "not_testable": [], "quoted": [],
                           "untested": []}
    for c in claims:
        mine = [r for r in rows if r.get("tests") == c["id"] and r["holds"]]
        if any(r["kind"] == "reproduces" for r in mine):
            out["reproduced"].append(c["id"])
        elif any(r["kind"] == "differs" and not r.get("untestable") for r in mine):
            out["differs"].append(c["id"])
        elif any(r["kind"] == "differs" for r in mine):
            out["not_testable"].append(c["id"])
        elif c.get("quoted_only"):
            out["quoted"].append(c["id"])
        else:
            out["untested"].append(c["id"])
    from theorybook.check import REASON_CLASSES

    by_id = {c["id"]: c for c in claims}
    out["quoted_by_class"] = {k: sum(by_id[i].get("reason_class") == k for i in out["quoted"])
                              for k in REASON_CLASSES}
    abstract = [c for c in claims if c.get("where") == "abstract"]
    out["abstract"] = len(abstract)
    out["abstract_tested"] = sum(c["id"] in out["reproduced"] or c["id"] in out["differs"] for c in abstract)
    out["abstract_reproduced"] = sum(c["id"] in out["reproduced"] for c in abstract)
    return out


def ledger_data(app: Sphinx) -> dict[str, Any]:
    """The ledger as data (also written to ``_build/html/ledger.json`` for the rules test)."""
    store = _store(app.env)
    docs = _chapter_order(app, store)
    chapters = []
    for d in docs:
        tables = store[d]["tables"]
        rows = [r for t in tables for r in t["rows"]]
        chapters.append({"doc": d, "title": store[d]["title"], "counts": _counts(rows), "tables": tables,
                         **_claim_status(tables)})
    total = _counts([r for ch in chapters for r in (r for t in ch["tables"] for r in t["rows"])])
    total["claims"] = sum(len(ch["claims"]) for ch in chapters)
    for key in ("reproduced", "differs", "not_testable", "quoted", "untested"):
        total[f"claims_{key}"] = sum(len(ch[key]) for ch in chapters)
    from theorybook.check import REASON_CLASSES

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
    """The headline, one clause a line: paper claims (reproduced · differ · not testable · only quoted, by reason),
    abstract-level claims apart, and our own checks counted apart."""
    quoted = _quoted_text(total["quoted_by_class"])
    return [
        f"Of the {total['claims']} paper claims the {n_chapters} chapters declare: "
        f"{total['claims_reproduced']} reproduced, each against a control that fails the same test; "
        f"{total['claims_differs']} differ from what we measure (each with a planted effect its test catches); "
        f"{total['claims_not_testable']} not testable here; "
        f"{total['claims_quoted']} only quoted" + (f" ({quoted})" if quoted else "")
        + (f"; {total['claims_untested']} declared but not yet tested" if total["claims_untested"] else "") + ".",
        f"Abstract-level claims (a subset): {total['abstract_tested']} of {total['abstract']} tested, "
        f"{total['abstract_reproduced']} of them reproduced.",
        f"Verdict rows: {total['reproduces']} reproduction and {total['differs']} differs rows on paper claims; "
        f"{total['consistency']} consistency checks of our own code, algebra and reconstructions, counted apart. "
        f"{total['rows'] - total['fails']} of {total['rows']} rows hold.",
    ]


def _render(app: Sphinx, fromdoc: str) -> str:
    from theorybook.check import math_html, render_rows

    data = ledger_data(app)
    total = data["totals"]
    esc = html.escape
    out = ["<div class='claims-ledger'>"]
    out.append(
        f"<div class='ledger-totals' data-rows='{total['rows']}' data-reproduces='{total['reproduces']}' "
        f"data-differs='{total['differs']}' data-consistency='{total['consistency']}' "
        f"data-fails='{total['fails']}' data-chapters='{len(data['chapters'])}' "
        f"data-claims-reproduced='{total['claims_reproduced']}' data-claims-differ='{total['claims_differs']}' "
        f"data-claims-not-testable='{total['claims_not_testable']}' "
        f"data-claims-quoted='{total['claims_quoted']}'>"
        + "".join(f"<p>{esc(t)}</p>" for t in _headline_parts(total, len(data["chapters"]))) + "</div>")
    cols = ("chapter", "paper claims reproduced", "differ", "not testable", "only quoted (reason)",
            "abstract claims tested", "our consistency checks", "rows hold")
    out.append("<table class='ledger-summary'><thead><tr>" + "".join(f"<th>{h}</th>" for h in cols)
               + "</tr></thead><tbody>")
    by_id = {}
    for ch in data["chapters"]:
        by_id.update({(ch["doc"], c["id"]): c for c in ch["claims"]})
    for ch in data["chapters"]:
        c = ch["counts"]
        anchor = "ledger-" + re.sub(r"[^a-z0-9]+", "-", ch["doc"].lower())
        quoted = ", ".join(f"{i} ({by_id[(ch['doc'], i)].get('reason_class') or '?'})" for i in ch["quoted"])
        quoted += (", " if quoted and ch["untested"] else "") + ", ".join(f"{i} (untested)" for i in ch["untested"])
        cells = (f"<a href='#{anchor}'>{esc(ch['title'])}</a>", str(len(ch["reproduced"])), str(len(ch["differs"])),
                 str(len(ch["not_testable"])), esc(quoted) or "—", f"{ch['abstract_tested']} of {ch['abstract']}",
                 str(c["consistency"]), f"{c['rows'] - c['fails']} of {c['rows']}")
        out.append("<tr>" + "".join(f"<td data-label='{h}'>{v}</td>" for h, v in zip(cols, cells, strict=True))
                   + "</tr>")
    out.append("</tbody></table>")
    for ch in data["chapters"]:
        d, c = ch["doc"], ch["counts"]
        uri = app.builder.get_relative_uri(fromdoc, d)
        out.append(f"<section class='ledger-chapter' data-doc='{esc(d)}' data-rows='{c['rows']}'>"
                   f"<h2 id='ledger-{esc(re.sub(r'[^a-z0-9]+', '-', d.lower()))}'>{esc(ch['title'])}</h2>")
        out.append(f"<p class='ledger-chapter-summary'>{_plural(len(ch['reproduced']), 'paper claim', 'paper claims')} "
                   f"reproduced · {len(ch['differs'])} differ · {len(ch['not_testable'])} not testable here · "
                   f"{len(ch['quoted'])} only quoted · {c['consistency']} consistency checks · "
                   f"{c['rows'] - c['fails']} of {c['rows']} rows hold</p>")
        if ch["claims"]:
            out.append("<ul class='ledger-claims'>")
            for pc in ch["claims"]:
                state = ("reproduced" if pc["id"] in ch["reproduced"] else "differs" if pc["id"] in ch["differs"]
                         else "not testable here" if pc["id"] in ch["not_testable"]
                         else "quoted only" if pc["id"] in ch["quoted"] else "not tested")
                why = ""
                if pc.get("quoted_only"):
                    why = f" — {esc(pc.get('reason_class', ''))}: {math_html(pc.get('why', ''))}"
                out.append(f"<li class='ledger-claim' data-state='{esc(state)}'><strong>{esc(pc['id'])}</strong> "
                           f"({esc(pc.get('where', ''))}, {esc(pc.get('source', ''))}): {math_html(pc['text'])} "
                           f"<em>[{esc(state)}]</em>{why}</li>")
            out.append("</ul>")
        out.append(f"<details class='ledger-chapter-rows'><summary>Every row ({c['rows']})</summary>")
        for t in ch["tables"]:
            href = f"{uri}#{t['anchor']}"
            out.append(f"<p><a class='ledger-link' href='{esc(href)}'>{esc(t['title'])}</a> — "
                       f"{esc(t['status'])}</p>")
            out.append(render_rows(t["rows"], row_class="ledger-row", control_class="ledger-control",
                                   open_groups=("reproduces", "differs")))
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
    link = (f" <a href='{esc(app.builder.get_relative_uri(fromdoc, ledger_doc))}'>The claims ledger</a> lists every "
            f"row." if ledger_doc else "")
    parts = _headline_parts(data["totals"], len(data["chapters"]))
    out.append(f"<div class='overview-headline' data-reproduced='{data['totals']['claims_reproduced']}'>"
               f"<p><strong>{esc(parts[0])}</strong></p><p>{esc(parts[1])} {esc(parts[2])}{link}</p></div>")
    out.append("<div class='chapter-cards' style='display:grid;grid-template-columns:repeat(auto-fill,"
               "minmax(15rem,1fr));gap:0.8rem;margin:1rem 0'>")
    prefix = "../" * fromdoc.count("/")  # _images/ sits at the site's root
    for ch in data["chapters"]:
        c = ch["counts"]
        uri = app.builder.get_relative_uri(fromdoc, ch["doc"])
        img = _first_image(app, ch["doc"])
        status = (f"{_plural(len(ch['reproduced']), 'paper claim', 'paper claims')} reproduced · "
                  f"{len(ch['differs'])} differ · {len(ch['quoted']) + len(ch['not_testable'])} untested · "
                  f"{c['consistency']} own checks · "
                  + ("all rows hold" if not c["fails"] else f"{c['fails']} FAIL"))
        fig = (f"<img src='{esc(prefix + img)}' alt='{esc('Headline figure of ' + ch['title'])}' loading='lazy' "
               f"style='width:100%;height:8.5rem;object-fit:contain;background:#fff'>" if img else "")
        out.append(f"<a class='chapter-card' href='{esc(uri)}' data-doc='{esc(ch['doc'])}' style='display:block;"
                   f"border:1px solid #d0d7de;border-radius:6px;padding:0.5rem;text-decoration:none;color:inherit'>"
                   f"{fig}<span style='display:block;font-weight:600;margin-top:0.3rem'>{esc(ch['title'])}</span>"
                   f"<span class='card-status' style='display:block;font-size:0.85em'>{esc(status)}</span></a>")
    out.append("</div></div>")
    return "\n".join(out)


def _write_json(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html" and _store(app.env):
        import pathlib

        path = pathlib.Path(app.outdir) / "ledger.json"
        path.write_text(json.dumps(ledger_data(app), ensure_ascii=False, indent=1))


def _doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
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
    app.add_directive("book-overview", BookOverview)
    app.add_directive("claims-ledger", ClaimsLedger)
    app.connect("doctree-read", _doctree_read)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-outdated", _outdated)
    app.connect("doctree-resolved", _doctree_resolved)
    app.connect("build-finished", _write_json)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
