"""The whole book as one PDF (``make pdf``; ``make book`` runs it last): printed by headless Chromium from the
built HTML, with nothing downloaded at build time.

1. Every page of ``_toc.yml`` (front page, the 19 chapters, the claims ledger, the references), in book order, is
   read from ``_build/html``; its article is copied into one print document, ``_build/html/print.html``, with each
   relative link and image rewritten for the document's place at the site's root, and a table of contents first.
   The print document keeps the pages' ``<head>`` (the theme's styles, the vendored MathJax, the static explorers'
   script), so maths is typeset exactly as on the site; widgets' frozen views and the sidebars are hidden for print,
   every disclosure (a verdict row's details, a ledger chapter's rows) is opened.
2. Chromium (``--headless --print-to-pdf``, with a virtual-time budget so MathJax finishes first) prints it to
   ``_build/html/executable-theory.pdf``, which the front page links.

Without Chromium the PDF is skipped with a message (a plain ``make book`` on a machine without it still works),
unless ``CI`` is set: then it fails. ``tests/test_site.py::test_pdf`` checks every chapter title is in the PDF's text
(``pdftotext``) and no raw TeX is.
"""

from __future__ import annotations

import os
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

PRINT_CSS = """
@page { size: A4; margin: 16mm 14mm; }
.bd-sidebar-primary, .bd-sidebar-secondary, .bd-header, .bd-footer, .bd-footer-article, .header-article,
.prev-next-area, .bd-header-article, .skip-link, .theme-switch-button, .search-button, .tb-static-controls,
.widget-subarea, .jupyter-widgets, .cell_input .copybtn, .toggle-button, #pst-back-to-top { display: none !important; }
.bd-main, .bd-content, .bd-article-container, .bd-article { max-width: 100% !important; width: 100% !important; }
.print-page { break-before: page; }
.print-toc li { margin: 0.15rem 0; }
img { max-width: 100% !important; break-inside: avoid; }
pre { white-space: pre-wrap; word-break: break-word; }
tr.verdict-row { break-inside: avoid; }
"""

OPEN_ALL = """
<script>
document.addEventListener('DOMContentLoaded', function () {
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });
});
</script>
"""


def toc_pages(root: Path = ROOT) -> list[tuple[str, str]]:
    """(docname, html path relative to the build) of every page of ``_toc.yml``, in book order."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    docs = [toc["root"]]
    for part in toc.get("parts", []):
        docs += [c["file"] for c in part.get("chapters", [])]
    return [(d, d + ".html") for d in docs]


def _rewrite(soup, page: str) -> None:
    """Make the article's relative URLs relative to the site's root (where print.html sits)."""
    base = "https://book.invalid/" + page
    for tag, attr in (("img", "src"), ("a", "href"), ("source", "src")):
        for el in soup.find_all(tag):
            url = el.get(attr)
            if not url or url.startswith(("data:", "#", "mailto:")) or urlparse(url).scheme:
                continue
            absolute = urljoin(base, url)
            path = urlparse(absolute).path.lstrip("/")
            frag = urlparse(absolute).fragment
            el[attr] = path + (f"#{frag}" if frag else "")


def build_print_document(html_dir: Path = HTML) -> Path:
    """Write ``print.html``: the head of the front page, a table of contents, every page's article in order."""
    from bs4 import BeautifulSoup

    pages = toc_pages()
    head_soup = BeautifulSoup((html_dir / pages[0][1]).read_text(encoding="utf-8"), "html.parser")
    _rewrite(head_soup, pages[0][1])
    for link in head_soup.head.find_all(["link", "script"]):
        for attr in ("href", "src"):
            url = link.get(attr)
            if url and not urlparse(url).scheme and not url.startswith(("data:", "/")):
                link[attr] = urlparse(urljoin("https://book.invalid/" + pages[0][1], url)).path.lstrip("/")
    body_parts, toc = [], []
    for doc, rel in pages:
        soup = BeautifulSoup((html_dir / rel).read_text(encoding="utf-8"), "html.parser")
        article = soup.select_one("article.bd-article") or soup.select_one("main") or soup.body
        _rewrite(article, rel)
        h1 = article.find("h1")
        title = h1.get_text(" ", strip=True).replace("#", "").strip() if h1 else doc
        anchor = "print-" + doc.replace("/", "-")
        toc.append(f"<li><a href='#{anchor}'>{title}</a></li>")
        body_parts.append(f"<section class='print-page' id='{anchor}'>{article.decode_contents()}</section>")
    title = "Executable Theory"
    doc = (f"<!DOCTYPE html><html lang='en'><head>{head_soup.head.decode_contents()}"
           f"<style>{PRINT_CSS}</style>{OPEN_ALL}</head><body><main class='bd-main'><article class='bd-article'>"
           f"<h1>{title}</h1><p>ICML 2026 optimization and learning-theory papers, as chapters whose theory runs. "
           f"The whole book, printed from its HTML build.</p><h2>Contents</h2><ol class='print-toc'>{''.join(toc)}</ol>"
           f"{''.join(body_parts)}</article></main></body></html>")
    out = html_dir / PRINT
    out.write_text(doc, encoding="utf-8")
    return out


def chromium() -> str | None:
    for name in (os.environ.get("THEORYBOOK_CHROMIUM", ""), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def print_pdf(html_dir: Path = HTML, timeout: int = 300) -> Path:
    src = build_print_document(html_dir)
    exe = chromium()
    out = html_dir / PDF
    with tempfile.TemporaryDirectory(prefix="theorybook-pdf-") as profile:
        cmd = [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--run-all-compositor-stages-before-draw",
               "--virtual-time-budget=120000", "--no-pdf-header-footer", f"--print-to-pdf={out}",
               "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1", src.as_uri()]
        subprocess.run(cmd, check=True, timeout=timeout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not out.is_file() or out.stat().st_size < 10_000:
        raise RuntimeError(f"Chromium wrote no PDF at {out}")
    return out


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
    out = print_pdf()
    print(f"make pdf: {out.relative_to(ROOT)} ({out.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
