#!/usr/bin/env bash
# GPU check for the fused sweep kernels (theorybook.kernels), < 5 minutes on one CUDA GPU:
#   1. the parity tests compiled on the device (THEORYBOOK_KERNEL_DEVICE=cuda pytest tests/test_kernels.py);
#   2. fused kernel vs the torch reference, both on the GPU, Adam phase diagram 1024x1024 grid x 1e5 steps
#      (bench/sweep.py --gpu-only), with the agreement of the two (converged / diverged / first_below).
# Results: bench/results/gpu_parity.{txt,xml}, bench/results/sweep_gpu.{txt,json}, bench/results/gpu_env.txt.
# Usage: bash bench/gpu_check.sh        (PYTHON=/path/to/python to choose the interpreter)
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
OUT=bench/results
mkdir -p "$OUT"

if ! "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "gpu_check: no CUDA device visible to torch; nothing checked" | tee "$OUT/gpu_env.txt"
    exit 2
fi
if ! "$PY" -c "import triton" 2>/dev/null; then
    echo "gpu_check: triton is not installed (pip install .[kernels])" | tee "$OUT/gpu_env.txt"
    exit 2
fi
{
    date -u +"%Y-%m-%dT%H:%M:%SZ"
    "$PY" -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, \
'triton', triton.__version__); print(torch.cuda.get_device_name())"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
} | tee "$OUT/gpu_env.txt"

status=0
echo "== 1/2 parity on the device (budget 90 s)"
THEORYBOOK_KERNEL_DEVICE=cuda timeout 90 "$PY" -m pytest tests/test_kernels.py -q -p no:cacheprovider \
    --junitxml "$OUT/gpu_parity.xml" 2>&1 | tee "$OUT/gpu_parity.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== 2/2 fused vs torch reference on the GPU, 1024x1024 x 1e5 steps (budget 200 s)"
timeout 200 "$PY" bench/sweep.py --gpu-only --grid 1024 --steps 100000 --repeats 2 \
    --out "$OUT/sweep_gpu.json" 2>&1 | tee "$OUT/sweep_gpu.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "gpu_check: exit status $status (results in $OUT/)"
exit $status
