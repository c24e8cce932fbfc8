"""``make test-changed``: run only the tests, chapters and seed audits whose dependencies changed since the last
green run — everything when the shared core changed.

The last green run is a snapshot (a hash of every watched file: :data:`WATCHED`) kept in the git-ignored
``_build/.last_green.json``; ``make test`` and ``make test-changed`` write it when every suite they run passes.
The selection compares the working tree with it (:func:`plan`) and uses the chapter cache's dependency closure
(``scripts/chapter_cache.py``):

* a change to the shared core (:func:`chapter_cache.core_files`: ``src/theorybook/*.py``, ``check/``,
  ``kernels/``, ``pyproject.toml``, …) or to the test machinery (:data:`TEST_CORE`: ``conftest.py``, the
  ``Makefile``, ``tests/verdict_runs.py``, ``tests/fixtures/``, these scripts, ``_config.yml``, ``_toc.yml``), a
  package or chapter added or removed: **everything**;
* ``src/theorybook/<pkg>/…`` or a ``bench/results/*.json``: the packages whose closure holds it are *affected*,
  and so is every chapter whose closure holds it (:func:`chapter_cache.dependencies`);
* ``book/…/<slug>.md``: that chapter; ``tests/seed_audit/<slug>.json``: that chapter's audit;
  ``tests/test_<x>.py``: that test file, in full;
* another file under ``tests/`` (a helper module): everything;
* anything else (``README.md``, ``environment.yml``, ``bench/*.py``, …): every test file that names it, in full.

A test item runs (:func:`selected`; one marked ``core_only`` only in the first case) when everything or its file
runs in full, or it is parametrized by a chapter or package
(``[colora]``, ``[theorybook.colora.theory.x]``, ``[book/…/colora.md]``) that is affected, or — not parametrized by
one — its file imports an affected package, or walks every package (``test_api_fuzz``, ``test_packaging``, …) and
something is affected. So after editing ``src/theorybook/colora/`` the run is ``tests/test_colora.py``, the
chapter ``colora`` (re-executed through the chapter cache) and its seed audit (stale: re-audited in full), the
verdict-rule, fuzz and packaging items of ``colora``, and the few whole-book checks; the browser tests and the book
build are left to ``make test``.

Command line: ``python scripts/test_select.py plan`` (print what would run), ``run [JOBS]`` (``make
test-changed``), ``snapshot`` / ``record`` (what ``make test`` does before and after its suites).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import chapter_cache  # noqa: E402

STATE = ROOT / "_build" / ".last_green.json"
PENDING = ROOT / "_build" / ".test_run_start.json"
PLAN_ENV = "THEORYBOOK_CHANGED_PLAN"
#: What the unit, chapter and audit suites can read (the browser tests and the book build also read _static/).
WATCHED = ("src", "kernels", "book", "tests", "bench", "scripts", "conftest.py", "Makefile", "pyproject.toml",
           "_config.yml", "_toc.yml", "environment.yml", "README.md")
#: The test machinery: a change here runs everything (with :func:`chapter_cache.core_files`).
TEST_CORE = ("conftest.py", "Makefile", "pyproject.toml", "_config.yml", "_toc.yml", "tests/verdict_runs.py",
             "tests/walltime.py", "tests/fixtures/", "scripts/chapter_cache.py", "scripts/seed_audit.py",
             "scripts/test_select.py", "scripts/ipython_kernel_config.py")
#: A test file that walks every package or chapter: its items not parametrized by one run when anything is affected.
_GLOBAL = re.compile(r"iter_modules|theorybook\.__path__|chapter_cache\.chapters|_toc\.yml|rglob\(")
#: The mark of a test file that tests the machinery on a copy of the sources (``test_chapter_cache.py``, this
#: selection's own tests): it runs when the core or the file itself changes, not for a chapter's change.
CORE_ONLY = "# test-changed: core only"


def snapshot(root: Path = ROOT) -> dict[str, str]:
    """``{path: sha256}`` of every watched file (bytecode and caches excluded)."""
    out = {}
    for name in WATCHED:
        p = root / name
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else []
        for f in files:
            rel = f.relative_to(root)
            if "__pycache__" in rel.parts or f.suffix in (".pyc", ".pyo") or rel.parts[0] == "bench" and (
                    len(rel.parts) > 2 and rel.parts[1] != "results"):
                continue
            out[str(rel)] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def changed_files(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {k for k in set(before) | set(after) if before.get(k) != after.get(k)}


@dataclass
class Plan:
    everything: bool = False
    why: str = ""
    changed: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)  # affected: their closure holds a changed file
    chapters: list[str] = field(default_factory=list)  # affected chapters (stems)
    records: list[str] = field(default_factory=list)  # seed-audit records that changed
    full_files: list[str] = field(default_factory=list)  # test files to run in full

    @property
    def anything(self) -> bool:
        return self.everything or bool(self.packages or self.chapters or self.records or self.full_files)


def _is_test_core(rel: str, root: Path) -> bool:
    if any(rel == c or (c.endswith("/") and rel.startswith(c)) for c in TEST_CORE):
        return True
    return rel in {str(f.relative_to(root)) for f in chapter_cache.core_files(root)} or (
        rel.startswith("src/theorybook/") and rel.count("/") == 2) or rel.startswith(("kernels/",
                                                                                       "src/theorybook/check/"))


def plan(changed: set[str], root: Path = ROOT, before: dict[str, str] | None = None) -> Plan:
    """What a change (paths relative to ``root``) makes run; ``before`` (the last green snapshot) tells an added or
    removed file from an edited one."""
    p = Plan(changed=sorted(changed))
    if before is None:
        return Plan(everything=True, why="no record of a green run (_build/.last_green.json)", changed=p.changed)
    pkgs = chapter_cache._packages(root)
    chapters = {str(c.relative_to(root)): c.stem for c in chapter_cache.chapters(root)}
    tests = sorted((root / "tests").glob("test_*.py"))
    touched: set[Path] = set()
    full: set[str] = set()
    for rel in sorted(changed):
        exists, existed = (root / rel).is_file(), rel in before
        parts = rel.split("/")
        if _is_test_core(rel, root):
            return Plan(everything=True, why=f"{rel} is shared by every test", changed=p.changed)
        if parts[:2] == ["src", "theorybook"] and len(parts) > 3:
            if parts[2] not in pkgs or parts[3] == "__init__.py" and exists != existed:
                return Plan(everything=True, why=f"package {parts[2]} added or removed", changed=p.changed)
            touched.add(root / rel)
        elif parts[0] == "book":
            if not (exists and existed):
                return Plan(everything=True, why=f"{rel} added or removed", changed=p.changed)
            if rel in chapters:
                touched.add(root / rel)
            else:  # intro.md, references.bib: the test files that name it
                full |= {str(t.relative_to(root)) for t in tests if Path(rel).name in t.read_text(encoding="utf-8")}
        elif parts[:2] == ["bench", "results"]:
            touched.add(root / rel)
        elif parts[:2] == ["tests", "seed_audit"]:
            p.records.append(Path(rel).stem)
        elif parts[0] == "tests" and re.fullmatch(r"test_\w+\.py", parts[-1]) and len(parts) == 2:
            if exists:
                full.add(rel)
        elif parts[0] == "tests":  # a helper module or data of the tests (verdict_runs.py, walltime.py, …)
            return Plan(everything=True, why=f"{rel} is shared by the tests", changed=p.changed)
        else:  # README.md, environment.yml, bench/*.py, other scripts: the test files that name it
            name = Path(rel).name
            full |= {str(t.relative_to(root)) for t in tests if name in t.read_text(encoding="utf-8")}
    p.packages = sorted(q for q in pkgs if touched & set(chapter_cache.package_dependencies([q], root)))
    p.chapters = sorted(stem for rel, stem in chapters.items()
                        if touched & set(chapter_cache.dependencies(root / rel, root)))
    p.full_files = sorted(full)
    return p


def current_plan(root: Path = ROOT, state: Path = STATE) -> tuple[Plan, dict[str, str]]:
    now = snapshot(root)
    before = json.loads(state.read_text()) if state.exists() else None
    return plan(changed_files(before or {}, now), root, before), now


# -- which test items run ------------------------------------------------------------------------------------------

def _slugs(params: dict, known: set[str]) -> set[str] | None:
    """The chapters/packages a parametrized item is about (``None``: not parametrized by one; ``{"<core>"}``: by a
    shared-core module such as ``theorybook.sweep``)."""
    out: set[str] = set()
    for v in params.values():
        if isinstance(v, str | os.PathLike):
            s = str(v)
            if s.startswith("theorybook."):
                out.add(s.split(".")[1] if s.split(".")[1] in known else "<core>")
            elif s in known or Path(s).stem in known:
                out.add(s if s in known else Path(s).stem)
    return out or None


def selected(p: Plan, test_file: str, params: dict, text: str, known: set[str]) -> bool:
    """Whether the item of ``test_file`` (relative path; ``params`` its parametrization, ``text`` the file's
    source, ``known`` every package and chapter stem) runs under the plan."""
    if p.everything or test_file in p.full_files:
        return True
    if CORE_ONLY in text:
        return False
    affected = set(p.packages) | set(p.chapters) | set(p.records)
    slugs = _slugs(params, known)
    if slugs is not None:
        return bool(slugs & affected)
    if _GLOBAL.search(text):
        return bool(affected)
    return bool(chapter_cache._imported(text, known) & set(p.packages))


def test_files(p: Plan, root: Path = ROOT) -> list[str]:
    """The test files that may hold a selected item (the others are not even collected)."""
    known = chapter_cache._packages(root) | {c.stem for c in chapter_cache.chapters(root)}
    affected = set(p.packages) | set(p.chapters) | set(p.records)
    out = []
    for t in sorted((root / "tests").glob("test_*.py")):
        rel, text = str(t.relative_to(root)), t.read_text(encoding="utf-8")
        if p.everything or rel in p.full_files or CORE_ONLY not in text and (
                (_GLOBAL.search(text) and affected) or chapter_cache._imported(text, known) & set(p.packages)):
            out.append(rel)
    return out


# -- the commands --------------------------------------------------------------------------------------------------

def record(root: Path = ROOT, start: Path = PENDING, state: Path = STATE) -> None:
    """The snapshot taken when the run started becomes the last green one; the seed-audit records the run itself
    rewrote (a stale chapter re-audited) are taken as they are now."""
    snap = json.loads(start.read_text())
    now = snapshot(root)
    for k in [k for k in set(snap) | set(now) if k.startswith("tests/seed_audit/")]:
        if k in now:
            snap[k] = now[k]
        else:
            snap.pop(k, None)
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps(snap, indent=0, sort_keys=True))
    start.unlink()


def _describe(p: Plan) -> str:
    if p.everything:
        return f"everything ({p.why})"
    if not p.anything:
        return "nothing changed since the last green run"
    return (f"{len(p.changed)} file(s) changed; packages {', '.join(p.packages) or '-'}; chapters (and their seed "
            f"audits) {', '.join(p.chapters) or '-'}; records {', '.join(p.records) or '-'}; test files in full "
            f"{', '.join(p.full_files) or '-'}")


def run(jobs: int, root: Path = ROOT) -> int:
    """``make test-changed``: the unit suites and the chapters, restricted to the plan; the snapshot taken now becomes
    the last green one when all pass."""
    p, now = current_plan(root)
    print(f"test-changed: {_describe(p)}", flush=True)
    PENDING.parent.mkdir(parents=True, exist_ok=True)
    PENDING.write_text(json.dumps(now))
    plan_file = root / "_build" / ".test_changed_plan.json"
    plan_file.write_text(json.dumps(asdict(p)))
    env = {**os.environ, PLAN_ENV: str(plan_file)}
    xdist = [] if jobs == 0 else ["-n", str(jobs), "--dist", "worksteal"]
    if jobs:
        env["OMP_NUM_THREADS"] = "1"
    files = test_files(p, root)
    py = [sys.executable, "-m", "pytest", "-q"]
    # the same three suites as `make test-unit` and `make test-chapters` (the Triton-interpreter tests alone)
    suites = [[*py, f, *xdist] for f in files if f == "tests/test_kernels.py"]
    unit = [f for f in files if f not in ("tests/test_kernels.py", "tests/test_chapters.py", "tests/test_site.py")]
    if unit:
        suites.append([*py, *unit, "-m", "not browser and not chapters and not built", *xdist])
    if p.everything or p.chapters or "tests/test_chapters.py" in p.full_files:
        suites.append([*py, "tests/test_chapters.py", "-m", "chapters", "-rA", *xdist])
    for cmd in suites:
        print("test-changed:", " ".join(cmd[2:]), flush=True)
        rc = subprocess.call(cmd, cwd=root, env=env)
        if rc not in (0, 5):  # 5: every item of the files deselected
            print(f"test-changed: failed (pytest exit {rc}); the last green run stays as it was", file=sys.stderr)
            return rc
    record(root)
    print("test-changed: green; recorded as the last green run (_build/.last_green.json)")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["plan"]:
        p, _ = current_plan()
        print(_describe(p))
        print("test files:", " ".join(test_files(p)) or "none")
        return 0
    if argv[:1] == ["run"] and len(argv) <= 2:
        return run(int(argv[1]) if len(argv) == 2 else os.cpu_count() or 1)
    if argv == ["snapshot"]:
        PENDING.parent.mkdir(parents=True, exist_ok=True)
        PENDING.write_text(json.dumps(snapshot()))
        return 0
    if argv == ["record"]:
        record()
        return 0
    print(__doc__.strip().splitlines()[0], file=sys.stderr)
    print("usage: test_select.py plan | run [JOBS] | snapshot | record", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
