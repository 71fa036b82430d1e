#!/usr/bin/env python3
"""bench/local-model.py — issue 26's figures: a real small open model makes
real candidates.

For each context and each workload: scripts/local-model serves the model
(Qwen2.5-Coder 1.5B Instruct by default: `scripts/local-model --model qwen
fetch` first) at that context, and `cuco compare` runs the strategies on the
workload at one budget against it. Then, per run:

- the funnel: edit replies (the model's answers to an edit: island
  proposals, fixes, repairs, executor samples, fast-path attempts) ->
  parsed (a candidate came of them) -> compiled -> verified (passed the
  referee) -> faster (than the baseline); the issue's goal is that half of
  the replies or more become compiled candidates;
- whether the crowned best's lineage holds a change the model wrote (an
  LLM-made candidate is the best or one of its ancestors), and whether the
  best builds other code than the seed under its directive (mpicc -E with
  the directive's defines, tokens compared): an edit in a branch its
  directive does not build, or of spacing only, leaves the seed's code and
  makes the speedup the directive's; likewise, how many compiled code
  edits build other code than their parent's;
- time per call (cuco's log: from the request to the reply's end, the wait
  for the server's slot included), prefill (llama-server's prompt eval time
  and tokens per second: what its prompt cache did not spare) and its
  writing time;
- and `cuco compare`'s table (tuner / sample / evolve / beam with --compare).

Everything goes under --out (one folder per context and workload: the runs,
the server's log, cuco compare's table) and a summary in markdown is
printed and kept as OUT/summary.md, to quote in bench/results/agents.md.

usage: python3 bench/local-model.py [--model qwen|gemma] [--contexts 4096,8192]
           [--workloads cpu-gemm-allgather,cpu-kv-transfer] [--budget 24]
           [--strategies evolve,beam | --compare] [--threads N] [--out DIR]
           [--config FILE] [--cuco PATH] [--again] [-- RUN ARGS...]
--config: a cuco config file for the runs (its [evolve], [beam], [llm] keys;
the model is --llm's), else the user's own. --again: run nothing, print the
summary of the runs already under --out (a stopped run's too), as a run
would have: the figures come from cuco's records, not from a person.
Run from the source root after `ninja -C build`. The issue's figures are
the defaults with --compare: hours of CPU inference on a 2-core machine.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

EDIT_KINDS = ("propose", "fix", "repair", "executor", "fastpath-a", "fastpath-b")
LLM_ORIGINS = ("llm-diff", "llm-full", "llm-cross", "beam-plan", "fastpath")


def cuco_json(cuco, args):
    out = subprocess.run([cuco] + args, capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else None


def defines(wl, directive):
    """The directive's -D flags, by the evaluator's rule (src/eval/template.c):
    -D<DEFINE>_<VALUE>=1 -D<DEFINE>=<index> for a listed value, -D<DEFINE>=<v>
    for a number; and the default size's variables."""
    space = dict(wl["design_space"])
    dims = {k: v for k, v in space.items() if k != "knobs"}
    dims.update(space.get("knobs", {}))
    values = {k: v for k, v in directive.items() if k != "knobs"}
    values.update(directive.get("knobs", {}))
    flags = []
    for name, dim in dims.items():
        v = str(values.get(name, ""))
        if "values" in dim:
            flags.append("-D%s_%s=1" % (dim["define"], re.sub(r"[^A-Za-z0-9]", "_", v).upper()))
            flags.append("-D%s=%d" % (dim["define"], dim["values"].index(v) + 1 if v in dim["values"] else 0))
        else:
            flags.append("-D%s=%s" % (dim["define"], v))
    size = wl["sizes"][wl["sizes"]["default"]]
    return flags + ["-D%s=%d" % (k, n) for k, n in size.items()]


def built(wl_name, source, flags):
    """The program as the compiler sees it under those flags, one space
    between tokens; None when it does not preprocess."""
    wdir = os.path.join("workloads", wl_name)
    out = subprocess.run(["mpicc", "-E", "-P", "-std=c11", "-D_GNU_SOURCE", "-I" + wdir,
                          "-I" + os.path.join(wdir, "..", "common")] + flags + ["-x", "c", "-"],
                         input=source, capture_output=True, text=True)
    return " ".join(out.stdout.split()) if out.returncode == 0 else None


