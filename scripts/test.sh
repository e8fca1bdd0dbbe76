#!/usr/bin/env bash
# The CI entry point (.ci/run). Stages:
#   0. scripts/check-deps.sh      include-graph lint                       (1 result)
#      scripts/check-function-length.sh  no C++ function over 120 lines    (1 result)
#   1. Release build in build/     + ctest; the *Slow* tests run in the background during
#      stages 2-3, which run under nice 10                     (1 result per test)
#      (*Slow*: the real-Slurm scenarios, and the long statistical checks of a month's queue
#      whose code paths smaller tests exercise under ASan; 25-35x slower there at -O0)
#   2. clang ASan+UBSan build in build-asan/ (-O1, with libFuzzer coverage: one sanitized
#      tree for stages 2 and 3) + ctest, tests named *Slow* excluded     (1 result per test)
#      The tree is built with -DORRERY_DEV_CHECKS=ON: every DEV_CHECKS_EVERY-th queue walk of
#      each scheduler is replayed by the plain reference walk and a difference aborts
#      (docs/design/components.md, "The cycle's contract"; the cost: docs/benchmarks.md)
#   3. every *_fuzz target of build-asan/ run for FUZZ_SECONDS (default 12) s, two at a
#      time, from its committed corpus, with the allocation and memory limits of
#      scripts/fuzz-lib.sh; logs and crash inputs in build-asan/fuzz/   (1 result per target)
# A build failure counts as one failed result of its stage. The last line is
# "N passed, N failed"; the exit status is non-zero if anything failed.
#
# Environment: JOBS (default nproc), FUZZ_SECONDS (default 12), ORRERY_TEST_STAGES
# (default "deps release asan fuzz": run a subset, e.g. "release"), DEV_CHECKS_EVERY (default
# 4: stage 2 compares every 4th walk of each scheduler, the first included; 1: every walk, about
# 1.5x the time of the test binaries that walk most).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
source scripts/fuzz-lib.sh

JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-12}
DEV_CHECKS_EVERY=${DEV_CHECKS_EVERY:-4}
STAGES=${ORRERY_TEST_STAGES:-"deps release asan fuzz"}
PASSED=0
FAILED=0
FAILURES=()
START=$SECONDS

stage() { echo; echo "=== [$(( SECONDS - START ))s] $* ==="; }
fail() { FAILED=$((FAILED + 1)); FAILURES+=("$1"); echo "FAILED: $1"; }
pass() { PASSED=$((PASSED + 1)); }
want() { [[ " $STAGES " == *" $1 "* ]]; }

launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi

# Adds ctest's counts from the log in $1 (summary "NN% tests passed, F tests failed out of T").
count_ctest() {
  local log=$1 stage=$2 summary total failed
  summary=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1)
  if [[ -z $summary ]]; then
    if grep -q 'No tests were found' "$log"; then return 0; fi
    fail "$stage: ctest produced no summary"
    return 0
  fi
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")
  failed=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$summary")
  PASSED=$((PASSED + total - failed))
  FAILED=$((FAILED + failed))
  if [[ $failed -gt 0 ]]; then
    FAILURES+=("$stage: $failed test(s)")
  fi
}

stage "install dependencies"
if ! bash scripts/install-deps.sh; then
  echo "0 passed, 1 failed"
  exit 1
fi

if want deps; then
  stage "stage 0: lints (scripts/check-deps.sh, scripts/check-function-length.sh)"
  if bash scripts/check-deps.sh; then pass; else fail "check-deps"; fi
  if bash scripts/check-function-length.sh; then pass; else fail "check-function-length"; fi
fi

# The Slow tests (real Slurm: mostly waiting for sleep jobs) run in the background while the
# later, CPU-bound stages build and run at a lower priority (nice), so that the Slurm
# daemons keep their timing. SLOW_PID is waited for before the final count.
SLOW_PID=
if want release; then
  stage "stage 1: Release build (build/) + ctest"
  if cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DORRERY_TESTS=ON -DORRERY_BENCH=ON -DORRERY_PYTHON=ON "${launcher[@]}" &&
     cmake --build build -j "$JOBS"; then
    log=build/ctest-release.log
    (cd build && ctest --output-on-failure -j2 --timeout 900 -E 'Slow') 2>&1 | tee "$log"
    count_ctest "$log" "release"
    slow_log=build/ctest-release-slow.log
    if want asan || want fuzz; then
      echo "--- the Slow tests run in the background (log $slow_log); their results come at the end"
      (cd build && ctest --output-on-failure -j2 --timeout 900 -R 'Slow') >"$slow_log" 2>&1 &
      SLOW_PID=$!
    else
      (cd build && ctest --output-on-failure -j2 --timeout 900 -R 'Slow') 2>&1 | tee "$slow_log"
      count_ctest "$slow_log" "release (Slow)"
    fi
  else
    fail "release build"
  fi
