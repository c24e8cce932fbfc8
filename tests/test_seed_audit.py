"""The seed audit's record can be trusted: a stale key, a hand-edited record and a re-computation that differs from
the record are each caught (``scripts/seed_audit.py``). Tiny fixtures: a toy package in a temporary tree and a toy
``seeded_verdicts``, no chapter runs."""

# test-changed: core only
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from theorybook.check import Verdicts

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import seed_audit  # noqa: E402

SEEDS = [11, 12, 13]


def _toy_verdicts(seed: int, shift: float = 0.0) -> Verdicts:
    """Two rows whose numbers depend on the seed; the first fails when ``shift`` > 0.5."""
    v = Verdicts("toy", display=False)
    v.close("x is one", measured=1.0 + seed * 1e-9 + shift, predicted=1.0, atol=0.5, kind="consistency",
            source="derived", basis="exact: toy")
    v.less("y is small", measured=math.pi / seed + shift, bound=1.0, kind="consistency", source="derived",
           basis="exact: toy")
    return v


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    """A repository in miniature: the shared core, a toy package ``toy`` and another one ``other``."""
    core = tmp_path / "src" / "theorybook"
    (core / "check").mkdir(parents=True)
    (core / "__init__.py").write_text("")
    (core / "validate.py").write_text("def check(x):\n    return x\n")
    (core / "check" / "__init__.py").write_text("")
    for pkg in ("toy", "other"):
        (core / pkg).mkdir()
        (core / pkg / "__init__.py").write_text(f"CHAPTER_SEEDS = (1,)\nNAME = {pkg!r}\n")
        (core / pkg / "verdicts.py").write_text("from theorybook import validate\n")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'toy'\n")
    monkeypatch.setattr(seed_audit.verdict_runs, "unseen_seeds", lambda slug: list(SEEDS))
    monkeypatch.setattr(seed_audit, "seeded_verdicts", lambda slug, seed: _toy_verdicts(seed))
    # the round-off probe, as a fresh process would give it: here a 1e-12 relative change (a stable chapter)
    monkeypatch.setattr(seed_audit, "probe_run",
                        lambda slug, seed: (seed_audit.signature(_toy_verdicts(seed, shift=1e-12)),
                                            {**seed_audit.fingerprint(), "torch_cpu": "DEFAULT"}))
    return tmp_path


def _audit(tree: Path) -> Path:
    records = tree / "tests" / "seed_audit"
    bad = seed_audit.audit(["toy"], jobs=1, root=tree, records=records, log=lambda *_: None)
    assert bad == {"toy": []}
    return records


def test_a_fresh_record_is_current_sound_and_reproducible(tree):
    records = _audit(tree)
    assert seed_audit.stale("toy", tree, records) is None
    assert seed_audit.problems("toy", tree, records) == []
    rec = seed_audit.load("toy", records)
    assert rec["seeds"] == SEEDS and rec["refresh"] == "make audit CHAPTERS=toy"
    for s in SEEDS:
        assert seed_audit.differences(rec["runs"][str(s)], seed_audit.signature(_toy_verdicts(s))) == []
    assert json.loads(seed_audit.dumps(rec)) == rec  # one line per row, same content


@pytest.mark.parametrize("edit", ["src/theorybook/toy/verdicts.py", "src/theorybook/validate.py",
                                  "src/theorybook/check/__init__.py", "pyproject.toml"])
def test_a_change_to_what_the_rows_depend_on_makes_the_record_stale(tree, edit):
    records = _audit(tree)
    f = tree / edit
    f.write_text(f.read_text() + "\n# edited\n")
    why = seed_audit.stale("toy", tree, records)
    assert why is not None and "stale" in why


def test_a_change_elsewhere_leaves_the_record_current(tree):
    records = _audit(tree)
    f = tree / "src" / "theorybook" / "other" / "verdicts.py"
    f.write_text(f.read_text() + "\n# edited\n")
    assert seed_audit.stale("toy", tree, records) is None


def test_sources_edited_while_the_audit_runs_refuse_the_record(tree, monkeypatch):
    """A record is keyed to the sources its seeds ran: an edit between the audit's start and the record's write
    (a worker may have imported the old code) refuses the record instead of keying old numbers to new sources."""
    records = tree / "tests" / "seed_audit"
    f = tree / "src" / "theorybook" / "toy" / "verdicts.py"
    run_seed = seed_audit.run_seed

    def edit_then_run(slug, seed):
        f.write_text(f.read_text() + f"\n# edited during seed {seed}\n")
        return run_seed(slug, seed)

    monkeypatch.setattr(seed_audit, "run_seed", edit_then_run)
    with pytest.raises(RuntimeError, match="changed while the audit ran"):
        seed_audit.audit(["toy"], jobs=1, root=tree, records=records, log=lambda *_: None)
    assert not seed_audit.record_path("toy", records).exists()


