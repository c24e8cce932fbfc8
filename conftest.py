"""Let ``pytest --nbmake book/`` collect the book's Jupytext MyST chapters (``*.md``).

nbmake only collects ``*.ipynb``. Here a ``.md`` file whose front matter carries a ``jupytext:`` header is
converted in memory (jupytext) to a notebook written in a fresh temporary directory, and nbmake's own
``NotebookRun`` executes it there with that directory as the working directory — so a chapter cannot leave
files in the repository. Plain markdown pages (no jupytext header) and anything under ``_build/`` are skipped.
No paired ``.ipynb`` is ever written next to a chapter.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from pathlib import Path

import pytest

try:
    from nbmake.nb_run import NotebookRun
    from nbmake.pytest_items import NotebookFailedException, NotebookItem
except ImportError:  # nbmake not installed: plain `pytest tests/` still works
    NotebookItem = None


def is_jupytext_chapter(path: Path) -> bool:
    """True for a ``.md`` file whose YAML front matter has a ``jupytext:`` section."""
    if path.suffix != ".md" or "_build" in path.parts:
        return False
    head = path.read_text(encoding="utf-8")[:4000]
    if not head.startswith("---"):
        return False
    front = head.split("---", 2)[1] if head.count("---") >= 2 else ""
    return "jupytext:" in front and "kernelspec:" in front


if NotebookItem is not None:

    class JupytextNotebookItem(NotebookItem):
        """An nbmake item for a Jupytext MyST notebook, executed from a temporary directory."""

        def runtest(self):
            import jupytext
            import nbformat

            option = self.config.option
            nb = jupytext.read(self.filename)
            with tempfile.TemporaryDirectory(prefix="theorybook-nb-") as tmp:
                ipynb = Path(tmp) / (Path(self.filename).stem + ".ipynb")
                nbformat.write(nb, str(ipynb))
                cwd = os.getcwd()
                os.chdir(tmp)  # the kernel inherits it: any file a chapter writes lands in tmp
                # No static explorers here: they are for the book's cache, which this run does not write
                # (theorybook.widgets); the kernel inherits the environment.
                static = os.environ.get("THEORYBOOK_STATIC_PANELS")
                os.environ["THEORYBOOK_STATIC_PANELS"] = "0"
                try:
                    res = NotebookRun(
                        ipynb,
                        option.nbmake_timeout,
                        verbose=bool(option.verbose),
                        kernel=option.nbmake_kernel,
                        find_import_errors=option.nbmake_find_import_errors,
                    ).execute()
                finally:
                    os.chdir(cwd)
                    if static is None:
                        os.environ.pop("THEORYBOOK_STATIC_PANELS", None)
                    else:
                        os.environ["THEORYBOOK_STATIC_PANELS"] = static
            if res.error is not None:
                raise NotebookFailedException(res)

    class JupytextNotebookFile(pytest.File):
        def collect(self):
            yield JupytextNotebookItem.from_parent(self, filename=str(self.path))


def pytest_collect_file(file_path: Path, parent):
    if NotebookItem is None or not parent.config.getoption("nbmake", default=False):
        return None
    if is_jupytext_chapter(file_path):
        return JupytextNotebookFile.from_parent(parent, path=file_path)
    return None


#: The longest tests of each suite (15–125 s each on a 2-core CPU, `--durations`), heaviest first. They run first,
#: so that under pytest-xdist (`make test`) no worker starts one of them while the others have run out of tests.
#: (A seed-robustness item is long only when its chapter's seed-audit record is stale and re-audited in the run.)
_LONGEST = ("test_seed_robustness.py::test_stochastic_rows_hold_for_unseen_seeds[dash_shampoo]",
            "test_seed_robustness.py::test_stochastic_rows_hold_for_unseen_seeds[lmo_batch_scaling]",
            "test_seed_robustness.py::test_stochastic_rows_hold_for_unseen_seeds[",
            "test_site.py::test_live_slider_reruns_python", "test_site.py::test_claims_ledger_totals_and_links",
            "test_chapters.py::test_nbmake_does_not_wait", "test_chapters.py::test_chapter_executes[adam_degenerate]",
            "test_chapters.py::test_chapter_executes[cdeq]")


def _deselect_unchanged(config, items) -> None:
    """Under ``make test-changed`` (``THEORYBOOK_CHANGED_PLAN`` names its plan): keep only the items whose
    dependencies changed since the last green run (``scripts/test_select.py``)."""
    import json
    import sys

    plan_file = os.environ.get("THEORYBOOK_CHANGED_PLAN")
    if not plan_file:
        return
    root = Path(__file__).resolve().parent
    sys.path.insert(0, str(root / "scripts"))
    import chapter_cache
    import test_select

    plan = test_select.Plan(**json.loads(Path(plan_file).read_text()))
    known = chapter_cache._packages(root) | {c.stem for c in chapter_cache.chapters(root)}
    texts: dict[Path, str] = {}
    keep, drop = [], []
    for item in items:
        path = Path(item.path)
        if not (path.parent == root / "tests" and path.name.startswith("test_") and path.suffix == ".py"):
            keep.append(item)  # a chapter or fixture collected by nbmake (a nested run) is not selected here
            continue
        if path not in texts:
            texts[path] = path.read_text(encoding="utf-8") if path.suffix == ".py" else ""
        rel = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.get_closest_marker("core_only") is not None:
            (keep if plan.everything or rel in plan.full_files else drop).append(item)
            continue
        (keep if test_select.selected(plan, rel, params, texts[path], known) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collection_modifyitems(session, config, items):
    """Under ``make test-changed``, drop the items whose dependencies did not change (:func:`_deselect_unchanged`);
    move the longest tests (:data:`_LONGEST`) to the front, in that order; the rest keep theirs."""
    _deselect_unchanged(config, items)

    def rank(item) -> int:
        return next((i for i, key in enumerate(_LONGEST) if key in item.nodeid), len(_LONGEST))

    items.sort(key=rank)  # stable: equal ranks keep the collection order


def pytest_configure(config):
    """The controller (or a plain run) makes the folder in which the test processes share verdict runs
    (``tests/verdict_runs.py``) and draws this run's seed-audit sample salt; xdist workers inherit both through
    the environment."""
    config.addinivalue_line("markers", "core_only: depends only on the shared core and the test machinery, not on any "
                            "chapter: `make test-changed` runs it only when those (or its file) change")
    if hasattr(config, "workerinput"):
        return
    if not os.environ.get("THEORYBOOK_AUDIT_SALT"):
        os.environ["THEORYBOOK_AUDIT_SALT"] = secrets.token_hex(4)
        config._theorybook_salt = True
    if os.environ.get("THEORYBOOK_VERDICT_RUNS"):
        return
    d = tempfile.mkdtemp(prefix="theorybook-verdict-runs-")
    os.environ["THEORYBOOK_VERDICT_RUNS"] = d
    config._theorybook_verdict_runs = d


def pytest_report_header(config):
    salt = os.environ.get("THEORYBOOK_AUDIT_SALT")
    if not salt:
        return []
    return [f"seed-audit sample salt: THEORYBOOK_AUDIT_SALT={salt} (set it to re-draw this run's sample)"]


def pytest_unconfigure(config):
    if getattr(config, "_theorybook_salt", False):
        os.environ.pop("THEORYBOOK_AUDIT_SALT", None)
    d = getattr(config, "_theorybook_verdict_runs", None)
    if d:
        shutil.rmtree(d, ignore_errors=True)
        os.environ.pop("THEORYBOOK_VERDICT_RUNS", None)
