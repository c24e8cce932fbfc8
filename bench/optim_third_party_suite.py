"""Run kozistr/pytorch_optimizer's own test suite against ``theorybook.optim``'s DASH and POGO (issue 60).

Usage::

    .venv/bin/python bench/optim_third_party_suite.py /path/to/suite [--suite-commit SHA] [--out JSON]

``/path/to/suite`` is a local checkout of the suite: a directory holding ``tests/`` (``tests/utils.py``,
``tests/optimizer_cases.py``, ``tests/recipes.py``, ``tests/test_*.py``, ...). Nothing is downloaded; the suite is not
copied into this repository. The script runs pytest twice in subprocesses:

1. **the suite's own DASH/Shampoo tests** (``-k "dash or shampoo"``), unmodified, as an environment check;
2. **ours**: a pytest plugin (the glue below, written to a temporary directory) registers
   ``theorybook_dash`` → :class:`theorybook.optim.DASH` and ``theorybook_pogo`` → :class:`theorybook.optim.POGO` in
   ``pytorch_optimizer``'s optimizer registry (``OPTIMIZERS``, which ``load_optimizer``/``create_optimizer`` read),
   adds them to the suite's name lists (``tests.optimizer_cases``) exactly as the suite derives them for its own
   optimizers (by constructor signature, and by the suite's own ``supports_gradient`` probe), appends training
   recipes with settings our optimizers accept to ``tests.recipes.OPTIMIZER_RECIPES``, and runs ``-k theorybook``.

The glue does what the suite does for its own special cases and no more: ``tests.utils.build_optimizer`` fills a
default ``lr`` for ``theorybook_pogo`` (POGO has no default lr by design; the suite fills ``lr=1e-3`` for ``sgd`` the
same way), and ``build_optimizer_parameters`` puts POGO's ≥2-D weights in an orthogonal group (projected onto the
manifold first) and biases in a Euclidean one when a recipe asks for it (as the suite splits groups for Muon).

Every failure of ours is classified by :data:`CLASSIFICATION` — (a) the suite's convention, (b) a real defect — with
a one-line reason; a failure no rule matches is reported as ``"unclassified"`` and the script exits with status 1.
The JSON (``bench/results/optim_third_party_suite.json``) holds the counts, every failure, and the versions.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "optim_third_party_suite.json"

#: The glue: a pytest plugin module, loaded with ``-p``. ``THEORYBOOK_PTO_REGISTER=1`` registers our optimizers;
#: with 0 it only supplies the ``device`` fixture the suite's ``tests/optimizers/*`` modules need (CPU here).
GLUE = r'''
"""theorybook glue for kozistr/pytorch_optimizer's test suite (written by bench/optim_third_party_suite.py)."""
import inspect
import json
import os
import sys

import pytest
import torch

REGISTER = os.environ.get("THEORYBOOK_PTO_REGISTER") == "1"
OURS = ("theorybook_dash", "theorybook_pogo", "theorybook_pogo-euclidean")
POGO_LR = 0.1  # POGO has no default lr; the suite's name-only tests get this one (as it gives sgd lr=1e-3)
PROBES = {}


@pytest.fixture
def device():
    """The suite's per-device fixture, CPU only."""
    return torch.device("cpu")


def _stiefel_(p):
    """Project a weight onto the manifold (rows or columns orthonormal, whichever are fewer): its polar factor."""
    with torch.no_grad():
        u, _, vh = torch.linalg.svd(p.float(), full_matrices=False)
        p.copy_((u @ vh).to(p.dtype))


# Compatibility with the installed pytorch_optimizer (4.1.0), not with ours: the stored suite's capability probe
# (tests/optimizer_cases.py, run at import) builds "muonclip" without the use_muon groups its build_optimizer gives
# the other Muon variants, and crashes, so no module importing it collects. The registry entry is hidden while the
# suite derives its lists (muonclip's own tests are then not generated) and restored right after.
sys.path.insert(0, os.environ["THEORYBOOK_PTO_SUITE"])
import pytorch_optimizer.optimizer as po  # noqa: E402

HIDDEN = {n: po.OPTIMIZERS.pop(n) for n in ("muonclip",) if n in po.OPTIMIZERS}