fi

# Below the background Slow tests' priority (see SLOW_PID).
bg=()
if [[ -n $SLOW_PID ]]; then bg=(nice -n 10); fi

# Stages 2 and 3 share one sanitized tree; it is configured and built once, for whichever
# of them runs (stage 3 builds only the fuzz targets when stage 2 is left out).
SAN=build-asan FZ=build-asan/fuzz
san_ready=
san_build() {  # san_build [targets...]: configures and builds $SAN; false on failure
  [[ -n $san_ready ]] && return 0
  sanitize_configure "$SAN" "${launcher[@]}" -DORRERY_DEV_CHECKS=ON -DORRERY_DEV_CHECKS_EVERY="$DEV_CHECKS_EVERY" || return 1
  "${bg[@]}" cmake --build "$SAN" -j "$JOBS" ${1:+--target "$@"} && san_ready=1
}

if want asan; then
  stage "stage 2: clang ASan+UBSan build ($SAN/) + ctest, excluding tests named *Slow*"
  if san_build; then
    log=$SAN/ctest-asan.log
    (cd "$SAN" &&
     ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       "${bg[@]}" ctest --output-on-failure -j2 --timeout 900 -E 'Slow') 2>&1 | tee "$log"
    count_ctest "$log" "asan"
  else
    fail "asan build (needs clang and libclang-rt-14-dev)"
  fi
fi

# Runs one fuzz target for FUZZ_SECONDS under the shared limits (scripts/fuzz-lib.sh: one
# allocation under FUZZ_MALLOC_LIMIT_MB, the process under FUZZ_RSS_LIMIT_MB); writes
# $FZ/T.log, T.seeds and T.rc. Seeds: fuzz_seed (the committed corpus
# tests/fixtures/fuzz/<target>/ first); the working corpus is a copy under $FZ/.
fuzz_one() {
  local t=$1 corpus=$FZ/corpus/$1 rc=0 own
  mapfile -t own < <(fuzz_target_flags "$t")
  mkdir -p "$FZ/artifacts/$t"
  fuzz_seed "$t" "$corpus"
  ls "$corpus" | wc -l >"$FZ/$t.seeds"
  "${bg[@]}" "$SAN/$t" "$corpus" -max_total_time="$FUZZ_SECONDS" "${FUZZ_FLAGS[@]}" "${own[@]}" \
    -print_final_stats=1 -artifact_prefix="$ROOT/$FZ/artifacts/$t/" \
    >"$FZ/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$FZ/$t.rc"
}

if want fuzz; then
  stage "stage 3: every *_fuzz target of $SAN/ for ${FUZZ_SECONDS}s"
  if [[ -z $san_ready ]] && ! sanitize_configure "$SAN" "${launcher[@]}" -DORRERY_DEV_CHECKS=ON -DORRERY_DEV_CHECKS_EVERY="$DEV_CHECKS_EVERY" >/dev/null; then
    fail "fuzz configure (needs clang and libclang-rt-14-dev)"
  else
    mkdir -p "$FZ"
    mapfile -t targets < <(fuzz_targets "$SAN")
    if [[ ${#targets[@]} -eq 0 ]]; then
      echo "no *_fuzz targets"
    elif ! san_build "${targets[@]}"; then
      fail "fuzz build"
    else
      # Two targets at a time (one per core); results are read back in target order.
      # (Only these pids are waited for: the background Slow tests keep running.)
      all=() running=()
      for t in "${targets[@]}"; do
        while [[ ${#running[@]} -ge 2 ]]; do
          wait -n "${running[@]}"
          alive=()
          for p in "${running[@]}"; do kill -0 "$p" 2>/dev/null && alive+=("$p"); done
          running=("${alive[@]+"${alive[@]}"}")
        done
        fuzz_one "$t" &
        running+=($!) all+=($!)
      done
      wait "${all[@]}"
      for t in "${targets[@]}"; do
        echo "--- $t ($(cat "$FZ/$t.seeds") seeds)"
        if [[ $(cat "$FZ/$t.rc") == 0 ]]; then
          tail -n 3 "$FZ/$t.log"
          pass
        else
          tail -n 60 "$FZ/$t.log"
          fail "fuzz $t (log $FZ/$t.log, crash input in $FZ/artifacts/$t/)"
        fi
      done
    fi
  fi
fi

if [[ -n $SLOW_PID ]]; then
  stage "stage 1 (continued): the Slow tests (build/ctest-release-slow.log)"
  wait "$SLOW_PID"
  cat build/ctest-release-slow.log
  count_ctest build/ctest-release-slow.log "release (Slow)"
fi

echo
echo "=== done in $(( SECONDS - START ))s ==="
for f in "${FAILURES[@]+"${FAILURES[@]}"}"; do echo "failed: $f"; done
echo "$PASSED passed, $FAILED failed"
[[ $FAILED -eq 0 ]]
