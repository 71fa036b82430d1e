#!/bin/sh
# split.sh — build split.cu (the carried state and several segments), link
# it with the attention workload's frame and run it, at two sizes, with
# wgmma and with mma.sync; one line per run.
set -u
HERE=$(dirname "$0")
B=${CUCO_BENCH_BIN:-/tmp/cuco-attn-bin}/split
mkdir -p "$B"
W=$HERE/../../workloads
for size in "256 512 4" "1024 2048 32"; do
	set -- $size
	cc="nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I$W/attention -I$W/gpu-common
		-DSEQ=$1 -DKEYS=$2 -DHEADS=$3 -DHDIM=128 -c"
	$cc -o "$B/frame-$1.o" "$W/attention/frame.cu" || { echo "frame SEQ $1: build failed"; continue; }
	for split in 1 2; do
		for mma in 0 1; do
			exe=$B/split-$1-$split-$mma
			{ $cc -DSPLIT=$split -DMMA=$mma -o "$exe.o" "$HERE/split.cu" &&
				nvcc -o "$exe" "$B/frame-$1.o" "$exe.o" -lcublas -lpthread; } ||
				{ echo "split $split mma $mma SEQ $1: build failed"; continue; }
			echo "== SEQ $1 KEYS $2 HEADS $3 split $split mma $mma"
			timeout 30 "$exe" --warmup 3 --reps 10 2>&1 | grep -v '^check: inputs' | tail -2
		done
	done
done
