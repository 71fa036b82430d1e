#!/usr/bin/env python3
"""tutorial.py — runs docs/tutorial.md as a reader would.

cuco is installed first (`meson install` into a scratch folder), and the
reader works in an empty folder of their own with a clean environment:
PATH (the installed bin/ first), HOME, LANG and TERM, no CUCO_* variable,
so the installed cuco must find its workloads, themes and the fast path's
examples by itself. The programs in its ```c NAME blocks are written
where the reader works; every `$ ` line of its ```console blocks is run
there, in order, with the installed cuco, and must exit 0. A scripted model server
(tests/agents/llm_server.py) stands in for the reader's model: the URL the
tutorial shows is replaced by the server's. Its replies are the
tutorial's own programs: stage A keeps grad.c as it is; stage B first
keeps the MPI_Allreduce (which must be refused), then answers with the
tutorial's grad_put.c (which must be accepted); the islands' children are
one small edit. What each command shows is checked against what the
tutorial says it shows. The screen runs in tmux when tmux is installed.

Needs python3, meson, mpicc and mpirun; exit 77 (a skip) without them.
Environment (meson sets it): CUCO_SOURCE_ROOT, CUCO_BUILD_ROOT, MESON.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SHOWN_URL = "http://127.0.0.1:8080/v1"
DIRECTIVE = ("DIRECTIVE:\nbackend: rma\nissuer: one\nplacement: interleave\nsync: fence\n"
             "granularity: 4\n\n")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def blocks(text):
    """(info words, body) of each fenced block."""
    return [(m.group(1).split(), m.group(2))
            for m in re.finditer(r"^```([^\n]*)\n(.*?)^```$", text, re.M | re.S)]


def program_reply(program):
    return DIRECTIVE + "```c\n" + program + "```\n"


def script(files):
    grad, put = files["grad.c"], files["grad_put.c"]
    kept = grad.replace("static void gradient", "/* EVOLVE-BLOCK-START */\nstatic void gradient")
    kept = kept.replace("int main(", "/* EVOLVE-BLOCK-END */\n\nint main(")
    child = (DIRECTIVE.replace("granularity: 4", "granularity: 8") +
             "<NAME>sum_literal</NAME>\n<DESCRIPTION>A float literal for the sum.</DESCRIPTION>\n"
             "<DIFF>\n<<<<<<< SEARCH\n\t\tfloat s = 0;\n=======\n\t\tfloat s = 0.0f;\n"
             ">>>>>>> REPLACE\n</DIFF>\n")
    replies = [program_reply(grad), program_reply(kept), program_reply(put)] + [child] * 12
    return {"replies": [{"text": t, "tokens_in": 1500, "tokens_out": 400} for t in replies]}


def start_server(root, work):
    with open(os.path.join(work, "script.json"), "w") as f:
        json.dump(script(FILES), f)
    port = os.path.join(work, "port")
    srv = subprocess.Popen([sys.executable, os.path.join(root, "tests/agents/llm_server.py"),
                            os.path.join(work, "script.json"), os.path.join(work, "requests.jsonl"),
                            port], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    for _ in range(200):
        if os.path.exists(port) and open(port).read().strip():
            return srv, "http://127.0.0.1:%s/v1" % open(port).read().strip()
        time.sleep(0.05)
    srv.kill()
    sys.exit("tutorial: the scripted model server did not start")


def ls_json(env, run):
    out = subprocess.run(["cuco", "ls", "--run", run, "--json"], cwd=env["READER"], env=env,
                         capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else []


def install(work):
    """cuco installed under WORK/root as `meson install` puts it, with the
    prefix the build was configured for below it (so only the place of the
    executable can lead it to its data); returns the installed bin/."""
    root = os.path.join(work, "root")
    p = subprocess.run([os.environ["MESON"], "install", "-C", os.environ["CUCO_BUILD_ROOT"],
                        "--no-rebuild", "--quiet", "--destdir", root], capture_output=True,
                       text=True)
    if p.returncode != 0:
        sys.exit("tutorial: meson install failed:\n" + p.stdout + p.stderr)
    for top, _, names in os.walk(root):
        if "cuco" in names and os.path.basename(top) == "bin":
            return top
    sys.exit("tutorial: meson install put no bin/cuco under " + root)


def clean_env(bindir, home):
    """What a new user's shell has: no CUCO_* variable, no XDG_* one."""
    env = {"PATH": bindir + ":/usr/local/bin:/usr/bin:/bin", "HOME": home,
           "LANG": os.environ.get("LANG", "C.UTF-8"), "TERM": "xterm-256color"}
    os.makedirs(home, exist_ok=True)
    return env


