#!/bin/sh
# tui-engine.sh — the screen with the real engine on the CPU workload.
# A viewer attaches to a headless `cuco run` (as after an SSH disconnect),
# watches candidates arrive, pins one, rejects one with a reason and
# hand-edits a third, which the engine turns into a human candidate and
# evaluates; quitting the viewer leaves the run going. Then `cuco run` in a
# terminal opens the screen in-process, and quitting asks before stopping
# (y: exit 4, stopped; n: it goes on printing a line per candidate); a run
# that ends under the screen says finished, and q no longer asks.
set -u

command -v mpirun >/dev/null 2>&1 || { echo "SKIP: mpirun not found (the CPU workloads need Open MPI)"; exit 77; }
. "$(dirname "$0")/lib.sh"
WAIT_S=90  # evaluations take seconds each on a loaded machine
WL=cpu-gemm-allgather
ENV="env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 USER=tester EDITOR=$T/editor TMPDIR=$T \
CUCO_THEMES=$CUCO_SOURCE_ROOT/themes CUCO_WORKLOADS=$CUCO_WORKLOADS"

cat >"$T/editor" <<'ED'
#!/bin/sh
printf 'enum { HAND_TUNED = 1 }; /* hand-tuned in the screen */\n' >>"$1"
ED
chmod +x "$T/editor"

# ---- a viewer attached to a headless run ----------------------------------
RUN="$T/run"
"$CUCO_BIN" run $WL --run "$RUN" --size small --budget 0 --minutes 4 --rebench 0 --headless \
	>"$T/run.out" 2>&1 &
BG_PID=$!
i=0
until "$CUCO_MKRUN" "$RUN" events candidate 2>/dev/null | grep -q "^candidate 2 "; do
	sleep 0.2
	i=$((i + 1))
	[ $i -lt 300 ] || { echo "FAIL: the headless run never added its seed"; cat "$T/run.out"; exit 1; }
done
last=$("$CUCO_MKRUN" "$RUN" events candidate | tail -1 | cut -d' ' -f2)
screen "$ENV $CUCO_BIN tui --run $RUN; echo EXITED \$?; sleep 60"
wait_for "lineage" "the viewer never showed the tree"
wait_for "candidate #$((last + 1)) " "a candidate made after the viewer attached shows in its log"
wait_for "candidate #$((last + 2)) " "and the next one"

# Pin the seed (#2): the engine acknowledges it with its own event.
keys g j
wait_for "#2 +seed" "detail: the seed"
keys p
wait_for "2 [^ ]★ " "tree: the seed's pin mark"
wait_record events pin "^pin 2 tester@.*\[pinned"

# Reject the first tuned candidate with a reason.
keys / tune Enter
wait_for "#[0-9]+ +tune" "search found a tuned candidate"
keys x "slower on two ranks" Enter y
wait_record events reject "^reject [0-9]+ tester@.*slower on two ranks"
"$CUCO_BIN" ls --run "$RUN" --status rejected | grep -q tune || fail "no rejected tune candidate in cuco ls"

# Hand-edit the seed: the engine adds a human candidate and evaluates it.
keys g j e
wait_record events edit "^edit [0-9]+ tester@.*an edit of #2"
wait_for " human " "the human candidate shows in the tree"
i=0
until "$CUCO_BIN" ls --run "$RUN" --origin human | grep -Eq " (done|failed) "; do
	sleep 0.5
	i=$((i + 1))
	[ $i -lt 180 ] || { fail "the human candidate was never evaluated"; break; }
done
"$CUCO_BIN" ls --run "$RUN" --origin human | grep -q " done " || fail "the hand edit did not evaluate as done"
hash=$("$CUCO_BIN" ls --run "$RUN" --origin human --json | tr -d ' \t' | sed -n 's/.*"source_hash":"\([0-9a-f]*\)".*/\1/p' | head -1)
[ -n "$hash" ] && "$CUCO_MKRUN" "$RUN" source "$hash" | grep -q "hand-tuned in the screen" \
	|| fail "the human candidate's source is not the edited text"

# Quitting the viewer leaves the run going; cuco stop ends it.
keys q
wait_for "EXITED 0" "q quits the viewer"
kill -0 "$BG_PID" 2>/dev/null || fail "quitting the viewer ended the headless run"
"$CUCO_BIN" stop --run "$RUN" >/dev/null
wait "$BG_PID"
rc=$?
[ $rc -eq 4 ] || fail "the stopped headless run exited $rc, not 4: $(tail -3 "$T/run.out")"
BG_PID=""

# ---- the screen in-process ---------------------------------------------------
screen "$ENV $CUCO_BIN run $WL --run $T/run2 --size small --budget 0 --minutes 4 --rebench 0; echo EXITED \$?; sleep 60"
wait_for "lineage" "cuco run in a terminal opens the screen"
wait_for "seed" "the in-process screen shows the seed"
keys q
wait_for "Quit: y stops the search, n leaves it running, Esc stays" "quitting asks"
keys Enter
# Enter cancels: for two seconds the screen must not quit.
saved=$FAILED
WAIT_S=2
if wait_for "EXITED" >/dev/null; then
	FAILED=$((saved + 1))
	echo "FAIL: Enter on the quit question quit"
else
	FAILED=$saved
fi
WAIT_S=90
keys q y
wait_for "EXITED 4" "y stops the search and quits, exit 4: stopped, not finished"
wait_for "candidates from the strategy" "the run's summary after the screen"

# ---- a foreground run left running with n ------------------------------------
# It goes on in the terminal, a line per candidate (over SSH a silent run
# looks hung), and ends by itself with its summary and exit 0.
screen "$ENV $CUCO_BIN run $WL --run $T/run4 --size small --budget 3 --rebench 0; echo EXITED \$?; sleep 60"
wait_for "lineage" "the in-process screen opens"
keys q n
wait_for "the search goes on without the screen, a line per candidate" "n leaves the search running"
wait_for "^#[0-9]+ +tune " "progress lines once the screen is left"
wait_for "EXITED 0" "the run left running ends by itself, exit 0"

# ---- a run that ends while the screen is open ---------------------------------
# The status line says finished and why; q then quits without asking.
screen "$ENV $CUCO_BIN run $WL --run $T/run3 --size small --budget 2 --rebench 0; echo EXITED \$?; sleep 60"
wait_for "^ finished [0-9:]+  budget reached" "the screen says the run finished, and why"
keys q
wait_for "EXITED 0" "q on a finished run quits without asking"

[ $FAILED -eq 0 ] && echo "tui-engine: all passed"
exit $((FAILED > 0))