def test_a_missing_record_is_stale(tree):
    assert "no seed-audit record" in seed_audit.stale("toy", tree, tree / "nowhere")


def test_a_hand_edited_number_breaks_the_checksum(tree):
    records = _audit(tree)
    path = seed_audit.record_path("toy", records)
    rec = json.loads(path.read_text())
    rec["runs"]["12"]["rows"][0]["value"] += 1e-12
    path.write_text(json.dumps(rec))
    assert any("checksum" in m for m in seed_audit.problems("toy", tree, records))


def test_a_failing_seed_is_reported_even_with_a_valid_checksum(tree, monkeypatch):
    monkeypatch.setattr(seed_audit, "seeded_verdicts", lambda slug, seed: _toy_verdicts(seed, 0.6 * (seed == 13)))
    records = tree / "tests" / "seed_audit"
    bad = seed_audit.audit(["toy"], jobs=1, root=tree, records=records, log=lambda *_: None)
    assert bad["toy"] and all("seed 13" in m for m in bad["toy"])
    assert seed_audit.problems("toy", tree, records) == bad["toy"]
    # a record claiming the seed holds, checksum recomputed, is still caught row by row
    rec = seed_audit.load("toy", records)
    rec["runs"]["13"]["holds"] = True
    seed_audit.write_record(seed_audit.make_record("toy", {int(k): v for k, v in rec["runs"].items()}, tree), records)
    assert any("seed 13: row 'x is one' fails" in m for m in seed_audit.problems("toy", tree, records))


def test_wrong_seeds_are_reported(tree, monkeypatch):
    records = _audit(tree)
    monkeypatch.setattr(seed_audit.verdict_runs, "unseen_seeds", lambda slug: [11, 12, 14])
    assert any("unseen seeds" in m for m in seed_audit.problems("toy", tree, records))


def test_a_recomputation_that_differs_from_the_record_is_caught(tree):
    records = _audit(tree)
    rec = seed_audit.load("toy", records)["runs"]["12"]
    one_ulp = seed_audit.signature(_toy_verdicts(12, shift=math.ulp(1.0)))
    diffs = seed_audit.differences(rec, one_ulp)
    assert diffs and "value recorded" in diffs[0]  # shown the same to 6 digits, different bits
    other_seed = seed_audit.signature(_toy_verdicts(13))
    assert seed_audit.differences(rec, other_seed)
    # a field outside the signature (here the tolerance's wording) is caught by the digest
    v = _toy_verdicts(12)
    v.rows[0] = type(v.rows[0])(**{**v.rows[0].__dict__, "tolerance": "atol 0.50"})
    assert seed_audit.differences(rec, seed_audit.signature(v)) == [
        "the rows' other fields (notes, tolerances, labels) differ from the record (digest)"]


def test_the_sample_differs_between_runs_and_has_two_seeds_per_chapter(monkeypatch):
    import verdict_runs

    monkeypatch.setattr(verdict_runs, "unseen_seeds", lambda name: list(range(7001, 7021)))
    draws = set()
    for salt in ("a", "b", "c", "d", "e"):
        monkeypatch.setenv(verdict_runs.SALT_ENV, salt)
        s = verdict_runs.sample_seeds("toy")
        assert len(s) == 2 and len(set(s)) == 2 and set(s) <= set(range(7001, 7021))
        assert verdict_runs.sample_seeds("toy") == s  # the same in every worker of one run
        draws.add(tuple(s))
    assert len(draws) > 1


FOREIGN = {"machine": "x86_64", "cpu": "GenuineIntel Xeon", "simd": ["avx", "avx2", "fma"], "torch": "2.13.0+cpu",
           "torch_cpu": "AVX2", "numpy": "2.4.6"}


def _foreign(rec: dict, **change) -> dict:
    """``rec``'s fingerprint with the CPU changed (and ``change`` applied)."""
    return {**rec["machine"], **{k: v for k, v in FOREIGN.items() if k not in ("torch", "numpy")}, **change}


def test_the_record_carries_its_machine_and_a_stable_round_off_probe(tree):
    rec = seed_audit.load("toy", _audit(tree))
    assert rec["machine"] == seed_audit.fingerprint()
    assert {"torch", "torch_cpu", "cpu", "simd", "numpy"} <= set(rec["machine"])
    probe = rec["roundoff"]
    assert probe["seed"] == SEEDS[0] and probe["verdicts_equal"] and probe["stable"]
    assert probe["torch_cpu"] == "DEFAULT" and "ATEN_CPU_CAPABILITY=default" in probe["probe"]
    assert 0 < probe["max_rel"] <= seed_audit.STABLE_PROBE


