"""One run of each chapter's verdict builders per test session, shared by the tests that read them.

``tests/test_seed_robustness.py`` (20 unseen seeds per chapter, reproducibility) and ``tests/test_verdict_rules.py``
(the verdict rules) both need ``seeded_verdicts(seed)`` and ``deterministic_verdicts()`` of every chapter package;
these are the suite's heaviest calls, so each (package, seed) is computed once here and reused. A test that must see
a *fresh* run (the reproducibility checks) calls the builder itself and compares with the cached one.
"""

from __future__ import annotations

import importlib
from functools import cache

from theorybook.check import Verdicts

ROBUSTNESS_SEEDS = tuple(range(7001, 7041))  # drawn from here, skipping a chapter's own seeds, 20 per chapter
N_SEEDS = 20


def package(name: str):
    return importlib.import_module(f"theorybook.{name}")


def unseen_seeds(name: str) -> list[int]:
    own = set(getattr(package(name), "CHAPTER_SEEDS", ()))
    return [s for s in ROBUSTNESS_SEEDS if s not in own][:N_SEEDS]


@cache
def seeded(name: str, seed: int) -> Verdicts:
    v = package(name).seeded_verdicts(seed)
    assert isinstance(v, Verdicts) and v.rows, f"{name}.seeded_verdicts({seed}) returned no rows"
    return v


@cache
def deterministic(name: str) -> Verdicts:
    v = package(name).deterministic_verdicts()
    assert isinstance(v, Verdicts) and v.rows, f"{name}.deterministic_verdicts() returned no rows"
    return v