if REGISTER:
    import tests.utils as tu
    from theorybook.optim import DASH, POGO

    class POGOEuclidean(POGO):
        """POGO with settings every suite test can use: its Euclidean groups (plain heavy-ball SGD / Adam steps,
        the same code path as POGO's biases) and an lr default, so that name-only tests reach the step."""

        def __init__(self, params, lr=POGO_LR, *, base="sgd", momentum=0.0, betas=(0.9, 0.999), lam=0.5,
                     lambda_every=0, orthogonal=False, feasibility_tol=None, distributed=False, weight_decay=0.0):
            super().__init__(params, lr, base=base, momentum=momentum, betas=betas, lam=lam,
                             lambda_every=lambda_every, orthogonal=orthogonal, feasibility_tol=feasibility_tol,
                             distributed=distributed, weight_decay=weight_decay)

    _build = tu.build_optimizer
    _build_parameters = tu.build_optimizer_parameters

    def build_optimizer(name, params, **options):
        if name.lower() == "theorybook_pogo":
            options = {"lr": POGO_LR, **options}
        return _build(name, params, **options)

    def build_optimizer_parameters(parameters, optimizer_name, config):
        config = dict(config)
        if optimizer_name == "theorybook_pogo" and config.pop("stiefel_weights", False):
            parameters = list(parameters)
            weights = [p for p in parameters if p.ndim >= 2]
            for p in weights:
                _stiefel_(p)
            rest = [p for p in parameters if p.ndim < 2]
            return [{"params": weights}, {"params": rest, "orthogonal": False}], config
        return _build_parameters(parameters, optimizer_name, config)

    tu.build_optimizer = build_optimizer
    tu.build_optimizer_parameters = build_optimizer_parameters

    import tests.optimizer_cases as oc  # the suite's own lists, computed before ours are registered

    po.OPTIMIZERS.update(HIDDEN)
    po.OPTIMIZERS["theorybook_dash"] = DASH
    po.OPTIMIZERS["theorybook_pogo"] = POGO
    po.OPTIMIZERS["theorybook_pogo-euclidean"] = POGOEuclidean
    oc.VALID_OPTIMIZER_NAMES = tuple(oc.VALID_OPTIMIZER_NAMES) + OURS
    for name in OURS:
        params = inspect.signature(po.OPTIMIZERS[name]).parameters
        for arg, attr in (("foreach", "FOREACH_OPTIMIZERS"), ("maximize", "MAXIMIZE_OPTIMIZERS"),
                          ("betas", "BETA_OPTIMIZER_NAMES"), ("model", "MODEL_OPTIMIZERS")):
            if arg in params:
                setattr(oc, attr, getattr(oc, attr) | {name})
        if "lr" not in params:
            oc.SKIP_LEARNING_RATE = oc.SKIP_LEARNING_RATE | {name}
        if "eps" not in params:
            oc.SKIP_EPSILON = oc.SKIP_EPSILON | {name}
        if "weight_decay" not in params:
            oc.SKIP_WEIGHT_DECAY = oc.SKIP_WEIGHT_DECAY | {name}
        for kind, attr in (("complex", "COMPLEX_OPTIMIZERS"), ("sparse", "SPARSE_OPTIMIZERS")):
            try:  # the suite's own probe; an exception it does not catch means "not supported" here
                ok = oc.supports_gradient(name, kind)
                PROBES[f"{name}/{kind}"] = "supported" if ok else "refused (suite's probe)"
            except Exception as err:  # noqa: BLE001 - recorded, e.g. a TypeError at construction
                ok = False
                PROBES[f"{name}/{kind}"] = f"refused: {type(err).__name__}: {str(err)[:160]}"
            if ok:
                setattr(oc, attr, getattr(oc, attr) | {name})

    import tests.recipes as rc

    rc.OPTIMIZER_RECIPES.extend(json.loads(os.environ["THEORYBOOK_PTO_RECIPES"]))
    with open(os.environ["THEORYBOOK_PTO_PROBES"], "w") as fh:
        json.dump(PROBES, fh)
