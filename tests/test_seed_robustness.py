"""Seed robustness: every stochastic verdict holds for 20 seeds its chapter does not use — proven by a record.

A chapter package with stochastic verdict rows exposes

* ``seeded_verdicts(seed: int) -> theorybook.check.Verdicts`` — builds exactly the rows the chapter shows
  (same experiment, same scale, same pre-stated tolerances; ``display=False``), and
* ``CHAPTER_SEEDS: tuple[int, ...]`` — the seeds the chapter itself uses (excluded here),

and optionally ``deterministic_verdicts() -> Verdicts`` for rows without randomness.

The 20 unseen seeds of every chapter are run by ``make audit`` into a committed record,
``tests/seed_audit/<slug>.json`` (``scripts/seed_audit.py``), keyed by a hash of everything the rows depend on.
:func:`test_stochastic_rows_hold_for_unseen_seeds` checks, per chapter, that

1. the record's key matches the current sources — a stale or missing record is re-audited in full now (all 20
   seeds, the record rewritten: commit it), or, with ``CI`` set or ``THEORYBOOK_AUDIT=check``, fails with the
   command that refreshes it;
2. the record is intact (its checksum), covers exactly the 20 unseen seeds, and every row holds on every seed;
3. a random sample of the recorded seeds (:func:`verdict_runs.sample_seeds`: 2 per chapter, drawn anew each run;
   the salt is printed in pytest's header) re-computed now matches the record under the rule of
   :func:`seed_audit.comparison_mode`: on the record's machine (same :func:`seed_audit.fingerprint`) exactly —
   every shown value, every full-precision number, every verdict (seeded means reproducible); on another CPU every
   verdict and every non-numeric field exactly and every number within the round-off bound (relative 1e-6), or,
   for a chapter whose round-off probe showed it amplifies round-off (or under another torch/numpy version), the
   numbers beyond that bound reported as a warning instead.

``THEORYBOOK_AUDIT=full pytest tests/test_seed_robustness.py -k <slug>`` re-computes all 20 seeds instead of a
sample (a chapter author's full check). ``deterministic_verdicts`` runs twice and must give identical numbers. Runs
are shared with ``tests/test_verdict_rules.py`` through ``tests/verdict_runs.py`` (each (package, seed) computed
once per session). New chapters are picked up automatically.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import warnings
from pathlib import Path

import pytest
import verdict_runs
from verdict_runs import deterministic, seeded

import theorybook
from theorybook.check import Verdicts

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import seed_audit  # noqa: E402

#: ``refresh`` (default): a stale record is re-audited now; ``check`` (default with ``CI`` set): a stale record
#: fails; ``full``: as ``refresh``, and every recorded seed is re-computed, not a sample.
MODE = os.environ.get("THEORYBOOK_AUDIT") or ("check" if os.environ.get("CI") else "refresh")


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


def _audit_jobs() -> int:
    return int(os.environ.get("THEORYBOOK_AUDIT_JOBS") or os.cpu_count() or 1)


@pytest.mark.parametrize("name", _with("seeded_verdicts"))
def test_stochastic_rows_hold_for_unseen_seeds(name):
    why = seed_audit.stale(name)
    if why is not None:
        if MODE == "check":
            pytest.fail(f"{why}. Refresh it with `{seed_audit.refresh_command(name)}` and commit "
                        f"{seed_audit.record_path(name).relative_to(seed_audit.ROOT)}")
        print(f"{why}: re-auditing all {verdict_runs.N_SEEDS} unseen seeds now")
        seed_audit.audit([name], _audit_jobs())
        assert seed_audit.stale(name) is None, f"{name}: the record just written is not current"
    bad = seed_audit.problems(name)
    assert not bad, f"{name}: rows fail on unseen seeds, or the record is not sound — " + "; ".join(bad)
    record = seed_audit.load(name)
    mode, why = seed_audit.comparison_mode(record, seed_audit.fingerprint())
    sample = verdict_runs.unseen_seeds(name) if MODE == "full" else verdict_runs.sample_seeds(name)
    diffs, moved = [], []
    for s in sample:
        fresh = seed_audit.signature(seeded(name, s))
        failures, deviations, _ = seed_audit.compare(record["runs"][str(s)], fresh, mode)
        diffs += [f"seed {s}: {d}" for d in failures]
        moved += [f"seed {s}: {d}" for d in deviations]
    if moved:
        warnings.warn(f"{name}: re-computed numbers deviate from the record beyond round-off ({why}; verdicts "
                      f"equal) — " + "; ".join(moved[:5]) + (f"; … {len(moved) - 5} more" if len(moved) > 5 else ""),
                      stacklevel=1)
    assert not diffs, (f"{name}: re-computed seeds differ from the record ({why}; sample {sample}, "
                       f"{verdict_runs.SALT_ENV}={verdict_runs.salt()}) — " + "; ".join(diffs))


def test_every_record_belongs_to_a_chapter():
    """No record is left behind by a removed or renamed chapter package."""
    known = set(_with("seeded_verdicts"))
    orphans = sorted(p.name for p in seed_audit.RECORDS.glob("*.json") if p.stem not in known)
    assert not orphans, f"seed-audit records without a chapter package: {orphans} (remove them)"


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
