#!/usr/bin/env bash
# Validation experiments for the simulator (docs/validation/simulator.md). Runs every experiment
# with a built binary and writes raw outputs plus Markdown tables to a results folder.
#
#   scripts/validate.sh [ORRERY_BIN] [RESULTS_DIR]
#
#   ORRERY_BIN   the orrery binary (default build/orrery, as built by scripts/run-main.sh)
#   RESULTS_DIR  output folder (default out/validation; /out/ is git-ignored); it is
#                emptied first
#
# Environment:
#   ORRERY_SHARED        shared data folder (default ../shared beside the repository):
#                        traces/, reference-runs/
#   ORRERY_COMMIT        commit to record when the tree is not a git checkout (e.g. an
#                        exported `git archive`); default: git rev-parse HEAD
#   ORRERY_SCENARIO_TEST the orrery_scenario_test binary for experiment A0 (default: next
#                        to ORRERY_BIN; skipped with a note when absent, e.g. a build
#                        configured with -DORRERY_TESTS=OFF)
#
# Needs bash, python3 (standard library only), sha256sum, gzip. Every command that
# produced a figure is appended to RESULTS_DIR/commands.log; the tables are in
# RESULTS_DIR/tables/*.md. Exit status is non-zero if a run fails or a check that the
# record claims (exact match, determinism) does not hold.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)

