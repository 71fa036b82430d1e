#!/usr/bin/env python3
"""newcomer.py — cuco tried as a new user would (issue 25), kept as a test.

1. Install into a scratch prefix and run docs/tutorial.md from an empty
   folder with a clean environment (tutorial.py: its every check).
2. Each common mistake, in that folder: one line on standard error, which
   starts "cuco: " and says what was meant where it can, and the exit
   status the manual documents (1 usage, 2 bad input, 3 environment).
3. The screen on the tutorial's run at 80x24 and 200x60 (tmux): numbers
   that agree with each other and with cuco report and cuco ls — the
   header's tokens are the report's, its best is the report's, every
   speedup says whether it was confirmed (its interval, when there is room)
   or one screening (?), and one timed against another baseline
   measurement than the list's says so (~).

Needs what tutorial.py needs, and tmux for part 3; exit 77 without them.
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tutorial  # noqa: E402
from tutorial import check  # noqa: E402


def cuco(env, cwd, args):
    return subprocess.run(["cuco"] + args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def mistakes(env, reader):
    """(arguments, exit status, words the line must hold), in the order a
    newcomer makes them; the run they act on is the tutorial's last."""
    setup = cuco(env, reader, ["pin", "2"])
    check(setup.returncode == 0, "pin 2 with no session: a mark lands on the record (%s)" %
          setup.stderr.strip())
    latest = os.readlink(os.path.join(reader, "runs/latest"))
    cases = [
        (["frobnicate"], 1, "frobnicate: unknown command"),
        (["run", "grd", "--budget", "1", "--headless"], 2, "did you mean grad?"),
        (["run", "grad", "--budjet", "3"], 1, "did you mean --budget?"),
        (["run", "grad", "--budget"], 1, "--budget needs a value"),
        (["run", "grad", "--jobs", "99"], 1, "--jobs 99: not 1 to 16"),
        (["run", "grad", "--theme", "lihgt"], 1, "did you mean light?"),
        (["run", "grad", "--run", "runs/keyless", "--llm", "openai:gpt-4o", "--budget", "1",
          "--headless"], 3, "no API key: $OPENAI_API_KEY is not set"),
        (["check", "nosuch"], 2, "nosuch: no such workload"),
        (["init", "x", "--from", "nothing.c"], 2, "nothing.c"),
        (["stop"], 3, "no cuco run drives this run"),
        (["hint", "use", "bigger", "tiles"], 3, "--next-session keeps it"),
        (["resume", "--next-session"], 1, "means nothing to a session"),
        (["pin", "2"], 2, "already pinned: nothing changed"),
        (["unreject", "2"], 2, "not rejected"),
        (["show", "99"], 2, "candidate 99: no such candidate"),
        (["ls", "--status", "nosuch"], 1, "is no status and no failure class"),
        (["export", "best", "-o", "/nonexistent/x.c"], 2, "/nonexistent/x.c: cannot create"),
        (["diff", "1"], 1, "diff:"),
    ]
    for args, status, words in cases:
        p = cuco(env, reader, args)
        lines = p.stderr.splitlines()
        check(p.returncode == status and len(lines) == 1 and lines[0].startswith("cuco: ") and
              words in lines[0], "cuco %s: exit %d (want %d), stderr %r" %
              (" ".join(args), p.returncode, status, p.stderr))
    check(os.readlink(os.path.join(reader, "runs/latest")) == latest,
          "a run refused at its model check leaves runs/latest at %s" % latest)


def tmux_screen(env, reader, run, cols, rows, ready):
    """`cuco tui --run RUN` at cols x rows: the screen once ready(text) holds
    (or after 10 s), then q."""
    tmux = ["tmux", "-L", "cuco-newcomer-%d" % os.getpid(), "-f", "/dev/null"]
    command = "env -i %s cuco tui --run %s" % (
        " ".join("%s='%s'" % kv for kv in env.items() if kv[0] != "READER"), run)
    subprocess.run(tmux + ["new-session", "-d", "-s", "t", "-x", str(cols), "-y", str(rows), "-c",
                           reader, command], check=True)
    shown = ""
    for _ in range(100):
        shown = subprocess.run(tmux + ["capture-pane", "-p", "-t", "t"], capture_output=True,
                               text=True).stdout
        if ready(shown):
            break
        time.sleep(0.1)
    subprocess.run(tmux + ["send-keys", "-t", "t", "q"])
    time.sleep(0.3)
    subprocess.run(tmux + ["kill-server"], capture_output=True)
    return shown


def count(v):
    """The header's way with counts (screen.c, fmt_count)."""
    if v >= 1e6:
        return "%sM" % ("%.3g" % (v / 1e6))
    if v >= 1e3:
        return "%sk" % ("%.3g" % (v / 1e3))
    return "%.0f" % v


def screens(env, reader, run):
    rep = json.loads(cuco(env, reader, ["report", "--json", "--run", run]).stdout)
    rows = json.loads(cuco(env, reader, ["ls", "--json", "--run", run]).stdout)
    tokens = "tok %s " % count(rep["tokens"]["prompt"] + rep["tokens"]["completion"])
    base = [r for r in rows if r["origin"] == "baseline"][-1]
    base_us = base["latency_us"]["median"]
    best = rep["best"]
    for cols, lines in ((80, 24), (200, 60)):
        shown = tmux_screen(env, reader, run, cols, lines,
                            lambda s: tokens in s if cols >= 120 else "lineage" in s)
        where = "%dx%d" % (cols, lines)
        header = shown.splitlines()[0] if shown else ""
        check(tokens in header or cols < 120,
              "%s: the header's tokens are the report's (%s): %r" % (where, tokens.strip(), header))
        if best["id"] == base["id"]:
            check("best -" in header, "%s: nothing crowned, and the header says so: %r" %
                  (where, header))
        else:
            check("best %.2fx" % best["speedup"]["value"] in header,
                  "%s: the header's best is the report's: %r" % (where, header))
        for r in rows:
            sp = r["speedup"]
            if r["origin"] == "baseline" or sp["value"] is None:
                continue
            line = next((l for l in shown.splitlines()
                         if re.match(r"^│ *%d [^0-9]" % r["id"], l)), None)
            if line is None:
                continue  # scrolled out of the pane
            cell = re.search(r" (%.2fx\S*(?: \[[^]]*\]\S*)?)" % sp["value"], line)
            text = cell.group(1) if cell else ""
            confirmed = sp["rounds"] >= 2
            implied = sp["value"] * r["latency_us"]["median"]
            elsewhere = abs(implied - base_us) / base_us > 0.05
            check(cell is not None and confirmed != text.split(" ")[0].rstrip("~").endswith("?"),
                  "%s: #%d's speedup says %s: %r" % (where, r["id"], "confirmed" if confirmed
                                                     else "one screening", line))
            check(elsewhere == text.endswith("~"),
                  "%s: #%d: %s timed against the listed baseline (%.0f us vs %.0f us): %r" %
                  (where, r["id"], "not" if elsewhere else "", implied, base_us, line))
            if confirmed and cols >= 200:
                check("[%.2f" % sp["lo"] in text, "%s: #%d's interval, with room: %r" %
                      (where, r["id"], line))


def main():
    done = tutorial.run()
    if done is None:
        return 77
    work, env = done
    reader = env["READER"]
    mistakes(env, reader)
    if subprocess.run(["sh", "-c", "command -v tmux"], capture_output=True).returncode == 0:
        screens(env, reader, "runs/grad")
    else:
        print("--   tmux not found: the screens not tried")
    return tutorial.finish(work)


if __name__ == "__main__":
    sys.exit(main())
