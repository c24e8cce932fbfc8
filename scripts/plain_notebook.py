"""A chapter's notebook that reads in plain Jupyter: MyST markup resolved to the text the book shows.

The book's chapters are MyST notebooks: their prose carries roles (``{glue:text}`key``` for a number a cell
computed, ``{numref}`` and ``{eq}`` for numbered references, ``{cite:t}``, ``{prf:ref}``, ``{doc}``), directives
(``{prf:theorem}``, ``{admonition}``, ``{bottom-line}``), target lines (``(label)=``) and equation labels
(``$$ … $$ (label)``) that only Sphinx understands, and their figure captions live in cell metadata. Opened in
Jupyter or rendered by ``jupyter nbconvert`` the raw markup shows. :func:`plain_notebook` rewrites the markdown
cells of an executed chapter with what the book prints in their place — the glued values (formatted as the book
formats them), "Fig. 3.2", "(3.4)", "Author (year)", "Theorem 3.1", a theorem as a quoted paragraph — adds each
figure's caption under its cell and a note where a widget needs a running kernel.

:mod:`scripts.takeaways` applies it to every chapter's download at the end of the build (the numbers come from the
Sphinx environment); ``tests/test_site.py::test_notebooks_read_without_the_book`` renders each download with
``jupyter nbconvert --to html`` and finds no MyST syntax left.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

GLUE_PREFIX = "application/papermill.record/"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_NOTE = ("*The interactive explorer above needs a running kernel: run the notebook's cells (the first cell says "
               "how), and its controls appear here. The book's web page has a kernel-free version.*")
ROLE = re.compile(r"\{([a-z][a-z0-9:_-]*)\}`([^`]*)`")
FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[a-z][a-z0-9:_-]*)\}[ \t]*(?P<arg>[^\n]*)\n"
                   r"(?P<body>.*?)^(?P=fence)[ \t]*$\n?", re.S | re.M)
TARGET = re.compile(r"^\([^)\n]+\)=[ \t]*\n", re.M)
EQ_LABEL = re.compile(r"\$\$[ \t]*\(([^)\n]+)\)")
PRF_TITLES = {"theorem": "Theorem", "lemma": "Lemma", "corollary": "Corollary", "definition": "Definition",
              "proposition": "Proposition", "remark": "Remark", "algorithm": "Algorithm", "conjecture": "Conjecture",
              "observation": "Observation", "proof": "Proof", "example": "Example", "assumption": "Assumption"}


@dataclass
class Resolver:
    """How markup becomes text. Every callable gets the role's content and returns the text; ``None`` keeps a
    readable fallback (the label itself, without the markup)."""

    glue: dict[str, str] = field(default_factory=dict)  # key → text/plain of the glued value
    numref: Callable[[str], str | None] = lambda label: None
    eq: Callable[[str], str | None] = lambda label: None
    cite: Callable[[str, str], str | None] = lambda keys, mode: None  # mode: "t" (textual) or "p" (parenthetical)
    ref: Callable[[str], str | None] = lambda label: None  # prf:ref, ref, doc
    bottom_line: str = ""


def format_glue(text: str, fmt_spec: str) -> str:
    """The glued value as ``{glue:text}`key:fmt``` prints it (MyST-NB's own formatting)."""
    from myst_nb.core.variables import format_plain_text

    return format_plain_text(text, fmt_spec)


def _role(name: str, content: str, r: Resolver) -> str:
    if name in ("glue:text", "glue", "glue:"):
        parts = content.rsplit(":", 1)  # as MyST-NB reads it: key, then an optional format spec
        key, fmt = (parts[0], parts[1]) if len(parts) == 2 and not content.endswith("::") else (content, "")
        key = key.split("::", 1)[-1]
        if key in r.glue:
            try:
                return format_glue(r.glue[key], fmt)
            except (ValueError, TypeError):
                return r.glue[key]
        return f"[{key}]"
    if name == "glue:md":
        return r.glue.get(content, f"[{content}]")
    if name == "numref":
        label = content.rsplit("<", 1)[-1].rstrip(">") if "<" in content else content
        return r.numref(label) or label
    if name == "eq":
        return r.eq(content) or f"({content})"
    if name.startswith("cite"):
        mode = "t" if name.endswith(":t") else "p"
        return r.cite(content, mode) or f"[{content}]"
    if name in ("prf:ref", "ref", "doc", "any"):
        if "<" in content and content.endswith(">"):
            return content[: content.rindex("<")].strip()
        return r.ref(content) or content
    if name == "math":
        return f"${content}$"
    return content  # sub, sup, abbr, kbd, …: their text


def plain_markdown(text: str, r: Resolver) -> str:
    """``text`` with every MyST role, directive, target and equation label replaced by what the book prints."""

    def directive(m: re.Match) -> str:
        name, arg, body = m["name"], m["arg"].strip(), m["body"]
        opts = {}
        lines = body.split("\n")
        while lines and re.match(r"^:[a-z-]+:", lines[0]):
            k, _, v = lines.pop(0)[1:].partition(":")
            opts[k.strip()] = v.strip()
        inner = plain_markdown("\n".join(lines).strip("\n"), r)
        if name == "bottom-line":
            return (r.bottom_line + "\n") if r.bottom_line else ""
        if name.startswith("prf:"):
            kind = PRF_TITLES.get(name[4:], name[4:].capitalize())
            label = opts.get("label")
            number = r.ref(label) if label else None
            head = number or kind
            head += f" ({plain_markdown(arg, r)})" if arg else ""
            return _quote(f"**{head}.** {inner}") + "\n"
        if name in ("admonition", "note", "tip", "important", "warning", "caution", "attention", "seealso",
                    "hint", "danger", "error"):
            head = plain_markdown(arg, r) if arg else name.capitalize()
            return _quote(f"**{head}.** {inner}") + "\n"
        if name in ("math",):
            return f"$$\n{inner}\n$$\n"
        if name in ("figure", "image"):
            return f"![{inner}]({arg})\n"
        return inner + "\n"

    text = FENCE.sub(directive, text)
    text = TARGET.sub("", text)
    # a labelled display equation keeps its number inside the maths, as MathJax numbers it: \tag{3.4}
    text = EQ_LABEL.sub(lambda m: (f"\\tag{{{r.eq(m[1]).strip('()')}}}$$" if r.eq(m[1]) else "$$"), text)
    return ROLE.sub(lambda m: _role(m[1], m[2], r), text)


def _quote(text: str) -> str:
    return "\n".join("> " + line if line.strip() else ">" for line in text.split("\n"))


def glue_values(nb: Any) -> dict[str, str]:
    """key → text/plain of every value the notebook's cells glued."""
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            meta = (o.get("metadata") or {}).get("scrapbook")
            if not meta:
                continue
            data = o.get("data", {})
            prefix = meta.get("mime_prefix", "")
            text = data.get(prefix + "text/plain")
            if text is not None:
                out[meta["name"]] = text if isinstance(text, str) else "".join(text)
    return out


def plain_notebook(nb: Any, r: Resolver, caption: Callable[[str, str], str] | None = None) -> Any:
    """The notebook with plain markdown (:func:`plain_markdown`), a caption cell under each figure (``caption``:
    (figure name, caption text) → the heading, e.g. "Fig. 3.2"), and a note under each widget. In place."""
    import nbformat

    if not r.glue:
        r.glue = glue_values(nb)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = plain_markdown(cell.source, r)
        cells.append(cell)
        if cell.cell_type != "code":
            continue
        for o in cell.get("outputs", []):  # Markdown a cell displays is MyST in the book: resolved the same way
            data = o.get("data") or {}
            if "text/markdown" in data:
                md = data["text/markdown"]
                data["text/markdown"] = plain_markdown(md if isinstance(md, str) else "".join(md), r)
        fig = ((cell.metadata.get("mystnb") or {}).get("figure") or {})
        if fig.get("caption"):
            head = caption(fig.get("name", ""), fig["caption"]) if caption else "Figure"
            cells.append(nbformat.v4.new_markdown_cell(f"**{head}.** " + plain_markdown(str(fig["caption"]), r)))
        if any(WIDGET_MIME in (o.get("data") or {}) for o in cell.get("outputs", [])):
            cells.append(nbformat.v4.new_markdown_cell(WIDGET_NOTE))
    nb.cells = cells
    return nb


MYST_LEFT = re.compile(r"\{(?:glue|numref|eq|cite|prf|doc|ref|bottom-line|admonition|math)[a-z:]*\}`?|"
                       r"^`{3,}\{(?!code-cell)|^\([a-z0-9_-]+\)=\s*$", re.M)


def myst_left(text: str) -> list[str]:
    """MyST markup still present in ``text`` (what :func:`plain_markdown` should have resolved)."""
    return [m.group(0) for m in MYST_LEFT.finditer(text)]


def sphinx_resolvers(app: Any) -> Callable[[str, dict[str, str]], tuple[Resolver, Callable[[str, str], str]]]:
    """From a finished Sphinx build, the function that gives one chapter its resolver and caption heading:
    numbers from the environment's figure, equation and theorem numbering (as the HTML prints them), citations from
    the bibliography, the chapter's bottom line from the claims ledger. The book-wide indexes are built once here,
    not once per chapter."""
    env = app.env
    fmt = dict(getattr(app.config, "numfig_format", {}) or {})
    numbers: dict[str, tuple[str, str]] = {}
    for types in env.toc_fignumbers.values():
        for figtype, ids in types.items():
            for node_id, num in ids.items():
                numbers.setdefault(node_id, (figtype, ".".join(str(n) for n in num)))

    def numbered(label: str) -> str | None:
        hit = numbers.get(label)
        if hit is None:
            return None
        figtype, num = hit
        if figtype in PRF_TITLES:
            return f"{PRF_TITLES[figtype]} {num}"
        if figtype == "displaymath":
            return f"({num})"
        pattern = fmt.get(figtype, "%s")
        return pattern % num if "%s" in pattern else f"{pattern} {num}"

    def eq(label: str) -> str | None:
        return numbered("equation-" + label)

    labels = env.domaindata.get("std", {}).get("labels", {})

    def ref(label: str) -> str | None:
        hit = numbered(label)
        if hit:
            return hit
        if label in labels:
            return labels[label][2] or label
        doc = label.lstrip("/").removesuffix(".md")
        if doc in env.titles:
            return env.titles[doc].astext()
        return None

    bib = _bibliography(app)

    def cite(keys: str, mode: str) -> str | None:
        items = [bib.get(k.strip()) for k in keys.split(",")]
        if any(i is None for i in items):
            return None
        if mode == "t":
            return "; ".join(f"{who} ({year})" for who, year in items)
        return "(" + "; ".join(f"{who}, {year}" for who, year in items) + ")"

    bottom: dict[str, str] = {}
    try:
        import claims_ledger

        for ch in claims_ledger.ledger_data(app)["chapters"]:
            b = ch.get("bottom_line")
            if b:
                label = claims_ledger.OUTCOME_LABELS.get(b["outcome"], b["outcome"].replace("_", " "))
                bottom[ch["doc"]] = (f"> **Bottom line — {label}.** *The paper:* {b['text']} [{b['claim']}] "
                                     "(the verdict table at the end of the chapter gives the deciding row)")
    except Exception:  # noqa: BLE001 - a notebook without its bottom line is still a notebook
        bottom = {}

    def caption(name: str, text: str) -> str:
        return numbered(name) or "Figure"

    def for_chapter(docname: str, glue: dict[str, str]) -> tuple[Resolver, Callable[[str, str], str]]:
        return Resolver(glue=glue, numref=numbered, eq=eq, cite=cite, ref=ref,
                        bottom_line=bottom.get(docname, "")), caption

    return for_chapter


def _bibliography(app: Any) -> dict[str, tuple[str, str]]:
    """citation key → (authors as the book cites them, year), from the build's BibTeX files (pybtex)."""
    from pathlib import Path

    try:
        from pybtex.database import parse_file
    except ImportError:  # pragma: no cover - sphinxcontrib-bibtex brings pybtex
        return {}
    out: dict[str, tuple[str, str]] = {}
    for f in getattr(app.config, "bibtex_bibfiles", []) or []:
        path = Path(app.confdir) / f
        if not path.is_file():
            continue
        for key, entry in parse_file(str(path)).entries.items():
            people = entry.persons.get("author") or entry.persons.get("editor") or []
            last = [" ".join(p.last_names).replace("{", "").replace("}", "") for p in people]
            who = (last[0] if len(last) == 1 else f"{last[0]} and {last[1]}" if len(last) == 2
                   else f"{last[0]} et al." if last else entry.fields.get("title", key)[:40])
            out[key] = (who, entry.fields.get("year", "n.d."))
    return out
