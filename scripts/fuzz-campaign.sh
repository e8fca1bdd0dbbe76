#!/usr/bin/env bash
# A long fuzzing campaign: scripts/fuzz-campaign.sh TARGET MINUTES [options]
#
# Runs the libFuzzer target TARGET (or every target, with TARGET = all, each for MINUTES) from
# its committed corpus, as WORKERS processes that share one corpus folder (each reloads what the
# others found), under the limits of scripts/fuzz-lib.sh. A worker that finds a defect records
# its input and starts again, so the campaign goes on. Then it prints one line per target and
# appends it to OUT/results.tsv:
#
#   target  minutes  workers  executions  crashes  ooms  timeouts  corpus_before  corpus_after
#
# and leaves every defect's input in OUT/TARGET/artifacts/. With --update-corpus, the campaign's
# corpus is minimized (libFuzzer -merge=1: the smallest set with the same coverage) and written
# back to tests/fixtures/fuzz/TARGET/, so that coverage carries to CI and the next campaign.
#
# Options:
#   --workers N       parallel fuzzing processes (default: nproc)
#   --bin-dir DIR     prebuilt fuzz binaries (default: build-fuzz/, configured and built if needed)
#   --out DIR         campaign folder (default: build-fuzz/campaign)
#   --update-corpus   minimize into tests/fixtures/fuzz/TARGET/ afterwards
#   --runs N          stop a target once its workers have run N inputs in all (MINUTES stays
#                     the limit); each worker runs its share, N / WORKERS rounded up
# Environment: FUZZ_RUNNER, a command the binaries run under (e.g. a dynamic loader with its
# --library-path, for binaries built on another machine); empty by default.
#
# The exit status is 1 when any target had a crash, an out-of-memory or a timeout, else 0.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/fuzz-lib.sh

usage() { sed -n '2,26p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 2 ]] || usage
TARGET=$1 MINUTES=$2
shift 2
[[ $MINUTES =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "fuzz-campaign: MINUTES must be a positive number, got '$MINUTES'" >&2; exit 2; }
WORKERS=$(nproc) BIN_DIR= OUT=build-fuzz/campaign UPDATE=0 RUNS=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --workers) WORKERS=$2; shift 2 ;;
    --bin-dir) BIN_DIR=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --update-corpus) UPDATE=1; shift ;;
    --runs) RUNS=$2; shift 2 ;;
    *) echo "fuzz-campaign: unknown option '$1'" >&2; usage ;;
  esac
done
[[ $WORKERS =~ ^[1-9][0-9]*$ ]] || { echo "fuzz-campaign: --workers must be a positive integer, got '$WORKERS'" >&2; exit 2; }
[[ $RUNS =~ ^[0-9]+$ ]] || { echo "fuzz-campaign: --runs must be a whole number, got '$RUNS'" >&2; exit 2; }
PER_WORKER=()
[[ $RUNS -gt 0 ]] && PER_WORKER=(-runs=$(((RUNS + WORKERS - 1) / WORKERS)))
SECONDS_EACH=$(awk -v m="$MINUTES" 'BEGIN { s = int(m * 60 + 0.5); print (s < 1 ? 1 : s) }')

# The binaries: built here unless --bin-dir names a folder of prebuilt ones.
if [[ -z $BIN_DIR ]]; then
  BIN_DIR=build-fuzz
  [[ -f build-fuzz/build.ninja ]] || fuzz_configure build-fuzz >/dev/null
  mapfile -t ALL < <(fuzz_targets build-fuzz)
  if [[ $TARGET == all ]]; then want=("${ALL[@]}"); else want=("$TARGET"); fi
  for t in "${want[@]}"; do
    [[ " ${ALL[*]} " == *" $t "* ]] || { echo "fuzz-campaign: no fuzz target '$t' (known: ${ALL[*]})" >&2; exit 2; }
  done
  cmake --build build-fuzz -j "$(nproc)" --target "${want[@]}" >/dev/null