def screen(env, command, work, cols=120, rows=40):
    """The tutorial's `cuco tui` in tmux: what it shows, after q."""
    tmux = ["tmux", "-L", "cuco-tutorial-%d" % os.getpid(), "-f", "/dev/null"]
    subprocess.run(tmux + ["new-session", "-d", "-s", "t", "-x", str(cols), "-y", str(rows), "-c", work,
                           "env -i %s %s" % (" ".join("%s='%s'" % kv for kv in env.items()
                                                      if kv[0] != "READER"), command)],
                   check=True)
    shown = ""
    for _ in range(100):
        shown = subprocess.run(tmux + ["capture-pane", "-p", "-t", "t"], capture_output=True,
                               text=True).stdout
        if "lineage" in shown and "detail" in shown:
            break
        time.sleep(0.1)
    subprocess.run(tmux + ["send-keys", "-t", "t", "q"])
    for _ in range(50):
        if subprocess.run(tmux + ["has-session", "-t", "t"], capture_output=True).returncode:
            break
        time.sleep(0.1)
    gone = subprocess.run(tmux + ["has-session", "-t", "t"], capture_output=True).returncode != 0
    subprocess.run(tmux + ["kill-server"], capture_output=True)
    return shown, gone


# What each command must show, by its first words: the tutorial's claims.
def expect(cmd, out, env):
    if cmd.startswith("cuco init grad --from"):
        check("protocol: compat" in out and "ranks: 2" in out and "seed: none" in out,
              "init guesses compat, 2 ranks, no seed")
    elif cmd.startswith("cuco check grad"):
        check(out.strip() == "grad: ok", "check says grad: ok")
    elif cmd.startswith("cuco analyze grad"):
        check("1. MPI_Allreduce at line 29, in main()" in out and
              "inside the for loop of line 25" in out and
              "written before it by: gradient() at line 28" in out and
              "read after it by: sum[…] at line 34, in the code itself" in out and
              "count N of MPI_FLOAT = 1 MiB" in out, "analyze finds the MPI_Allreduce as shown")
    elif cmd.startswith("cuco analyze --prompt grad"):
        check(re.search(r"analysis +[1-9][0-9]* bytes", out) is not None and
              re.search(r"examples +[1-9][0-9]* bytes", out) is not None and
              "API reference from: " in out and "mpi.h" in out,
              "the prompt's sections: the analysis, examples, the API from mpi.h")
    elif cmd.startswith("cuco run grad --llm"):
        check("links MPI_Allreduce" in out, "the stage B that kept MPI_Allreduce is refused")
        rows = ls_json(env, "runs/grad")
        fp = [r for r in rows if r["origin"] == "fastpath"]
        check([r["status"] for r in fp] == ["done", "failed", "done"] and
              fp[1]["error_class"] == "suspect" and fp[2]["island"] == 0,
              "stage A done, stage B refused as suspect, then accepted on island 0: %s" %
              [(r["id"], r["status"], r["error_class"]) for r in fp])
        kids = [r for r in rows if r["origin"].startswith("llm")]
        check(len(kids) >= 1 and all(r["status"] in ("done", "failed") for r in kids) and
              any(r["status"] == "done" and r["parents"][0] == fp[2]["id"] for r in kids),
              "the islands evolved stage B's program: %s" %
              [(r["id"], r["origin"], r["status"]) for r in kids])
        # The children's replies are SEARCH/REPLACE hunks: diffs, whatever was asked.
        check(all(r["origin"] == "llm-diff" for r in kids),
              "a SEARCH/REPLACE reply makes an llm-diff child: %s" % [r["origin"] for r in kids])
    elif cmd.startswith("cuco report"):
        check("failures   suspect 1" in out and "fastpath-b" in out and "fastpath-a" in out,
              "report counts the suspect and the fast path's calls")
    elif cmd.startswith("cuco show --run runs/grad 3"):
        check("failed         compile (suspect)" in out and "links MPI_Allreduce" in out,
              "show 3 gives the refusal's reason")
    elif cmd.startswith("cuco show --run runs/grad 4 --prompt"):
        check("## The program's host communication" in out and "MPI_Allreduce" in out and
              "## API reference" in out, "stage B's prompt carries the analysis and the API")
    elif cmd.startswith("cuco diff"):
        lines = out.splitlines()
        check(any(l.startswith("-") and "MPI_Allreduce" in l for l in lines) and
              any(l.startswith("+") and "MPI_Put" in l for l in lines),
              "the diff from stage A to stage B takes the MPI_Allreduce out and puts in")
    elif cmd.startswith("cuco init grad-own"):
        check("copied as seed.c" in out, "init takes the seed")
    elif cmd.startswith("cuco run grad-own"):
        check("4 candidates from the strategy" in out, "the tuner ran from the seed, no model")
        rows = ls_json(env, "runs/grad-own")
        check(sum(r["origin"] == "tune" for r in rows) == 4 and
              any(r["origin"] == "seed" and r["status"] == "done" for r in rows),
              "the seed measured and 4 tuned candidates")
    else:
        return False
    return True


