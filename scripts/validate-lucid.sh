#!/usr/bin/env bash
# Lucid evaluation (docs/validation/sharing.md §G): Lucid with and without packing against FIFO, QSSF, Tiresias
# and EASY on Philly part A with half-size VCs and on a generated Helios-Venus month.
# Usage: scripts/validate-lucid.sh [ORRERY_BINARY] [OUT_DIR]   (needs ../shared or ORRERY_SHARED)
set -euo pipefail
BIN=${1:-build/orrery}
R=${2:-out/validation-lucid}
SH=${ORRERY_SHARED:-../shared}
export ORRERY_SHARED_DIR=$SH
mkdir -p "$R/traces"
"$BIN" import --from philly "$SH/traces/philly-pollux/philly.part-A.submit-before-2017-11-01.csv" \
  --out "$R/traces/philly.csv" >/dev/null
"$BIN" predict interference --folds 5 --seed 1 --json "$R/interference-cv.json"
POL=fifo,qssf:estimator=noisy-oracle,qssf:estimator=xgboost,easy:estimator=oracle,tiresias,tiresias:preset=lucid,lucid,lucid:pack=false
"$BIN" simulate "$R/traces/philly.csv" --cluster configs/philly-half.toml --policy "$POL" \
  --out-dir "$R/E1-philly-half" --vc-table
VPOL=fifo,qssf:estimator=noisy-oracle,qssf:estimator=xgboost,easy:estimator=walltime,tiresias,tiresias:preset=lucid,lucid:profiler_vcs=vc8Gr+vcefl,lucid:profiler_vcs=vc8Gr+vcefl,pack=false
"$BIN" simulate --generate helios-venus --days 30 --policy "$VPOL" --out-dir "$R/E2-venus30" --vc-table
"$BIN" report "$R/E1-philly-half" --out "$R/E1-report" >/dev/null
"$BIN" report "$R/E2-venus30" --out "$R/E2-report" >/dev/null
