#!/bin/bash
# The sandbox branch's GPU check: the GPU filter and the stage user around CUDA, cuBLAS,
# NCCL and the 1-GPU workloads, then the evaluator itself (bwrap, cuco-stage-init, nobody).
K=$(cd "$(dirname "$0")" && pwd)
export PATH=/usr/local/cuda/bin:$PATH NCCL_NVLS_ENABLE=0
echo "== machine"; uname -r; id; nvidia-smi -L; ls -l /dev/nvidia*; head -2 /etc/os-release
which nvcc mpirun mpicxx bwrap; getent passwd nobody; cat /proc/sys/kernel/yama/ptrace_scope 2>&1
ldconfig -p | grep -E "libselinux.so.1|libcap.so.2|libpcre2-8.so.0" | head
BWRAP=$K/bin/bwrap
if ! ldconfig -p | grep -q libselinux.so.1; then
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/bwlib exec %s/bin/bwrap "$@"\n' $K $K > $K/bin/bwrap.sh; chmod +x $K/bin/bwrap.sh
  BWRAP=$K/bin/bwrap.sh
fi
[ "$1" = "--no-kit" ] && { shift; SKIP_KIT=1; }
cd $K/kit
[ -n "$SKIP_KIT" ] || {
nvcc -O2 -arch=sm_90 -o cudaprobe cudaprobe.cu -lcublas || echo "cudaprobe: no build"
NCCL=$(python3 -c 'import nvidia.nccl as n, os; print(list(n.__path__)[0])' 2>/dev/null)
echo "NCCL at $NCCL"; ls $NCCL/include $NCCL/lib 2>&1 | head
nvcc -O2 -arch=sm_90 -I$NCCL/include -o nccl1 nccl1.cu -L$NCCL/lib -l:libnccl.so.2 -Xlinker -rpath -Xlinker $NCCL/lib || echo "nccl1: no build"
for how in "--gpu" "--gpu --user 65534:65534" "--cpu"; do
  echo "== filter-exec $how"
  $K/bin/filter-exec $how -- $K/bin/cuco-stage-init --probe
  $K/bin/filter-exec $how -- ./cudaprobe; echo "cudaprobe: status $?"
  $K/bin/filter-exec $how -- ./nccl1; echo "nccl1: status $?"
done
echo "== without any filter"; ./cudaprobe; ./nccl1
}
cd $K
for w in "$@"; do
  echo "== test-hostile $w (bwrap, cuco-stage-init, nobody, the GPU filter)"
  ( export LD_LIBRARY_PATH=$K/lib CUCO_SOURCE_ROOT=$K CUCO_WORKLOADS=$K/workloads CUCO_CUDA_HOME=/usr/local/cuda \
      CUCO_BWRAP=$BWRAP CUCO_STAGE_INIT=$K/bin/cuco-stage-init CUCO_COUNT_LIB=${CUCO_COUNT_LIB:-/nonexistent} CUCO_SANDBOX=bwrap
    timeout 420 $K/bin/test-hostile $w; echo "test-hostile $w: status $?" )
done
