"""A stale chapter output is impossible: the execution cache follows each chapter's dependencies.

Works on a copy of the repository's sources in a temporary directory: editing one chapter changes only that
chapter's fingerprint; editing ``src/theorybook/<slug>/`` changes exactly the chapters that import it (directly or
through another package); editing the shared core changes all of them; and :func:`chapter_cache.sync` drops exactly
the cache entries of the changed chapters, so those — and only those — re-execute.
"""

# test-changed: core only
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import chapter_cache  # noqa: E402


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("repo")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for d in ("book", "src", "kernels", "bench/results"):
        shutil.copytree(ROOT / d, dst / d, ignore=ignore)
    for f in ("_toc.yml", "_config.yml", "pyproject.toml", "scripts/ipython_kernel_config.py"):
        (dst / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / f, dst / f)
    return dst


def _prints(root: Path) -> dict[str, str]:
    return {p.stem: chapter_cache.fingerprint(p, root) for p in chapter_cache.chapters(root)}


def _touch(path: Path, line: str = "\n# edited by the stale-output test\n") -> None:
    path.write_text(path.read_text(encoding="utf-8") + line, encoding="utf-8")


def _changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {k for k in before if before[k] != after[k]}


def _importers(root: Path, pkg: str) -> set[str]:
    out = set()
    for ch in chapter_cache.chapters(root):
        deps = chapter_cache.dependencies(ch, root)
        if any(f.is_relative_to(root / "src" / "theorybook" / pkg) for f in deps):
            out.add(ch.stem)
    return out


def test_fingerprints_are_deterministic(tree):
    assert _prints(tree) == _prints(tree)
    assert len(_prints(tree)) == 19


def test_editing_a_chapter_changes_only_that_chapter(tree):
    before = _prints(tree)
    _touch(tree / "book" / "optimizers" / "grasp.md", "\nAn added sentence.\n")
    assert _changed(before, _prints(tree)) == {"grasp"}


@pytest.mark.parametrize("pkg", ["grasp", "cdeq", "thompson_online"])
def test_editing_a_package_changes_exactly_its_importers(tree, pkg):
    before = _prints(tree)
    target = sorted((tree / "src" / "theorybook" / pkg).glob("*.py"))[-1]
    _touch(target)
    changed = _changed(before, _prints(tree))
    assert pkg in changed and changed == _importers(tree, pkg)
    assert len(changed) < 19


@pytest.mark.parametrize("core", ["src/theorybook/check/outcomes.py", "src/theorybook/device.py", "kernels/cpu.py"])
def test_editing_the_shared_core_changes_every_chapter(tree, core):
    before = _prints(tree)
    _touch(tree / core)
    assert _changed(before, _prints(tree)) == set(before)


def test_sync_drops_exactly_the_stale_entries(tree, tmp_path):
    from jupyter_cache.base import CacheBundleIn

    cache_dir = tmp_path / "cache"
    chapters = chapter_cache.chapters(tree)
    first = chapter_cache.sync(cache_dir, tree, quiet=True)
    assert len(first) == 19  # nothing recorded yet: everything must run
    cache = chapter_cache._cache(cache_dir)
    for ch in chapters:  # stand-ins for executed notebooks, one per chapter
        nb = chapter_cache.read_notebook(ch)
        cache.cache_notebook_bundle(CacheBundleIn(nb, str(ch.resolve())), check_validity=False, overwrite=True)
    assert chapter_cache.sync(cache_dir, tree, quiet=True) == []
    assert len(cache.list_cache_records()) == 19
    _touch(tree / "src" / "theorybook" / "grasp" / "theory.py")
    stale = {p.stem for p in chapter_cache.sync(cache_dir, tree, quiet=True)}
    assert stale == _importers(tree, "grasp") and "grasp" in stale
    left = {Path(r.uri).stem for r in cache.list_cache_records()}
    assert left == {p.stem for p in chapters} - stale
    for ch in chapters:  # the chapters that must re-run have no cached output left to match
        if ch.stem in stale:
            with pytest.raises(KeyError):
                cache.match_cache_notebook(chapter_cache.read_notebook(ch))
        else:
            assert cache.match_cache_notebook(chapter_cache.read_notebook(ch))
