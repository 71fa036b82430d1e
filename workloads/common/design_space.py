#!/usr/bin/env python3
"""Measure a CPU workload's design space with mpirun directly, outside cuco.

Builds the baseline (at the seed's default point) and a set of valid design
points exactly as docs/workloads.md says the evaluator does ({defines}:
enum -> -D<define>_<VALUE>=1 and -D<define>=<index>, int -> -D<define>=<v>,
plus -D<VAR>=<value> per size variable). Each round visits the points in a
shuffled order and runs every point right next to a fresh baseline run (in
random order within the pair), so a load change on a shared machine hits
both sides of a ratio alike. Speedup = median over rounds of the paired
ratio baseline median latency / point median latency.

  design_space.py WORKLOAD_DIR [--size NAME] [--sample N] [--rounds R] [--seed S]

Prints a markdown table and the share of points at >= 1.10x.
"""
import argparse
import itertools
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]


def dim_values(spec):
    if "values" in spec:
        return [str(v) for v in spec["values"]]
    rng = spec["int"]
    if "values" in rng:
        return [str(v) for v in rng["values"]]
    lo, hi = rng["min"], rng["max"]
    if rng.get("pow2"):
        out, v = [], 1
        while v <= hi:
            if v >= lo:
                out.append(str(v))
            v *= 2
        return out
    return [str(v) for v in range(lo, hi + 1, rng.get("step", 1))]


def dims_of(manifest):
    space = manifest["design_space"]
    dims = [(name, space[name]) for name in
            ("backend", "issuer", "placement", "sync", "granularity")]
    dims += sorted(space.get("knobs", {}).items())
    return dims


def valid(point, constraints):
    for c in constraints:
        if all(point[d] in vals for d, vals in c["forbid"].items()):
            return False
    return True


def defines(dims, point, size):
    out = []
    for name, spec in dims:
        if "define" not in spec:
            continue
        value = point[name]
        if "values" in spec:   # enum
            tag = re.sub(r"[^A-Za-z0-9]", "_", value).upper()
            out.append("-D%s_%s=1" % (spec["define"], tag))
            out.append("-D%s=%d" % (spec["define"], spec["values"].index(value) + 1))
        else:
            out.append("-D%s=%s" % (spec["define"], value))
    out += ["-D%s=%s" % (k, v) for k, v in size.items()]
    return out


def build(manifest, wdir, source, output, defs):
    cmd = manifest["build"]
    for key, val in (("{compiler}", os.environ.get("CUCO_MPICC", manifest.get("compiler", "mpicc"))),
                     ("{workload}", wdir), ("{output}", output),
                     ("{source}", os.path.join(wdir, source)),
                     ("{defines}", " ".join(defs))):
        cmd = cmd.replace(key, val)
    subprocess.run(cmd, shell=True, check=True)


def run(manifest, exe, warmup, reps):
    cmd = manifest["run"].replace("{output}", exe).replace(
        "{warmup}", str(warmup)).replace("{reps}", str(reps))
    proc = subprocess.run(MPIRUN + ["-np", str(manifest["ranks"])] + cmd.split(),
                          capture_output=True, text=True, timeout=120)
    for line in proc.stdout.splitlines():
        if line.startswith("CUCO_RESULT "):
            res = json.loads(line[len("CUCO_RESULT "):])
            if not res["correct"]:
                sys.exit("%s: wrong answer, max_error %g" % (exe, res["max_error"]))
            return res
    sys.exit("%s: no result line (rc %d)\n%s" % (exe, proc.returncode, proc.stderr[-2000:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--size")
    ap.add_argument("--sample", type=int, default=0, help="random valid points (0 = all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    wdir = os.path.abspath(args.workload)
    manifest = json.load(open(os.path.join(wdir, "workload.json")))
    sizes = manifest["sizes"]
    size = sizes[args.size or sizes["default"]]
    dims = dims_of(manifest)
    names = [n for n, _ in dims]
    space = [dict(zip(names, combo)) for combo in
             itertools.product(*(dim_values(s) for _, s in dims))]
    space = [p for p in space if valid(p, manifest.get("constraints", []))]
    rng = random.Random(args.seed)
    points = rng.sample(space, args.sample) if 0 < args.sample < len(space) else space
    default = {n: dim_values(s)[0] for n, s in dims}

    with tempfile.TemporaryDirectory(prefix="cuco-ds-") as tmp:
        measure(args, manifest, wdir, tmp, dims, names, space, points, default, size, rng)


def measure(args, manifest, wdir, tmp, dims, names, space, points, default, size, rng):
    bench = manifest["bench"]
    exes = {"baseline": os.path.join(tmp, "baseline")}
    build(manifest, wdir, manifest["files"]["baseline"], exes["baseline"],
          defines(dims, default, size))
    for i, p in enumerate(points):
        key = "/".join(p[n] for n in names)
        exes[key] = os.path.join(tmp, "p%d" % i)
        build(manifest, wdir, manifest["files"]["seed"], exes[key], defines(dims, p, size))

    medians = {k: [] for k in exes}
    ratios = {k: [] for k in exes if k != "baseline"}
    for _ in range(args.rounds):
        order = list(ratios)
        rng.shuffle(order)
        for k in order:
            pair = ["baseline", k]
            rng.shuffle(pair)
            got = {}
            for name in pair:
                res = run(manifest, exes[name], bench["warmup"], bench["reps"])
                got[name] = res["latency_us"]["median"]
                medians[name].append(got[name])
            ratios[k].append(got["baseline"] / got[k])

    base = medians["baseline"]
    print("valid points: %d, measured: %d, rounds: %d" % (len(space), len(points), args.rounds))
    print("baseline: %d runs, median %.0f us, min %.0f us, max %.0f us\n" % (
        len(base), statistics.median(base), min(base), max(base)))
    rows = sorted(((statistics.median(r), k, r) for k, r in ratios.items()), reverse=True)
    print("| speedup | %s | median us | paired ratios |" % " | ".join(names))
    print("|---|%s---|---|" % ("---|" * len(names)))
    for sp, k, r in rows:
        print("| %.3f | %s | %.0f | %s |" % (sp, " | ".join(k.split("/")),
              statistics.median(medians[k]), " ".join("%.2f" % x for x in r)))
    good = sum(1 for sp, _, _ in rows if sp >= 1.10)
    print("\n%d of %d measured points (%.0f%%) at >= 1.10x" % (
        good, len(rows), 100.0 * good / max(1, len(rows))))


if __name__ == "__main__":
    main()
