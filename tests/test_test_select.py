"""``make test-changed`` runs what a change can break, and only that (``scripts/test_select.py``).

On a copy of the repository's sources: editing one chapter's package selects exactly that chapter, its audit, its
test file and its parametrized items; editing the shared core (``check/``) or the test machinery selects
everything; a green run is recorded and a failed one is not.
"""

# test-changed: core only
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import chapter_cache  # noqa: E402
import test_select  # noqa: E402


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("repo")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "seed_audit")
    for d in ("book", "src", "kernels", "bench/results", "tests"):
        shutil.copytree(ROOT / d, dst / d, ignore=ignore)
    for f in ("_toc.yml", "_config.yml", "pyproject.toml", "conftest.py", "Makefile", "README.md",
              "scripts/ipython_kernel_config.py"):
        (dst / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / f, dst / f)
    return dst


@pytest.fixture
def tree(base, tmp_path) -> Path:
    """A fresh copy per test (the tests edit it)."""
    dst = tmp_path / "repo"
    shutil.copytree(base, dst)
    return dst


def _edit(tree: Path, rel: str) -> test_select.Plan:
    before = test_select.snapshot(tree)
    f = tree / rel
    f.write_text(f.read_text(encoding="utf-8") + "\n# edited by the selection test\n", encoding="utf-8")
    return test_select.plan(test_select.changed_files(before, test_select.snapshot(tree)), tree, before)


def _known(tree: Path) -> set[str]:
    return chapter_cache._packages(tree) | {c.stem for c in chapter_cache.chapters(tree)}


def _runs(p, tree, rel: str, **params) -> bool:
    return test_select.selected(p, rel, params, (tree / rel).read_text(encoding="utf-8"), _known(tree))


@pytest.mark.parametrize("pkg", ["colora", "thompson_online"])
def test_editing_one_chapters_package_selects_exactly_that_chapter(tree, pkg):
    p = _edit(tree, f"src/theorybook/{pkg}/verdicts.py")
    assert not p.everything
    assert p.chapters == [pkg] and p.packages == [pkg]
    other = "grasp"
    chapter = next(c for c in chapter_cache.chapters(tree) if c.stem == pkg)
    assert _runs(p, tree, "tests/test_chapters.py", chapter=chapter)
    assert not _runs(p, tree, "tests/test_chapters.py", chapter=chapter.with_name(f"{other}.md"))
    assert _runs(p, tree, "tests/test_seed_robustness.py", name=pkg)  # its audit
    assert not _runs(p, tree, "tests/test_seed_robustness.py", name=other)
    assert _runs(p, tree, "tests/test_verdict_rules.py", slug=pkg, path=chapter)
    assert _runs(p, tree, "tests/test_api_fuzz.py", modname=f"theorybook.{pkg}.verdicts", name="f", param="x")
    assert not _runs(p, tree, "tests/test_api_fuzz.py", modname="theorybook.sweep", name="run_sweep", param="x")
    assert _runs(p, tree, f"tests/test_{pkg}.py")
    assert not _runs(p, tree, f"tests/test_{other}.py")
    assert not _runs(p, tree, "tests/test_check.py")
    files = test_select.test_files(p, tree)
    assert f"tests/test_{pkg}.py" in files and f"tests/test_{other}.py" not in files
    assert "tests/test_check.py" not in files and "tests/test_kernels.py" not in files


def test_editing_a_chapter_selects_that_chapter_only(tree):
    p = _edit(tree, "book/optimizers/grasp.md")
    assert not p.everything and p.chapters == ["grasp"] and p.packages == []


@pytest.mark.parametrize("core", ["src/theorybook/check/outcomes.py", "src/theorybook/validate.py", "kernels/cpu.py",
                                  "conftest.py", "tests/verdict_runs.py", "Makefile", "_toc.yml"])
def test_editing_the_core_selects_everything(tree, core):
    p = _edit(tree, core)
    assert p.everything, p
    assert _runs(p, tree, "tests/test_check.py") and _runs(p, tree, "tests/test_seed_robustness.py", name="grasp")
    every = {str(t.relative_to(tree)) for t in (tree / "tests").glob("test_*.py")}
    assert set(test_select.test_files(p, tree)) == every


def test_editing_a_test_file_runs_that_file(tree):
    p = _edit(tree, "tests/test_check.py")
    assert not p.everything and p.full_files == ["tests/test_check.py"] and not p.chapters
    assert _runs(p, tree, "tests/test_check.py") and not _runs(p, tree, "tests/test_grasp.py")


def test_editing_a_record_reruns_that_chapters_audit(tree):
    before = test_select.snapshot(tree)
    (tree / "tests" / "seed_audit").mkdir(exist_ok=True)
    (tree / "tests" / "seed_audit" / "colora.json").write_text("{}")
    p = test_select.plan(test_select.changed_files(before, test_select.snapshot(tree)), tree, before)
    assert p.records == ["colora"] and not p.chapters
    assert _runs(p, tree, "tests/test_seed_robustness.py", name="colora")
    assert not _runs(p, tree, "tests/test_seed_robustness.py", name="grasp")


def test_editing_the_readme_runs_the_files_that_read_it(tree):
    p = _edit(tree, "README.md")
    assert not p.everything and not p.chapters
    assert p.full_files == sorted(str(t.relative_to(tree)) for t in (tree / "tests").glob("test_*.py")
                                  if "README.md" in t.read_text(encoding="utf-8"))


def test_nothing_changed_selects_nothing(tree):
    snap = test_select.snapshot(tree)
    p = test_select.plan(set(), tree, snap)
    assert not p.anything and test_select.test_files(p, tree) == []


def test_without_a_green_run_everything_runs(tree):
    p, _ = test_select.current_plan(tree, state=tree / "_build" / ".last_green.json")
    assert p.everything


def test_a_green_run_is_recorded_from_its_start(tree):
    start, state = tree / "_build" / "start.json", tree / "_build" / "green.json"
    start.parent.mkdir()
    start.write_text(json.dumps(test_select.snapshot(tree)))
    f = tree / "src" / "theorybook" / "grasp" / "theory.py"
    f.write_text(f.read_text() + "\n# edited while the suite ran\n")  # not covered by that run: stays changed
    (tree / "tests" / "seed_audit").mkdir(exist_ok=True)
    (tree / "tests" / "seed_audit" / "grasp.json").write_text("{}")  # written by the run itself: taken as is
    test_select.record(tree, start, state)
    p, _ = test_select.current_plan(tree, state=state)
    assert not p.everything and p.chapters == ["grasp"] and p.records == []
    assert not start.exists()
