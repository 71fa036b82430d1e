#!/usr/bin/env python3
"""bench.py — build and measure GPU workloads straight from their manifests,
without cuco: the measurements in bench/results/gpu.md come from it.

    bench.py PLAN [OUT_DIR]

PLAN has one measurement per line:  WORKLOAD SIZE VARIANT [DIM=VALUE ...]
VARIANT is baseline or seed; dimensions not named take their first value
(or minimum), as the seed's own directive does. Builds use the manifest's
build template ({compiler}=nvcc, {nccl_home} from $NCCL_HOME); a workload
with a frame (the one-GPU ones) compiles the program and the frame with it
and links them with its link template, as the evaluator does. Runs use its
run template, under `mpirun -np RANKS` for cuda-nccl workloads. Results go to
OUT_DIR/results.jsonl (one JSON object per line) and a table on stdout.
Exit code 69 from a program is an environment condition (e.g. no GIN here).
$TIMEOUT overrides the manifests' bench limit (seconds) per run.
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NCCL_HOME = os.environ.get("NCCL_HOME", "/usr/local/cuda")
BIN = os.environ.get("CUCO_BENCH_BIN", "/tmp/cuco-bench")
WARMUP, REPS = int(os.environ.get("WARMUP", "3")), int(os.environ.get("REPS", "15"))


def manifest(name):
    with open(os.path.join(ROOT, "workloads", name, "workload.json")) as f:
        return json.load(f)


def dims(m):
    ds = m["design_space"]
    out = {k: v for k, v in ds.items() if k != "knobs"}
    out.update(ds.get("knobs", {}))
    return out


def first_value(d):
    if "values" in d:
        return d["values"][0]
    i = d["int"]
    return i["values"][0] if "values" in i else i["min"]


def defines(m, size, point):
    args = ["-D%s=%s" % (k, v) for k, v in m["sizes"][size].items()]
    for name, d in dims(m).items():
        value = point.get(name, first_value(d))
        if "define" not in d:
            continue
        if "values" in d:
            idx = d["values"].index(value) + 1
            token = re.sub(r"[^A-Za-z0-9]", "_", str(value)).upper()
            args += ["-D%s_%s=1" % (d["define"], token), "-D%s=%d" % (d["define"], idx)]
        else:
            args.append("-D%s=%s" % (d["define"], value))
    return args


def command(wl, template, values):
    for k, v in dict({"{compiler}": "nvcc", "{nccl_home}": NCCL_HOME, "{cuda_home}": "/usr/local/cuda",
                      "{workload}": os.path.join(ROOT, "workloads", wl)}, **values).items():
        template = template.replace(k, v)
    return shlex.split(template)


def build(job):
    m, wl, size, variant, point, out = job
    src = os.path.join(ROOT, "workloads", wl, m["files"][variant])
    defs = " ".join(defines(m, size, point))
    if "frame" in m:
        frame = os.path.join(ROOT, "workloads", wl, m["frame"])
        steps = [command(wl, m["build"], {"{source}": src, "{output}": out + ".o", "{defines}": defs}),
                 command(wl, m["build"], {"{source}": frame, "{output}": out + ".frame.o",
                                          "{defines}": " ".join(defines(m, size, {}))}),
                 command(wl, m["link"], {"{objects}": out + ".frame.o " + out + ".o", "{output}": out})]
    else:
        steps = [command(wl, m["build"], {"{source}": src, "{output}": out, "{defines}": defs})]
    t, log = time.time(), ""
    for argv in steps:
        p = subprocess.run(argv, capture_output=True, text=True)
        log += p.stdout + p.stderr
        if p.returncode:
            return p.returncode, log, time.time() - t
    return 0, log, time.time() - t


def run(m, exe):
    cmd = m["run"].replace("{output}", exe).replace("{warmup}", str(WARMUP)).replace("{reps}", str(REPS))
    argv = shlex.split(cmd)
    if m["family"] == "cuda-nccl":
        argv = ["mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", str(m["ranks"]),
                "-x", "NCCL_NVLS_ENABLE", "-x", "LD_LIBRARY_PATH"] + argv
    t = time.time()
    try:
        limit = float(os.environ.get("TIMEOUT", m["limits"]["bench_s"]))
        p = subprocess.run(argv, capture_output=True, text=True, timeout=limit)
        return p.returncode, p.stdout + p.stderr, time.time() - t
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() + (e.stderr or b"").decode() if isinstance(e.stdout, bytes) else str(e)
        return 124, out, time.time() - t


def main():
    plan, out_dir = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "."
    os.makedirs(BIN, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)
    jobs = []
    with open(plan) as f:
        for n, line in enumerate(f):
            words = line.split("#")[0].split()
            if not words:
                continue
            wl, size, variant = words[:3]
            point = dict(w.split("=", 1) for w in words[3:])
            for k, v in point.items():
                if v.isdigit():
                    point[k] = int(v)
            exe = os.path.join(BIN, "%s-%s-%s-%d" % (wl, size, variant, n))
            jobs.append((manifest(wl), wl, size, variant, point, exe))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        builds = list(pool.map(build, jobs))
    log = open(os.path.join(out_dir, "log.txt"), "a")
    res = open(os.path.join(out_dir, "results.jsonl"), "a")
    print("%-22s %-6s %-8s %-44s %10s %10s %10s %7s %s" % ("workload", "size", "variant", "point", "median_us",
          "compute", "comm", "bound", "status"), flush=True)
    for job, (brc, bout, bsec) in zip(jobs, builds):
        m, wl, size, variant, point, exe = job
        rec = {"workload": wl, "size": size, "variant": variant, "point": point, "build_s": round(bsec, 1)}
        if brc:
            rec["status"] = "compile-error"
            log.write("== build %s %s %s %s\n%s\n" % (wl, size, variant, point, bout))
        else:
            rc, out, sec = run(m, exe)
            rec["run_s"] = round(sec, 1)
            log.write("== run %s %s %s %s rc=%d\n%s\n" % (wl, size, variant, point, rc, out))
            line = [l for l in out.splitlines() if l.startswith("CUCO_RESULT ")]
            if rc == 69:
                rec["status"] = "environment"
            elif rc or not line:
                rec["status"] = "failed rc=%d" % rc
            else:
                r = json.loads(line[-1][len("CUCO_RESULT "):])
                rec.update(r)
                rec["status"] = "ok" if r["correct"] else "WRONG err=%g" % r["max_error"]
        res.write(json.dumps(rec) + "\n")
        res.flush()
        log.flush()
        ph = rec.get("phases_us", {})
        med = rec.get("latency_us", {}).get("median", float("nan"))
        comp, comm = ph.get("compute", ph.get("kernel", float("nan"))), ph.get("comm", float("nan"))
        bound = med / max(comp, comm) if comm == comm and comp == comp else float("nan")
        pt = " ".join("%s=%s" % kv for kv in sorted(point.items())) or "-"
        print("%-22s %-6s %-8s %-44s %10.1f %10.1f %10.1f %7.3f %s" % (wl, size, variant, pt[:44], med, comp, comm,
              bound, rec["status"]), flush=True)


if __name__ == "__main__":
    main()
