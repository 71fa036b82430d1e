#!/bin/sh
# tui-screens.sh — the screen at 80x24, 60x20 and 200x60; the run's states
# (running, re-timing, finished, stopped) with the clock stopped at the
# end; the directive diff of a tuner's candidate; 8-colour, dumb and vt100
# terminals; the export prompt. Each in a private tmux server.
#
# Needs: CUCO_BIN, CUCO_MKRUN, CUCO_SOURCE_ROOT (meson sets them), tmux.
set -u

. "$(dirname "$0")/lib.sh"

ENV="env LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC USER=tester CUCO_THEMES=$CUCO_SOURCE_ROOT/themes TMPDIR=$T"
RUN="$T/run"
"$CUCO_MKRUN" "$RUN" create || { echo "FAIL: mkrun"; exit 1; }
drive "$RUN"
view() {  # TERM, then extra arguments
	screen "$ENV TERM=$1 $CUCO_BIN tui --run ${VIEW_RUN:-$RUN} ${2:-}; echo EXITED \$?; sleep 30"
}

# ---- 80x24: one column, the essentials kept ------------------------------
COLS=80 ROWS=24 view xterm-256color
wait_for "lineage 6/6" "80x24: the tree"
wait_for "^ running [0-9:]+  best 1\.38x #3" "80x24: state, clock and best lead the status line"
wait_for " detail +diff +phases +islands +log " "80x24: the panes below the tree, by name"
wait_for "├─" "80x24: the tree's branches"
wait_for "rma/one/interleave/flag/8 +1\.38x" "80x24: the full directive and the speedup fit"
keys b
wait_for "^p pin +x reject +e edit +H hint +Space pause" "80x24: the hint bar offers the actions first"
# Tab brings the next pane below the tree: the detail, then the diff.
keys Tab Tab
wait_for "#3 vs parent #2: directive 3, source \+5 -3" "80x24: the diff below the tree"
wait_for "placement +after → interleave" "80x24: the diff's directive lines"
keys q
wait_for "EXITED 0" "80x24: q quits"

# ---- 60x20: usable, the change from the parent shown whole ----------------
COLS=60 ROWS=20 view xterm-256color
wait_for "change from parent" "60x20: the directive column turns into the change"
# #5 and #6 differ only in the granularity: both values are shown.
wait_for "├── place=after sync=fence gran=16 +1\.22x" "60x20: #5's change, whole, and its speedup"
wait_for "└── place=after sync=fence gran=1 +- │" "60x20: #6's change, whole"
wait_for "#1 +baseline +done" "60x20: the detail below the tree"
wait_for "^ running [0-9:]+  .*best 1\.38x" "60x20: the status line"
keys q
wait_for "EXITED 0" "60x20: q quits"

# ---- 200x60: every column, no gap before the numbers ----------------------
COLS=200 ROWS=60 view xterm-256color
wait_for "speedup +score +latency +isl" "200x60: every column"
wait_for "flag/8 {1,6}1\.38x\? +1\.375 +800\.0us +0" "200x60: the numbers follow the directive"
wait_for "cpu-gemm-allgather islands/explore" "200x60: workload, strategy and phase"
wait_for "tok 1.5k/100k \\\$0.01/\\\$5" "200x60: tokens and cost against the budget"
shown | head -1 | grep -q " run " && fail "200x60: the status line repeats the run folder"
# A long event wraps under its text column instead of stopping at the edge.
long="compile: candidate.c:12:5: error: implicit declaration of function put_chunk; did you mean"
long="$long put_chunks? the model's edit renamed it in one place and not in the other three,"
long="$long which the compiler found in the one it compiled: the-end-of-the-text"
"$CUCO_MKRUN" "$RUN" event model-error "$long"
wait_for "^│ {44}.*the-end-of-the-text" "200x60: a long event wraps whole into the log, under its text"

# ---- the run's states: re-timing, then finished with the clock stopped ----
"$CUCO_MKRUN" "$RUN" event retime "re-timing the best 3 in rounds paired with the baseline"
wait_for "^ re-timing [0-9:]+ " "the status line says re-timing"
"$CUCO_MKRUN" "$RUN" event run-end "budget reached after 3 strategy candidates"
wait_for "^ finished [0-9:]+  budget reached  best" "the status line says finished, and why"
clock=$(shown | head -1 | cut -c1-20)
sleep 2.2
[ "$(shown | head -1 | cut -c1-20)" = "$clock" ] || fail "the clock runs on after run-end: $clock"
absent " Space pause " "the hint bar offers pause on a finished run"
keys Space
wait_for "the run has finished: nothing to pause" "Space on a finished run says so"
keys q
wait_for "EXITED 0" "q on a finished run quits"
"$CUCO_MKRUN" "$RUN" commands | grep -q "^pause" && fail "Space on a finished run queued a pause"

