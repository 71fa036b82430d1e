#!/bin/sh
# tui-e2e.sh — the workbench screen end to end, in a private tmux server:
# each pane shows what it should; pin, reject, un-reject, edit, hint and
# pause produce the right command and event records; resize and "too
# small"; monochrome and ASCII modes; a viewer attached to a run that
# another process is writing shows new candidates as they arrive; quitting
# a viewer leaves the run. tui-screens.sh covers the layouts, the run's
# states, the directive diff, the terminals and the export prompt.
#
# Needs: CUCO_BIN, CUCO_MKRUN, CUCO_SOURCE_ROOT (meson sets them), tmux.
set -u

. "$(dirname "$0")/lib.sh"

CUCO="$CUCO_BIN tui"

# ---- 1. every pane shows what it should ----------------------------------
RUN="$T/run1"
"$CUCO_MKRUN" "$RUN" create || { echo "FAIL: mkrun"; exit 1; }
drive "$RUN"
screen "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC USER=tester EDITOR=$T/editor \
	 CUCO_THEMES=$CUCO_SOURCE_ROOT/themes TMPDIR=$T $CUCO --run $RUN; echo EXITED \$?; sleep 30"
wait_for "lineage 6/6" "the lineage pane never appeared"
wait_for "explore" "islands pane: island 0's phase"
wait_for "exploit" "islands pane: island 1's phase"
wait_for "llm-diff +rma/one/interleave/flag/8" "tree: the LLM diff with its directive"
wait_for "^ running [0-9:]+ " "status line: a live run says running"
wait_for "done 4 failed 1 queued 1" "status line: counts"
wait_for "best 1.38x #3" "status line: best speedup"
wait_for "engine +candidate #6 +tune" "log pane: the latest events"
# The tree's lines: #3 and #4 are siblings under #2, #5 and #6 under #3.
wait_for "3 ● ▲  +├─▾ +llm-diff" "tree: #3, the best, with a sibling below"
wait_for "5 ●  +│ ├── +tune" "tree: #5 under #3, a line for #4 beside"
wait_for "6 ○  +│ └── +tune" "tree: #6, #3's last child"
wait_for "4 ✗  +└── +llm-full" "tree: #4, #2's last child"

# The cursor starts on the baseline; b jumps to the best (#3).
keys b
wait_for "#3 +llm-diff +done" "detail: the best candidate"
wait_for "placement +interleave" "detail: its directive"
wait_for "#3 vs parent #2: directive 3, source \+5 -3" "diff: against the parent"
wait_for "placement +after → interleave" "diff: the directive, dimension by dimension"
wait_for "baseline #1" "phases: the baseline's bar"
wait_for "parent #2" "phases: the parent's bar"
# Each phase once (comm is inside compute: exposed_comm says how much shows),
# the bar as long as the latency, the speedup after it.
wait_for "#3 +█+▒░+ +800\.0us 1\.38x" "phases: the candidate's bar, its median and speedup"
wait_for "comm 380\.0us \(300\.0us hidden\)" "phases: the hidden communication in the legend"
wait_for "exposed_comm 80.0us" "phases: the legend's numbers"
# f: the next failure (#4): its class, excerpt and explanation come first.
keys f
wait_for "failed at +compile: compile-error" "detail: failure class"
wait_for "expected '\)' before" "detail: error excerpt"
keys b
# Tab follows the layout: islands, tree, then phases, detail, diff down the
# right, then the log. Two Tabs from the tree: the detail, zoomed.
keys Tab Tab z
wait_for "peak fraction +41\.2% of peak" "detail (zoomed): metrics"
wait_for "PROMPT: overlap" "detail (zoomed): the prompt behind it"
wait_for "REPLY: interleave" "detail (zoomed): the reply"
keys z Tab z
wait_for "\+\s+compute_chunk\(c\);" "diff (zoomed): an added line"
wait_for "-\s+put_all\(\);" "diff (zoomed): a deleted line"
keys z BTab
# t explains what the focused pane shows; on the detail pane the directive.
keys t
wait_for "how bytes move: two-sided messages" "explain: the workload's own help for backend"
wait_for "compile-error +the source did not compile" "explain: failure classes"
keys Escape
keys BTab t
wait_for "exposed_comm: the part of communication" "explain on phases: the phase names"
keys Escape BTab
# ? lists every key from the binding table, a person's actions first.
keys '?'
wait_for "Actions \(stored with your name\):" "help: the actions' heading"
wait_for "pin or unpin the candidate" "help: the pin key"
wait_for "edit its source in" "help: the edit key"
keys q

