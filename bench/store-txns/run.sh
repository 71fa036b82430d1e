#!/bin/sh
# bench/store-txns/run.sh — store transactions per screening (issue 27's figure).
# Runs `cuco run cpu-gemm-allgather` headless at two budgets with one job, no
# confirmation and no re-measured baseline, counting mdb_txn_begin calls by a
# preloaded counter; the difference over the difference in candidates is the
# cost of one screening. Reads include the engine's command poll (about one a
# second), so they depend on how long a screening takes; writes do not.
#
#   bench/store-txns/run.sh CUCO [LOW HIGH]     (default budgets 4 and 12)
set -eu
cuco=$1; lo=${2:-4}; hi=${3:-12}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cc -O2 -shared -fPIC -o "$tmp/count.so" "$here/count.c" -ldl
for b in "$lo" "$hi"; do
  TXNCOUNT_OUT="$tmp/c$b" LD_PRELOAD="$tmp/count.so" "$cuco" run cpu-gemm-allgather \
    --headless --budget "$b" --rebench 0 --baseline-every 100000 --jobs 1 --run "$tmp/r$b" > "$tmp/o$b"
  echo "budget $b: $(cat "$tmp/c$b")"
done
awk -v lo="$lo" -v hi="$hi" '
  FNR == 1 { r[FILENAME ~ /c'"$hi"'$/] = $3; w[FILENAME ~ /c'"$hi"'$/] = $5 }
  END { d = hi - lo; printf "per screening: %.1f write, %.1f read transactions\n",
    (w[1] - w[0]) / d, (r[1] - r[0]) / d }' "$tmp/c$lo" "$tmp/c$hi"
