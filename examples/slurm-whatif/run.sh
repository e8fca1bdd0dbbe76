#!/usr/bin/env bash
# The fair-share "what if" of docs/slurm-whatif.md, end to end:
#   examples/slurm-whatif/run.sh [OUT_DIR]     (from the repository root, after the build)
# generates a month of a Helios-Venus-like workload at the site's scale, writes it as the site's
# sacct records and association listing, imports it, simulates the site's Slurm with fair share
# and with PriorityWeightFairshare=0, and writes the comparison report.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
orrery=${ORRERY:-$here/../../build/orrery}
out=${1:-/tmp/orrery-slurm-whatif}
mkdir -p "$out"
"$orrery" generate --preset helios-venus --days 30 --load 0.15 --seed 1 --out "$out/generated.csv"
python3 "$here/to_sacct.py" "$out/generated.csv" gpu-site "$out"
"$orrery" import --format sacct "$out/sacct.txt" --out "$out/trace.csv"
sed 's/^PriorityWeightFairshare=.*/PriorityWeightFairshare=0/' "$here/site.conf" >"$out/no-fairshare.conf"
"$orrery" simulate "$out/trace.csv" --cluster "$here/site.conf" --force --out-dir "$out/runs" \
  --policy "slurm:conf=$here/site.conf,accounts=$out/accounts.txt,slurm:conf=$out/no-fairshare.conf,accounts=$out/accounts.txt"
"$orrery" report "$out/runs" --out-dir "$out/report"
