"""The one validation policy (theorybook.validate) and the one exit from torch (theorybook.device.to_numpy)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from theorybook import validate as V
from theorybook.device import to_numpy

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("value", [True, False, np.bool_(True), "2", b"2", [1.0, 2.0], torch.ones(3)])
def test_number_rejects_non_numbers_and_batches(value):
    with pytest.raises(TypeError, match="Invalid lr"):
        V.number("lr", value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, np.float64("nan"), torch.tensor(math.inf)])
def test_number_rejects_non_finite(value):
    with pytest.raises(ValueError, match="Invalid lr"):
        V.number("lr", value)


@pytest.mark.parametrize("value", [0.5, 1, np.float32(0.5), np.int64(1), torch.tensor(0.5), torch.tensor(1)])
def test_number_accepts_python_numpy_and_0d_torch(value):
    assert isinstance(V.number("lr", value, 0, 1), float)


def test_number_message_names_parameter_value_and_range():
    with pytest.raises(ValueError, match=re.escape("Invalid beta2: 1.2 (must be in [0, 1))")):
        V.number("beta2", 1.2, 0, 1, high_open=True)


@pytest.mark.parametrize("value,ok", [(100, True), (np.int64(100), True), (torch.tensor(100), True), (1e3, True),
                                      (2.5, False), (True, False), ("3", False), (-1, False), (math.nan, False)])
def test_integer(value, ok):
    if ok:
        assert isinstance(V.integer("steps", value, 0), int)
    else:
        with pytest.raises((ValueError, TypeError), match="Invalid steps"):
            V.integer("steps", value, 0)


def test_integer_maximum():
    with pytest.raises(ValueError, match=r"≤ 10"):
        V.integer("n", 11, 0, 10)


def test_in_range_and_positive_reject_bools_and_nan():
    with pytest.raises(TypeError, match="Invalid lr"):
        V.positive("lr", True)
    with pytest.raises(ValueError, match="Invalid lr"):
        V.positive("lr", torch.tensor([1.0, math.nan]))
    with pytest.raises(ValueError, match="Invalid beta"):
        V.in_range("beta", 1.0, 0, 1)
    assert V.in_range("beta", np.float64(0.5), 0, 1) == 0.5


def test_scalar_refuses_batches():
    with pytest.raises(TypeError, match="does not broadcast"):
        V.scalar("x", torch.ones(3))
    assert V.scalar("x", torch.tensor(2.0)) is not None


def test_finite_tensor_promotes_integers():
    t = V.finite_tensor("x", torch.tensor([1, 2]))
    assert t.dtype == torch.float64
    with pytest.raises(ValueError, match="NaN"):
        V.finite_tensor("x", [1.0, math.nan])
    with pytest.raises(TypeError):
        V.finite_tensor("x", torch.tensor([True]))


def test_one_of_does_not_take_bool_for_int():
    with pytest.raises(ValueError):
        V.one_of("p", True, (1, 2))
    assert V.one_of("p", 2, (1, 2)) == 2


def test_memory_guard(monkeypatch):
    V.memory_guard(1024, lower="n")
    with pytest.raises(ValueError, match="lower steps"):
        V.memory_guard(3 * 1024**3, lower="steps")
    monkeypatch.setenv("THEORYBOOK_MAX_BYTES", "100")
    with pytest.raises(ValueError, match="budget"):
        V.memory_guard(101, lower="n")
    monkeypatch.setenv("THEORYBOOK_MAX_BYTES", "-3")
    with pytest.raises(ValueError, match="THEORYBOOK_MAX_BYTES"):
        V.max_bytes()


def test_to_numpy():
    x = torch.ones(2, requires_grad=True) * 2
    a = to_numpy(x)
    assert isinstance(a, np.ndarray) and a.tolist() == [2.0, 2.0]
    assert to_numpy(torch.tensor(1.5, dtype=torch.bfloat16)).dtype == np.float32
    assert to_numpy(3.0).shape == ()


def test_no_tensor_leaves_torch_except_through_to_numpy():
    """`.numpy()` anywhere in src/, kernels/ or book/ (other than device.to_numpy) breaks on CUDA tensors."""
    offenders = []
    for base in ("src", "kernels", "book"):
        for path in sorted((ROOT / base).rglob("*")):
            if path.suffix not in {".py", ".md"} or path.name == "device.py" and "theorybook" in path.parts:
                continue
            for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if ".numpy()" in line and "to_numpy" not in line.split(".numpy()")[0][-30:]:
                    offenders.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not offenders, "use theorybook.device.to_numpy instead of .numpy():\n" + "\n".join(offenders)
