#!/usr/bin/env bash
# Alternated CPU timings of several orrery binaries on one simulation, for comparisons on a
# machine whose speed drifts (a VM): each round runs every binary once, in turn, so a slow
# phase hits all of them; prints min / median / max of user + sys seconds per binary.
#
#   scripts/cpu-pairs.sh ROUNDS POLICY TRACE CLUSTER BIN [BIN ...]
#   scripts/cpu-pairs.sh 6 tiresias /tmp/perf/scale1000000.csv configs/scale-1024x8.toml /tmp/base/orrery build/orrery
set -euo pipefail
if [ $# -lt 5 ]; then
  sed -n '2,7p' "$0" >&2
  exit 2
fi
rounds=$1 policy=$2 trace=$3 cluster=$4
shift 4
declare -A runs
for ((i = 0; i < rounds; i++)); do
  for bin in "$@"; do
    t=$({ /usr/bin/time -f "%U %S" "$bin" simulate "$trace" --cluster "$cluster" --policy "$policy" --no-output -q \
          >/dev/null; } 2>&1 | tail -1 | awk '{printf "%.2f", $1 + $2}')
    runs[$bin]="${runs[$bin]:-} $t"
  done
done
for bin in "$@"; do
  printf '%s: %s  [%s ]\n' "$bin" "$(tr ' ' '\n' <<<"${runs[$bin]}" | sed '/^$/d' | sort -n |
    awk '{a[NR] = $1} END {printf "min %.2f median %.2f max %.2f (n %d)", a[1], a[int((NR + 1) / 2)], a[NR], NR}')" "${runs[$bin]}"
done
