#!/bin/sh
# bench/gpu-timeslice/run.sh — issue 24's questions for a GPU referee, on
# one GPU, into $OUT/timeslice.txt:
#  1. how long one process's tiny kernel waits beside another's busy GPU
#     (probe.cu: a ping alone, then beside kernels of 1, 5 and 50 ms);
#  2. whether device memory one process owns can be written by a stage as
#     cuco runs it: another PID namespace, another user (ipc.cu: legacy
#     IPC handles, and a descriptor from cuMemExportToShareableHandle
#     inherited as fd 7).
set -u
OUT=${OUT:-$PWD/timeslice-out}
mkdir -p "$OUT"
dir=$(dirname "$0")
nvcc -O2 -arch=sm_90 -o /tmp/cuco-probe "$dir/probe.cu" || exit 1
nvcc -O2 -arch=sm_90 -o /tmp/cuco-ipc "$dir/ipc.cu" -lcuda || exit 1
bwrap=$(command -v bwrap || echo "$PWD/build-prefix-deps/usr/bin/bwrap")
# As cuco's sandbox does: a PID namespace with its own /proc, the GPU's
# device files bound into a fresh /dev.
gpus=$(for d in /dev/nvidia* /dev/nvidia-caps; do [ -e "$d" ] && printf -- '--dev-bind %s %s ' "$d" "$d"; done)
box="$bwrap --bind / / --dev /dev $gpus --proc /proc --unshare-pid --die-with-parent"
nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
legacy() {   # NAME, then the user's wrapper
	name=$1; shift
	f=/tmp/cuco-ipc-handle; rm -f "$f" "$f.done"
	/tmp/cuco-ipc owner "$f" > /tmp/cuco-ipc-owner.txt & o=$!
	while [ ! -s "$f" ] && kill -0 $o 2>/dev/null; do sleep 0.1; done
	chmod 644 "$f"
	"$@" /tmp/cuco-ipc user "$f" || echo "$name: the user failed (above)"
	wait $o
	echo "$name: $(cat /tmp/cuco-ipc-owner.txt)"
}
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
	echo "== sharing device memory with a stage"
	legacy "legacy IPC, plain" env
	legacy "legacy IPC, user in its own PID namespace" $box
	legacy "legacy IPC, user in its own PID namespace as nobody" $box $nobody
	echo "fd, plain: $(/tmp/cuco-ipc owner-fd /tmp/cuco-ipc user-fd 2>&1 | tr '\n' ' ')"
	echo "fd, user in its own PID namespace as nobody: $(/tmp/cuco-ipc owner-fd $box $nobody \
		/tmp/cuco-ipc user-fd 2>&1 | tr '\n' ' ')"
} 2>&1 | tee "$OUT/timeslice.txt"
