#!/usr/bin/env bash
# The "results must not change" check of issues #11 and #17: Philly part A on
# configs/philly-half.toml with the eight acceptance policies, every output file of a
# reference binary and a candidate binary compared byte for byte.
#
#   scripts/check-acceptance.sh REFERENCE_BIN CANDIDATE_BIN [OUT_DIR]
#
# REFERENCE_BIN is typically main's build (e.g. a copy of build/orrery made before a change).
# Exit 0 when every file is identical, 1 when any differs or is missing, 2 on bad usage.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 REFERENCE_BIN CANDIDATE_BIN [OUT_DIR]" >&2
  exit 2
fi
REF=$1
NEW=$2
OUT=${3:-$(mktemp -d /tmp/orrery-acceptance.XXXXXX)}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TRACE=${ORRERY_SHARED_DIR:-$ROOT/../shared}/traces/philly-pollux/philly.part-A.submit-before-2017-11-01.csv
CLUSTER=$ROOT/configs/philly-half.toml
POLICIES=(fifo sjf srtf qssf easy tiresias tiresias:preset=lucid lucid:estimator=user-stats)

for bin in "$REF" "$NEW"; do
  [[ -x $bin ]] || { echo "$bin: not an executable" >&2; exit 2; }
done
[[ -f $TRACE ]] || { echo "$TRACE: Philly part A not found (set ORRERY_SHARED_DIR)" >&2; exit 2; }

status=0
for p in "${POLICIES[@]}"; do
  d=${p//[:=,]/_}
  for side in ref new; do
    bin=$REF
    [[ $side == new ]] && bin=$NEW
    rm -rf "$OUT/$side/$d"
    mkdir -p "$OUT/$side/$d"
    "$bin" simulate "$TRACE" --format philly --cluster "$CLUSTER" --policy "$p" --out-dir "$OUT/$side/$d" -q \
      >"$OUT/$side/$d.log" 2>&1 || { echo "$p: $side run failed (see $OUT/$side/$d.log)"; status=1; }
  done
  files=$(cd "$OUT/ref/$d" && find . -type f \( -name '*.csv' -o -name '*.json' \) | sort)
  verdict="identical"
  n=0
  for f in $files; do
    n=$((n + 1))
    cmp -s "$OUT/ref/$d/$f" "$OUT/new/$d/$f" || { verdict="DIFFERS: $f"; status=1; }
  done
  [[ $n -gt 0 ]] || { verdict="no output files"; status=1; }
  echo "$p: $verdict ($n files)"
done
echo "outputs in $OUT"
exit $status
