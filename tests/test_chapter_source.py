"""The chapters' sources as a reader sees them, checked without building the book (issue 59, item 3).

Every code line the built page shows fits a 90-character line: a longer line needs sideways scrolling at 1400 px
(the text column holds ≈ 90 characters of code) and wraps mid-expression on a phone. A code cell's source is shown
unless its tags remove it (``remove-input``, ``remove-cell``); a ``hide-input`` or ``hide-cell`` cell is folded
but opens on a click, so its lines count. Plain fenced code blocks in the prose (```` ```text ````) count too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
#: Characters a shown code line may hold (issue 59: "code lines ≤ 90 characters in shown cells").
MAX_CODE_LINE = 90
#: Tags with which MyST-NB leaves a cell's source out of the page.
REMOVES_SOURCE = frozenset({"remove-input", "remove-cell"})

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<ticks>`{3,}|:{3,})\s*(?P<info>.*?)\s*$")


@dataclass
class CodeBlock:
    """One fenced code block of a MyST Markdown page: a code cell or a plain code block in the prose."""

    kind: str  # "code-cell" or the plain block's language ("" when none)
    tags: list[str] = field(default_factory=list)
    lines: list[tuple[int, str]] = field(default_factory=list)  # (1-based line number in the file, text)

    @property
    def shown(self) -> bool:
        """Whether the built page shows this block's source (folded or not)."""
        return not REMOVES_SOURCE.intersection(self.tags)


def _cell_options(body: list[tuple[int, str]]) -> tuple[dict, list[tuple[int, str]]]:
    """Split a code cell's body into its options (``:key: value`` lines or a ``---`` YAML block) and its source."""
    if body and body[0][1].strip() == "---":
        for k in range(1, len(body)):
            if body[k][1].strip() == "---":
                opts = yaml.safe_load("\n".join(t for _, t in body[1:k])) or {}
                return opts, body[k + 1:]
        raise ValueError(f"line {body[0][0]}: a code cell's YAML options are never closed")
    opts: dict = {}
    k = 0
    while k < len(body) and (m := re.match(r"^:(\w[\w-]*):\s*(.*)$", body[k][1])):
        opts[m.group(1)] = yaml.safe_load(m.group(2)) if m.group(2) else None
        k += 1
    return opts, body[k:]


def code_blocks(text: str) -> list[CodeBlock]:
    """The fenced code blocks of a MyST Markdown page, code cells with their tags, in order.

    Directives (```` ```{name} ```` or ``:::{name}``) are containers: code blocks nested inside them are found too.
    A bare fence closes the innermost open directive when its fence is at least as long; otherwise it opens a
    plain code block.
    """
    lines = text.splitlines()
    blocks: list[CodeBlock] = []
    open_directives: list[str] = []  # fence strings of the directives enclosing the current line
    i = 0
    # skip the jupytext YAML header
    if lines and lines[0].strip() == "---":
        i = next(k for k in range(1, len(lines)) if lines[k].strip() == "---") + 1
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        ticks, info = m.group("ticks"), m.group("info")
        if not info:
            if open_directives and open_directives[-1][0] == ticks[0] and len(ticks) >= len(open_directives[-1]):
                open_directives.pop()
                i += 1
                continue
        is_code_cell = info.startswith("{code-cell}")
        if info.startswith("{") and not is_code_cell:
            open_directives.append(ticks)
            i += 1
            continue
        if ticks[0] == ":":  # a colon fence is always a directive; a bare one with nothing open: not code
            i += 1
            continue
        # a code block: runs to a bare fence of at least as many backticks
        body: list[tuple[int, str]] = []
        j = i + 1
        while j < len(lines):
            c = _FENCE.match(lines[j])
            if c and not c.group("info") and c.group("ticks")[0] == "`" and len(c.group("ticks")) >= len(ticks):
                break
            body.append((j + 1, lines[j]))
            j += 1
        if is_code_cell:
            opts, source = _cell_options(body)
            tags = opts.get("tags") or []
            blocks.append(CodeBlock("code-cell", list(tags), source))
        else:
            blocks.append(CodeBlock(info.split()[0] if info else "", [], body))
        i = j + 1
    return blocks


def _pages() -> list[Path]:
    return sorted(BOOK.rglob("*.md"))


def long_code_lines(path: Path, limit: int = MAX_CODE_LINE) -> list[str]:
    """``file:line (n chars)`` for every shown code line of ``path`` longer than ``limit`` characters."""
    rel = path.relative_to(ROOT)
    return [f"{rel}:{n} ({len(t)} chars)"
            for b in code_blocks(path.read_text(encoding="utf-8")) if b.shown
            for n, t in b.lines if len(t) > limit]


def test_parser_finds_cells_tags_and_nested_blocks():
    """The parser on a page with every form the book uses: a header, ``:tags:`` and YAML options, a directive
    holding a plain code block, a colon fence; a long line in a removed cell is not counted, one in a folded
    (``hide-input``) cell is."""
    long = "x = " + "1 + " * 30 + "1"
    page = "\n".join([
        "---", "jupytext:", "  formats: md:myst", "---", "# T", "",
        "```{code-cell} ipython3", ":tags: [remove-cell]", long, "```", "",
        "```{code-cell} ipython3", "---", "tags: [hide-input]", "---", long, "```", "",
        "````{admonition} A note", "```text", "short", "```", "````", "",
        ":::{note}", "prose " * 40, ":::", "",
        "```{code-cell} ipython3", "y = 2", "```",
    ])
    blocks = code_blocks(page)
    assert [(b.kind, b.tags, [t for _, t in b.lines]) for b in blocks] == [
        ("code-cell", ["remove-cell"], [long]),
        ("code-cell", ["hide-input"], [long]),
        ("text", [], ["short"]),
        ("code-cell", [], ["y = 2"]),
    ]
    assert [b.shown for b in blocks] == [False, True, True, True]
    assert blocks[1].lines[0][0] == 16  # 1-based line numbers in the file


def test_every_chapter_has_code_cells():
    """The parser finds the book's code cells (so the length check below cannot pass by finding none)."""
    pages = [p for p in _pages() if p.parent != BOOK]
    assert len(pages) >= 19
    for p in pages:
        cells = [b for b in code_blocks(p.read_text(encoding="utf-8")) if b.kind == "code-cell"]
        assert cells, f"{p.relative_to(ROOT)}: no code cells found"
        assert sum(b.shown for b in cells) > 0, f"{p.relative_to(ROOT)}: no shown code cell"


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(BOOK)))
def test_shown_code_lines_fit(page):
    """No code line a reader sees (in a shown or folded cell, or a code block in the prose) is longer than
    :data:`MAX_CODE_LINE` characters."""
    bad = long_code_lines(page)
    assert not bad, f"{len(bad)} shown code lines over {MAX_CODE_LINE} characters:\n" + "\n".join(bad)
