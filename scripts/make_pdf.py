"""The whole book as one PDF (``make pdf``; ``make book`` runs it last): printed by headless Chromium from the
built HTML, with nothing downloaded at build time, laid out to be read as a book.

1. Every page of ``_toc.yml`` (front page, the 19 chapters, the claims ledger, the references), in book order, is
   read from ``_build/html``; its article is copied into one print document, ``_build/html/print.html``:
   - a title page with the contents (parts and chapters, each with its page number);
   - the parts as level-1 headings, the chapters as level 2, their sections below, so that Chromium's document
     outline (``--generate-pdf-document-outline``) gives the PDF a bookmark tree parts → chapters → sections;
   - every element id prefixed with its page's name, and every link between pages (cross-references, citations,
     the ledger's links) rewritten to the anchor inside the document: the PDF's links stay inside the PDF. Links
     to pages that are not printed (a notebook download, the search page) lose their target; external links keep
     theirs;
   - the pages' ``<head>`` (the theme's styles, the vendored MathJax), so maths is typeset as on the site.
   For print, hidden code cells, widgets, toggles and sidebars are left out, a verdict row's *details* stay closed
   and are not printed, and the claims ledger's per-chapter rows are one line each.
2. Chromium (``--headless --print-to-pdf``, with a virtual-time budget so MathJax finishes first) prints it to
   ``_build/html/executable-theory.pdf``, which the front page links. The contents' page numbers are read back from
   the PDF's named destinations (:mod:`pypdf`) and the document printed again when they changed (the numbers hold
   a fixed width, so the layout does not move): two prints on a first build. The print document's hash is kept in
   ``_build/html/.pdf-state.json``; an unchanged book is not printed again.

Without Chromium the PDF is skipped with a message (a plain ``make book`` on a machine without it still works),
unless ``CI`` is set: then it fails. ``tests/test_site.py::test_pdf_of_the_book`` checks every chapter title is in
the PDF's text (``pdftotext``), no raw TeX is, and (with :mod:`pypdf`) the outline, the links (none to ``file://``),
the contents' page numbers and the page count.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urljoin, urlparse

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
PRINT = "print.html"
PDF = "executable-theory.pdf"
STATE = ".pdf-state.json"
SITE = "https://book.invalid/"  # a base to resolve relative URLs against; never fetched
PAGE_DIGITS = 3  # the contents' page numbers hold this many digits' width, so numbering never moves the layout

PRINT_CSS = """
@page { size: A4; margin: 14mm 13mm; }
html { font-size: 13px !important; }  /* ≈ 10 pt body text, a printed book's size (the screen's 16 px is 12 pt) */
.bd-sidebar-primary, .bd-sidebar-secondary, .bd-header, .bd-footer, .bd-footer-article, .header-article,
.prev-next-area, .bd-header-article, .skip-link, .theme-switch-button, .search-button, .tb-static-controls,
.widget-subarea, .jupyter-widgets, .cell_input .copybtn, .toggle-button, #pst-back-to-top, .headerlink,
details.hide, details.verdict-more, .ledger-filters, .bottom-line-link, .tb-live-note { display: none !important; }
.bd-main, .bd-content, .bd-article-container, .bd-article { max-width: 100% !important; width: 100% !important; }
.print-page, .print-part { break-before: page; }
h1.print-part { font-size: 2rem; margin-top: 30vh; text-align: center; white-space: nowrap; }
.print-toc { list-style: none; padding-left: 0; }
.print-toc li { margin: 0.15rem 0; display: flex; }
.print-toc li.toc-part { font-weight: bold; margin-top: 0.6rem; }
.print-toc li.toc-chapter { padding-left: 1.2rem; }
.print-toc a { flex: 1 1 auto; text-decoration: none; }
.print-toc .toc-page { flex: 0 0 auto; min-width: 3ch; text-align: right; font-variant-numeric: tabular-nums; }
.print-toc .toc-page.unknown { visibility: hidden; }
img { max-width: 100% !important; break-inside: avoid; }
pre { white-space: pre-wrap; word-break: break-word; }
tr.verdict-row { break-inside: avoid; }
/* the claims ledger's rows: one line each (the claim and its outcome; values and controls are in the chapters) */
tr.ledger-row td { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; padding: 0 0.3rem !important; }
tr.ledger-row td.verdict-value, tr.ledger-row td.ledger-control, tr.ledger-row .verdict-tests,
tr.ledger-row br, tr.ledger-row .verdict-also { display: none !important; }
.ledger-chapter-rows table.verdicts { table-layout: fixed; width: 100%; }
.ledger-chapter-rows table.verdicts thead { display: none; }
.ledger-chapter-rows tr.ledger-row { break-inside: auto; }
tr.ledger-row td.verdict-claim { width: 78%; max-width: 0; }
"""

# A verdict table's outcome groups and the ledger's per-chapter rows are shown open in print; every other
# disclosure (a row's details, a hidden cell) stays closed and is not printed.
OPEN_FOR_PRINT = """
<script>
document.addEventListener('DOMContentLoaded', function () {
  document.querySelectorAll('details.verdict-group, details.ledger-chapter-rows').forEach(function (d) {
    d.open = true; });
});
</script>
"""


def toc_pages(root: Path = ROOT) -> list[tuple[str, str, str | None]]:
    """(docname, html path relative to the build, part caption or ``None``) of every page of ``_toc.yml``, in
    book order; the root page has no part."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    out: list[tuple[str, str, str | None]] = [(toc["root"], toc["root"] + ".html", None)]
    for part in toc.get("parts", []):
        out += [(c["file"], c["file"] + ".html", part.get("caption")) for c in part.get("chapters", [])]
    return out


