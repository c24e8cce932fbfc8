"""The batched sweep engine: reductions are right, cells are independent, bad input is rejected."""

from __future__ import annotations

import math

import pytest
import torch

from theorybook.sweep import POLY_METHODS, floor_cut, poly_sweep, run_sweep


def test_reductions_on_a_known_sequence():
    # L_t = 10 · 0.5^t for t = 0..10, so min = final = 10/1024, first L ≤ 1 is t = 4
    init = torch.tensor([10.0], dtype=torch.float64)
    st = run_sweep(init, lambda s, t: s * 0.5, lambda s: s, 10, threshold=1.0, tail=3, record=lambda s: s)
    assert st.final_loss.item() == 10 / 1024
    assert st.min_loss.item() == 10 / 1024
    assert st.first_below.item() == 4
    assert st.tail_max.item() == 10 / 2**8
    assert not st.diverged.item()
    assert st.trajectory.shape == (11, 1)


def test_divergence_is_canonicalised():
    init = torch.tensor([1.0, 1.0], dtype=torch.float64)
    st = run_sweep(init, lambda s, t: s * torch.tensor([1e200, 0.5], dtype=torch.float64), lambda s: s, 3)
    assert st.diverged.tolist() == [True, False]
    assert math.isinf(st.final_loss[0].item()) and st.final_loss[1].item() == 0.125
    assert st.first_below.tolist() == [-1, -1]  # threshold=None: not tracked


@pytest.mark.parametrize("method,hp", [
    ("gd", dict(lr=0.1)),
    ("heavy_ball", dict(lr=0.1, beta=0.9)),
    ("rmsprop", dict(lr=1e-3, beta2=0.93)),
    ("adam", dict(lr=1e-3, beta1=0.9, beta2=0.93)),
])
def test_batched_equals_single_cell(method, hp):
    """Every cell of a batched sweep is bitwise the same as running that cell alone."""
    grid_lr = torch.tensor([hp["lr"], hp["lr"] * 2, hp["lr"] / 2], dtype=torch.float64)
    batched = poly_sweep(method, 4, 500, record="x", **{**hp, "lr": grid_lr})
    for j in range(3):
        single = poly_sweep(method, 4, 500, record="x", **{**hp, "lr": float(grid_lr[j])})
        assert torch.equal(batched.trajectory[:, j], single.trajectory)


def test_gd_matches_hand_loop():
    st = poly_sweep("gd", 4, 50, lr=0.1, record="x")
    x = 1.0
    for _ in range(50):
        x -= 0.1 * x**3
    assert st.trajectory[-1].item() == pytest.approx(x, rel=1e-14)


def test_floor_freezes_adam_instead_of_nan():
    st = poly_sweep("adam", 4, 20_000, lr=1e-3, beta1=0.9, beta2=0.93)
    assert not st.diverged.item()
    assert 0 < st.final_loss.item() < 1e-190
    assert floor_cut(torch.float64) == torch.finfo(torch.float64).tiny * 1e6


@pytest.mark.parametrize("kwargs,match", [
    (dict(method="sgd"), "method"),
    (dict(k=3), "k"),
    (dict(lr=-1.0), "lr"),
    (dict(beta1=1.0), "beta1"),
    (dict(beta2=-0.1), "beta2"),
    (dict(record="v"), "record"),
])
def test_validation(kwargs, match):
    args = dict(method="adam", k=4, steps=10, lr=1e-3, beta1=0.9, beta2=0.93)
    args.update(kwargs)
    method = args.pop("method")
    k = args.pop("k")
    steps = args.pop("steps")
    with pytest.raises(ValueError, match=f"Invalid {match}"):
        poly_sweep(method, k, steps, **args)


def test_missing_hyperparameter():
    with pytest.raises(ValueError, match="hyper-parameters"):
        poly_sweep("adam", 4, 10, lr=1e-3, beta1=0.9)


def test_methods_table():
    assert set(POLY_METHODS) == {"gd", "heavy_ball", "rmsprop", "adam"}