else:
    import tests.optimizer_cases  # noqa: F401,E402 - the suite's lists, with the same shim as above

    po.OPTIMIZERS.update(HIDDEN)
'''

#: Training recipes for ours (the suite's format: name, options, iterations), in the spirit of its Shampoo recipe
#: (lr 0.5, weight decay 1e-3, 10 steps on its 2-2-1 MLP).
RECIPES: list[tuple[str, dict, int]] = [
    ("theorybook_dash", {"lr": 5e-1, "weight_decay": 1e-3}, 10),  # defaults: EVD roots every 10 steps
    ("theorybook_dash", {"lr": 5e-1, "weight_decay": 1e-3, "method": "ndb", "inv_root_freq": 1}, 10),  # N-DB/step
    ("theorybook_dash", {"lr": 5e-1, "weight_decay": 1e-3, "start_preconditioning_step": 4, "block_size": 1}, 10),
    ("theorybook_pogo", {"lr": 5e-1, "momentum": 0.9, "orthogonal": False, "weight_decay": 1e-3}, 10),
    ("theorybook_pogo", {"lr": 5e-1, "base": "vadam", "orthogonal": False}, 5),
    ("theorybook_pogo", {"lr": 5e-1, "momentum": 0.9, "stiefel_weights": True}, 10),  # orthogonal weights
    ("theorybook_pogo-euclidean", {"lr": 5e-1, "momentum": 0.9}, 10),  # also puts it in the interface tests
]

#: Our registered names: the two classes as they are, and POGO with Euclidean groups and lr 0.1 by default.
NAMES = ("theorybook_dash", "theorybook_pogo", "theorybook_pogo-euclidean")
#: The suite's own DASH and Shampoo tests ("adashift" contains "dash" and is not one of them).
OWN_SELECTION = "(dash or shampoo) and not adashift"

#: (test-id regex, class, reason) — first match wins. Class "a": the suite's convention; "b": a real defect.
CLASSIFICATION: list[tuple[str, str, str]] = [
    (r"unexpected keyword argument '(k|eps)'", "a",
     "create_optimizer passes eps=1e-8 and Lookahead's k=7 to every optimizer; ours, like torch.optim's, refuse "
     "keyword arguments they do not take (DASH takes eps, not k; POGO neither)"),
    (r"Invalid lr: -0\.01", "a",
     "a negative lr is refused with ValueError naming the bound; the suite expects its own NegativeLRError class, "
     "which is no torch.optim contract"),
    (r"missing 1 required positional argument: 'lr'", "a",
     "POGO has no default lr by design (SGD's scale follows the gradient's); the suite constructs with only the "
     "hyperparameter under test (theorybook_pogo-euclidean, with an lr default, passes the same test)"),
    (r"must be orthonormal at the start", "a",
     "the suite's probe parameters (zeros/ones, (1, 1) or (2, 2)) are not orthonormal; POGO's default group is a "
     "Stiefel group and refuses them at construction by design (theorybook_pogo-euclidean runs the same test)"),
    (r"does not support complex parameters|POGO takes real floating-point parameters", "a",
     "complex parameters are refused at construction with a TypeError that says why, instead of the suite's "
     "NoComplexParameterError at step()"),
    (r"has no attribute 'init_group'", "a",
     "init_group is pytorch_optimizer's BaseOptimizer hook, not part of the torch.optim.Optimizer contract"),
]


def _run(suite: Path, register: bool, k: str, tmp: Path) -> tuple[list[dict], dict, float]:
    """One pytest subprocess; returns (per-test results from its JUnit XML, the glue's probe record, CPU seconds)."""
    tag = "ours" if register else "own"
    xml = tmp / f"{tag}.xml"
    probes = tmp / f"{tag}_probes.json"
    env = {**os.environ, "THEORYBOOK_PTO_REGISTER": "1" if register else "0",
           "THEORYBOOK_PTO_SUITE": str(suite), "THEORYBOOK_PTO_RECIPES": json.dumps(RECIPES),
           "THEORYBOOK_PTO_PROBES": str(probes),
           "PYTHONPATH": os.pathsep.join([str(tmp), str(suite), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    cmd = [sys.executable, "-m", "pytest", str(suite / "tests"), "-q", "-p", "no:cacheprovider",
           "-p", "_theorybook_pto_glue", "-k", k, f"--junitxml={xml}", "-o", "junit_family=xunit2",
           "--rootdir", str(suite)]
    before = os.times()
    subprocess.run(cmd, cwd=suite, env=env, check=False)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    results = []
    for case in ET.parse(xml).getroot().iter("testcase"):
        tid = f"{case.get('classname')}::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "failed", (child.get("message") or "").splitlines()[0][:300] if (
                    child.get("message")) else ""
            elif child.tag == "skipped":
                outcome, message = "skipped", (child.get("message") or "")[:300]
        results.append({"id": tid, "outcome": outcome, "message": message})
    return results, (json.loads(probes.read_text()) if probes.exists() else {}), round(cpu, 1)


def _name(tid: str) -> str:
    """Which of our registered names a test id belongs to."""
    m = re.search(r"theorybook_(pogo-euclidean|pogo|dash)", tid)
    return "theorybook_" + m.group(1) if m else ""


def _counts(results: list[dict]) -> dict:
    return {k: sum(r["outcome"] == k for r in results) for k in ("passed", "failed", "skipped")}


def _classify(tid: str, message: str) -> tuple[str, str]:
    for pattern, cls, reason in CLASSIFICATION:
        if re.search(pattern, tid) or re.search(pattern, message):
            return cls, reason
    return "unclassified", "no rule matched: " + message


def main() -> int:
    """Run both passes, classify our failures, write the JSON; exit 1 if a failure is unclassified or class b."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("suite", type=Path, help="local checkout of the suite (a directory holding tests/)")
    ap.add_argument("--suite-commit", default="", help="the suite's commit(s), recorded in the JSON")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    suite = args.suite.resolve()
    if not (suite / "tests" / "utils.py").exists():
        ap.error(f"{suite} holds no tests/utils.py")
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        (tmp / "_theorybook_pto_glue.py").write_text(GLUE)
        own, _, own_cpu = _run(suite, False, OWN_SELECTION, tmp)
        ours, probes, ours_cpu = _run(suite, True, "theorybook", tmp)
    failures = []
    for r in ours:
        if r["outcome"] == "failed":
            cls, reason = _classify(r["id"], r["message"])
            failures.append({"id": r["id"], "class": cls, "reason": reason, "message": r["message"]})
    import torch

    result = {
        "what": "kozistr/pytorch_optimizer's test suite run against theorybook.optim.DASH/POGO "
                "(bench/optim_third_party_suite.py; glue registers theorybook_dash / theorybook_pogo)",
        "suite_commit": args.suite_commit,
        "date": dt.date.today().isoformat(),
        "versions": {"torch": torch.__version__, "pytorch_optimizer": importlib.metadata.version("pytorch_optimizer"),
                     "python": sys.version.split()[0]},
        "ours": {"selection": "-k theorybook", **_counts(ours), "cpu_s": ours_cpu,
                 "per_optimizer": {n: _counts([r for r in ours if _name(r["id"]) == n]) for n in NAMES}},
        "suite_own_dash_shampoo": {"selection": f'-k "{OWN_SELECTION}" (no glue registration)', **_counts(own),
                                   "cpu_s": own_cpu,
                                   "failures": [{"id": r["id"], "message": r["message"]}
                                                for r in own if r["outcome"] == "failed"]},
        "capability_probes": probes,
        "recipes": RECIPES,
        "failures": failures,
        "real_defects": sum(f["class"] == "b" for f in failures),
        "unclassified": sum(f["class"] == "unclassified" for f in failures),
        "passed_ids": [r["id"] for r in ours if r["outcome"] == "passed"],
        "skipped": [{"id": r["id"], "message": r["message"]} for r in ours if r["outcome"] == "skipped"],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({k: result[k] for k in ("ours", "real_defects", "unclassified")}, indent=1))
    print("suite's own:", {k: result["suite_own_dash_shampoo"][k] for k in ("passed", "failed", "skipped")})
    return 1 if result["unclassified"] or result["real_defects"] else 0


if __name__ == "__main__":
    sys.exit(main())
