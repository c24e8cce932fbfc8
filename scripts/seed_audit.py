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

* ``machine`` — the :func:`fingerprint` of the machine that computed it: what decides the float results of one
  seed besides the sources (torch and numpy versions, torch's CPU kernel set ``get_cpu_capability()``, the CPU's
  vendor and model name, the SIMD flags that select MKL/OpenBLAS kernels, and any kernel-forcing variables set).
* ``roundoff`` — how far the chapter's numbers move when only the reduction order changes: the first seed
  re-computed by the *round-off probe* (:data:`PROBE_ENV`: torch's generic kernels, MKL's SSE4.2 and OpenBLAS's
  Nehalem kernels — every vectorised reduction summed in another order), its largest relative deviation
  (:func:`compare`), whether its verdicts were all equal and the kernel set torch really used in it
  (``torch_cpu``: ``DEFAULT``); ``stable`` when the deviation is at most :data:`STABLE_PROBE` (100× below
  :data:`RTOL`), the verdicts were equal and the probe's kernels were not the audit's own.

``tests/test_seed_robustness.py`` (in ``make test``) checks each record against the sources (:func:`problems`),
that every recorded seed holds, and re-computes a random sample of the recorded seeds (:func:`compare`, with the
rule :func:`comparison_mode` picks):

* **same machine** (the current :func:`fingerprint` equals the record's): every field bit for bit, and the digest of
  all other fields — seeded means reproducible.
* **another CPU, same torch and numpy** (e.g. CI): the reduction orders differ, so bits may. Every field that is not a
  measured number must be equal — row count, claim, holds, outcome, paper_passes, each control's label and verdict,
  the plant's verdict, the seed's holds, and ``skeleton``, the digest of every field with its numbers masked — and
  every number must agree within round-off: ``|a − b| ≤ RTOL·max(|a|, |b|) + ATOL + u``, with :data:`RTOL` = 1e-6
  and :data:`ATOL` = 1e-12, where ``u`` is the unit of the 6th significant digit for a number shown as text
  (``check.rows.fmt`` rounds to 6 digits, so a 1e-12 change can move the last shown digit) and 0 for a
  full-precision float. The error model: another CPU sums each vectorised reduction in another order, a
  perturbation of a few ulp per reduction, as the probe's is; a chapter whose probe deviation is at most 1e-8
  therefore stays within 1e-6 with a 100× margin. A chapter whose probe deviation exceeds that (its pipeline
  amplifies round-off: long optimisation runs, argmax/threshold decisions on near ties — "chaotic") cannot promise
  a bound: for it numbers beyond the bound are *reported* as deviations (a warning naming the largest), and only
  the non-numeric fields must be equal.
* **another torch or numpy version**: algorithms may change, not only reduction orders: the non-numeric fields must
  be equal, numbers beyond the bound are reported.

A stale or missing record is re-audited in full by that run (locally) or fails with the command that refreshes it
(``CI`` set, or ``THEORYBOOK_AUDIT=check``); see the README's "Seed audit".

Every seed is computed with one intra-op thread (:func:`one_thread`), in the audit's processes and in the test
alike, so the record does not depend on how many processes ran it.

Command line: ``python scripts/seed_audit.py run [--jobs N] [--all] [SLUG ...]`` (audit the chapters whose record
is stale or missing — or, with SLUGs or ``--all``, those in full — and write their records; exits non-zero when a
row fails on a seed), ``python scripts/seed_audit.py status`` (which records are current), ``python
scripts/seed_audit.py fingerprint`` (this machine's) and ``python scripts/seed_audit.py probe SLUG SEED`` (one
seed's signature as JSON, computed under whatever kernel-forcing variables are set: the round-off probe runs it with
:data:`PROBE_ENV`).
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
import platform
import re
import subprocess
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
FORMAT = "theorybook seed audit 2"
RECORDS = ROOT / "tests" / "seed_audit"

#: Relative round-off bound for a number re-computed on another CPU (see the module docstring's error model).
RTOL = 1e-6
#: Absolute floor of that bound (a result that cancels to ~0 has no relative precision).
ATOL = 1e-12
#: A chapter whose round-off probe moves no number by more than this (relative, beyond the shown digits) is stable:
#: on another CPU its numbers must stay within :data:`RTOL`.
STABLE_PROBE = 1e-8
#: The round-off probe's environment: the oldest x86-64 kernels of torch, MKL and OpenBLAS, so every vectorised
#: reduction runs in another order than on the auditing machine (set before torch and numpy load).
PROBE_ENV = {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "OPENBLAS_CORETYPE": "Nehalem"}
#: The CPU flags that select torch's, MKL's and OpenBLAS's kernels (the fingerprint keeps those present).
SIMD_FLAGS = ("avx", "avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_tile")
#: Variables that force a kernel set (recorded in the fingerprint when set).
KERNEL_ENV = ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR", "OPENBLAS_CORETYPE")


def fingerprint() -> dict[str, Any]:
    """What decides one seed's float results besides the sources: torch's and numpy's versions, torch's CPU kernel
    set, the CPU (vendor and model name, the SIMD flags of :data:`SIMD_FLAGS` it has), the architecture, and the
    kernel-forcing variables of :data:`KERNEL_ENV` that are set. Equal fingerprints: equal bits."""
    import numpy
    import torch

    vendor = model = ""
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                name, _, value = line.partition(":")
                name, value = name.strip(), value.strip()
                if name == "vendor_id" and not vendor:
                    vendor = value
                elif name == "model name" and not model:
                    model = value
                elif name in ("flags", "Features") and not flags:
                    flags = set(value.split())
    except OSError:
        model = platform.processor()
    fp = {"machine": platform.machine(), "cpu": " ".join(x for x in (vendor, model) if x),
          "simd": [f for f in SIMD_FLAGS if f in flags], "torch": torch.__version__,
          "torch_cpu": torch.backends.cpu.get_cpu_capability(), "numpy": numpy.__version__}
    env = {k: os.environ[k] for k in KERNEL_ENV if os.environ.get(k)}
    if env:
        fp["env"] = env
    return fp


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
    """One intra-op thread for torch (:func:`theorybook.device.one_thread`) and for the BLAS/OpenMP pools when
    threadpoolctl is importable, while the block runs, restored afterwards."""
    from theorybook.device import one_thread as torch_one_thread

    with torch_one_thread(), contextlib.ExitStack() as pools:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            pass
        else:
            pools.enter_context(threadpool_limits(1))
        yield


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
    full = [r.as_dict() for r in verdicts.rows]
    masked = json.dumps(_mask(json.loads(json.dumps(full, default=repr))), sort_keys=True)
    return {"holds": all(r["holds"] for r in rows) and bool(rows), "rows": rows,
            "digest": hashlib.sha256(json.dumps(full, sort_keys=True, default=repr).encode()).hexdigest(),
            "skeleton": hashlib.sha256(masked.encode()).hexdigest()}


#: A number inside a shown string (``check.rows.fmt``'s forms: 0.00360959, 1.2e-05, -3, inf, nan).
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?!\w)|\b(?:-?inf|nan)\b")


