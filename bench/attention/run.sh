#!/bin/sh
# run.sh — the attention measurements of bench/results/gpu.md in one device
# call, from the repository root: the machine, the attention workload's
# baseline and fused kernel at the points of plan.txt (built from the
# manifest, checked, timed: workloads/gpu-common/bench.py), the kernel's
# carried-state and multi-segment paths (split.sh), flash-attention-cp at
# one rank (ranks1.py, plan-cp.txt), PyTorch's SDPA on the same shapes
# (sdpa.py), and a table of TFLOP/s per shape last. Everything lands in
# $OUT (default ./attn-out).
#   bench/attention/run.sh
set -u
HERE=$(dirname "$0")
OUT=${OUT:-$PWD/attn-out}
mkdir -p "$OUT"
{
	date -u
	nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
	nvcc --version | tail -1
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
export NCCL_NVLS_ENABLE=0
export NCCL_HOME=${NCCL_HOME:-$(python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])')}
export LD_LIBRARY_PATH=$NCCL_HOME/lib:${LD_LIBRARY_PATH:-}
export TIMEOUT=${TIMEOUT:-30} WARMUP=${WARMUP:-5} REPS=${REPS:-30} CUCO_BENCH_BIN=${CUCO_BENCH_BIN:-/tmp/cuco-attn-bin}
python3 workloads/gpu-common/bench.py "$HERE/plan.txt" "$OUT" > "$OUT/workload.txt" 2>&1
sh "$HERE/split.sh" > "$OUT/split.txt" 2>&1
python3 "$HERE/ranks1.py" "$HERE/plan-cp.txt" "$OUT" > "$OUT/cp.txt" 2>&1
PYTHONUNBUFFERED=1 python3 "$HERE/sdpa.py" "$OUT/sdpa.jsonl" > "$OUT/sdpa.txt" 2>&1
cat "$OUT/workload.txt" "$OUT/split.txt" "$OUT/cp.txt" "$OUT/sdpa.txt"
python3 "$HERE/table.py" "$OUT/results.jsonl" "$OUT/sdpa.jsonl" | tee "$OUT/table.txt"
