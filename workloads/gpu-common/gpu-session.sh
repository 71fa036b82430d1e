#!/bin/sh
# gpu-session.sh — one measuring session on the GPU machine, run from the
# repository root: the environment, the HBM copy ceiling, a plan of
# workload runs (bench.py), and the deadlock fixture, which must hang and
# be killed. Everything lands in $OUT (default ./gpu-out).
#   workloads/gpu-common/gpu-session.sh PLAN
set -u
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
export NCCL_HOME=${NCCL_HOME:-$(python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])')}
export LD_LIBRARY_PATH=$NCCL_HOME/lib:${LD_LIBRARY_PATH:-}
{
	date -u
	nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
	nvidia-smi topo -m
	grep -m1 'define NCCL_VERSION_CODE' "$NCCL_HOME/include/nccl.h"
	nvcc --version | tail -1
	# HBM ceiling: a 4 GiB device-to-device copy, bytes read plus written.
	python3 -c 'import torch
a=torch.empty(1<<32,dtype=torch.uint8,device="cuda");b=torch.empty_like(a)
for _ in range(3): b.copy_(a)
s,e=torch.cuda.Event(True),torch.cuda.Event(True);torch.cuda.synchronize();s.record()
for _ in range(20): b.copy_(a)
e.record();torch.cuda.synchronize();t=s.elapsed_time(e)/20
print("hbm copy: %.1f GB/s (read+write), %.3f ms per 4 GiB"%(2*a.numel()/t/1e6,t))'
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
python3 "$(dirname "$0")/bench.py" "$1" "$OUT"
# The deadlock fixture: rank 1 never reaches the barrier; expect the kill (124).
D=tests/gpu/gpu-deadlock
nvcc -O2 -arch=sm_90 -std=c++17 -ccbin mpicxx -I$D -Iworkloads/gpu-common -isystem "$NCCL_HOME/include" \
	-o /tmp/cuco-deadlock $D/seed.cu -L"$NCCL_HOME/lib" -l:libnccl.so.2
timeout -k 5 20 mpirun --allow-run-as-root -np 2 -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH /tmp/cuco-deadlock \
	--warmup 1 --reps 3 > "$OUT/deadlock.txt" 2>&1
echo "deadlock fixture: exit $? (124: killed at the 20 s limit, as expected)" | tee -a "$OUT/deadlock.txt"