def test_same_machine_one_ulp_fails(tree):
    rec = seed_audit.load("toy", _audit(tree))
    mode, _ = seed_audit.comparison_mode(rec, seed_audit.fingerprint())
    assert mode == seed_audit.EXACT
    failures, deviations, _ = seed_audit.compare(rec["runs"]["12"], seed_audit.signature(
        _toy_verdicts(12, shift=math.ulp(1.0))), mode)
    assert failures and "value recorded" in failures[0] and not deviations
    assert seed_audit.compare(rec["runs"]["12"], seed_audit.signature(_toy_verdicts(12)), mode)[:2] == ([], [])


def test_foreign_machine_one_ulp_passes_a_flipped_holds_fails(tree):
    rec = seed_audit.load("toy", _audit(tree))
    mode, why = seed_audit.comparison_mode(rec, _foreign(rec))
    assert mode == seed_audit.BOUND and "cpu" in why and "torch_cpu" in why
    run = rec["runs"]["12"]
    assert seed_audit.compare(run, seed_audit.signature(_toy_verdicts(12, shift=math.ulp(1.0))), mode)[:2] == ([], [])
    # 1e-9 absolute on values ≈ 1 and ≈ 0.26: within the relative bound 1e-6, shown digits or not: passes
    assert seed_audit.compare(run, seed_audit.signature(_toy_verdicts(12, shift=1e-9)), mode)[0] == []
    # the first row fails (shift > 0.5): its holds and outcome flip — a failure on any machine
    failures, _, _ = seed_audit.compare(run, seed_audit.signature(_toy_verdicts(12, shift=0.6)), mode)
    assert any("holds: recorded True, now False" in f for f in failures)
    # a flipped holds alone (numbers equal, verdict changed) fails too
    flipped = seed_audit.signature(_toy_verdicts(12))
    flipped["rows"][1] = {**flipped["rows"][1], "holds": False}
    assert any(".holds: recorded True, now False" in f for f in seed_audit.compare(run, flipped, mode)[0])


def test_foreign_machine_a_number_beyond_the_bound_fails_for_a_stable_chapter_is_reported_for_a_chaotic_one(tree):
    rec = seed_audit.load("toy", _audit(tree))
    run = rec["runs"]["12"]
    moved = seed_audit.signature(_toy_verdicts(12, shift=1e-4))  # same verdicts, numbers moved 1e-4
    failures, deviations, worst = seed_audit.compare(run, moved, seed_audit.BOUND)
    assert failures and not deviations and worst > seed_audit.RTOL
    chaotic = {**rec, "roundoff": {**rec["roundoff"], "max_rel": 1e-5, "stable": False}}
    mode, why = seed_audit.comparison_mode(chaotic, _foreign(rec))
    assert mode == seed_audit.REPORT and "amplifies round-off" in why
    failures, deviations, _ = seed_audit.compare(run, moved, mode)
    assert failures == [] and deviations and "beyond the shown digits" in deviations[0]
    # but a verdict that changes still fails
    assert seed_audit.compare(run, seed_audit.signature(_toy_verdicts(12, shift=0.6)), mode)[0]


def test_another_torch_version_reports_numbers_and_requires_verdicts(tree):
    rec = seed_audit.load("toy", _audit(tree))
    mode, why = seed_audit.comparison_mode(rec, _foreign(rec, torch="9.9.9"))
    assert mode == seed_audit.REPORT and "torch" in why


def test_a_shown_number_may_move_its_last_digit_but_not_more():
    """Shown values are rounded to 6 significant digits: a round-off change can move the last one by a unit."""
    row = {"claim": "c", "measured": "1.20757", "value": 1.207575}
    assert seed_audit.compare({"rows": [row]}, {"rows": [{**row, "measured": "1.20758",
                                                          "value": 1.2075750000001}]}, seed_audit.BOUND)[0] == []
    assert seed_audit.compare({"rows": [row]}, {"rows": [{**row, "measured": "1.20760"}]}, seed_audit.BOUND)[0]
    # an integer shown in a claim is not a rounded number: 24 vs 25 differs beyond the bound
    assert seed_audit.compare({"rows": [{**row, "claim": "n = 24"}]}, {"rows": [{**row, "claim": "n = 25"}]},
                              seed_audit.BOUND)[0]
    # text around the numbers must be equal
    assert seed_audit.compare({"rows": [row]}, {"rows": [{**row, "measured": "1.20757 (censored)"}]},
                              seed_audit.BOUND)[0]