def _slug(doc: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", doc)


def _anchor(doc: str, frag: str = "") -> str:
    """The id, inside the print document, of ``frag`` on page ``doc`` (the page itself when ``frag`` is empty)."""
    return f"p-{_slug(doc)}" + (f"--{frag}" if frag else "")


def _rewrite(soup, page: str, docs: dict[str, str]) -> None:
    """Make the article's URLs work inside the print document, which sits at the site's root: images relative to
    the root; links to a printed page (``docs``: html path → docname) become the anchor inside the document; links
    to pages that are not printed lose their target; in-page anchors and ids get the page's prefix."""
    base = SITE + page
    me = docs[page]
    for el in soup.find_all(id=True):
        el["id"] = _anchor(me, el["id"])
    for tag, attr in (("img", "src"), ("source", "src")):
        for el in soup.find_all(tag):
            url = el.get(attr)
            if not url or url.startswith("data:") or urlparse(url).scheme:
                continue
            el[attr] = urlparse(urljoin(base, url)).path.lstrip("/")
    for el in soup.find_all("a"):
        url = el.get("href")
        if not url:
            continue
        parsed = urlparse(url)
        if parsed.scheme in ("http", "https", "mailto"):
            continue
        if url.startswith("#"):
            el["href"] = "#" + _anchor(me, url[1:])
            continue
        absolute = urlparse(urljoin(base, url))
        target = docs.get(absolute.path.lstrip("/"))
        if target is None:  # not printed (a download, the index, a source file): the text stays, the link goes
            del el["href"]
            continue
        el["href"] = "#" + _anchor(target, absolute.fragment)


def _shift_headings(article) -> None:
    """A page's headings one level down: the book's title and the parts are level 1 in the print document, the
    front page and the chapters level 2 (the outline nests them so)."""
    for level in range(5, 0, -1):
        for h in article.find_all(f"h{level}"):
            h.name = f"h{level + 1}"


def build_print_document(html_dir: Path = HTML, pages_of: dict[str, int] | None = None) -> Path:
    """Write ``print.html``: the head of the front page, the contents (with ``pages_of``: anchor → page number),
    the parts and every page's article in order."""
    from bs4 import BeautifulSoup

    pages_of = pages_of or {}
    pages = toc_pages()
    docs = {rel: doc for doc, rel, _ in pages}
    head_soup = BeautifulSoup((html_dir / pages[0][1]).read_text(encoding="utf-8"), "html.parser")
    for link in head_soup.head.find_all(["link", "script"]):
        for attr in ("href", "src"):
            url = link.get(attr)
            if url and not urlparse(url).scheme and not url.startswith(("data:", "/")):
                link[attr] = urlparse(urljoin(SITE + pages[0][1], url)).path.lstrip("/")

    def toc_line(cls: str, anchor: str, title: str) -> str:
        n = pages_of.get(anchor)
        num = (f"<span class='toc-page'>{n}</span>" if n
               else f"<span class='toc-page unknown'>{'0' * PAGE_DIGITS}</span>")
        return f"<li class='{cls}'><a href='#{anchor}'>{title}</a>{num}</li>"

    body_parts, toc = [], []
    part_now: str | None = None
    for doc, rel, part in pages:
        if part is not None and part != part_now:
            part_now = part
            anchor = "p-part-" + _slug(part)
            toc.append(toc_line("toc-part", anchor, part))
            body_parts.append(f"<h1 class='print-part' id='{anchor}'>{part}</h1>")
        soup = BeautifulSoup((html_dir / rel).read_text(encoding="utf-8"), "html.parser")
        article = soup.select_one("article.bd-article") or soup.select_one("main") or soup.body
        for el in article.select(".onlyprint"):  # the theme's print header: the page title once more
            el.decompose()
        _rewrite(article, rel, docs)
        _shift_headings(article)
        h = article.find("h2")
        title = h.get_text(" ", strip=True).replace("#", "").strip() if h else doc
        anchor = _anchor(doc)
        toc.append(toc_line("toc-chapter" if part is not None else "toc-front", anchor, title))
        body_parts.append(f"<section class='print-page' id='{anchor}'>{article.decode_contents()}</section>")
    title = "Executable Theory"
    doc = (f"<!DOCTYPE html><html lang='en'><head>{head_soup.head.decode_contents()}"
           f"<style>{PRINT_CSS}</style>{OPEN_FOR_PRINT}</head><body><main class='bd-main'>"
           f"<article class='bd-article'><h1 id='p-title'>{title}</h1><p>ICML 2026 optimization and "
           f"learning-theory papers, as chapters whose theory runs. The whole book, printed from its HTML build.</p>"
           f"<h2 id='p-contents'>Contents</h2><ol class='print-toc'>{''.join(toc)}</ol>"
           f"{''.join(body_parts)}</article></main></body></html>")
    out = html_dir / PRINT
    out.write_text(doc, encoding="utf-8")
    return out


def contents_anchors(html_dir: Path = HTML) -> list[str]:
    """The anchors the contents list (parts and pages), in order."""
    return re.findall(r"<li class='toc-[a-z]+'><a href='#([^']+)'", (html_dir / PRINT).read_text(encoding="utf-8"))


def destination_pages(pdf: Path) -> dict[str, int]:
    """Page number (from 1) of every named destination of the PDF (Chromium names one per linked anchor)."""
    from pypdf import PdfReader

    reader = PdfReader(str(pdf))
    out = {}
    for name, dest in reader.named_destinations.items():
        try:
            out[str(name).lstrip("/")] = reader.get_destination_page_number(dest) + 1
        except Exception:  # noqa: BLE001 - a destination without a page is not a contents entry
            continue
    return out


def chromium() -> str | None:
    for name in (os.environ.get("THEORYBOOK_CHROMIUM", ""), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _chromium_print(src: Path, out: Path, timeout: int) -> None:
    exe = chromium()
    with tempfile.TemporaryDirectory(prefix="theorybook-pdf-") as profile:
        cmd = [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--run-all-compositor-stages-before-draw",
               "--virtual-time-budget=120000", "--no-pdf-header-footer", "--generate-pdf-document-outline",
               f"--print-to-pdf={out}", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1", src.as_uri()]
        subprocess.run(cmd, check=True, timeout=timeout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not out.is_file() or out.stat().st_size < 10_000:
        raise RuntimeError(f"Chromium wrote no PDF at {out}")


def _digest(src: Path) -> str:
    """What the PDF depends on: the print document, every local file it loads (styles, scripts, figures) and this
    script. A page it only links to (``*.html``: the search page, a chapter's live-code target) is not loaded, and
    its bytes differ between a first build and the next (Sphinx adds ``?v=`` to some stylesheets only once their
    files exist), which would print an unchanged book again."""
    h = hashlib.sha256(src.read_bytes())
    text = src.read_text(encoding="utf-8")
    for url in sorted(set(re.findall(r"(?:src|href)=[\"']([^\"'#?]+)", text))):
        f = src.parent / url
        if not urlparse(url).scheme and f.suffix != ".html" and f.is_file():
            h.update(url.encode() + f.read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()


def print_pdf(html_dir: Path = HTML, timeout: int = 300, max_prints: int = 3) -> tuple[Path, int]:
    """Print the book, with the contents' page numbers read back from the PDF; ``(pdf, prints made)``. The page
    numbers of the last build are the first guess, and an unchanged print document is not printed again."""
    out = html_dir / PDF
    state_file = html_dir / STATE
    try:
        state = json.loads(state_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {}
    pages_of = {k: int(v) for k, v in state.get("pages", {}).items()}
    prints = 0
    while True:
        src = build_print_document(html_dir, pages_of)
        digest = _digest(src)
        if out.is_file() and state.get("sha256") == digest:
            return out, prints
        if prints == max_prints:
            raise RuntimeError(f"the contents' page numbers did not settle after {prints} prints")
        _chromium_print(src, out, timeout)
        prints += 1
        dests = destination_pages(out)
        anchors = contents_anchors(html_dir)
        missing = [a for a in anchors if a not in dests]
        if missing:
            raise RuntimeError(f"the PDF has no destination for contents entries {missing[:5]}")
        got = {a: dests[a] for a in anchors}
        if any(len(str(n)) > PAGE_DIGITS for n in got.values()):
            raise RuntimeError(f"the book has more than {10 ** PAGE_DIGITS - 1} pages: raise PAGE_DIGITS")
        state = {"pages": got, "sha256": digest if got == pages_of else None}
        state_file.write_text(json.dumps(state, indent=1), encoding="utf-8")
        if got == pages_of:
            return out, prints
        pages_of = got


def main() -> int:
    if not (HTML / "index.html").is_file():
        print("make pdf: build the book first (make book)", file=sys.stderr)
        return 1
    if chromium() is None:
        msg = "make pdf: no Chromium (apt-get install chromium): the PDF of the book is not built"
        if os.environ.get("CI"):
            print(msg, file=sys.stderr)
            return 1
        print(msg + " (skipped)")
        return 0
    out, prints = print_pdf()
    from pypdf import PdfReader

    n = len(PdfReader(str(out)).pages)
    what = "unchanged, not printed again" if prints == 0 else f"{prints} print(s)"
    print(f"make pdf: {out.relative_to(ROOT)} ({n} pages, {out.stat().st_size / 1e6:.1f} MB; {what})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
