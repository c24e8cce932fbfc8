#!/usr/bin/env bash
# GPU check, one prepared script within a 15-minute device budget (one CUDA GPU):
#   1. kernel parity compiled on the device (THEORYBOOK_KERNEL_DEVICE=cuda pytest tests/test_kernels.py -m "not slow");
#   2. fused kernel vs the torch reference, both on the GPU, Adam phase diagram 1024x1024 x 1e5 steps
#      (bench/sweep.py --gpu-only: kernels warmed at the timed shape, median of 3 warm repeats);
#   3. every chapter executed under nbmake with THEORYBOOK_DEVICE=cuda (the chapters run unchanged on CUDA).
# One summary line per check at the end. Results: bench/results/gpu_*.{txt,xml,json}.
# Usage: bash bench/gpu_check.sh   (PYTHON=/path/to/python to choose; otherwise the first of $PYTHON, .venv/bin/python,
# python3 whose torch sees CUDA — .venv usually holds the CPU wheel). Exits non-zero, saying why, without CUDA.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=bench/results
mkdir -p "$OUT"

PY=""
for cand in ${PYTHON:-} .venv/bin/python python3 python; do
    command -v "$cand" >/dev/null 2>&1 || [ -x "$cand" ] || continue
    if "$cand" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
        PY=$cand; break
    fi
done
if [ -z "$PY" ]; then
    echo "gpu_check: FAILED — no CUDA device visible to torch in any of: ${PYTHON:-} .venv/bin/python python3 python" \
        | tee "$OUT/gpu_env.txt"
    exit 2
fi
if ! "$PY" -c "import triton" 2>/dev/null; then
    echo "gpu_check: FAILED — triton is not installed for $PY (pip install -e '.[kernels]')" | tee "$OUT/gpu_env.txt"
    exit 2
fi
for mod in nbmake theorybook; do
    "$PY" -c "import $mod" 2>/dev/null || { echo "gpu_check: FAILED — $PY lacks $mod (pip install -e '.[book,test]')"; exit 2; }
done
{
    date -u +"%Y-%m-%dT%H:%M:%SZ"
    "$PY" -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, \
'triton', triton.__version__); print(torch.cuda.get_device_name())"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
} | tee "$OUT/gpu_env.txt"

declare -a SUMMARY
check() {  # check NAME BUDGET_S LOGFILE -- command...
    local name=$1 budget=$2 log=$3; shift 4
    local t0=$SECONDS
    timeout "$budget" "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    local verdict="ok"
    [ "$rc" -eq 0 ] || verdict="FAILED (exit $rc$([ "$rc" -eq 124 ] && echo ", over its ${budget} s budget"))"
    SUMMARY+=("$(printf '%-28s %-40s %4ds  %s' "$name" "$verdict" $((SECONDS - t0)) "$log")")
    return "$rc"
}

status=0
echo "== 1/3 kernel parity on the device (budget 180 s, cold Triton cache included)"
check "kernel parity" 180 "$OUT/gpu_parity.txt" -- env THEORYBOOK_KERNEL_DEVICE=cuda \
    "$PY" -m pytest tests/test_kernels.py -q -m "not slow" -p no:cacheprovider --junitxml "$OUT/gpu_parity.xml" \
    || status=1

echo "== 2/3 fused vs torch reference on the GPU, 1024x1024 x 1e5 steps (budget 240 s)"
check "fused vs reference sweep" 240 "$OUT/sweep_gpu.txt" -- \
    "$PY" bench/sweep.py --gpu-only --grid 1024 --steps 100000 --repeats 3 --out "$OUT/sweep_gpu.json" || status=1

echo "== 3/3 every chapter on CUDA (THEORYBOOK_DEVICE=cuda, budget 360 s)"
check "chapters on cuda" 360 "$OUT/gpu_chapters.txt" -- env THEORYBOOK_DEVICE=cuda \
    "$PY" -m pytest --nbmake --nbmake-timeout=300 book/ -q -p no:cacheprovider --junitxml "$OUT/gpu_chapters.xml" \
    || status=1

echo
echo "== gpu_check summary ($("$PY" -c 'import torch; print(torch.cuda.get_device_name())'))"
printf '%s\n' "${SUMMARY[@]}" | tee "$OUT/gpu_summary.txt"
echo "gpu_check: exit status $status"
exit $status
