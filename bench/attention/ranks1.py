"""ranks1.py PLAN OUT — workloads/gpu-common/bench.py with every workload at one rank
(mpirun -np 1): flash-attention-cp's fused steps and its kv=peer variant verified on one GPU,
where the peer is the rank itself."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workloads", "gpu-common"))
import bench  # noqa: E402

_manifest = bench.manifest


def one_rank(name):
    m = _manifest(name)
    m["ranks"] = 1
    return m


bench.manifest = one_rank
bench.main()