# ---- stopped: a viewer of a run no session drives --------------------------
RUN2="$T/run2"
RUN=$RUN2  # what wait_record reads from here on
"$CUCO_MKRUN" "$RUN2" create
cat >"$T/editor" <<'ED'
#!/bin/sh
printf 'enum { BY_HAND = 1 }; /* by hand */\n' >>"$1"
ED
chmod +x "$T/editor"
VIEW_RUN=$RUN2 screen "$ENV TERM=xterm-256color EDITOR=$T/editor $CUCO_BIN tui --run $RUN2; echo EXITED \$?; sleep 30"
wait_for "^ stopped [0-9:]+  no session drives it" "a run nobody drives shows stopped"
keys b e
wait_for "no engine runs this search; a resumed run evaluates it" "edit on a stopped run says who evaluates it"
wait_record commands "" "^edit 3 -1 tester@"

# ---- the directive diff: a tuner's candidate, the same source ---------------
keys / tune Enter
wait_for "#5 +tune" "on #5, a tuned child of #3"
wait_for "#5 vs parent #3: directive 3, same source" "diff: a directive-only change"
wait_for "placement +interleave → after" "diff: placement, before and after"
wait_for "granularity +8 → 16" "diff: granularity, before and after"
wait_for "same source: the directive is the change" "diff: says the source did not change"

# ---- phase bars timed against another baseline measurement are marked -------
"$CUCO_MKRUN" "$RUN2" baseline 1300
wait_for "baseline #1 +█+▒░+·+ +1\.30ms" "phases: the baseline's new measurement, the rest no phase explains dotted"
wait_for "#5~ " "phases: #5 was timed against another baseline: marked, its spread of 60% notwithstanding"
wait_for "~ paired with another baseline run" "phases: the legend says why"
wait_for " tune +rma/one/after/fence/16 +1\.22x\?~ " "lineage: #5 one screening (?), paired elsewhere (~)"

# ---- the export prompt: the default replaced, cursor keys, no silent overwrite
keys b E
wait_for "export to \(typing replaces, arrows edit\): cand-3\.c" "export: the prompt with its default"
keys "$T/first.c" Enter
wait_for "wrote $T/first.c" "export: a typed path replaces the default"
"$CUCO_BIN" export 3 --run "$RUN2" >"$T/expect.c"
cmp -s "$T/first.c" "$T/expect.c" || fail "export: the file is not #3's source"
# C-a (Home) keeps the default and moves to its start: the folder goes in front.
keys E C-a "$T/" Enter
wait_for "wrote $T/cand-3.c" "export: C-a, then typing, edits the default"
[ -f "$T/cand-3.c" ] || fail "export: $T/cand-3.c not written"
echo keep >"$T/first.c"
keys E "$T/first.c" Enter
wait_for "first.c exists. Overwrite it\? y overwrites, Enter/Esc cancels" "export: asks before overwriting"
keys Enter
wait_for "not exported: $T/first.c left as it was" "export: Enter keeps the file"
[ "$(cat "$T/first.c")" = keep ] || fail "export: overwrote a file it was told to keep"
keys E "$T/first.c" Enter y
wait_for "wrote $T/first.c" "export: y overwrites"
cmp -s "$T/first.c" "$T/expect.c" || fail "export: y did not write the source"
wait_record events export "^export 3 tester@.*first\.c"
keys q
wait_for "EXITED 0" "quit after the exports"

# ---- 8 colours: nothing black on black --------------------------------------
view xterm
wait_for "lineage" "8-colour screen"
keys b
sleep 0.3
screen=$($TM capture-pane -p -e -t t)
printf '%s' "$screen" | grep -q "38;5;" && fail "TERM=xterm: 256-colour escapes on an 8-colour terminal"
printf '%s' "$screen" | grep -q "$(printf '\033')\[[0-9;]*3[0-7]m" || fail "TERM=xterm: no 8-colour escapes"
E=$(printf '\033')
printf '%s' "$screen" | grep -Eq "$E\[30m$E\[4[09]m|$E\[30;4[09]m" && fail "TERM=xterm: black text on a black or default background"
# The unfocused borders and the queued (dim) row stay visible: not black.
printf '%s' "$screen" | grep -E "6 ○" | grep -q "$E\[30m" && fail "TERM=xterm: the queued row is drawn black"
keys q
wait_for "EXITED 0" "quit from 8 colours"

# ---- a dumb terminal: one line, exit 3 ----------------------------------------
view dumb
wait_for "EXITED 3" "TERM=dumb: exit status 3"
wait_for "TERM=dumb: the terminal cannot move the cursor" "TERM=dumb: says why, on one line"

# ---- vt100 (no alternate screen): nothing left behind on exit -------------------
view vt100
wait_for "lineage" "vt100 screen"
keys q
wait_for "EXITED 0" "vt100: q quits"
absent "q quit|lineage" "vt100: the screen stayed behind after exit"

[ $FAILED -eq 0 ] && echo "tui-screens: all passed"
exit $((FAILED > 0))
