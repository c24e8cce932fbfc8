"""A small-scale proxy of the paper's CIFAR claim (Table 1, [secondary]): SAM at a large batch with γ = 0 on a
bundled data set.

The paper reports that ResNet-18 on CIFAR-10/100 (BN and augmentation off) trained by SAM at B = 512 with heavy-ball
momentum γ = 0 keeps a training loss above 1, and that a smaller B or a larger γ fixes it. CIFAR training is out of
reach of a CPU; this module runs the mechanism's proxy instead:

* data: sklearn's bundled ``load_digits`` (1797 8×8 images, 10 classes, no download), a fixed split
  (:data:`DIGITS_TRAIN` training images, permutation seed :data:`DIGITS_SPLIT_SEED`), features standardised with
  the training set's mean and standard deviation;
* model: a ReLU MLP 64 → H → 10 (PyTorch's default ``nn.Linear`` initialisation U(±1/√fan_in), times
  ``init_scale``: a small scale starts the network next to the saddle at w = 0), cross-entropy loss;
* optimiser: normalised SAM, w^p = w + ρ g/(‖g‖ + 10⁻¹⁶) with g the minibatch gradient, then heavy ball
  b ← γ b + ∇ℓ_B(w^p), w ← w − η b (ρ = 0 is SGD/GD with momentum); minibatches of size B drawn without
  replacement, reshuffled every epoch; B ≥ the training set is full-batch GD/SAM;
* protocol: η tuned for *each* arm (ρ, γ, B) on the same grid :data:`PROXY_LR_GRID` and the same step budget
  :data:`PROXY_STEPS`, on pilot seeds (:func:`tune_lr`), the training loss after the budget measured on the full
  training set.

Every configuration of a call (a broadcast of η, γ, ρ) trains in one tensor program from the same initial weights
on the same minibatch sequence (common random numbers), so differences between arms are paired.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import torch

from .. import validate
from ..device import one_thread
from .dynamics import NORM_EPS, device_arg

__all__ = ["DIGITS_SPLIT_SEED", "DIGITS_TRAIN", "PILOT_LR_SAM0_SADDLE_START", "PROXY_BATCHES", "PROXY_GAMMAS",
           "PROXY_HIDDEN", "PROXY_LR_GRID", "PROXY_RHOS", "PROXY_STEPS", "DigitsData", "ProxyRun", "digits_data",
           "train_digits_mlp", "tune_lr"]

DIGITS_TRAIN = 1200
DIGITS_SPLIT_SEED = 0
PROXY_HIDDEN = 64
PROXY_STEPS = 200
#: The learning-rate grid every arm is tuned on (half-decade steps; 10 diverges for every arm at full batch).
PROXY_LR_GRID = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
#: The batch sizes of the regime scan: small, the paper's 512, and the full training set.
PROXY_BATCHES = (64, 512, DIGITS_TRAIN)
#: Table 1's two values of ρ.
PROXY_RHOS = (0.1, 0.5)
#: γ = 0 against the heavy-ball momentum of the paper's "momentum fixes it".
PROXY_GAMMAS = (0.0, 0.9)
#: Pilot (:func:`tune_lr` on seeds 9001–9003, the whole grid): the tuned η of SAM with γ = 0, ρ = 0.1, full batch,
#: weights × 0.01 — the chapter's "its tuned η" arm.
PILOT_LR_SAM0_SADDLE_START = 3.0
_BATCH_STREAM = 1_000_003  # the minibatch generator's seed is seed + this (a stream apart from the weights')
_N_IN, _N_OUT = 64, 10


class DigitsData(NamedTuple):
    """The standardised digits split: ``x_train`` (N, 64), ``y_train`` (N,), ``x_test``, ``y_test``."""

    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor


class ProxyRun(NamedTuple):
    """One call of :func:`train_digits_mlp`: per configuration (K = broadcast of η, γ, ρ), the full-training-set
    cross-entropy ``train_loss`` after ``steps`` steps (``inf`` where the run diverged), ``train_acc`` and
    ``test_acc`` (fractions), and the configuration's ``lr``, ``momentum``, ``rho`` (each shape (K,))."""

    train_loss: torch.Tensor
    train_acc: torch.Tensor
    test_acc: torch.Tensor
    lr: torch.Tensor
    momentum: torch.Tensor
    rho: torch.Tensor
    batch: int
    steps: int
    seed: int


