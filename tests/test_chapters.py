"""Every chapter executed as a test, once: through the execution cache that ``make book`` reads.

``scripts/chapter_cache.py`` first drops the cache entry of every chapter whose dependencies changed (the chapter,
the ``theorybook`` packages it imports, the shared core, ``kernels/``, the bench results it reads); then each
chapter either has a valid cached run — it executed without error since anything it depends on last changed — or
is executed now, in a fresh temporary directory, and cached for the book build. A failing chapter fails here with
its traceback and is not cached. ``pytest --nbmake book/`` remains the way to execute every chapter afresh.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import chapter_cache  # noqa: E402

pytestmark = pytest.mark.chapters
CHAPTERS = chapter_cache.chapters()


@pytest.fixture(scope="module", autouse=True)
def synced():
    chapter_cache.sync()


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_executes(chapter, record_property):
    how, seconds = chapter_cache.execute(chapter)
    record_property("execution", how)
    print(f"{chapter.relative_to(ROOT)}: {how} ({seconds:.1f} s {'now' if how == 'executed' else 'when cached'})")
