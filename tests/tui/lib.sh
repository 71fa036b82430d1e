# lib.sh — what the screen's tmux tests share: a private tmux server, and
# waits that poll the screen or the store until what is expected shows (or
# 10 s pass), so no test rests on a fixed sleep. Sourced, not run.
# Needs: CUCO_BIN, CUCO_MKRUN, CUCO_SOURCE_ROOT (meson sets them), tmux.

: "${CUCO_BIN:?}" "${CUCO_MKRUN:?}" "${CUCO_SOURCE_ROOT:?}"
T=$(mktemp -d "${TMPDIR:-/tmp}/cuco-tui-e2e.XXXXXX")
SCREENS=0
TM="tmux -L cuco-tui-$$-0 -f /dev/null"
FAILED=0

BG_PID=""  # a background process a test started (a headless cuco run)
LOCK_PID="" # what stands in for the session driving a fixture run

cleanup() {
	$TM kill-server 2>/dev/null
	[ -n "$BG_PID" ] && kill "$BG_PID" 2>/dev/null && wait "$BG_PID" 2>/dev/null
	[ -n "$LOCK_PID" ] && kill "$LOCK_PID" 2>/dev/null && wait "$LOCK_PID" 2>/dev/null
	rm -rf "$T"
}

# A fixture run as a live session would leave it: RUN/run.lock naming a
# process that is alive (cuco run writes its pid there), so the screen
# takes an engine to be driving it.
drive() {
	sleep 600 &
	LOCK_PID=$!
	echo "$LOCK_PID" >"$1/run.lock"
}
trap cleanup EXIT INT TERM

fail() {
	echo "FAIL: $*"
	echo "---- screen ----"
	$TM capture-pane -p -t t 2>/dev/null
	echo "----------------"
	FAILED=$((FAILED + 1))
}

# Poll the screen until PATTERN (grep -E) shows, up to $WAIT_S seconds
# (default 10): assert on what the screen shows, never on a fixed sleep.
wait_for() {
	i=0
	while [ $i -lt $((${WAIT_S:-10} * 10)) ]; do
		$TM capture-pane -p -t t 2>/dev/null | grep -Eq -- "$1" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	fail "${2:-screen never showed: $1}"
	return 1
}

# The same for a record in the store.
wait_record() {
	i=0
	while [ $i -lt $((${WAIT_S:-10} * 10)) ]; do
		"$CUCO_MKRUN" "$RUN" $1 $2 2>/dev/null | grep -Eq -- "$3" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	fail "no $1 record matching: $3"
	"$CUCO_MKRUN" "$RUN" $1 $2
	return 1
}

keys() { $TM send-keys -t t "$@"; }

# Run a command line in a fresh terminal, 120x40 unless COLS and ROWS
# say. Each gets its own tmux server: a new session on a server that is
# still shutting down can fail.
screen() {
	$TM kill-server 2>/dev/null
	SCREENS=$((SCREENS + 1))
	TM="tmux -L cuco-tui-$$-$SCREENS -f /dev/null"
	$TM new-session -d -s t -x "${COLS:-120}" -y "${ROWS:-40}" "$1"
}

# The screen's text now.
shown() { $TM capture-pane -p -t t; }

# Fail when PATTERN (grep -E) is on the screen.
absent() {
	shown | grep -Eq -- "$1" && fail "${2:-the screen shows: $1}"
	return 0
}

