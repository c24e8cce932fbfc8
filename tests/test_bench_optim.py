"""Smoke tests of the 'where each optimizer wins' benches (issue 60 item 4): each script runs with --quick and
writes well-formed JSON. The numbers themselves are the committed bench/results/optim_*where_it_wins.json."""

from __future__ import annotations

import json
import math
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).parents[1]
pytest.importorskip("pytorch_optimizer")
pytest.importorskip("geoopt")


def _run(script: str, out: pathlib.Path) -> dict:
    proc = subprocess.run([sys.executable, "-W", "ignore", str(ROOT / "bench" / script), "--quick", "--out",
                           str(out)], cwd=ROOT / "bench", capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(out.read_text())


def _steps_ok(x) -> bool:
    return x is None or (isinstance(x, int | float) and math.isfinite(x) and x >= 0)


@pytest.mark.slow
def test_where_it_wins_quick_writes_json(tmp_path):
    res = _run("optim_where_it_wins.py", tmp_path / "w.json")
    assert res["quick"] is True and res["threads"] == 1
    assert {"cpu", "cores", "load_avg_1_5_15_start", "load_avg_1_5_15_end"} <= set(res["machine"])
    assert set(res["tasks"]) == {"digits-mlp", "digits-cnn", "sort-transformer"}
    for task in res["tasks"].values():
        assert task["parameters"] > 0 and task["target_heldout_ce"] > 0
        for setting in ("defaults", "tuned"):
            rows = task[setting]
            assert set(rows) == {"ours", "pto.DASH", "pto.SOAP", "pto.Shampoo", "Adam", "AdamW", "Muon+AdamW"}
            for row in rows.values():
                assert _steps_ok(row["steps_median"]) and len(row["per_seed"]) == len(res["seeds"])


@pytest.mark.slow
def test_pogo_where_it_wins_quick_writes_json(tmp_path):
    res = _run("optim_pogo_where_it_wins.py", tmp_path / "p.json")
    assert res["quick"] is True and res["threads"] == 1 and res["feasibility"] == 1e-3
    assert res["problems"]
    for prob in res["problems"].values():
        assert {"pogo-sgd", "pogo-vadam", "rsgd-m0.9", "radam", "qr", "landing"} <= set(prob["rows"])
        for row in prob["rows"].values():
            assert _steps_ok(row["steps_median"]) and len(row["per_seed"]) == len(res["seeds"])
