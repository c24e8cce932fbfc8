"""The seed audit: every chapter's stochastic rows run for 20 seeds the chapter does not use, kept as a record.

``make audit`` runs ``seeded_verdicts(seed)`` of every chapter package (the rows the chapter shows) for its 20
unseen seeds (``tests/verdict_runs.py``: :func:`~verdict_runs.unseen_seeds`) and writes one record per chapter,
``tests/seed_audit/<slug>.json`` (committed), holding per seed every row's numbers and whether it holds:

* ``key`` — the hash of everything the chapter's rows depend on: the chapter cache's dependency closure of the
  package (``scripts/chapter_cache.py``: :func:`~chapter_cache.package_dependencies` — the package, the packages it
  imports transitively, the shared core, ``kernels/``, ``pyproject.toml``, the bench results they read) plus the
  audit's own parameters (:data:`FORMAT`, the robustness seeds). The chapter's ``.md`` is not part of it: the
  rows are built by the package alone.
* ``runs`` — per seed: ``holds`` (every row stands as registered) and ``rows``, each row's signature
  (:func:`signature`: claim, holds, outcome, the measured value shown and its full-precision float, every control's
  and plant's shown value and verdict, the scan's values) plus ``digest``, a hash of every field of every row.
* ``checksum`` — a hash of the rest: a record edited by hand no longer matches it.

``tests/test_seed_robustness.py`` (in ``make test``) checks each record against the sources (:func:`problems`),
that every recorded seed holds, and re-computes a random sample of the recorded seeds, which must equal the record
exactly (:func:`differences`). A stale or missing record is re-audited in full by that run (locally) or fails with
the command that refreshes it (``CI`` set, or ``THEORYBOOK_AUDIT=check``); see the README's "Seed audit".

Every seed is computed with one intra-op thread (:func:`one_thread`), in the audit's processes and in the test
alike, so the record does not depend on how many processes ran it.

Command line: ``python scripts/seed_audit.py run [--jobs N] [--all] [SLUG ...]`` (audit the chapters whose record
is stale or missing — or, with SLUGs or ``--all``, those in full — and write their records; exits non-zero when a
row fails on a seed) and ``python scripts/seed_audit.py status`` (which records are current).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import hashlib
import importlib
import json
import math
import multiprocessing as mp
import os
import pkgutil
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))
import chapter_cache  # noqa: E402
import verdict_runs  # noqa: E402

#: The record's format: part of every key, so a change to what is recorded makes every record stale.
FORMAT = "theorybook seed audit 1"
RECORDS = ROOT / "tests" / "seed_audit"


def refresh_command(slug: str | None = None) -> str:
    """The command that refreshes one chapter's record (or every stale one)."""
    return f"make audit CHAPTERS={slug}" if slug else "make audit"


def record_path(slug: str, records: Path = RECORDS) -> Path:
    return records / f"{slug}.json"


def audited_packages() -> list[str]:
    """The chapter packages with stochastic rows (a ``seeded_verdicts``), sorted."""
    import theorybook

    names = sorted(m.name for m in pkgutil.iter_modules(theorybook.__path__) if m.ispkg and m.name != "kernels")
    return [n for n in names if hasattr(importlib.import_module(f"theorybook.{n}"), "seeded_verdicts")]


def key(slug: str, root: Path = ROOT) -> str:
    """The hash of everything ``theorybook.<slug>``'s rows depend on, and of the audit's parameters."""
    salt = json.dumps({"format": FORMAT, "robustness_seeds": list(verdict_runs.ROBUSTNESS_SEEDS),
                       "n_seeds": verdict_runs.N_SEEDS})
    return chapter_cache.hash_files(chapter_cache.package_dependencies([slug], root), root, salt)


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """One intra-op thread for torch (and for the BLAS/OpenMP pools when threadpoolctl is importable) while the
    block runs, restored afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            yield
        else:
            with threadpool_limits(1):
                yield
    finally:
        torch.set_num_threads(before)


def seeded_verdicts(slug: str, seed: int):
    """``theorybook.<slug>.seeded_verdicts(seed)``, computed with one intra-op thread."""
    with one_thread():
        return importlib.import_module(f"theorybook.{slug}").seeded_verdicts(seed)


def _float(x: Any) -> Any:
    """A float as JSON keeps it exactly (``repr`` round-trips); NaN and infinities as strings."""
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    return x


def signature(verdicts) -> dict[str, Any]:
    """One seed's run as recorded: ``holds``, each row's numbers and verdicts, and a digest of every field."""
    rows = []
    for r in verdicts.rows:
        rows.append({
            "claim": r.claim, "holds": bool(r.holds), "outcome": r.outcome, "measured": r.measured,
            "value": _float(r.measured_value),
            "controls": [[c["label"], c["measured"], bool(c["passes"])] for c in r.controls],
            "planted": None if r.planted is None else [r.planted["measured"], bool(r.planted["passes"])],
            "scan": None if r.scan is None else [list(map(str, r.scan.get("values", ()))),
                                                 list(map(str, r.scan.get("measured", ())))],
            "paper_passes": r.paper_passes,
        })
    full = json.dumps([r.as_dict() for r in verdicts.rows], sort_keys=True, default=repr)
    return {"holds": all(r["holds"] for r in rows) and bool(rows), "rows": rows,
            "digest": hashlib.sha256(full.encode()).hexdigest()}


def run_seed(slug: str, seed: int) -> dict[str, Any]:
    """One seed's :func:`signature`, with the CPU seconds it took (not recorded: they vary between runs)."""
    t0 = time.process_time()
    sig = signature(seeded_verdicts(slug, seed))
    return {"slug": slug, "seed": seed, "run": sig, "cpu_s": time.process_time() - t0}