def built_change(cuco, run, wl_name, cand, other):
    """Whether candidate cand builds other code than candidate other under
    cand's directive; None where either cannot be read or preprocessed. An
    edit in a branch the directive does not build, or one of spacing only,
    leaves the code built as it was: the change is the directive's."""
    shown = [cuco_json(cuco, ["show", str(i), "--run", run, "--json", "--source"]) for i in (cand, other)]
    if not all(s and s.get("source") for s in shown):
        return None
    with open(os.path.join("workloads", wl_name, "workload.json")) as f:
        flags = defines(json.load(f), shown[0]["directive"])
    a, b = (built(wl_name, s["source"], flags) for s in shown)
    return None if a is None or b is None else a != b


def funnel(cuco, run, wl_name):
    """Replies -> parsed -> compiled -> verified -> faster, and the best's lineage."""
    report = cuco_json(cuco, ["report", "--run", run, "--json"]) or {}
    cands = cuco_json(cuco, ["ls", "--run", run, "--json"]) or []
    kinds = report.get("calls", {}).get("by_kind", {})
    replies = sum(kinds.get(k, {}).get("calls", 0) for k in EDIT_KINDS)
    llm = [c for c in cands if c["origin"] in LLM_ORIGINS]
    compiled = [c for c in llm if c.get("failed_stage") != "compile"]
    # Directive-only children of replies whose edits were refused (the
    # parent's code, the reply's new directive): counted apart, so that a
    # rise in the compiled share is not taken for edits that applied.
    salvaged = [c for c in llm if "directive only, its edits refused" in (c.get("note") or "")]
    by_id = {c["id"]: c for c in cands}
    # Directive-only children of any kind (the directive-only operator's, a
    # reply with no edit, one whose edits were refused): the parent's code,
    # byte for byte, with the reply's directive.
    def same_code(c):
        p = by_id.get((c.get("parents") or [0])[0])
        return bool(p and p.get("source_hash") and p["source_hash"] == c.get("source_hash"))
    directive_only = [c for c in llm if same_code(c)]
    verified = [c for c in llm if c["status"] == "done"]
    faster = [c for c in verified if (c.get("speedup") or {}).get("value", 0) > 1]
    best = (report.get("best") or {}).get("id")
    seed = next((c for c in cands if c["origin"] == "seed"), None)
    model_made, model_code, seen = False, False, set()
    stack = [best] if best else []
    while stack:
        i = stack.pop()
        if i in seen or i not in by_id:
            continue
        seen.add(i)
        model_made |= by_id[i]["origin"] in LLM_ORIGINS
        model_code |= by_id[i]["origin"] in LLM_ORIGINS and not same_code(by_id[i])
        stack.extend(by_id[i].get("parents") or [])
    sp = (report.get("best") or {}).get("speedup") or {}
    linked, classes, other, chats = refusals(cuco, run, cands)
    return {"linked": linked, "classes": classes, "other": other, "chats": chats,"replies": replies, "parsed": len(llm), "compiled": len(compiled),
            "verified": len(verified), "faster": len(faster), "best": best,
            "best_speedup": sp, "model_made": model_made, "model_code": model_code,
            # The best against the seed, and each compiled code edit against
            # its parent, as the compiler sees them under their directive.
            "built_change": built_change(cuco, run, wl_name, best, seed["id"]) if model_code and seed else False,
            "built_edits": sum(1 for c in compiled if c not in directive_only and c.get("parents")
                               and built_change(cuco, run, wl_name, c["id"], c["parents"][0])),
            "crowned": bool(best) and by_id.get(best, {}).get("origin") != "baseline",
            "directive_only": len(directive_only),
            "directive_only_compiled": len([c for c in directive_only if c in compiled]),
            "repairs": report.get("repairs", {}), "tokens": report.get("tokens", {}),
            "calls": report.get("calls", {}).get("total", 0),
            "refused": report.get("calls", {}).get("refused", 0),
            "salvaged": len(salvaged),
            "salvaged_compiled": len([c for c in salvaged if c in compiled])}


