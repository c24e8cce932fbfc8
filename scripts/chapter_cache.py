"""Execute each chapter once: a dependency-aware front end to Jupyter Book's execution cache (jupyter-cache).

Jupyter Book (``execute_notebooks: cache``) re-executes a chapter only when its *code cells* change; it cannot see
that the library a chapter imports changed. This module closes that gap, so a stale output is impossible:

* :func:`dependencies` lists every file a chapter's execution can depend on — the chapter itself; the shared core
  (``src/theorybook/*.py``: ``check``, ``device``, ``validate``, …; ``kernels/``; ``pyproject.toml``; the kernel's
  IPython config; the ``execute:`` section of ``_config.yml``); every file of each ``theorybook.<pkg>`` it imports,
  transitively through the packages' own imports; and the committed ``bench/results/*.json`` they read.
* :func:`sync` compares each chapter's fingerprint (a hash of those files) with the one recorded when its cache
  entry was made, and drops the cache entries of every chapter whose fingerprint changed — exactly those chapters
  re-execute at the next run. It runs before every ``make book`` and before the chapter tests.
* :func:`execute` is what ``tests/test_chapters.py`` runs for each chapter: it takes the cached execution when the
  cache holds one for the current notebook (after :func:`sync`), else executes the chapter in a fresh temporary
  directory exactly as Jupyter Book would and stores the result in the same cache, so the book build that follows
  finds it and does not execute the chapter again.

Several processes may use the cache at once (``make test-chapters`` runs the chapters on every core, pytest-xdist):
:func:`sync` and each cache write hold an exclusive lock on a file in the cache directory (:func:`_locked`), and the
fingerprints file is replaced atomically.

``pytest --nbmake book/`` keeps working on its own (``conftest.py``); it neither reads nor writes this cache.

Command line: ``python scripts/chapter_cache.py sync`` (drop stale entries, print what will re-execute),
``python scripts/chapter_cache.py run [JOBS]`` (sync, then execute every chapter without a valid cached run, JOBS at
a time: what ``make book`` does before the build) or ``python scripts/chapter_cache.py deps book/optimizers/grasp.md``
(list a chapter's dependencies).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / ".jupyter_cache"
STAMPS = "theorybook_fingerprints.json"
TIMEOUT_S = 180

_PKG_IMPORT = re.compile(r"\btheorybook\.(\w+)|^\s*from\s+theorybook\s+import\s+\(?([\w\s,]+)\)?|"
                         r"^\s*from\s+\.\.(\w+)\s+import|^\s*from\s+\.\.\s+import\s+([\w\s,]+)", re.M)
_RESULTS = re.compile(r"bench/results/([\w.-]+\.json)|results\W+([\w-]+)\.json|\"([\w-]+)\.json\"")


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapters of ``_toc.yml`` (Jupytext notebooks; back matter excluded), in book order."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    out = []
    for part in toc.get("parts", []):
        for ch in part.get("chapters", []):
            f = ch["file"]
            if re.search(r"(^|/)(references|appendix)[^/]*$", f):
                continue
            out.append(root / f"{f}.md")
    return out


def _packages(root: Path) -> set[str]:
    base = root / "src" / "theorybook"
    return {p.name for p in base.iterdir() if p.is_dir() and (p / "__init__.py").exists()}


def _imported(text: str, known: set[str]) -> set[str]:
    found: set[str] = set()
    for m in _PKG_IMPORT.finditer(text):
        for g in m.groups():
            if g:
                found |= {w for w in re.split(r"[\s,()]+", g) if w in known}
    return found


def _files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                  and p.suffix not in (".pyc", ".pyo"))


def _execute_config(root: Path) -> str:
    """The ``execute:`` section of ``_config.yml`` (timeouts, temp dir): it changes how every chapter runs."""
    import yaml

    cfg = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    return json.dumps(cfg.get("execute", {}), sort_keys=True)


def core_files(root: Path = ROOT) -> list[Path]:
    """The shared core: a change to any of these re-executes every chapter."""
    files = sorted((root / "src" / "theorybook").glob("*.py"))
    # theorybook.check is a package of the shared core (every chapter's verdicts go through it)
    check = root / "src" / "theorybook" / "check"
    files += _files(check) if check.exists() else []
    files += _files(root / "kernels") if (root / "kernels").exists() else []
    files += [p for p in (root / "pyproject.toml", root / "scripts" / "ipython_kernel_config.py") if p.exists()]
    return files


def package_dependencies(packages: Iterable[str], root: Path = ROOT, texts: Iterable[Path] = ()) -> list[Path]:
    """The dependency closure shared by the chapter cache and the seed audit (``scripts/seed_audit.py``): the shared
    core (:func:`core_files`); every file of each package in ``packages`` and of each ``theorybook.<pkg>`` those
    import, transitively through the packages' own imports; and the committed ``bench/results/*.json`` that any of
    them or the files ``texts`` (a chapter) read. ``texts`` themselves are not included."""
    known = _packages(root)
    todo, seen = sorted(set(packages) & known), set()
    pkg_files: list[Path] = []
    while todo:
        pkg = todo.pop()
        if pkg in seen:
            continue
        seen.add(pkg)
        files = _files(root / "src" / "theorybook" / pkg)
        pkg_files += files
        for f in files:
            if f.suffix == ".py":
                todo += sorted(_imported(f.read_text(encoding="utf-8"), known) - seen)
    results = root / "bench" / "results"
    wanted: set[str] = {f"{pkg}.json" for pkg in seen}
    for f in [*texts, *pkg_files]:
        if f.suffix in (".py", ".md"):
            for m in _RESULTS.finditer(f.read_text(encoding="utf-8")):
                wanted |= {g if g.endswith(".json") else f"{g}.json" for g in m.groups() if g}
    res_files = sorted(results / w for w in wanted if (results / w).is_file())
    return sorted({*core_files(root), *pkg_files, *res_files})


def dependencies(chapter: Path, root: Path = ROOT) -> list[Path]:
    """Every file the execution of ``chapter`` can depend on (see the module docstring): the chapter and the
    :func:`package_dependencies` of the packages its text imports."""
    chapter = Path(chapter)
    imported = _imported(chapter.read_text(encoding="utf-8"), _packages(root))
    return sorted({chapter, *package_dependencies(imported, root, texts=[chapter])})


def hash_files(files: Iterable[Path], root: Path = ROOT, salt: str = "") -> str:
    """A hash of ``salt`` and every file's path (relative to ``root``) and bytes: the fingerprint of a closure."""
    h = hashlib.sha256(salt.encode())
    for f in sorted(files):
        h.update(str(f.relative_to(root)).encode() + b"\0")
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def fingerprint(chapter: Path, root: Path = ROOT) -> str:
    """A hash of every dependency's path and bytes, plus the ``execute:`` configuration."""
    return hash_files(dependencies(chapter, root), root, _execute_config(root))