@lru_cache(maxsize=1)
def _digits_numpy() -> tuple[np.ndarray, ...]:
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    perm = np.random.default_rng(DIGITS_SPLIT_SEED).permutation(len(y))
    tr, te = perm[:DIGITS_TRAIN], perm[DIGITS_TRAIN:]
    mu, sd = x[tr].mean(0), x[tr].std(0)
    sd[sd == 0] = 1.0  # pixels that are 0 in every training image stay 0
    x = (x - mu) / sd
    return x[tr], y[tr], x[te], y[te]


def digits_data(*, device=None, dtype: torch.dtype = torch.float32) -> DigitsData:
    """sklearn's bundled digits, split (:data:`DIGITS_TRAIN` training images, seed :data:`DIGITS_SPLIT_SEED`) and
    standardised with the training set's statistics, as tensors on ``device``."""
    dev = device_arg(device)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"Invalid dtype: {dtype!r} (must be a floating torch dtype)")
    xtr, ytr, xte, yte = _digits_numpy()
    return DigitsData(torch.tensor(xtr, dtype=dtype, device=dev), torch.tensor(ytr, device=dev),
                      torch.tensor(xte, dtype=dtype, device=dev), torch.tensor(yte, device=dev))


def _init(k: int, hidden: int, scale: float, gen: torch.Generator, dtype, dev) -> list[torch.Tensor]:
    out = []
    for fan_in, fan_out in ((_N_IN, hidden), (hidden, _N_OUT)):
        bound = scale / fan_in ** 0.5
        for shape in ((fan_in, fan_out), (fan_out,)):
            p = (torch.rand(shape, generator=gen, dtype=dtype) * 2 - 1) * bound
            out.append(p.to(dev).expand(k, *shape).clone())
    return out