# Why a reply made no candidate (or only its directive did), read from the
# reason cuco stored with each call: (class, pattern), the first that
# matches wins; a reason none matches is counted as "other" and quoted.
REFUSAL_CLASSES = (
    ("repeat in the chat", r"repeats an earlier one of this chat"),
    ("repeat of a known candidate", r"reproduced (candidate #|a candidate)"),
    ("the reply form sent back", r"placeholder|reply form sent back"),
    ("SEARCH matches nothing", r"SEARCH matches nothing"),
    ("SEARCH ambiguous", r"SEARCH matches \d+ places"),
    ("outside the EVOLVE-BLOCKs", r"outside every EVOLVE-BLOCK|EVOLVE-BLOCK marker"),
    ("edits a branch not built", r"in a branch directive .* does not build"),
    ("nothing changed", r"REPLACE equals SEARCH|nothing would change|only restate the directive"),
    ("a call left undefined", r"the edit (removed|calls) .*\(\)"),
    ("directive refused", r"directive outside the design space|cannot set|DIRECTIVE"),
    ("no code", r"holds no code|no SEARCH/REPLACE hunk"),
    ("cut off or not JSON", r"cut off|not JSON|output limit|loop"),
    ("function edit refused", r"hunk \d+ \(function|no function `"),
    ("hunks overlap", r"overlaps hunk"),
)


def refusal_class(reason):
    for name, pattern in REFUSAL_CLASSES:
        if re.search(pattern, reason):
            return name
    return "other"


def refusals(cuco, run, cands):
    """Every edit call linked to a refusal record or an LLM candidate, with
    its outcome and reason (`cuco show --prompt --json`), classed."""
    ids = ["r%d" % r["id"] for r in cuco_json(cuco, ["ls", "--run", run, "--refusals", "--json"]) or []]
    ids += [str(c["id"]) for c in cands if c["origin"] in LLM_ORIGINS]
    calls, chats = {}, {}
    for i in ids:
        mine = [c for c in (cuco_json(cuco, ["show", i, "--run", run, "--prompt", "--json"]) or {})
                .get("calls") or [] if c.get("kind") in EDIT_KINDS]
        for c in mine:
            calls[c["id"]] = c
        # Replies per proposal, by what came of it: a candidate or a refusal.
        if mine:
            key = ("refused" if i.startswith("r") else "candidate", len(mine))
            chats[key] = chats.get(key, 0) + 1
    classes, other = {}, []
    for c in calls.values():
        if c["outcome"] == "used" and not c.get("reason"):
            continue
        name = refusal_class(c.get("reason") or "")
        if c["outcome"] == "used":
            name += " (its directive used alone)"
        classes[name] = classes.get(name, 0) + 1
        if name.startswith("other"):
            other.append(c.get("reason") or "")
    return len(calls), classes, other, chats


def call_times(run):
    """Seconds of each answered call, from cuco's log."""
    secs = []
    try:
        with open(os.path.join(run, "cuco.log")) as f:
            for line in f:
                m = re.search(r": answered: \d+ prompt \+ \d+ completion tokens in ([0-9.]+) s", line)
                if m:
                    secs.append(float(m.group(1)))
    except OSError:
        pass
    return secs


def server_times(log):
    """llama-server's own accounting: prompt eval ms and tokens, eval ms."""
    prompt_ms = prompt_n = eval_ms = 0.0
    try:
        with open(log, errors="replace") as f:
            text = f.read()
    except OSError:
        return prompt_ms, prompt_n, eval_ms
    for m in re.finditer(r"(prompt )?eval time =\s*([0-9.]+) ms /\s*(\d+) tokens", text):
        if m.group(1):
            prompt_ms += float(m.group(2))
            prompt_n += int(m.group(3))
        else:
            eval_ms += float(m.group(2))
    return prompt_ms, prompt_n, eval_ms