BIN=${1:-build/orrery}
R=${2:-out/validation}
SHARED=$(realpath -m "${ORRERY_SHARED:-$ROOT/../shared}")
[[ "$BIN" = /* ]] || BIN="$ROOT/$BIN"
[[ "$R" = /* ]] || R="$ROOT/$R"
SCEN_TEST=${ORRERY_SCENARIO_TEST:-$(dirname "$BIN")/orrery_scenario_test}
REF="$SHARED/reference-runs/helios-artifact-philly"
PHILLY_SRC="$SHARED/traces/philly-pollux/philly.part-A.submit-before-2017-11-01.csv"
SWF_SRC="$SHARED/traces/pwa-hpc2n-excerpt/hpc2n.swf"

die() { echo "validate.sh: $*" >&2; exit 1; }
[[ -x "$BIN" ]] || die "no orrery binary at $BIN (build it: scripts/run-main.sh, or pass its path)"
for f in "$REF/jobs.csv" "$PHILLY_SRC" "$SWF_SRC"; do [[ -f "$f" ]] || die "missing input $f (set ORRERY_SHARED)"; done
command -v python3 >/dev/null || die "python3 is required"

rm -rf "$R"
mkdir -p "$R/traces" "$R/tables" "$R/runs"
LOG="$R/commands.log"
FAILED=0
check_fail() { echo "CHECK FAILED: $*" | tee -a "$R/tables/checks.md" >&2; FAILED=1; }

# run NAME CMD...: logs the command, runs it, keeps stdout in runs/NAME.txt.
run() {
  local name=$1; shift
  echo "$*" >>"$LOG"
  echo "[validate] $name: $*" >&2
  local t0=$SECONDS
  "$@" >"$R/runs/$name.txt"
  echo "  ($((SECONDS - t0)) s)" >&2
}

# --- environment -------------------------------------------------------------------
{
  echo "# Environment"
  echo
  echo "- date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')"
  if [[ -n "${ORRERY_COMMIT:-}" ]]; then
    echo "- commit: $ORRERY_COMMIT (given by ORRERY_COMMIT)"
  else
    echo "- commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$( [[ -n "$(git status --porcelain -- src CMakeLists.txt 2>/dev/null)" ]] && echo ' (src/ or CMakeLists.txt has uncommitted changes)')"
  fi
  echo "- binary: $BIN"
  echo "- binary sha256: $(sha256sum "$BIN" | cut -d' ' -f1)"
  echo "- version: $("$BIN" --version 2>&1 | head -1)"
  echo "- host: $(uname -sm), $(nproc) CPUs"
  echo "- shared data: $SHARED"
} >"$R/tables/environment.md"

# --- helpers (Python) ----------------------------------------------------------------
PY="$R/helpers.py"
cat >"$PY" <<'EOF'
import csv, gzip, json, math, sys

def pct(v, p):  # nearest rank, as src/analysis/metrics.cc
    v = sorted(v); k = math.ceil(p * len(v)); return v[max(0, min(len(v) - 1, k - 1))]

def ranks(v):
    o = sorted(range(len(v)), key=lambda i: v[i]); r = [0.0] * len(v); i = 0
    while i < len(o):
        j = i
        while j + 1 < len(o) and v[o[j + 1]] == v[o[i]]: j += 1
        for k in range(i, j + 1): r[o[k]] = (i + j) / 2 + 1
        i = j + 1
    return r

def pearson(a, b):
    n = len(a); ma = sum(a) / n; mb = sum(b) / n
    sab = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    sa = math.sqrt(sum((x - ma) ** 2 for x in a)); sb = math.sqrt(sum((y - mb) ** 2 for y in b))
    return sab / (sa * sb) if sa and sb else float('nan')

def canonical_rows(path):
    return csv.DictReader(l for l in open(path) if not l.startswith('#'))

def h(s):  # seconds -> readable
    s = float(s)
    if s < 100: return f'{s:.1f} s'
    if s < 6000: return f'{s/60:.1f} min'
    if s < 48 * 3600: return f'{s/3600:.2f} h'
    return f'{s/86400:.2f} d'

def ref_trace(ref_jobs, out):
    """Reference input (job_id,submit_sec,duration,gpu_num,vc,orig_row) -> canonical trace, ids kept."""
    with open(out, 'w') as f:
        f.write('#orrery-trace v1\n#origin=helios-reference\n#epoch_unix=1504521041\n')
        f.write('id,source_id,user,vc,name,submit,duration,walltime,start,end,gpus,gpu_milli,gpu_types,nodes,cpu_milli,mem_mib,state\n')
        for r in csv.DictReader(open(ref_jobs)):
            f.write(f"{r['job_id']},row{r['orig_row']},,{r['vc']},,{r['submit_sec']},{r['duration']},,,,{r['gpu_num']},1000,,0,0,0,UNKNOWN\n")

def load_ref(ref_dir, p):
    out = {}
    with gzip.open(f'{ref_dir}/result_{p}.csv.gz', 'rt') as f:
        for r in csv.DictReader(f): out[int(r['job_id'])] = (int(r['start']), int(r['end']), int(r['submit']))
    return out

def diff_vs_ref(ref_dir, p, jobs_csv, by='id'):
    """Per-job start/end vs the reference. by='id': job_id = reference id (reference-built trace);
    by='order': the finished rows in order (imported trace, whose 8 rejected 23dbec jobs are dropped)."""
    ref = load_ref(ref_dir, p)
    rows = [r for r in csv.DictReader(open(jobs_csv)) if r['status'] == 'finished']
    mism = 0; jct = wait = rj = rw = 0.0
    for k, r in enumerate(rows):
        i = int(r['job_id']) if by == 'id' else k
        s, e, sub = ref[i]
        if int(r['submit']) != sub: raise SystemExit(f'{jobs_csv}: row {k} submit {r["submit"]} != reference {sub}')
        if (int(r['start']), int(r['end'])) != (s, e): mism += 1
        jct += int(r['jct']); wait += int(r['queue_delay']); rj += e - sub; rw += s - sub
    n = len(rows)
    if n != len(ref): raise SystemExit(f'{jobs_csv}: {n} finished jobs, reference has {len(ref)}')
    return dict(jobs=n, mismatched=mism, jct=jct / n, wait=wait / n, ref_jct=rj / n, ref_wait=rw / n)

def cmd_reftrace(a): ref_trace(a[0], a[1])

def cmd_refdiff(a):
    ref_dir, title = a[0], a[1]
    print(f'**{title}**\n')
    print('| policy | jobs | jobs with start/end ≠ reference | avg JCT s (ours) | avg JCT s (ref) | avg queue s (ours) | avg queue s (ref) |')
    print('|---|---:|---:|---:|---:|---:|---:|')
    for spec in a[2:]:
        p, by, path = spec.split('=', 2)
        d = diff_vs_ref(ref_dir, p, path, by)
        print(f"| {p} | {d['jobs']:,} | {d['mismatched']:,} | {d['jct']:,.6f} | {d['ref_jct']:,.6f} | {d['wait']:,.6f} | {d['ref_wait']:,.6f} |")
    print()

def cmd_readme(a):
    """Means of helios-compat runs on the imported trace vs the reference README table."""
    readme = {'fifo': (13792.309305, 122.287069), 'sjf': (13740.16, 70.13), 'qssf': (13745.56, 75.53)}
    s = json.load(open(a[0]))
    print('| run | finished | rejected | avg JCT s | README avg JCT s | avg queue s | README avg queue s | makespan s |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|')
    for r in s['runs']:
        base = r['policy'].split(':')[0].split(' ')[0]
        rj, rw = readme[base]
        print(f"| {r['policy']} | {r['jobs']['finished']:,} | {r['jobs']['rejected']} | {r['jct_s']['mean']:,.3f} | {rj:,.2f} | {r['queue_delay_s']['mean']:,.3f} | {rw:,.2f} | {r['makespan_s']:,} |")
    reasons = {}
    for r in s['runs']: reasons.update(r['not_run_reasons'])
    print(f"\nnot run: {reasons}\n")

def cmd_policy_table(a):
    s = json.load(open(a[1]))
    print(f'**{a[0]}** — {s["scenario"]}, cluster {s["cluster"]}, {s["jobs"]:,} jobs, seed {s["seed"]}\n')
    print('| policy | finished | not run | avg JCT | p99 JCT | avg queue | p99 queue | avg queue ≤8 GPU | avg queue >8 GPU | avg bounded slowdown | preemptions | GPU util | makespan |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    fifo = None
    for r in s['runs']:
        if r['policy'] == 'fifo': fifo = r['jct_s']['mean']
        nr = r['jobs']['rejected'] + r['jobs']['skipped']
        print(f"| {r['policy']}{' (oracle)' if r['uses_oracle_durations'] else ''} | {r['jobs']['finished']:,} | {nr} | {h(r['jct_s']['mean'])} | {h(r['jct_s']['p99'])} | "
              f"{h(r['queue_delay_s']['mean'])} | {h(r['queue_delay_s']['p99'])} | {h(r['small_jobs']['queue_delay_s']['mean'])} | {h(r['large_jobs']['queue_delay_s']['mean'])} | "
              f"{r['bounded_slowdown']['mean']:,.2f} | {r['preemptions']:,} | {100*r['gpu_utilization']:.1f} % | {h(r['makespan_s'])} |")
    if fifo:
        parts = []
        for r in s['runs']:
            if r['policy'] != 'fifo' and r['jct_s']['mean'] > 0:
                parts.append(f"{r['policy']} {fifo / r['jct_s']['mean']:.2f}×")
        print(f"\navg JCT of FIFO ÷ avg JCT of: {', '.join(parts)}\n")

def cmd_swf(a):
    trace, runs = a[0], a[1:]
    rec = {}
    for r in canonical_rows(trace):
        if r['start'] != '': rec[r['id']] = int(r['start']) - int(r['submit'])
    print('| waits (s) | jobs | mean | median | p95 | Pearson r vs recorded | Spearman ρ vs recorded |')
    print('|---|---:|---:|---:|---:|---:|---:|')
    first = True
    for run in runs:
        name, path = run.split('=', 1)
        sim = {r['job_id']: int(r['queue_delay']) for r in csv.DictReader(open(path)) if r['status'] == 'finished'}
        ids = [i for i in sim if i in rec]
        x = [rec[i] for i in ids]; y = [sim[i] for i in ids]
        if first:
            print(f'| recorded (SWF wait = recorded start − submit) | {len(x):,} | {sum(x)/len(x):,.0f} | {pct(x,.5):,} | {pct(x,.95):,} | — | — |')
            first = False
        print(f'| simulated {name} | {len(y):,} | {sum(y)/len(y):,.0f} | {pct(y,.5):,} | {pct(y,.95):,} | {pearson(x,y):.3f} | {pearson(ranks(x),ranks(y)):.3f} |')
    # Recorded schedule of the excerpt alone: was there room when the long waits began?
    rows = [r for r in canonical_rows(trace) if r['start'] != '' and r['end'] != '']
    ev = sorted([(int(r['start']), int(r['gpus'])) for r in rows] + [(int(r['end']), -int(r['gpus'])) for r in rows],
                key=lambda e: (e[0], e[1]))
    import bisect
    ts, busy, b, peak, area = [], [], 0, 0, 0
    t0 = min(int(r['submit']) for r in rows); last = t0
    for t, d in ev:
        area += b * (t - last); last = t; b += d; peak = max(peak, b); ts.append(t); busy.append(b)
    long_w = room = 0
    for r in rows:
        s = int(r['submit'])
        if int(r['start']) - s <= 3600: continue
        long_w += 1
        i = bisect.bisect_right(ts, s) - 1
        if 240 - (busy[i] if i >= 0 else 0) >= int(r['gpus']): room += 1
    print(f'\nrecorded schedule of the excerpt alone: peak {peak} of 240 processors busy, mean utilisation {100*area/(240*(last-t0)):.1f} %; '
          f'{long_w:,} jobs waited > 1 h, and for {room:,} of them ({100*room/long_w:.0f} %) enough processors were idle at submit time '
          f'counting only the excerpt\'s jobs.\n')

def cmd_qssf_targets(a):
    """QSSF targets: per run, avg queue of each QSSF estimator vs FIFO (cut) and vs SJF-oracle (ratio)."""
    print('| workload | mode | FIFO avg queue | SJF-oracle avg queue | QSSF estimator | avg queue | cut vs FIFO | ÷ SJF-oracle |')
    print('|---|---|---:|---:|---|---:|---:|---:|')
    for spec in a:
        label, mode, path = spec.split('=', 2)
        s = json.load(open(path)); runs = {r['policy'].split(',blocking')[0]: r for r in s['runs']}
        base = lambda k: runs[k]['queue_delay_s']['mean']
        fifo = base(next(k for k in runs if k.startswith('fifo'))); sjf = base(next(k for k in runs if k.startswith('sjf')))
        for k, r in runs.items():
            if not k.startswith('qssf'): continue
            q = r['queue_delay_s']['mean']; est = k.split('estimator=')[1]
            print(f"| {label} | {mode} | {h(fifo)} | {h(sjf)} | {est} | {h(q)} | {100*(1-q/fifo):.0f} % | {q/sjf:.2f} |")
    print()

def cmd_sha(a):
    print('| file | run 1 sha256 | run 2 sha256 | identical |')
    print('|---|---|---|---|')
    ok = True
    import hashlib, os
    d1, d2 = a[0], a[1]
    files = []
    for root, _, fs in os.walk(d1):
        for f in fs: files.append(os.path.relpath(os.path.join(root, f), d1))
    for f in sorted(files):
        h1 = hashlib.sha256(open(os.path.join(d1, f), 'rb').read()).hexdigest()
        p2 = os.path.join(d2, f)
        h2 = hashlib.sha256(open(p2, 'rb').read()).hexdigest() if os.path.exists(p2) else 'missing'
        ok &= h1 == h2
        print(f'| {f} | `{h1[:16]}…` | `{h2[:16]}…` | {"yes" if h1 == h2 else "**NO**"} |')
    print()
    sys.exit(0 if ok else 3)

globals()['cmd_' + sys.argv[1]](sys.argv[2:])
EOF
py() { python3 "$PY" "$@"; }

# --- inputs ----------------------------------------------------------------------------
run import-philly "$BIN" import --from philly "$PHILLY_SRC" --out "$R/traces/philly.csv"
run import-hpc2n "$BIN" import --from swf --swf-procs-as-gpus "$SWF_SRC" --out "$R/traces/hpc2n.csv"
echo "python3 $PY reftrace $REF/jobs.csv $R/traces/helios-ref.csv" >>"$LOG"
py reftrace "$REF/jobs.csv" "$R/traces/helios-ref.csv"
PH="$R/traces/philly.csv"

# --- A. Helios reference (differential) -------------------------------------------------
A="$R/tables/A-helios-reference.md"
{
  echo "# A. Differential test against the Helios artifact simulator (Philly part A)"
  echo
} >"$A"
if [[ -x "$SCEN_TEST" ]]; then
  echo "$SCEN_TEST --gtest_filter='*HeliosReference*'" >>"$LOG"
  if "$SCEN_TEST" --gtest_filter='*HeliosReference*' >"$R/runs/A0-unit-test.txt" 2>&1; then
    echo "A0 unit test (tests/helios_reference_test.cc): $(grep -E '^\[  PASSED  \]' "$R/runs/A0-unit-test.txt")" >>"$A"
  else
    echo "A0 unit test (tests/helios_reference_test.cc): FAILED, see runs/A0-unit-test.txt" >>"$A"
    check_fail "unit test HeliosReference"
  fi
else
  echo "A0 unit test: skipped (no $SCEN_TEST; configure with -DORRERY_TESTS=ON and build orrery_scenario_test)" >>"$A"
fi
echo >>"$A"

# A1: the reference's own input, tie order and QSSF estimates, through the CLI.
RT="$R/traces/helios-ref.csv"
EST="qssf:estimator=table:$REF/qssf_estimates.csv"
run A1-compat-tie "$BIN" simulate "$RT" --cluster configs/philly.toml --helios-compat --tie-order "$REF/order_helios.csv" \
  --policy fifo,sjf,"$EST" --out-dir "$R/A1-compat-tie" --quiet
run A2-compat-notie "$BIN" simulate "$RT" --cluster configs/philly.toml --helios-compat \
  --policy fifo,sjf,"$EST" --out-dir "$R/A2-compat-notie" --quiet
run A3-event-tie "$BIN" simulate "$RT" --cluster configs/philly.toml --tie-order "$REF/order_helios.csv" \
  --policy fifo,sjf,"$EST" --out-dir "$R/A3-event-tie" --quiet
QS=$(ls "$R/A1-compat-tie" | grep '^qssf')
{
  py refdiff "$REF" "A1: --helios-compat, reference tie order, reference QSSF estimates" \
    fifo=id="$R/A1-compat-tie/fifo/jobs.csv" sjf=id="$R/A1-compat-tie/sjf/jobs.csv" qssf=id="$R/A1-compat-tie/$QS/jobs.csv"
  py refdiff "$REF" "A2: --helios-compat, no tie order (trace order)" \
    fifo=id="$R/A2-compat-notie/fifo/jobs.csv" sjf=id="$R/A2-compat-notie/sjf/jobs.csv" qssf=id="$R/A2-compat-notie/$QS/jobs.csv"
  py refdiff "$REF" "A3: event-driven scheduler (no --helios-compat), reference tie order" \
    fifo=id="$R/A3-event-tie/fifo/jobs.csv" sjf=id="$R/A3-event-tie/sjf/jobs.csv" qssf=id="$R/A3-event-tie/$QS/jobs.csv"
} >>"$A"
# The record claims A1 matches every job.
if grep -A6 '^\*\*A1' "$A" | grep -E '^\| (fifo|sjf|qssf) ' | awk -F'|' '{gsub(/[ ,]/,"",$4); if ($4 != "0") bad=1} END {exit bad}'; then :; else
  check_fail "A1: some job differs from the reference"
fi

# A4: the imported trace (all 52,849 rows) with Orrery's own noisy-oracle QSSF estimates.
run A4-compat-import "$BIN" simulate "$PH" --cluster configs/philly.toml --helios-compat \
  --policy fifo,sjf,qssf:estimator=noisy-oracle --out-dir "$R/A4-compat-import"
{
  echo "**A4: imported trace, --helios-compat, Orrery's noisy-oracle QSSF (different RNG from the reference's estimates)**"
  echo
  py readme "$R/A4-compat-import/summary.json"
  py refdiff "$REF" "A4, per job (finished rows in trace order vs reference ids; QSSF not comparable job by job)" \
    fifo=order="$R/A4-compat-import/fifo/jobs.csv" sjf=order="$R/A4-compat-import/sjf/jobs.csv"
} >>"$A"

# --- B. All policies ---------------------------------------------------------------------
B="$R/tables/B-policies.md"
echo "# B. All policies" >"$B"
echo >>"$B"
POL_PH="fifo,sjf,srtf,qssf:estimator=noisy-oracle,easy:estimator=oracle"
POL_GEN="fifo,sjf,srtf,qssf:estimator=noisy-oracle,easy:estimator=oracle,easy:estimator=walltime"
run B1-philly-half "$BIN" simulate "$PH" --cluster configs/philly-half.toml --policy "$POL_PH" --out-dir "$R/B1-philly-half"
run B2-philly "$BIN" simulate "$PH" --cluster configs/philly.toml --policy "$POL_PH" --out-dir "$R/B2-philly"
run B3-default "$BIN" simulate --out-dir "$R/B3-default"
run B4-venus30 "$BIN" simulate --generate helios-venus --days 30 --policy "$POL_GEN" --out-dir "$R/B4-venus30"
run B5-venus30-load0.5 "$BIN" simulate --generate helios-venus --days 30 --load 0.5 --policy "$POL_GEN" --out-dir "$R/B5-venus30-load0.5"
run B6-venus30-load1.5 "$BIN" simulate --generate helios-venus --days 30 --load 1.5 --policy "$POL_GEN" --out-dir "$R/B6-venus30-load1.5"
{
  py policy_table "B1: Philly part A on philly-half (1,408 GPUs)" "$R/B1-philly-half/summary.json"
  py policy_table "B2: Philly part A on philly (2,816 GPUs, the real VC sizes)" "$R/B2-philly/summary.json"
  py policy_table "B3: default scenario (\`orrery simulate\`, no arguments)" "$R/B3-default/summary.json"
  py policy_table "B4: generated Helios-Venus, 30 days, load 1" "$R/B4-venus30/summary.json"
  py policy_table "B5: generated Helios-Venus, 30 days, --load 0.5" "$R/B5-venus30-load0.5/summary.json"
  py policy_table "B6: generated Helios-Venus, 30 days, --load 1.5" "$R/B6-venus30-load1.5/summary.json"
} >>"$B"

# --- C. HPC2N SWF: simulated vs recorded waits --------------------------------------------
C="$R/tables/C-hpc2n.md"
run C1-hpc2n "$BIN" simulate "$R/traces/hpc2n.csv" --cluster configs/hpc2n.toml \
  --policy fifo,easy:estimator=walltime,easy:estimator=oracle --out-dir "$R/C1-hpc2n"
{
  echo "# C. HPC2N (SWF): simulated vs recorded waits"
  echo
  py policy_table "C1: HPC2N excerpt on hpc2n (240 processors as GPUs)" "$R/C1-hpc2n/summary.json"
  py swf "$R/traces/hpc2n.csv" fifo="$R/C1-hpc2n/fifo/jobs.csv" "easy (walltime)=$R/C1-hpc2n/easy_estimator_walltime/jobs.csv" \
    "easy (oracle)=$R/C1-hpc2n/easy_estimator_oracle/jobs.csv"
} >>"$C"

# --- E. QSSF with learned estimators --------------------------------------
E="$R/tables/E-qssf.md"
EST="oracle noisy-oracle history user-stats xgboost blend"
pol() {  # pol SUFFIX: fifo, sjf (oracle) and QSSF with every estimator, each with SUFFIX appended
  local p="fifo$1,sjf$1" e
  for e in $EST; do p+=",qssf:estimator=$e${1/:/,}"; done
  echo "$p"
}
E_ARGS=()
for mode in blocking nonblocking; do
  sfx=""; [[ $mode == nonblocking ]] && sfx=":blocking=false"
  run "E-philly-half-$mode" "$BIN" simulate "$PH" --cluster configs/philly-half.toml --policy "$(pol "$sfx")" --out-dir "$R/E-philly-half-$mode"
  run "E-hpc2n-$mode" "$BIN" simulate "$R/traces/hpc2n.csv" --cluster configs/hpc2n.toml --policy "$(pol "$sfx")" --out-dir "$R/E-hpc2n-$mode"
  run "E-venus-$mode" "$BIN" simulate --generate helios-venus --days 30 --policy "$(pol "$sfx")" --out-dir "$R/E-venus-$mode"
  run "E-venus0.5-$mode" "$BIN" simulate --generate helios-venus --days 30 --load 0.5 --policy "$(pol "$sfx")" --out-dir "$R/E-venus0.5-$mode"
  E_ARGS+=("Philly part A, philly-half=$mode=$R/E-philly-half-$mode/summary.json"
           "HPC2N SWF=$mode=$R/E-hpc2n-$mode/summary.json"
           "generated Helios-Venus, load 1=$mode=$R/E-venus-$mode/summary.json"
           "generated Helios-Venus, load 0.5=$mode=$R/E-venus0.5-$mode/summary.json")
done
{
  echo "# E. QSSF with real estimators"
  echo
  py qssf_targets "${E_ARGS[@]}"
} >"$E"

# --- D. Determinism ----------------------------------------------------------------------
D="$R/tables/D-determinism.md"
echo "# D. Determinism (same command twice, byte for byte)" >"$D"
echo >>"$D"
det() {  # det LABEL ARGS...: runs `simulate ARGS --out-dir X` twice, compares every output file
  local label=$1; shift
  run "D-$label-1" "$BIN" simulate "$@" --quiet --out-dir "$R/D-$label/run1"
  run "D-$label-2" "$BIN" simulate "$@" --quiet --out-dir "$R/D-$label/run2"
  echo "**$label**: \`orrery simulate $* --quiet --out-dir …/run{1,2}\`" >>"$D"
  echo >>"$D"
  py sha "$R/D-$label/run1" "$R/D-$label/run2" >>"$D" || check_fail "determinism: $label differs between two runs"
  cmp -s "$R/runs/D-$label-1.txt" "$R/runs/D-$label-2.txt" || check_fail "determinism: $label stdout differs"
}
det default
det philly-half "$PH" --cluster configs/philly-half.toml --policy "$POL_PH"
det hpc2n "$R/traces/hpc2n.csv" --cluster configs/hpc2n.toml --policy fifo,easy:estimator=walltime
det philly-compat "$PH" --cluster configs/philly.toml --helios-compat --policy fifo,sjf,qssf:estimator=noisy-oracle
det random-placer "$PH" --cluster configs/philly-half.toml --policy fifo,srtf --placer random --seed 7
# The default scenario is `--generate helios-venus --days 30` with the default policies.
run D-default-explicit "$BIN" simulate --generate helios-venus --days 30 --policy fifo,sjf,srtf,qssf,easy --quiet \
  --out-dir "$R/D-default-explicit"
{
  echo "**default vs explicit**: \`orrery simulate\` vs \`orrery simulate --generate helios-venus --days 30 --policy fifo,sjf,srtf,qssf,easy\`"
  echo
} >>"$D"
py sha "$R/D-default/run1" "$R/D-default-explicit" >>"$D" || check_fail "default scenario != explicit --generate helios-venus --days 30"

if [[ -f "$R/tables/checks.md" ]]; then :; else echo "all checks passed" >"$R/tables/checks.md"; fi
cat "$R/tables/environment.md" "$R/tables/A-helios-reference.md" "$R/tables/B-policies.md" "$R/tables/C-hpc2n.md" \
  "$R/tables/E-qssf.md" "$R/tables/D-determinism.md" "$R/tables/checks.md" >"$R/tables/all.md"
echo "validate.sh: tables in $R/tables/ (all.md), commands in $LOG" >&2
exit "$FAILED"
