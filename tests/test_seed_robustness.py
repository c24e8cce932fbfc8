"""Seed robustness: every stochastic verdict holds for 20 seeds its chapter does not use.

A chapter package with stochastic verdict rows exposes

* ``seeded_verdicts(seed: int) -> theorybook.check.Verdicts`` — builds exactly the rows the chapter shows
  (same experiment, same scale, same pre-stated tolerances; ``display=False``), and
* ``CHAPTER_SEEDS: tuple[int, ...]`` — the seeds the chapter itself uses (excluded here),

and optionally ``deterministic_verdicts() -> Verdicts`` for rows without randomness. This test runs every
``seeded_verdicts`` for 20 unseen seeds and asserts that every row holds for each; it runs one seed twice and
asserts identical numbers (seeded means reproducible), and runs ``deterministic_verdicts`` twice and asserts
identical numbers. Runs are shared with ``tests/test_verdict_rules.py`` through ``tests/verdict_runs.py`` (each
(package, seed) computed once per session). New chapters are picked up automatically.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from verdict_runs import deterministic, seeded, unseen_seeds

import theorybook
from theorybook.check import Verdicts


def _packages() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(theorybook.__path__) if m.ispkg and m.name != "kernels")


def _with(attr: str) -> list[str]:
    out = []
    for name in _packages():
        mod = importlib.import_module(f"theorybook.{name}")
        if hasattr(mod, attr):
            out.append(name)
    return out


def _measured(v: Verdicts) -> list[tuple[str, str]]:
    return [(r.claim, r.measured) for r in v.rows]


@pytest.mark.parametrize("name", _with("seeded_verdicts"))
def test_stochastic_rows_hold_for_unseen_seeds(name):
    failures = []
    for s in unseen_seeds(name):
        v = seeded(name, s)
        failures += [f"seed {s}: {r.claim}: predicted {r.predicted}, measured {r.measured}" for r in v.failures]
    assert not failures, f"{name}: rows fail on unseen seeds — " + "; ".join(failures)


@pytest.mark.parametrize("name", _with("seeded_verdicts"))
def test_seeded_rows_are_reproducible(name):
    """A fresh run at a seed gives the numbers of the (cached) first run at that seed."""
    mod = importlib.import_module(f"theorybook.{name}")
    s = unseen_seeds(name)[0]
    assert _measured(mod.seeded_verdicts(s)) == _measured(seeded(name, s))


@pytest.mark.parametrize("name", _with("deterministic_verdicts"))
def test_deterministic_rows_repeat_exactly(name):
    mod = importlib.import_module(f"theorybook.{name}")
    a = deterministic(name)
    assert a.passed, f"{name}: " + "; ".join(r.claim for r in a.failures)
    assert _measured(a) == _measured(mod.deterministic_verdicts())


def test_every_chapter_with_verdicts_is_covered():
    """A package that defines one hook must also say which seeds its chapter uses."""
    for name in _with("seeded_verdicts"):
        mod = importlib.import_module(f"theorybook.{name}")
        assert hasattr(mod, "CHAPTER_SEEDS"), f"theorybook.{name} has seeded_verdicts but no CHAPTER_SEEDS"