@contextlib.contextmanager
def _locked(cache_path: Path):
    """An exclusive lock (``flock``) on ``cache_path/.lock`` for the duration of the block."""
    cache_path.mkdir(parents=True, exist_ok=True)
    with open(cache_path / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _cache(cache_path: Path):
    from jupyter_cache import get_cache

    cache_path.mkdir(parents=True, exist_ok=True)
    return get_cache(str(cache_path))


def _stamps(cache_path: Path) -> dict[str, str]:
    f = cache_path / STAMPS
    return json.loads(f.read_text()) if f.exists() else {}


def _records_for(cache, chapter: Path) -> list:
    """Cache records whose URI is this chapter (Jupyter Book stores the source path)."""
    target = str(Path(chapter).resolve())
    return [r for r in cache.list_cache_records() if str(Path(r.uri).resolve()) == target]


def sync(cache_path: Path = CACHE, root: Path = ROOT, only: Iterable[Path] | None = None,
         quiet: bool = False) -> list[Path]:
    """Drop the cache entries of every chapter whose dependencies changed; return those chapters.

    A chapter with no recorded fingerprint counts as changed (its entries, if any, predate this bookkeeping).
    """
    with _locked(cache_path):
        cache = _cache(cache_path)
        stamps = _stamps(cache_path)
        stale = []
        for ch in only if only is not None else chapters(root):
            key = str(Path(ch).relative_to(root))
            fp = fingerprint(Path(ch), root)
            if stamps.get(key) != fp:
                for r in _records_for(cache, Path(ch)):
                    cache.remove_cache(r.pk)
                stamps[key] = fp
                stale.append(Path(ch))
        tmp = cache_path / (STAMPS + f".{os.getpid()}")
        tmp.write_text(json.dumps(stamps, indent=1, sort_keys=True))
        os.replace(tmp, cache_path / STAMPS)
    if not quiet:
        names = ", ".join(str(p.relative_to(root)) for p in stale) or "none"
        print(f"chapter cache: {len(stale)} chapter(s) changed since their cached run, will re-execute: {names}")
    return stale


def read_notebook(chapter: Path):
    """The chapter as Jupyter Book's reader (MyST-NB) produces it, so cache keys match the book build's."""
    import yaml
    from myst_nb.core.read import read_myst_markdown_notebook
    from myst_parser.config.main import MdParserConfig

    cfg = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    ext = set(cfg.get("parse", {}).get("myst_enable_extensions", []))
    text = Path(chapter).read_text(encoding="utf-8")
    return read_myst_markdown_notebook(text, config=MdParserConfig(enable_extensions=ext), add_source_map=True,
                                       path=str(chapter))


def execute(chapter: Path, cache_path: Path = CACHE, timeout: int = TIMEOUT_S) -> tuple[str, float]:
    """Run one chapter through the cache: ``("cached", seconds of the cached run)`` or ``("executed", seconds)``.

    Raises ``RuntimeError`` with the notebook's traceback when the chapter fails; a failing run is not cached.
    """
    from jupyter_cache.base import CacheBundleIn
    from jupyter_cache.executors.utils import single_nb_execution

    chapter = Path(chapter).resolve()
    cache = _cache(cache_path)
    nb = read_notebook(chapter)
    try:
        rec = cache.match_cache_notebook(nb)
    except KeyError:
        rec = None
    if rec is not None:
        return "cached", float(rec.data.get("execution_seconds") or 0.0)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="theorybook-chapter-") as cwd:
        result = single_nb_execution(nb, cwd=cwd, allow_errors=False, timeout=timeout, meta_override=True)
    if result.err is not None:
        raise RuntimeError(f"{chapter.relative_to(ROOT)} failed:\n{result.exc_string}")
    with _locked(cache_path):
        cache.cache_notebook_bundle(CacheBundleIn(nb, str(chapter), data={"execution_seconds": result.time}),
                                    check_validity=False, overwrite=True)
    return "executed", time.perf_counter() - t0


