"""Sphinx extension: pages for reading — every figure has a text alternative.

MyST-NB renders a cell's image output as an ``<img>`` whose ``alt`` is the image's file path, which is what a
screen reader would read out. At ``doctree-read`` each image without a real ``alt`` gets one from its context:
the figure's caption when it is in a figure, else the section it illustrates ("Figure in “Experiment” —
<chapter title>"). ``tests/test_site.py`` checks that no image's alt text is a path.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx


def _section_title(node: nodes.Node) -> str:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, nodes.section):
            title = next(iter(parent.findall(nodes.title)), None)
            if title is not None:
                return title.astext()
        parent = parent.parent
    return ""


def _doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    page = next(iter(doctree.findall(nodes.title)), None)
    page_title = page.astext() if page is not None else app.env.docname
    for i, img in enumerate(doctree.findall(nodes.image)):
        alt = (img.get("alt") or "").strip()
        uri = img.get("uri", "")
        if alt and alt != uri and "/" not in alt and not alt.endswith((".png", ".svg", ".jpg")):
            continue
        fig = img.parent if isinstance(img.parent, nodes.figure) else None
        caption = next(iter(fig.findall(nodes.caption)), None) if fig is not None else None
        if caption is not None:
            img["alt"] = caption.astext()
            continue
        section = _section_title(img)
        where = f"“{section}”" if section and section != page_title else "the opening"
        img["alt"] = f"Figure {i + 1} of “{page_title}”, in {where}: drawn by the code cell above it"


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("doctree-read", _doctree_read)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