# Folding, filters, sorting and jumps in the tree.
keys b Enter
wait_for "3 ● ▲  +├─▸ +llm-diff" "fold: #3 shows folded"
absent "^│ +5 " "fold: #5 still shown under folded #3"
keys Enter
wait_for "^│ +5 ●" "unfold: #5 back"
# s cycles through the statuses there are: queued, done, failed.
keys s s s
wait_for "filter: island any, status failed, origin any \(1 shown\)" "status filter: failed"
absent "^│ +3 " "status filter: #3 still shown"
keys c i
wait_for "filter: island 0, status any, origin any \(3 shown\)" "island filter: island 0"
keys c o o o
wait_for "filter: island any, status any, origin llm-diff \(1 shown\)" "origin filter: llm-diff"
keys c
wait_for "\(6 shown\)" "filters cleared"
keys '>'
wait_for "lineage 6/6 · by speedup" "sort: the title says the order"
shown | grep -E "^│ +[0-9]+ (●|○|✗|⊘) " | head -1 | grep -Eq "^│ +3 " || fail "sort by speedup: #3 (1.38x) not first"
keys '>' '>' '>'
wait_for "lineage 6/6 ─" "sort: back to the tree"
# / counts and highlights the matches; n and N step through them.
keys g / tune Enter
wait_for "/tune: 2 matches" "search: the title counts the matches"
wait_for "/tune: match 1 of 2" "search: the first match"
wait_for "#5 +tune" "search: on #5"
keys n
wait_for "#6 +tune" "search: n to the next match"
keys N
wait_for "#5 +tune" "search: N back"
keys u
wait_for "#3 +llm-diff" "u: from #5 to its parent #3"

# ---- 2. pin, reject, un-reject, hint, edit, pause: commands and events -----
keys b p
wait_record commands "" "^pin 3 -1 tester@"
wait_record events pin "^pin 3 tester@"
wait_for "3 ●★▲ " "tree: #3 shows its pin mark"
wait_for "#3 +llm-diff +done +island 0 +gen 0 +pinned" "detail: pinned"
# / search for the tuned child of #3 (#5), then reject it with a reason.
keys / tune Enter
wait_for "#5 +tune" "search: found the tuned candidate"
keys x
wait_for "reject #5, reason:" "reject: the prompt"
keys "too slow on 2 ranks" Enter
wait_for "Reject #5 \(too slow on 2 ranks\)\? y rejects" "reject: the confirmation"
keys y
wait_record commands "" "^reject 5 -1 tester@[^ ]+ - \[too slow on 2 ranks\]"
wait_record events reject "^reject 5 tester@.*reject #5: too slow"
wait_for "5 ⊘ " "tree: #5 shows the rejected glyph"
wait_for "rejected +too slow on 2 ranks" "detail: the reason"
# x on a rejected candidate takes the rejection back; p is not offered on it.
wait_for "(^| )x un-reject " "hint bar: x un-rejects a rejected candidate"
absent "(^| )p pin " "hint bar: pin offered on a rejected candidate"
keys x
wait_record commands "" "^unreject 5 -1 tester@"
wait_for "5 ● " "tree: #5 done again"
# The baseline is never rejected.
keys g x
wait_for "the baseline cannot be rejected" "reject of the baseline refused"
# A confirmation defaults to cancel.
keys b
wait_for "#3 +llm-diff" "back on #3"
keys x "second thoughts" Enter Enter
sleep 0.3
"$CUCO_MKRUN" "$RUN" commands | grep -q "second thoughts" && fail "Enter on a confirmation rejected"
keys H "try prefetch" Enter
wait_record commands "" "^hint 3 0 tester@.*\[try prefetch\]"
keys Space
wait_record commands "" "^pause 0 "
wait_record events pause "^pause 0 tester@"

# e: the editor (a script) changes the source; the new text is stored
# and an edit command names it with the edited candidate as parent.
cat >"$T/editor" <<'ED'
#!/bin/sh
printf 'enum { HAND_TUNED = 1 }; /* hand-tuned */\n' >>"$1"
ED
chmod +x "$T/editor"
keys b e
wait_record commands "" "^edit 3 -1 tester@"
hash=$("$CUCO_MKRUN" "$RUN" commands | sed -n 's/^edit 3 -1 [^ ]* \([0-9a-f]*\) .*/\1/p')
if [ -n "$hash" ]; then
	"$CUCO_MKRUN" "$RUN" source "$hash" | tail -1 | grep -q "hand-tuned" || fail "edit: stored source lacks the change"
	"$CUCO_MKRUN" "$RUN" source "$hash" | grep -q "compute_chunk" || fail "edit: stored source lost the original"
fi
wait_record events edit "^edit 3 tester@"
wait_for "lineage" "the screen came back after the editor"
wait_for "the engine evaluates it as a human candidate" "edit: a live run evaluates it"

# ---- 3. resize and "too small" ------------------------------------------
$TM resize-window -t t -x 30 -y 8
wait_for "terminal too small: 30x8\." "too small screen"
shown | grep -Eq "^cuco needs 40x12; resize, or" || fail "too small: the message breaks mid-word"
$TM resize-window -t t -x 100 -y 30
wait_for "lineage" "back from too small"
wait_for " detail .* islands .* log " "a narrow screen names the panes below the tree"