def _mask(x: Any) -> Any:
    """``x`` with every number (a JSON number, or a number inside a string) replaced by ``#``: what must be equal
    on any machine."""
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, int | float):
        return "#"
    if isinstance(x, str):
        return NUMBER.sub("#", x)
    if isinstance(x, list | tuple):
        return [_mask(v) for v in x]
    if isinstance(x, dict):
        return {k: _mask(v) for k, v in x.items()}
    return x


def run_seed(slug: str, seed: int) -> dict[str, Any]:
    """One seed's :func:`signature`, with the CPU seconds it took (not recorded: they vary between runs)."""
    t0 = time.process_time()
    sig = signature(seeded_verdicts(slug, seed))
    return {"slug": slug, "seed": seed, "run": sig, "cpu_s": time.process_time() - t0, "machine": fingerprint()}


def _checksum(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def make_record(slug: str, runs: dict[int, dict[str, Any]], root: Path = ROOT, machine: dict[str, Any] | None = None,
                probe: dict[str, Any] | None = None, started_key: str | None = None) -> dict[str, Any]:
    """The record of ``slug``: its key, seeds and runs, the ``machine`` that computed them and the round-off
    ``probe`` (:func:`roundoff`), with a checksum over all of it. ``started_key``, the key when the audit started:
    a record whose sources changed while its seeds ran is refused (it would be keyed to sources it did not run)."""
    seeds = verdict_runs.unseen_seeds(slug)
    now = key(slug, root)
    if started_key is not None and started_key != now:
        raise RuntimeError(f"{slug}: its sources changed while the audit ran; run `{refresh_command(slug)}` again")
    rec = {"chapter": slug, "format": FORMAT, "key": now, "refresh": refresh_command(slug),
           "seeds": seeds, "runs": {str(s): runs[s] for s in seeds}, "machine": machine or fingerprint(),
           "roundoff": probe}
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


def _shown_unit(text: str) -> float:
    """The unit of the 6th significant digit of a number shown as ``text`` (``check.rows.fmt`` rounds to 6)."""
    x = abs(float(text))
    return 0.0 if x == 0 or not math.isfinite(x) else 10.0 ** (math.floor(math.log10(x)) - 5)


def _excess(a: float, b: float, unit: float) -> float:
    """How far ``a`` and ``b`` differ beyond the shown unit and :data:`ATOL`, relative to the larger of the two (0
    when within; ``inf`` when one is not finite and they differ)."""
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return max(0.0, abs(a - b) - unit - ATOL) / max(abs(a), abs(b))


def _walk(a: Any, b: Any, where: str, out: list[str], nums: list[tuple[str, Any, Any, float]]) -> None:
    """Compare a recorded and a fresh field: every non-number must be equal (a difference goes to ``out``); every
    pair of numbers goes to ``nums`` as (where, recorded, now, relative excess)."""
    if isinstance(a, str) and isinstance(b, str) and a in ("nan", "inf", "-inf") and a == b:
        return
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        if a is not b and a != b:
            out.append(f"{where}: recorded {a!r}, now {b!r}")
        return
    if isinstance(a, int | float) and isinstance(b, int | float):
        nums.append((where, a, b, _excess(float(a), float(b), 0.0)))
        return
    if isinstance(a, str) and isinstance(b, str):
        if NUMBER.sub("#", a) != NUMBER.sub("#", b):
            out.append(f"{where}: recorded {a!r}, now {b!r}")
            return
        for x, y in zip(NUMBER.findall(a), NUMBER.findall(b), strict=True):
            nums.append((where, x, y, _excess(float(x), float(y), max(_shown_unit(x), _shown_unit(y)))))
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{where}: {len(a)} entries recorded, {len(b)} now")
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _walk(x, y, f"{where}[{i}]", out, nums)
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            _walk(a.get(k), b.get(k), f"{where}.{k}" if where else k, out, nums)
        return
    if a != b:
        out.append(f"{where}: recorded {a!r}, now {b!r}")


#: The comparison a re-computed seed gets (:func:`comparison_mode`): bit for bit; within :data:`RTOL` (numbers
#: beyond it fail); or numbers beyond it reported only.
EXACT, BOUND, REPORT = "exact", "bound", "report"


def compare(recorded: dict[str, Any], fresh: dict[str, Any], mode: str = EXACT) -> tuple[list[str], list[str], float]:
    """A fresh run of a seed against its record, under ``mode`` (:func:`comparison_mode`). Returns the failures,
    the reported deviations (numbers beyond the round-off bound under :data:`REPORT`) and the largest relative
    deviation of a number beyond its shown digits and :data:`ATOL` (0 when every number is equal).

    :data:`EXACT`: :func:`differences` — every field bit for bit. :data:`BOUND` and :data:`REPORT`: the row count,
    every field that is not a number (claim, holds, outcome, paper_passes, labels, verdicts, each string with its
    numbers masked), the seed's holds and its ``skeleton`` digest must be equal; every number must agree within
    ``RTOL·max(|a|, |b|) + ATOL`` plus the unit of the 6th significant digit for a number shown as text — beyond it
    a failure under :data:`BOUND`, a deviation under :data:`REPORT`."""
    out: list[str] = []
    nums: list[tuple[str, Any, Any, float]] = []
    a, b = recorded.get("rows", []), fresh.get("rows", [])
    if len(a) != len(b):
        out.append(f"{len(b)} rows now, {len(a)} recorded")
    for ra, rb in zip(a, b, strict=False):
        _walk(ra, rb, f"row {rb.get('claim')!r}", out, nums)
    worst = max((n[3] for n in nums), default=0.0)
    if mode == EXACT:
        return differences(recorded, fresh), [], worst
    if not out and recorded.get("skeleton") != fresh.get("skeleton"):
        out.append("the rows' other fields (notes, tolerances, labels), numbers masked, differ from the record "
                   "(skeleton)")
    if recorded.get("holds") != fresh.get("holds"):
        out.append(f"holds recorded {recorded.get('holds')}, now {fresh.get('holds')}")
    beyond = [f"{w}: recorded {x!r}, now {y!r} (relative {e:.2g} beyond the shown digits, bound {RTOL:g})"
              for w, x, y, e in nums if e > RTOL]
    if mode == BOUND:
        return out + beyond, [], worst
    return out, beyond, worst


def comparison_mode(record: dict[str, Any], current: dict[str, Any]) -> tuple[str, str]:
    """Which comparison a seed of ``record`` re-computed on a machine with fingerprint ``current`` gets, and why
    (the module docstring's rule): :data:`EXACT` on the record's machine; :data:`REPORT` under another torch or
    numpy version, or for a chapter whose round-off probe was not stable; else :data:`BOUND`."""
    made = record.get("machine") or {}
    if made == current:
        return EXACT, "same machine fingerprint as the record: bit for bit"
    moved = sorted(k for k in set(made) | set(current) if made.get(k) != current.get(k))
    if any(made.get(k) != current.get(k) for k in ("torch", "numpy")):
        return REPORT, (f"another torch/numpy version than the record's ({', '.join(moved)} differ): verdicts must be "
                        f"equal, numbers beyond relative {RTOL:g} are reported")
    probe = record.get("roundoff") or {}
    if probe.get("stable"):
        return BOUND, (f"another machine ({', '.join(moved)} differ); the chapter's round-off probe moved its numbers "
                       f"by {probe.get('max_rel', 0):.2g} ≤ {STABLE_PROBE:g}: numbers within relative {RTOL:g}")
    return REPORT, (f"another machine ({', '.join(moved)} differ) and a chapter that amplifies round-off (probe: "
                    f"{probe.get('max_rel', 'not run')}): verdicts must be equal, numbers beyond {RTOL:g} reported")


def probe_run(slug: str, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """One seed's :func:`signature` computed in a fresh process under :data:`PROBE_ENV` (another reduction order in
    every vectorised kernel), and that process's :func:`fingerprint` (which kernels it really used)."""
    env = {**os.environ, **PROBE_ENV, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "probe", slug, str(seed)], env=env,
                          capture_output=True, text=True, check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["run"], out["machine"]


def roundoff(slug: str, seed: int, recorded: dict[str, Any]) -> dict[str, Any]:
    """The round-off probe of ``slug`` on ``seed`` against its recorded run: the largest relative deviation of a
    number, whether every non-numeric field was equal, and whether the chapter is stable (:data:`STABLE_PROBE`)."""
    run, machine = probe_run(slug, seed)
    failures, _, worst = compare(recorded, run, REPORT)
    return {"probe": " ".join(f"{k}={v}" for k, v in PROBE_ENV.items()), "torch_cpu": machine.get("torch_cpu"),
            "seed": seed, "max_rel": worst, "verdicts_equal": not failures,
            "stable": not failures and worst <= STABLE_PROBE
            and machine.get("torch_cpu") != fingerprint()["torch_cpu"]}  # the probe really ran other kernels


def audit(slugs: Iterable[str], jobs: int, root: Path = ROOT, records: Path = RECORDS,
          log=print) -> dict[str, list[str]]:
    """Run every unseen seed of each chapter in ``slugs``, ``jobs`` seeds at a time (one intra-op thread each), and
    write their records. Returns each chapter's :func:`problems` (a row failing on a seed is recorded, and listed)."""
    slugs = list(slugs)
    seeds = {slug: verdict_runs.unseen_seeds(slug) for slug in slugs}
    started = {slug: key(slug, root) for slug in slugs}
    tasks = [(slug, s) for slug in slugs for s in seeds[slug]]
    runs: dict[str, dict[int, dict[str, Any]]] = {slug: {} for slug in slugs}
    machines: dict[str, list[dict[str, Any]]] = {slug: [] for slug in slugs}
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
            if res["machine"] not in machines[slug]:
                machines[slug].append(res["machine"])
            if len(runs[slug]) == len(seeds[slug]):
                if len(machines[slug]) != 1:
                    raise RuntimeError(f"{slug}: seeds computed under {len(machines[slug])} fingerprints: "
                                       f"{machines[slug]}")
                first = seeds[slug][0]
                t1 = time.perf_counter()
                probe = roundoff(slug, first, runs[slug][first])
                write_record(make_record(slug, runs[slug], root, machines[slug][0], probe, started[slug]), records)
                bad = sum(not r["holds"] for r in runs[slug].values())
                log(f"seed audit: {slug}: {len(seeds[slug])} seeds, {cpu[slug]:.1f} CPU s, "
                    f"{'every row holds' if not bad else f'{bad} seed(s) with a failing row'}; round-off probe "
                    f"(seed {first}, {time.perf_counter() - t1:.0f} s): numbers moved ≤ {probe['max_rel']:.2g} "
                    f"relative, {'verdicts equal' if probe['verdicts_equal'] else 'A VERDICT CHANGED'} → "
                    f"{'stable' if probe['stable'] else 'amplifies round-off'}")
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
    sub.add_parser("fingerprint", help="this machine's fingerprint (what decides the float results)")
    probe = sub.add_parser("probe", help="one seed's signature as JSON (the round-off probe runs it under PROBE_ENV)")
    probe.add_argument("slug")
    probe.add_argument("seed", type=int)
    args = ap.parse_args(argv)
    if args.cmd == "fingerprint":
        print(json.dumps(fingerprint(), indent=1))
        return 0
    if args.cmd == "probe":
        print(json.dumps({"run": signature(seeded_verdicts(args.slug, args.seed)), "machine": fingerprint()}))
        return 0
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
