"""One run of each chapter's verdict builders per test session, shared by the tests that read them.

``tests/test_seed_robustness.py`` (20 unseen seeds per chapter, reproducibility) and ``tests/test_verdict_rules.py``
(the verdict rules) both need ``seeded_verdicts(seed)`` and ``deterministic_verdicts()`` of every chapter package;
these are the suite's heaviest calls, so each (package, seed) is computed once here and reused — once per test run,
not once per pytest-xdist worker: the workers share the pickled tables through a folder in the temp dir
(:func:`shared_dir`), which the controller removes when the run ends (``conftest.py``). A test that must see
a *fresh* run (the reproducibility checks) calls the builder itself and compares with the cached one.

The 20 unseen seeds of each chapter are audited once, into a committed record (``scripts/seed_audit.py``); a test
run re-computes a random sample of them (:func:`sample_seeds`, drawn anew each run from :data:`SALT_ENV`).
"""

from __future__ import annotations

import fcntl
import importlib
import os
import pickle
import random
import secrets
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

from theorybook.check import Verdicts

ROBUSTNESS_SEEDS = tuple(range(7001, 7041))  # drawn from here, skipping a chapter's own seeds, 20 per chapter
N_SEEDS = 20


def package(name: str):
    return importlib.import_module(f"theorybook.{name}")


def unseen_seeds(name: str) -> list[int]:
    own = set(getattr(package(name), "CHAPTER_SEEDS", ()))
    return [s for s in ROBUSTNESS_SEEDS if s not in own][:N_SEEDS]


#: The environment variable holding this run's sample salt (set by ``conftest.py``, inherited by the xdist workers):
#: set it by hand to re-draw a failing run's sample.
SALT_ENV = "THEORYBOOK_AUDIT_SALT"
#: How many recorded seeds per chapter a test run re-computes (at least 2).
N_SAMPLE = max(2, int(os.environ.get("THEORYBOOK_AUDIT_SAMPLE", "2")))


def salt() -> str:
    """This run's sample salt: the same in every xdist worker of one run, different between runs."""
    return os.environ.setdefault(SALT_ENV, secrets.token_hex(4))


def sample_seeds(name: str, k: int = N_SAMPLE) -> list[int]:
    """``k`` of the chapter's unseen seeds, drawn from this run's :func:`salt` (a different sample each run)."""
    seeds = unseen_seeds(name)
    return sorted(random.Random(f"{salt()}:{name}").sample(seeds, min(k, len(seeds))))


def _seed_audit():
    root = str(Path(__file__).resolve().parents[1] / "scripts")
    if root not in sys.path:
        sys.path.insert(0, root)
    import seed_audit

    return seed_audit


#: The environment variable naming the folder the test processes of one run share (set by ``conftest.py``).
SHARED_ENV = "THEORYBOOK_VERDICT_RUNS"


def shared_dir() -> Path | None:
    """The folder that the pytest-xdist workers of this run share (``conftest.py`` makes it in the temp dir before
    the workers start, names it in :data:`SHARED_ENV` and removes it at the end), so that a run one worker computed
    is read, not recomputed, by the others; ``None`` when unset."""
    d = os.environ.get(SHARED_ENV)
    return Path(d) if d and Path(d).is_dir() else None


def _shared(key: str, build: Callable[[], Verdicts]) -> Verdicts:
    """``build()`` once per test run across xdist workers: the first worker to ask holds a file lock while it
    builds and pickles the table; a worker asking meanwhile waits for it and reads the pickle."""
    d = shared_dir()
    if d is None:
        return build()
    path = d / f"{key}.pkl"
    with open(d / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if path.exists():
                with open(path, "rb") as f:
                    return pickle.load(f)
            v = build()
            tmp = path.with_suffix(".tmp")
            with open(tmp, "wb") as f:
                pickle.dump(v, f)
            os.replace(tmp, path)
            return v
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@cache
def seeded(name: str, seed: int) -> Verdicts:
    # one intra-op thread, as in the audit that recorded the seed (scripts/seed_audit.py)
    v = _shared(f"{name}-{seed}", lambda: _seed_audit().seeded_verdicts(name, seed))
    assert isinstance(v, Verdicts) and v.rows, f"{name}.seeded_verdicts({seed}) returned no rows"
    return v


@cache
def deterministic(name: str) -> Verdicts:
    v = _shared(f"{name}-deterministic", lambda: package(name).deterministic_verdicts())
    assert isinstance(v, Verdicts) and v.rows, f"{name}.deterministic_verdicts() returned no rows"
    return v
