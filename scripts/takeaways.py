"""Sphinx extension: the executed notebooks a reader downloads carry their outputs and say how to re-run them.

sphinx-book-theme offers each chapter as ``_sources/<doc>.ipynb`` (its download menu), copied from
``_build/jupyter_execute/<doc>.ipynb``. When the build took a chapter's outputs from the execution cache that copy
can lack them, so at the end of the build this extension rewrites every chapter's download from the execution
cache (``_build/.jupyter_cache``, the run ``scripts/chapter_cache.py`` made): the chapter as MyST-NB reads it, its
outputs merged from the cached execution, and a first cell saying where it comes from and how to install
``theorybook`` to run it again. Its prose is made to read in plain Jupyter (:mod:`plain_notebook`): glued numbers,
numbered references and citations resolved to text, directives as quoted paragraphs, figure captions under the
figures, a note under each widget. ``tests/test_site.py::test_executed_notebooks`` opens each with nbformat.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

HOW_TO_RERUN = """\
**An executed copy of this chapter of *Executable Theory*** — the outputs are those of the book's build.

To run it again you need the `theorybook` library it imports. From a clone of the book's repository:

```bash
make venv                         # creates .venv: torch==2.13.0 (CPU) + pip install -e ".[book,test]"
.venv/bin/jupyter lab             # then open this notebook with the .venv kernel
```

or, in an environment of your own: `pip install torch==2.13.0` and `pip install -e ".[book]"` in the clone.
A chapter runs in under a minute on a laptop CPU and unchanged on a GPU (`THEORYBOOK_DEVICE=cuda`)."""


def executed_notebook(chapter: Path, cache_dir: Path) -> Any | None:
    """The chapter with its cached outputs and the how-to-re-run cell, or ``None`` when the cache has no run."""
    import nbformat

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "scripts"))
    import chapter_cache

    if not cache_dir.is_dir():
        return None
    from jupyter_cache import get_cache

    nb = chapter_cache.read_notebook(chapter)
    try:
        _, merged = get_cache(str(cache_dir)).merge_match_into_notebook(nb)
    except KeyError:
        return None
    merged.cells.insert(0, nbformat.v4.new_markdown_cell(HOW_TO_RERUN))
    return merged


def _build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    import nbformat

    root = Path(app.confdir)
    cache_dir = Path(app.outdir).parent / ".jupyter_cache"
    sys.path.insert(0, str(root / "scripts"))
    import chapter_cache
    import plain_notebook

    resolvers = plain_notebook.sphinx_resolvers(app)  # the book's numbering, bibliography and bottom lines, once
    for chapter in chapter_cache.chapters(root):
        doc = chapter.relative_to(root).with_suffix("")
        nb = executed_notebook(chapter, cache_dir)
        if nb is None:
            continue
        try:
            resolver, caption = resolvers(str(doc), plain_notebook.glue_values(nb))
            plain_notebook.plain_notebook(nb, resolver, caption)
        except Exception as err:  # noqa: BLE001 - the download stays MyST; test_notebooks_read_without_the_book says so
            print(f"takeaways: {doc}: the notebook's prose was not made plain ({err!r})", file=sys.stderr)
        out = Path(app.outdir) / "_sources" / doc.with_suffix(".ipynb")
        out.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(out))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("build-finished", _build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
