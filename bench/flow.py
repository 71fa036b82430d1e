#!/usr/bin/env python3
"""bench/flow.py — issue 13's figures: the agent path at model speed.

1. Throughput: `cuco run` on the toy fixture (a one-rank C program, about
   half a second to build and time) against tests/agents/llm_server.py
   answering every call after a fixed latency, for evolve and for beam at
   --llm-jobs 1, 2, 4 and 8. A rate is strategy candidates per minute of
   the search: from the seed's result to the last candidate's result (the
   baseline and seed measurements are left out). Three configurations:
   evolve, 16 candidates; beam with its defaults (width 6, 12 plans of 2
   samples), 48 candidates: iteration 0 from the seed, 24 samples, its
   summarizer, then 24 of iteration 1; and a narrow beam (width 2, 4 plans
   of 2 samples), 16 candidates: 8 in iteration 0, 8 of iteration 1. Also
   the peak number of calls the server saw in flight at once.
2. Stop: `cuco stop` while the run's one call waits 30 s for its reply:
   seconds from the command to the run's end.

Every figure of one invocation comes from the same machine in the same
minutes, so ratios between them are fair; the load average is printed
with them (other processes on the machine slow the evaluations).

usage: python3 bench/flow.py [--latency S] [--jobs N] [--cuco PATH]
                             [--only throughput|stop] [--configs LABEL,...] [--scale K]
Run from the source root after `ninja -C build`. --cuco names another
build's binary (a build of an older commit, for the stop figure before).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOY = os.path.join(ROOT, "tests", "agents", "fixtures", "toy")
SERVER = os.path.join(ROOT, "tests", "agents", "llm_server.py")
DIRECTIVE = ("DIRECTIVE:\nbackend: msg\nissuer: one\nplacement: after\nsync: fence\n"
             "granularity: 1\n\n")
ANCHOR = "int main(int argc, char **argv)\n{\n"


def variant(k):
    """An edit adding a distinct, harmless line: every reply a new candidate,
    applicable to any descendant (the anchor stays), usable as a plan too."""
    return (f"{DIRECTIVE}<NAME>variant_{k}</NAME>\n<DESCRIPTION>Variant {k}.</DESCRIPTION>\n"
            f"<DIFF>\n<<<<<<< SEARCH\n{ANCHOR}=======\n{ANCHOR}\tenum {{ BENCH_{k} = {k} }};\n"
            ">>>>>>> REPLACE\n</DIFF>\n")


class Server:
    def __init__(self, tmp, replies):
        self.dir = tempfile.mkdtemp(dir=tmp, prefix="server-")
        script = os.path.join(self.dir, "script.json")
        with open(script, "w") as f:
            json.dump({"replies": replies}, f)
        self.log = os.path.join(self.dir, "requests.jsonl")
        port = os.path.join(self.dir, "port")
        self.proc = subprocess.Popen([sys.executable, SERVER, script, self.log, port])
        for _ in range(200):
            if os.path.exists(port):
                break
            time.sleep(0.05)
        with open(port) as f:
            self.url = f"http://127.0.0.1:{f.read().strip()}/v1"

    def arrivals(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [json.loads(line)["time"] for line in f if line.strip()]

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def run_env(tmp, server, extra):
    d = tempfile.mkdtemp(dir=tmp, prefix="run-")
    os.makedirs(os.path.join(d, "xdg", "cuco"))
    with open(os.path.join(d, "xdg", "cuco", "config"), "w") as f:
        f.write(f"retries = 0\n[model test]\nprovider = openai\nmodel = test\nurl = {server.url}\n"
                f"api_key_env =\n{extra}")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "xdg"))
    return d, env


def candidates(cuco, run):
    out = subprocess.run([cuco, "ls", "--json", "--run", run], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)


def peak_in_flight(arrivals, latency):
    events = sorted([(t, 1) for t in arrivals] + [(t + latency, -1) for t in arrivals])
    peak = now = 0
    for _, d in events:
        now += d
        peak = max(peak, now)
    return peak


# (label, strategy, candidates, config sections)
CONFIGS = [
    ("evolve", "evolve", 16, "[evolve]\nfastpath = false\nmeta_interval = 0\nmigration_interval = 0\n"),
    ("beam", "beam", 48, ""),
    ("beam 2x4x2", "beam", 16, "[beam]\nwidth = 2\nplans = 4\nsamples = 2\niterations = 2\n"),
]


def throughput(args, tmp, label, strategy, count, extra, jobs):
    server = Server(tmp, [{"text": variant(k), "wait": args.latency, "tokens_in": 1000,
                           "tokens_out": 100} for k in range(1, 4 * count)])
    d, env = run_env(tmp, server, extra)
    run = os.path.join(d, "run")
    cmd = [args.cuco, "run", TOY, "--run", run, "--headless", "--strategy", strategy,
           "--budget", str(count), "--jobs", str(args.jobs), "--llm-jobs", str(jobs),
           "--rebench", "0"]
    t = time.time()
    with open(os.path.join(d, "out"), "w") as out:
        rc = subprocess.run(cmd, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    wall = time.time() - t
    server.stop()
    if rc != 0:
        sys.exit(f"cuco run exited {rc}; see {d}/out")
    cands = candidates(args.cuco, run)
    seed = next(c for c in cands if c["origin"] == "seed")
    made = [c for c in cands if c["origin"] not in ("baseline", "seed")]
    span = max(c["updated"] for c in made) - seed["updated"]
    return {"strategy": label, "llm_jobs": jobs, "candidates": len(made),
            "search_s": span, "wall_s": wall, "per_min": 60 * len(made) / span,
            "peak": peak_in_flight(server.arrivals(), args.latency)}


def stop_time(args, tmp):
    server = Server(tmp, [{"text": variant(1), "wait": 30, "tokens_in": 1000,
                           "tokens_out": 100}])
    d, env = run_env(tmp, server, "[evolve]\nfastpath = false\n")
    run = os.path.join(d, "run")
    out = open(os.path.join(d, "out"), "w")
    proc = subprocess.Popen([args.cuco, "run", TOY, "--run", run, "--headless", "--strategy",
                             "evolve", "--budget", "4", "--jobs", "1", "--rebench", "0"],
                            env=env, stdout=out, stderr=subprocess.STDOUT)
    while not server.arrivals():
        time.sleep(0.05)
    time.sleep(0.5)  # the call is well under way
    t = time.time()
    subprocess.run([args.cuco, "stop", "--run", run], check=True, stdout=subprocess.DEVNULL)
    proc.wait()
    took = time.time() - t
    out.close()
    server.stop()
    return took


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--latency", type=float, default=2.0, help="seconds per model reply")
    p.add_argument("--jobs", type=int, default=4, help="evaluation slots (--jobs)")
    p.add_argument("--cuco", default=os.path.join(ROOT, "build", "cuco"))
    p.add_argument("--only", choices=["throughput", "stop"])
    p.add_argument("--configs", default=",".join(c[0] for c in CONFIGS),
                   help="throughput configurations, comma-separated labels")
    p.add_argument("--scale", type=int, default=1, help="candidates of each configuration times this")
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="cuco-bench-flow-")
    try:
        print(f"# {time.strftime('%Y-%m-%d %H:%M')} {os.uname().nodename}, "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at start; "
              f"{args.cuco}; reply latency {args.latency} s, --jobs {args.jobs}")
        if args.only != "stop":
            print("strategy   llm_jobs candidates search_s wall_s per_min ratio peak_in_flight")
            for label, strategy, count, extra in CONFIGS:
                if label not in args.configs.split(","):
                    continue
                count *= args.scale
                base = None
                for jobs in (1, 2, 4, 8):
                    r = throughput(args, tmp, label, strategy, count, extra, jobs)
                    base = base or r["per_min"]
                    print(f"{r['strategy']:10} {jobs:8} {r['candidates']:10} {r['search_s']:8.1f} "
                          f"{r['wall_s']:6.1f} {r['per_min']:7.1f} {r['per_min'] / base:5.2f} "
                          f"{r['peak']:14}", flush=True)
        if args.only != "throughput":
            print(f"stop: `cuco stop` during a 30 s call ended the run in {stop_time(args, tmp):.2f} s")
        print(f"# load {os.getloadavg()[0]:.1f} at the end")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    main()
