# Shared by the adversary's scripts (sourced, POSIX sh): where cuco is, a
# private scratch folder, bounded limits, a seeded random number, and the
# store scan every kill loop runs after each kill.

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CUCO=${CUCO:-$ROOT/build/cuco}
TOY=$ROOT/tests/agents/fixtures/toy
SEED=${ADV_SEED:-18}
[ -x "$CUCO" ] || { echo "$0: $CUCO not built (meson setup build && ninja -C build)" >&2; exit 3; }
command -v jq >/dev/null || { echo "$0: needs jq" >&2; exit 3; }

QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1

# Everything a case leaves is under one folder, removed at exit; a hostile
# case that defeats its defence still meets these bounds (the machine is shared).
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/cuco-adv-XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
trap 'exit 143' TERM INT  # so that the EXIT trap runs
ulimit -u 4096 2>/dev/null || true

# rnd LO HI [I]: a number in [LO, HI), reproducible from $SEED and the step I.
_rnd_step=0
rnd() {
	_rnd_step=$((_rnd_step + 1))
	awk -v lo="$1" -v hi="$2" -v s="$SEED" -v i="${3:-$_rnd_step}" \
		'BEGIN { srand(s * 7919 + i); printf "%.3f\n", lo + rand() * (hi - lo) }'
}
rndint() { rnd "$1" "$2" "${3:-}" | cut -d. -f1; }

# snap RUN FILE: one line per record (id status hash directive origin);
# fails when the store cannot be listed.
snap() {
	"$CUCO" ls --run "$1" --json 2>"$2.err" |
		jq -r '.[] | "\(.id) \(.status) \(.source_hash | if . == "" then "-" else . end) \(.directive | tostring | gsub(" "; "")) \(.origin)"' \
		>"$2" && [ -s "$2" ]
}

# check_snap OLD NEW: prints one line per record lost, or done that went back,
# or done whose source or directive changed; empty output when all held.
check_snap() {
	awk 'FILENAME == ARGV[1] { st[$1] = $2; rest[$1] = $3 " " $4; next }
	     { seen[$1] = 1
	       if (!($1 in st)) next
	       if (st[$1] == "done" && $2 != "done" && $2 != "rejected")
	         print "record " $1 ": done went back to " $2
	       if (rest[$1] != $3 " " $4)
	         print "record " $1 ": source or directive changed: " rest[$1] " -> " $3 " " $4 }
	     END { for (id in st) if (!(id in seen)) print "record " id ": lost" }' "$1" "$2"
}

# count LABEL GOOD TOTAL [NOTE]: the line each family ends with.
count() { echo "COUNT $1: $2/$3${4:+ ($4)}"; }

# hostile_workload DIR CASE [SOCK SOCK]: the toy workload in DIR (a folder
# named toy) with hostile/hostile.c, attack CASE, as its seed.
hostile_workload() {
	mkdir -p "${1%/toy}"; cp -r "$TOY" "$1"; cp "$ROOT/bench/adversary/hostile/hostile.c" "$1/seed.c"
	cp "$ROOT/workloads/common/cuco_seal.h" "$1/"
	sed -i 's|"[./]*workloads/common/cuco_seal.h"|"cuco_seal.h"|' "$1/toy.h"
	printf '#define ADV_CASE %s\n#define ADV_SOCK_VAR "%s"\n#define ADV_SOCK_RUN "%s"\n' "$2" "${3:-}" "${4:-}" >"$1/adv.h"
	jq '.build |= sub("-std=c11"; "-std=gnu11") | .limits.run_s = 30 | .limits.bench_s = 30 | .bench.reps = 1' \
		"$TOY/workload.json" >"$1/workload.json"
}
