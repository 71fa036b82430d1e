#!/bin/sh
# bench/gpu-timeslice/run.sh — one GPU: a ping alone, then beside hogs of
# kernels 1, 5 and 50 ms long (probe.cu says what each is). Output to $OUT.
set -eu
OUT=${OUT:-$PWD/timeslice-out}
mkdir -p "$OUT"
dir=$(dirname "$0")
nvcc -O2 -arch=sm_90 -o /tmp/cuco-probe "$dir/probe.cu"
{
	date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader
	nvcc --version | tail -1
	echo "== alone"; /tmp/cuco-probe ping 2000
	for ms in 1 5 50; do
		echo "== beside a hog of $ms ms kernels"
		/tmp/cuco-probe hog "$ms" 6 & h=$!
		sleep 1
		/tmp/cuco-probe ping 1000
		wait $h
	done
} 2>&1 | tee "$OUT/timeslice.txt"