def run():
    """The tutorial, from an installed cuco: (work folder, environment), the
    folder kept for more checks; None when a tool it needs is missing."""
    global FILES
    root = os.environ.get("CUCO_SOURCE_ROOT")
    if not root or not os.environ.get("CUCO_BUILD_ROOT"):
        sys.exit("tutorial: CUCO_SOURCE_ROOT and CUCO_BUILD_ROOT must be set (meson sets them)")
    for tool in ("mpicc", "mpirun", os.environ.get("MESON") or "meson"):
        if not shutil.which(tool):
            print("tutorial: %s not found, skipped" % tool)
            return None
    text = open(os.path.join(root, "docs/tutorial.md")).read()
    found = blocks(text)
    FILES = {w[1]: body for w, body in found if len(w) == 2 and w[0] == "c"}
    commands = [line[2:] for w, body in found if w[:1] == ["console"]
                for line in body.splitlines() if line.startswith("$ ")]
    check(set(FILES) == {"grad.c", "grad_put.c"} and len(commands) >= 10,
          "the tutorial has its two programs and %d commands" % len(commands))
    work = tempfile.mkdtemp(prefix="cuco-tutorial-")
    bindir = install(work)
    env = clean_env(bindir, os.path.join(work, "home"))
    reader = env["READER"] = os.path.join(work, "reader")
    os.makedirs(reader)
    # The installed cuco reads the data installed beside it, and says so.
    doctor = subprocess.run(["cuco", "doctor", "--json"], cwd=reader, env=env,
                            capture_output=True, text=True)
    folders = json.loads(doctor.stdout or "{}").get("folders", {})
    data = os.path.dirname(bindir) + "/share/cuco/"
    check([f["path"] for f in folders.get("workloads", [])] == [data + "workloads"] and
          [f["path"] for f in folders.get("themes", [])] == [data + "themes"],
          "the installed cuco reads the workloads and themes installed beside it: %s" % folders)
    for name, body in FILES.items():
        with open(os.path.join(reader, name), "w") as f:
            f.write(body)
    srv, url = start_server(root, work)
    try:
        checked = 0
        for shown in commands:
            cmd = shown.replace(SHOWN_URL, url)
            if cmd.startswith("cuco tui"):
                if not shutil.which("tmux"):
                    print("--   %s: tmux not found, the screen not tried" % cmd)
                    continue
                out, gone = screen(env, cmd, reader)
                check("lineage" in out and "detail" in out and "finished" in out and gone,
                      "%s: the screen shows the run and q leaves it" % cmd)
                checked += 1
                continue
            p = subprocess.run(cmd, shell=True, cwd=reader, env=env, capture_output=True,
                               text=True, timeout=480)
            out = p.stdout + p.stderr
            check(p.returncode == 0, "%s: exit %d" % (cmd, p.returncode))
            if p.returncode != 0:
                print(out[-3000:])
            checked += expect(cmd, out, env)
        check(checked >= 12, "%d of the tutorial's commands had their output checked" % checked)
    finally:
        srv.kill()
        srv.wait()
    return work, env


def finish(work):
    """The exit status: 0 when every check passed (the work folder goes)."""
    if failures:
        print("kept: %s" % work)
        print("%d checks failed" % len(failures))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("0 checks failed")
    return 0


def main():
    done = run()
    return 77 if done is None else finish(done[0])


FILES = {}
if __name__ == "__main__":
    sys.exit(main())