def _logits(ps: Sequence[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    w1, c1, w2, c2 = ps
    h = torch.relu(torch.einsum("bi,kih->kbh", x, w1) + c1[:, None])
    return torch.einsum("kbh,kho->kbo", h, w2) + c2[:, None]


def _losses(ps: Sequence[torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = _logits(ps, x)
    k = z.shape[0]
    return torch.nn.functional.cross_entropy(z.reshape(-1, _N_OUT), y.repeat(k), reduction="none").reshape(k, -1
                                                                                                            ).mean(1)


def _grads(ps: Sequence[torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, ...]:
    leaves = [p.detach().requires_grad_() for p in ps]
    return torch.autograd.grad(_losses(leaves, x, y).sum(), leaves)  # configurations are independent


def _per_config(v: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    return v.reshape(-1, *([1] * (p.dim() - 1)))


def train_digits_mlp(lr, momentum, rho, *, batch: int, seed: int, steps: int = PROXY_STEPS,
                     hidden: int = PROXY_HIDDEN, init_scale: float = 1.0, device=None) -> ProxyRun:
    """Train the digits MLP by normalised SAM with heavy-ball momentum for every configuration of
    broadcast(η = ``lr``, γ = ``momentum``, ρ = ``rho``) at once.

    Update: g = ∇ℓ_B(w), w^p = w + ρ g/(‖g‖ + 10⁻¹⁶) (the norm over all of one configuration's parameters),
    b ← γ b + ∇ℓ_B(w^p), w ← w − η b; ρ = 0 is SGD with momentum. ``batch`` B ≥ :data:`DIGITS_TRAIN` is full-batch.
    The weights (PyTorch's default initialisation times ``init_scale``) and the minibatch order depend on ``seed``
    only, so every configuration shares them. Float32 on ``device``, one CPU thread.
    """
    dev = device_arg(device)
    seed = validate.integer("seed", seed, 0, 2**62)
    batch = validate.integer("batch", batch, 1)
    steps = validate.integer("steps", steps, 0, 100_000)
    hidden = validate.integer("hidden", hidden, 1, 4096)
    init_scale = validate.number("init_scale", init_scale, 0.0, 10.0, low_open=True)
    f32 = dict(dtype=torch.float32, device=dev)
    lr_t = validate.finite_tensor("lr", lr).to(**f32)
    gam_t = validate.finite_tensor("momentum", momentum).to(**f32)
    rho_t = validate.finite_tensor("rho", rho).to(**f32)
    validate.positive("lr", lr_t)
    validate.in_range("momentum", gam_t, 0.0, 1.0, high_open=True)
    validate.in_range("rho", rho_t, 0.0, 100.0)
    try:
        lr_t, gam_t, rho_t = (t.reshape(-1) for t in torch.broadcast_tensors(lr_t, gam_t, rho_t))
    except RuntimeError as err:
        raise ValueError(f"Invalid lr/momentum/rho: shapes {tuple(lr_t.shape)}, {tuple(gam_t.shape)}, "
                         f"{tuple(rho_t.shape)} do not broadcast") from err
    k = lr_t.numel()
    data = digits_data(device=dev)
    n = data.y_train.numel()
    b = min(batch, n)
    validate.memory_guard(4.0 * k * (6 * b * hidden + 8 * (_N_IN + _N_OUT + 1) * hidden),
                          lower="the number of configurations (lr, momentum, rho) or hidden")
    with one_thread(dev):
        ps = _init(k, hidden, init_scale, torch.Generator().manual_seed(seed), torch.float32, dev)
        bufs = [torch.zeros_like(p) for p in ps]
        gen = torch.Generator().manual_seed(seed + _BATCH_STREAM)
        order, pos = torch.randperm(n, generator=gen), 0
        for _ in range(steps):
            if b == n:
                xb, yb = data.x_train, data.y_train
            else:
                if pos + b > n:
                    order, pos = torch.randperm(n, generator=gen), 0
                idx = order[pos:pos + b].to(dev)
                pos += b
                xb, yb = data.x_train[idx], data.y_train[idx]
            g = _grads(ps, xb, yb)
            norm = torch.sqrt(sum(q.reshape(k, -1).square().sum(1) for q in g)) + NORM_EPS
            g_sam = _grads([p + _per_config(rho_t / norm, p) * q for p, q in zip(ps, g, strict=True)], xb, yb)
            for i, (p, q) in enumerate(zip(ps, g_sam, strict=True)):
                bufs[i] = _per_config(gam_t, p) * bufs[i] + q
                ps[i] = p - _per_config(lr_t, p) * bufs[i]
        with torch.no_grad():
            loss = torch.nan_to_num(_losses(ps, data.x_train, data.y_train), nan=torch.inf, posinf=torch.inf)
            acc_tr = (_logits(ps, data.x_train).argmax(-1) == data.y_train).to(torch.float32).mean(1)
            acc_te = (_logits(ps, data.x_test).argmax(-1) == data.y_test).to(torch.float32).mean(1)
    return ProxyRun(loss, acc_tr, acc_te, lr_t, gam_t, rho_t, b, steps, seed)


def tune_lr(momentum: float, rho: float, *, batch: int, seeds: Sequence[int], grid: Sequence[float] = PROXY_LR_GRID,
            steps: int = PROXY_STEPS, init_scale: float = 1.0, device=None) -> tuple[float, torch.Tensor]:
    """The learning rate of ``grid`` with the smallest median training loss over ``seeds`` (pilot seeds, never the
    chapter's) for one arm (γ = ``momentum``, ρ = ``rho``, B = ``batch``), and the losses (len(seeds), len(grid))."""
    momentum = validate.number("momentum", momentum, 0.0, 1.0, high_open=True)
    rho = validate.number("rho", rho, 0.0, 100.0)
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or not seeds:
        raise ValueError(f"Invalid seeds: {seeds!r} (must be a non-empty sequence of integers)")
    if isinstance(grid, (str, bytes)) or not isinstance(grid, Sequence) or not grid:
        raise ValueError(f"Invalid grid: {grid!r} (must be a non-empty sequence of learning rates)")
    grid_t = torch.tensor([validate.number("grid", g, 0.0, low_open=True) for g in grid], dtype=torch.float32)
    losses = torch.stack([train_digits_mlp(grid_t, momentum, rho, batch=batch, seed=s, steps=steps,
                                           init_scale=init_scale, device=device).train_loss.cpu() for s in seeds])
    best = int(losses.median(0).values.argmin())
    return float(grid_t[best]), losses
