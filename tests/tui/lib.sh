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

cleanup() {
	$TM kill-server 2>/dev/null
	[ -n "$BG_PID" ] && kill "$BG_PID" 2>/dev/null && wait "$BG_PID" 2>/dev/null
	rm -rf "$T"
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

# Run a command line in a fresh 120x40 terminal. Each gets its own tmux
# server: a new session on a server that is still shutting down can fail.
screen() {
	$TM kill-server 2>/dev/null
	SCREENS=$((SCREENS + 1))
	TM="tmux -L cuco-tui-$$-$SCREENS -f /dev/null"
	$TM new-session -d -s t -x 120 -y 40 "$1"
}