def _execute_one(chapter: str) -> tuple[str, str, float]:
    try:
        how, seconds = execute(Path(chapter))
    except RuntimeError as err:
        return chapter, f"FAILED\n{err}", 0.0
    return chapter, how, seconds


def run_all(jobs: int, cache_path: Path = CACHE) -> int:
    """Execute every chapter that has no valid cached run, ``jobs`` at a time, into the cache (after :func:`sync`),
    so that the book build that follows executes none. With ``jobs`` > 1 each kernel gets one intra-op thread
    (``OMP_NUM_THREADS=1``): the kernels share the cores. Prints one line per chapter; returns the number that
    failed (their tracebacks printed)."""
    import concurrent.futures as cf
    import multiprocessing as mp

    sync(cache_path)
    todo = [str(ch) for ch in chapters()]
    if jobs > 1:
        os.environ["OMP_NUM_THREADS"] = "1"  # inherited by the workers and the kernels they start
    # Each chapter's static explorer is rendered on this many forked processes (theorybook.widgets); with ``jobs``
    # chapters at once, a share of the cores each (at least 2, so that the last chapter still running uses two).
    os.environ.setdefault("THEORYBOOK_STATIC_WORKERS", str(max(2, (os.cpu_count() or 1) // max(jobs, 1))))
    failed = 0
    t0 = time.perf_counter()
    with cf.ProcessPoolExecutor(max(jobs, 1), mp_context=mp.get_context("spawn")) as pool:
        for chapter, how, seconds in pool.map(_execute_one, todo):
            name = Path(chapter).relative_to(ROOT)
            if how.startswith("FAILED"):
                failed += 1
                print(f"chapter cache: {name}: {how}", file=sys.stderr)
            else:
                print(f"chapter cache: {name}: {how} ({seconds:.1f} s)")
    print(f"chapter cache: {len(todo)} chapters ready in {time.perf_counter() - t0:.0f} s ({jobs} at a time), "
          f"{failed} failed")
    return failed


def main(argv: list[str]) -> int:
    if argv[:1] == ["sync"]:
        sync()
        return 0
    if argv[:1] == ["run"] and len(argv) <= 2:
        return 1 if run_all(int(argv[1]) if len(argv) == 2 else os.cpu_count() or 1) else 0
    if argv[:1] == ["deps"] and len(argv) == 2:
        for f in dependencies(Path(argv[1]).resolve()):
            print(f.relative_to(ROOT))
        return 0
    print(__doc__.strip().splitlines()[0])
    print("usage: chapter_cache.py sync | run [JOBS] | deps CHAPTER.md", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