def _checksum(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def make_record(slug: str, runs: dict[int, dict[str, Any]], root: Path = ROOT) -> dict[str, Any]:
    seeds = verdict_runs.unseen_seeds(slug)
    rec = {"chapter": slug, "format": FORMAT, "key": key(slug, root), "refresh": refresh_command(slug),
           "seeds": seeds, "runs": {str(s): runs[s] for s in seeds}}
    rec["checksum"] = _checksum(rec)
    return rec


def dumps(record: dict[str, Any]) -> str:
    """The record as JSON, one line per row (a refreshed record's diff shows the rows whose numbers moved)."""
    def one(x: Any) -> str:
        return json.dumps(x, sort_keys=True, ensure_ascii=False)

    head = [f" {one(k)}: {one(v)}" for k, v in sorted(record.items()) if k != "runs"]
    runs = []
    for s, run in record["runs"].items():
        rows = ",\n".join(f"   {one(r)}" for r in run["rows"])
        rest = ", ".join(f"{one(k)}: {one(v)}" for k, v in sorted(run.items()) if k != "rows")
        runs.append(f"  {one(s)}: {{{rest}, \"rows\": [\n{rows}\n  ]}}")
    return "{\n" + ",\n".join([*head, ' "runs": {\n' + ",\n".join(runs) + "\n }"]) + "\n}\n"


def write_record(record: dict[str, Any], records: Path = RECORDS) -> Path:
    records.mkdir(parents=True, exist_ok=True)
    path = record_path(record["chapter"], records)
    tmp = path.with_suffix(f".json.{os.getpid()}")
    tmp.write_text(dumps(record), encoding="utf-8")
    os.replace(tmp, path)
    return path


def load(slug: str, records: Path = RECORDS) -> dict[str, Any] | None:
    path = record_path(slug, records)
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def stale(slug: str, root: Path = ROOT, records: Path = RECORDS) -> str | None:
    """Why the record of ``slug`` must be re-audited (missing, or its key is not the sources'), else ``None``."""
    rec = load(slug, records)
    if rec is None:
        return f"{slug}: no seed-audit record ({record_path(slug, records).relative_to(root)})"
    if rec.get("key") != key(slug, root):
        return (f"{slug}: the seed-audit record is stale (its sources changed since it was made: "
                f"key {str(rec.get('key'))[:12]}… ≠ {key(slug, root)[:12]}…)")
    return None


def problems(slug: str, root: Path = ROOT, records: Path = RECORDS) -> list[str]:
    """What is wrong with a current record: edited by hand, wrong seeds, a seed whose rows do not all hold."""
    rec = load(slug, records)
    if rec is None:
        return [f"{slug}: no seed-audit record"]
    out = []
    if rec.get("checksum") != _checksum(rec):
        out.append(f"{slug}: the seed-audit record does not match its checksum (edited by hand?)")
    want = verdict_runs.unseen_seeds(slug)
    if rec.get("seeds") != want or sorted(rec.get("runs", {}), key=int) != [str(s) for s in want]:
        out.append(f"{slug}: the record's seeds {rec.get('seeds')} are not the 20 unseen seeds {want}")
    for s, run in sorted(rec.get("runs", {}).items(), key=lambda kv: int(kv[0])):
        rows = run.get("rows") or []
        if not rows:
            out.append(f"{slug}: seed {s}: no rows recorded")
        bad = [r for r in rows if not r.get("holds")]
        out += [f"{slug}: seed {s}: row {r.get('claim')!r} fails: measured {r.get('measured')}" for r in bad]
        if not bad and not run.get("holds"):
            out.append(f"{slug}: seed {s}: recorded as not holding")
    return out


def differences(recorded: dict[str, Any], fresh: dict[str, Any]) -> list[str]:
    """Where a fresh run of a seed differs from its record (empty: equal exactly, every number bit for bit)."""
    out = []
    a, b = recorded.get("rows", []), fresh.get("rows", [])
    if len(a) != len(b):
        out.append(f"{len(b)} rows now, {len(a)} recorded")
    for ra, rb in zip(a, b, strict=False):
        for field in sorted(set(ra) | set(rb)):
            if ra.get(field) != rb.get(field):
                out.append(f"row {rb.get('claim')!r}: {field} recorded {ra.get(field)!r}, now {rb.get(field)!r}")
    if not out and recorded.get("digest") != fresh.get("digest"):
        out.append("the rows' other fields (notes, tolerances, labels) differ from the record (digest)")
    if not out and recorded.get("holds") != fresh.get("holds"):
        out.append(f"holds recorded {recorded.get('holds')}, now {fresh.get('holds')}")
    return out


def audit(slugs: Iterable[str], jobs: int, root: Path = ROOT, records: Path = RECORDS,
          log=print) -> dict[str, list[str]]:
    """Run every unseen seed of each chapter in ``slugs``, ``jobs`` seeds at a time (one intra-op thread each), and
    write their records. Returns each chapter's :func:`problems` (a row failing on a seed is recorded, and listed)."""
    slugs = list(slugs)
    seeds = {slug: verdict_runs.unseen_seeds(slug) for slug in slugs}
    tasks = [(slug, s) for slug in slugs for s in seeds[slug]]
    runs: dict[str, dict[int, dict[str, Any]]] = {slug: {} for slug in slugs}
    cpu = dict.fromkeys(slugs, 0.0)
    t0 = time.perf_counter()
    if jobs <= 1:
        results: Iterable[dict[str, Any]] = (run_seed(slug, s) for slug, s in tasks)
        pool = None
    else:
        threads = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = "1"  # inherited by the pool's processes
        try:
            pool = cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"))
            futures = [pool.submit(run_seed, slug, s) for slug, s in tasks]
        finally:
            if threads is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = threads
        results = (f.result() for f in cf.as_completed(futures))
    try:
        for res in results:
            runs[res["slug"]][res["seed"]] = res["run"]
            cpu[res["slug"]] += res["cpu_s"]
            slug = res["slug"]
            if len(runs[slug]) == len(seeds[slug]):
                write_record(make_record(slug, runs[slug], root), records)
                bad = sum(not r["holds"] for r in runs[slug].values())
                log(f"seed audit: {slug}: {len(seeds[slug])} seeds, {cpu[slug]:.1f} CPU s, "
                    f"{'every row holds' if not bad else f'{bad} seed(s) with a failing row'}")
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    log(f"seed audit: {len(slugs)} chapter(s), {len(tasks)} seeds in {time.perf_counter() - t0:.0f} s "
        f"({max(jobs, 1)} at a time), {sum(cpu.values()):.0f} CPU s")
    return {slug: problems(slug, root, records) for slug in slugs}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="audit stale/missing records (or the SLUGs, or --all) and write them")
    run.add_argument("slugs", nargs="*")
    run.add_argument("--all", action="store_true", help="every chapter, current or not")
    run.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    sub.add_parser("status", help="which records are current")
    args = ap.parse_args(argv)
    every = audited_packages()
    if args.cmd == "status":
        for slug in every:
            why = stale(slug)
            print(f"{slug}: current" if why is None else why)
        return 0
    unknown = sorted(set(args.slugs) - set(every))
    if unknown:
        print(f"seed audit: not a chapter package with seeded_verdicts: {', '.join(unknown)}", file=sys.stderr)
        return 2
    todo = every if args.all else (args.slugs or [s for s in every if stale(s) is not None])
    print(f"seed audit: {len(todo)} chapter(s) to audit: {', '.join(todo) or 'none (every record is current)'}")
    bad = audit(todo, args.jobs) if todo else {}
    failed = [m for msgs in bad.values() for m in msgs]
    for m in failed:
        print(f"seed audit: {m}", file=sys.stderr)
    orphans = sorted(p.stem for p in RECORDS.glob("*.json") if p.stem not in every) if RECORDS.exists() else []
    for o in orphans:
        print(f"seed audit: {record_path(o).relative_to(ROOT)} belongs to no chapter package: remove it",
              file=sys.stderr)
    return 1 if failed or orphans else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