else
  mapfile -t ALL < <(cd "$BIN_DIR" && ls -- *_fuzz 2>/dev/null | sort)
fi
if [[ $TARGET == all ]]; then TARGETS=("${ALL[@]}"); else TARGETS=("$TARGET"); fi
for t in "${TARGETS[@]}"; do
  [[ -x $BIN_DIR/$t ]] || { echo "fuzz-campaign: no fuzz target '$t' in $BIN_DIR (known: ${ALL[*]})" >&2; exit 2; }
done

read -r -a RUNNER <<<"${FUZZ_RUNNER:-}"
count() { find "$1" -maxdepth 1 -type f -name "$2-*" | wc -l; }

# One worker: runs the target until the campaign's end (or its share of --runs), again after
# each defect (at most 100 times). Its logs are DIR/w<K>.<run>.log.
worker() {
  local t=$1 dir=$2 k=$3 end=$4 n=0 left rc own
  mapfile -t own < <(fuzz_target_flags "$t")
  while left=$((end - $(date +%s))) && [[ $left -gt 0 && $n -lt 100 ]]; do
    rc=0
    "${RUNNER[@]}" "$BIN_DIR/$t" "$dir/corpus" -max_total_time="$left" "${PER_WORKER[@]}" "${FUZZ_FLAGS[@]}" "${own[@]}" \
      -print_final_stats=1 -artifact_prefix="$dir/artifacts/" >"$dir/w$k.$n.log" 2>&1 || rc=$?
    n=$((n + 1))
    [[ $rc -eq 0 ]] && break  # its time or its runs are done; non-zero: a defect, go on
  done
  return 0
}

# The executions of all the workers' runs (libFuzzer's final stats).
executions() {
  cat "$1"/w*.log 2>/dev/null | sed -nE 's/^stat::number_of_executed_units: ([0-9]+).*/\1/p' |
    awk '{ s += $1 } END { printf "%d", s }'
}

mkdir -p "$OUT"
[[ -f $OUT/results.tsv ]] ||
  printf 'target\tminutes\tworkers\texecutions\tcrashes\tooms\ttimeouts\tcorpus_before\tcorpus_after\n' >"$OUT/results.tsv"
status=0
for t in "${TARGETS[@]}"; do
  dir=$OUT/$t
  rm -rf "$dir" && mkdir -p "$dir/artifacts"
  fuzz_seed "$t" "$dir/corpus"
  before=$(ls "$dir/corpus" | wc -l)
  end=$(($(date +%s) + SECONDS_EACH))
  pids=()
  for ((k = 0; k < WORKERS; k++)); do
    worker "$t" "$dir" "$k" "$end" &
    pids+=($!)
  done
  wait "${pids[@]}" || true
  execs=$(executions "$dir")
  crashes=$(count "$dir/artifacts" crash) ooms=$(count "$dir/artifacts" oom) timeouts=$(count "$dir/artifacts" timeout)
  after=$(ls "$dir/corpus" | wc -l)
  if [[ $UPDATE == 1 ]]; then
    dest=tests/fixtures/fuzz/$t
    mkdir -p "$dir/min"
    "${RUNNER[@]}" "$BIN_DIR/$t" -merge=1 "${FUZZ_FLAGS[@]}" "$dir/min" "$dir/corpus" >"$dir/merge.log" 2>&1
    rm -rf "$dest" && mkdir -p "$dest" && cp "$dir/min/"* "$dest/"
    after=$(ls "$dest" | wc -l)
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$MINUTES" "$WORKERS" "$execs" "$crashes" "$ooms" "$timeouts" \
    "$before" "$after" | tee -a "$OUT/results.tsv"
  if [[ $((crashes + ooms + timeouts)) -gt 0 ]]; then
    echo "fuzz-campaign: $t: defects in $dir/artifacts/ (logs $dir/w*.log)" >&2
    status=1
  fi
done
exit $status