# ---- 4. attached viewer sees candidates arrive; q leaves the run alone ---
keys G
"$CUCO_MKRUN" "$RUN" append 3 150
wait_for "^\W*9 " "new candidate #9 arrived in the tree"
keys q
wait_for "EXITED 0" "q quits the viewer at once"
"$CUCO_MKRUN" "$RUN" commands | grep -q "^stop" && fail "quitting a viewer queued a stop"

# ---- 5. monochrome (NO_COLOR) and ASCII -----------------------------------
"$CUCO_MKRUN" "$T/run2" create
screen "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 NO_COLOR=1 CUCO_THEMES=$CUCO_SOURCE_ROOT/themes \
	 $CUCO --run $T/run2 --ascii; echo EXITED \$?; sleep 30"
wait_for "lineage" "monochrome screen"
keys b
wait_for "#3 +llm-diff" "monochrome: detail"
screen=$($TM capture-pane -p -e -t t)
printf '%s' "$screen" | grep -q "$(printf '\033')\[[0-9;]*3[0-7]m\|38;5;" && fail "NO_COLOR: colour escapes on screen"
printf '%s' "$screen" | grep -q "$(printf '\033')\[[0-9;]*7m" || fail "monochrome: selection not in reverse video"
# The status line is one reverse bar, the stopped state inverted in it:
# reverse starts twice at most (it broke after the state, leaving reverse
# blocks between the segments).
n=$(printf '%s\n' "$screen" | head -1 | grep -o "$(printf '\033')\[[0-9;]*7m" | wc -l)
[ "$n" -le 2 ] || fail "monochrome: the status line's reverse is broken into $n runs"
printf '%s\n' "$screen" | head -1 | grep -q "stopped$(printf '\033')\[[0-9;]*7m" \
	|| fail "monochrome: the state is not set apart from the rest of the status line"
text=$(shown)
printf '%s' "$text" | LC_ALL=C grep -q "$(printf '[\200-\377]')" && fail "--ascii: non-ASCII bytes on screen"
printf '%s' "$text" | grep -Eq "#+~!+ +800\.0us" || fail "--ascii: phase bars with distinct fills"
printf '%s' "$text" | grep -q "+-" || fail "--ascii: ASCII borders"
printf '%s' "$text" | grep -Eq "3 o \^ " || fail "monochrome: the best has no mark of its own"
keys q
wait_for "EXITED 0" "quit from monochrome"

# ---- 6. signals restore the terminal; a colour theme; a bad one ----------
screen "env TERM=xterm-256color LANG=C.UTF-8 CUCO_THEMES=$CUCO_SOURCE_ROOT/themes $CUCO --run $T/run2; \
	 echo EXITED \$?; sleep 30"
wait_for "lineage" "the screen before SIGTERM"
kill -TERM "$(ps -o pid= --ppid "$($TM display -p -t t '#{pane_pid}')" | head -1)"
wait_for "EXITED 0" "SIGTERM: the screen leaves cleanly"
absent "lineage" "SIGTERM: the screen was not restored"

screen "env TERM=xterm-256color LANG=C.UTF-8 CUCO_THEMES=$CUCO_SOURCE_ROOT/themes \
	 $CUCO --run $T/run2 --theme high-contrast; echo EXITED \$?; sleep 30"
wait_for "lineage" "high-contrast theme"
$TM capture-pane -p -e -t t | grep -q "38;5;\|$(printf '\033')\[[0-9;]*3[0-7]m" || fail "theme: no colour on screen"
keys q
wait_for "EXITED 0" "quit from high-contrast"
out=$(CUCO_THEMES=$CUCO_SOURCE_ROOT/themes $CUCO --run "$T/run2" --theme nosuch 2>&1 </dev/null)
echo "$out" | grep -q "theme 'nosuch': not found" || fail "a missing theme is an error naming it: $out"

# ---- 7. a refusal's reason is read whole: the detail and the log ----------
"$CUCO_MKRUN" "$T/run3" create
"$CUCO_MKRUN" "$T/run3" refused
COLS=120 ROWS=40 screen "env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC \
	 CUCO_THEMES=$CUCO_SOURCE_ROOT/themes $CUCO --run $T/run3; echo EXITED \$?; sleep 30"
wait_for "lineage" "refusals: the screen"
# The cursor starts on the baseline: its row is done, the refused round
# is in its measurements, the reason wrapped in the detail pane.
wait_for "#1 +baseline +done" "refusals: the baseline's detail"
keys Tab Tab z
wait_for "confirm +failed at bench: suspect: stage clock: the benchmark" "detail: the refused round"
wait_for "yet reports 69\.8 us" "detail: the refusal's reason, whole"
keys z
# The log pane wraps the verdict's text under itself.
wait_for "confirm +#3 +#3 no verdict: the baseline failed in round 4 at" "log: the event's first row"
wait_for "^\W* {40,}.*yet reports 69\.8 us" "log: the reason's end, wrapped under the text"
keys q
wait_for "EXITED 0" "quit after the refusals"

[ $FAILED -eq 0 ] && echo "tui-e2e: all passed"
exit $((FAILED > 0))