def start_server(model, folder, ctx, threads):
    env = dict(os.environ, CUCO_LOCAL_MODEL_THREADS=str(threads), CUCO_LOCAL_MODEL_OWNER=str(os.getpid()))
    out = subprocess.run(["scripts/local-model", "--model", model, "start", folder, str(ctx)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit("local-model: %s%s" % (out.stdout, out.stderr))
    return out.stdout.strip().splitlines()[-1]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="qwen", choices=("qwen", "gemma"))
    p.add_argument("--contexts", default="4096,8192")
    p.add_argument("--workloads", default="cpu-gemm-allgather,cpu-kv-transfer")
    p.add_argument("--budget", type=int, default=24)
    p.add_argument("--strategies", default="evolve,beam")
    p.add_argument("--compare", action="store_true", help="tune,sample,evolve,beam")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default="runs/local-model-bench")
    p.add_argument("--cuco", default="build/cuco")
    p.add_argument("--config", help="a config file for the runs")
    p.add_argument("--again", action="store_true",
                   help="run nothing: print the summary of the runs already under --out")
    p.add_argument("run_args", nargs="*", help="after --: for every cuco run")
    a = p.parse_args()
    strategies = "tune,sample,evolve,beam" if a.compare else a.strategies
    name = {"qwen": "qwen2.5-coder-1.5b", "gemma": "gemma-3-270m"}[a.model]
    os.makedirs(a.out, exist_ok=True)
    env = dict(os.environ)
    if a.config:
        xdg = os.path.abspath(os.path.join(a.out, "xdg"))
        os.makedirs(os.path.join(xdg, "cuco"), exist_ok=True)
        with open(a.config) as src, open(os.path.join(xdg, "cuco", "config"), "w") as dst:
            dst.write(src.read())
        env["XDG_CONFIG_HOME"] = xdg
    lines = ["# %s: %s, budget %d, strategies %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                                      name, a.budget, strategies), ""]
    rows = []
    for ctx in [int(c) for c in a.contexts.split(",")]:
        for wl in a.workloads.split(","):
            folder = os.path.abspath(os.path.join(a.out, "%s-%d" % (wl, ctx)))
            os.makedirs(folder, exist_ok=True)
            t0 = time.time()
            if a.again:
                try:
                    with open(os.path.join(folder, "compare.txt")) as f:
                        shown = f.read()
                except OSError:
                    shown = "(no compare.txt: cuco compare was killed)"
            else:
                url = start_server(a.model, os.path.join(folder, "server"), ctx, a.threads)
                cmd = [a.cuco, "compare", wl, "--runs", os.path.join(folder, "runs"), "--budget",
                       str(a.budget), "--strategies", strategies, "--llm",
                       "llamacpp:%s@%s" % (name, url), "--", "--jobs", "1"] + a.run_args
                out = subprocess.run(cmd, capture_output=True, text=True, env=env)
                subprocess.run(["scripts/local-model", "stop", os.path.join(folder, "server")])
                shown = out.stdout + out.stderr
                with open(os.path.join(folder, "compare.txt"), "w") as f:
                    f.write(shown)
            lines += ["## %s at a context of %d (%.0f s)" % (wl, ctx, time.time() - t0), "",
                      "```", shown.strip(), "```", ""]
            prompt_ms, prompt_n, eval_ms = server_times(os.path.join(folder, "server", "server.log"))
            for s in strategies.split(","):
                run = os.path.join(folder, "runs", s)
                f = funnel(a.cuco, run, wl)
                secs = call_times(run)
                rows.append((wl, ctx, s, f, secs))
            answered = [x for r in rows if r[0] == wl and r[1] == ctx for x in r[4]]
            lines.append("calls answered: %d in %.0f s as cuco timed them (the server's slot, "
                         "reading, writing and the wait for the slot); server: %d prompt tokens "
                         "read in %.0f s (%.1f tokens/s; its cache spared the rest), %.0f s writing" %
                         (len(answered), sum(answered), prompt_n, prompt_ms / 1000,
                          prompt_n / (prompt_ms / 1000) if prompt_ms else 0, eval_ms / 1000))
            lines.append("")
    lines += ["| workload | context | strategy | replies | parsed | compiled | verified | faster | "
              "compiled / replies | best | model-made lineage | repairs (correct) | calls | "
              "median s/call |", "|" + "---|" * 14]
    for wl, ctx, s, f, secs in rows:
        share = "%.0f %%" % (100 * f["compiled"] / f["replies"]) if f["replies"] else "-"
        sp = f["best_speedup"]
        bound = lambda v: "%.2f" % v if isinstance(v, (int, float)) else "-"
        best = "#%s %.2fx [%s-%s]" % (f["best"], sp.get("value") or 0, bound(sp.get("lo")),
                                      bound(sp.get("hi"))) if f["best"] else "-"
        rep = f["repairs"] or {}
        lines.append("| %s | %d | %s | %d | %d | %d | %d | %d | %s | %s | %s | %s (%s) | %d | %s |" % (
            wl, ctx, s, f["replies"], f["parsed"], f["compiled"], f["verified"], f["faster"], share,
            best, "yes" if f["model_made"] else "no", rep.get("asked", 0), rep.get("correct", 0),
            f["calls"], "%.0f" % statistics.median(secs) if secs else "-"))
    lines.append("")
    for wl, ctx, s, f, secs in rows:
        lines.append("%s at %d, %s: %d calls refused; of the %d parsed, %d directive-only children "
                     "of replies whose edits were refused (%d of them compiled), %d others "
                     "(%d compiled)" % (
                         wl, ctx, s, f["refused"], f["parsed"], f["salvaged"],
                         f["salvaged_compiled"], f["parsed"] - f["salvaged"],
                         f["compiled"] - f["salvaged_compiled"]))
    lines += ["", "Directive-only children (the parent's code byte for byte, the reply's "
              "directive: the operator's, a reply with no edit, one whose edits were refused) "
              "apart from code edits:", "",
              "| workload | context | strategy | replies | refused | parsed | directive-only "
              "(compiled) | code edits (compiled) | compiled / replies | code edits compiled / "
              "replies | of them, other built code / replies | repeats | crowned | model-made lineage | model-written code in it | "
              "built code other than the seed's |",
              "|" + "---|" * 16]
    for wl, ctx, s, f, secs in rows:
        repeats = sum(n for k, n in f["classes"].items() if k.startswith("repeat"))
        code = f["parsed"] - f["directive_only"]
        code_compiled = f["compiled"] - f["directive_only_compiled"]
        pct = lambda n: "%.0f %%" % (100 * n / f["replies"]) if f["replies"] else "-"
        bc = f["built_change"]
        lines.append("| %s | %d | %s | %d | %d | %d | %d (%d) | %d (%d) | %s | %s | %d (%s) | %d | %s | %s | %s | %s |" % (
            wl, ctx, s, f["replies"], f["refused"], f["parsed"], f["directive_only"],
            f["directive_only_compiled"], code, code_compiled, pct(f["compiled"]),
            pct(code_compiled), f["built_edits"], pct(f["built_edits"]), repeats, "#%s" % f["best"] if f["crowned"] else "nothing",
            "yes" if f["model_made"] else "no", "yes" if f["model_code"] else "no",
            "-" if bc is None else "yes" if bc else "no: the speedup is the directive's"))
    for wl, ctx, s, f, secs in rows:
        lines += ["", "%s at %d, %s: why replies made no candidate, from the reason cuco stored "
                  "with each of the %d edit calls it linked to a refusal or a candidate "
                  "(bench/local-model.py's REFUSAL_CLASSES):" % (wl, ctx, s, f["linked"]), "",
                  "| class | calls |", "|---|---:|"]
        for name, n in sorted(f["classes"].items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append("| %s | %d |" % (name, n))
        lines += ["- other: %s" % r[:200] for r in f["other"]]
        lines += ["", "replies per proposal: " + ", ".join(
            "%d %s after %d" % (n, what, k) for (what, k), n in sorted(f["chats"].items()))]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
