"""Sphinx extension: the claims ledger, built from every chapter's executed verdict tables.

Each ``theorybook.check.Verdicts`` table renders as HTML that carries its rows as JSON
(``<script type="application/json" class="theorybook-verdicts">``). When a chapter has been executed and read,
this extension finds those payloads in the chapter's raw-HTML output nodes and keeps them in the build
environment. The ``{claims-ledger}`` directive (in ``book/appendix_ledger.md``) is replaced, once every document has
been read, by the ledger: totals at the top, then per chapter and per row the claim, source, kind, predicted,
measured and holds, with a link to the chapter's verdict table. Nothing in it is written by hand.
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


def _render(app: Sphinx, fromdoc: str) -> str:
    store = _store(app.env)
    docs = _chapter_order(app, store)
    per_doc = {d: [r for t in store[d]["tables"] for r in t["rows"]] for d in docs}
    total = _counts([r for rows in per_doc.values() for r in rows])
    esc = html.escape
    out = ["<div class='claims-ledger'>"]
    out.append(
        f"<p class='ledger-totals' data-rows='{total['rows']}' data-reproduces='{total['reproduces']}' "
        f"data-differs='{total['differs']}' data-consistency='{total['consistency']}' "
        f"data-fails='{total['fails']}' data-chapters='{len(docs)}'><strong>Across {len(docs)} chapters:</strong> "
        f"{total['reproduces']} claims reproduce, {total['differs']} differ from the paper, "
        f"{total['consistency']} consistency checks; {total['rows'] - total['fails']} of {total['rows']} rows "
        f"hold.</p>")
    out.append("<table class='ledger-summary'><thead><tr><th>chapter</th><th>reproduces</th><th>differs</th>"
               "<th>consistency</th><th>rows</th><th>hold</th></tr></thead><tbody>")
    for d in docs:
        c = _counts(per_doc[d])
        uri = app.builder.get_relative_uri(fromdoc, d)
        out.append(f"<tr><td><a href='{esc(uri)}'>{esc(store[d]['title'])}</a></td><td>{c['reproduces']}</td>"
                   f"<td>{c['differs']}</td><td>{c['consistency']}</td><td>{c['rows']}</td>"
                   f"<td>{c['rows'] - c['fails']}</td></tr>")
    out.append("</tbody></table>")
    head = "".join(f"<th>{h}</th>" for h in ("claim", "source", "kind", "paper", "predicted", "measured",
                                            "holds"))
    for d in docs:
        c = _counts(per_doc[d])
        uri = app.builder.get_relative_uri(fromdoc, d)
        out.append(f"<section class='ledger-chapter' data-doc='{esc(d)}' data-rows='{c['rows']}'>"
                   f"<h2 id='ledger-{esc(re.sub(r'[^a-z0-9]+', '-', d.lower()))}'>{esc(store[d]['title'])}</h2>")
        for t in store[d]["tables"]:
            href = f"{uri}#{t['anchor']}"
            out.append(f"<p><a class='ledger-link' href='{esc(href)}'>{esc(t['title'])}</a> — "
                       f"{esc(t['status'])}</p>")
            out.append(f"<table class='ledger-rows'><thead><tr>{head}</tr></thead><tbody>")
            for r in t["rows"]:
                mark = ("<span class='verdict-pass' style='color:#1a7f37;font-weight:bold'>holds</span>"
                        if r["holds"] else
                        "<span class='verdict-fail' style='color:#b42318;font-weight:bold'>FAILS</span>")
                out.append(f"<tr class='ledger-row' data-kind='{esc(r['kind'])}'><td>{esc(r['claim'])}</td>"
                           f"<td>{esc(r['source'])}</td><td>{esc(r['kind'])}</td><td>{esc(r.get('paper', ''))}</td>"
                           f"<td>{esc(r['predicted'])}</td><td>{esc(r['measured'])}</td><td>{mark}</td></tr>")
            out.append("</tbody></table>")
        out.append("</section>")
    out.append("</div>")
    return "\n".join(out)


def _doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    for node in list(doctree.findall(ledger_placeholder)):
        if app.builder.format == "html":
            node.replace_self(nodes.raw("", _render(app, docname), format="html"))
        else:
            node.replace_self(nodes.paragraph(text="The claims ledger is built for HTML output."))


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(ledger_placeholder)
    app.add_directive("claims-ledger", ClaimsLedger)
    app.connect("doctree-read", _doctree_read)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-outdated", _outdated)
    app.connect("doctree-resolved", _doctree_resolved)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
