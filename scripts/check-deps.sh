#!/usr/bin/env bash
# Include-graph lint: every `#include "<folder>/..."` in src/<folder> must name the folder
# itself or one of its allowed dependencies (ARCHITECTURE.md; mirrors the orrery_module
# DEPS in CMakeLists.txt). Prints each violation as file:line and exits 1 if any.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

declare -A ALLOWED=(
  [base]=""
  [model]="base"
  [trace]="model base"
  [config]="slurm model base"
  [slurm]="base"
  [workload]="trace model base"
  [predict]="model base"
  [semantic]="predict llm model base"
  [sched/framework]="predict model base"
  [sched/plugins]="sched/framework slurm predict plan model base"
  [sim]="sched/framework sched/plugins slurm predict plan trace config model base"
  [eval]="plan model base"
  [analysis]="trace model base"
  [plan]="base"
  [rl]="plan model base"
  [logs]="llm base"
  [llm]="base"
  [signals]="sim semantic logs llm sched/framework sched/plugins slurm predict plan trace config model base"
  [live]="semantic logs llm sched/framework sched/plugins slurm plan predict config model base"
  [run]="sim analysis sched/framework sched/plugins slurm predict plan trace config model base"
  [python]="run workload logs semantic llm analysis sim sched/framework sched/plugins slurm predict plan trace config model base"
  [sweep]="run workload sim analysis sched/framework sched/plugins slurm predict plan trace config model base"
  [cli]="python sweep run signals sim live analysis logs llm workload config trace sched/framework sched/plugins slurm predict plan rl semantic eval model base"
)
# Longest prefixes first so sched/framework wins over a bare "sched".
FOLDERS=(sched/framework sched/plugins base model trace config slurm workload predict semantic sim live analysis plan rl eval logs llm signals run sweep python cli)

folder_of() {  # path relative to src/ -> module folder, or empty
  local p=$1 f
  for f in "${FOLDERS[@]}"; do
    if [[ $p == "$f/"* ]]; then echo "$f"; return; fi
  done
}

violations=0
checked=0
while IFS= read -r -d '' file; do
  rel=${file#src/}
  from=$(folder_of "$rel")
  [[ -n $from ]] || { echo "check-deps: $file is in no known module folder" >&2; violations=$((violations + 1)); continue; }
  while IFS=: read -r line inc; do
    to=$(folder_of "$inc")
    [[ -n $to ]] || continue  # system or third-party header
    checked=$((checked + 1))
    [[ $to == "$from" ]] && continue
    ok=0
    for a in ${ALLOWED[$from]}; do [[ $a == "$to" ]] && ok=1; done
    if [[ $ok -eq 0 ]]; then
      echo "$file:$line: $from may not include $to (\"$inc\"); allowed: ${ALLOWED[$from]:-(std only)}"
      violations=$((violations + 1))
    fi
  done < <(grep -n -o -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "$file" |
           sed -E 's/^([0-9]+):.*"([^"]+)"$/\1:\2/')
done < <(find src -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)

# Plugins see the core through its contract (src/sched/framework/api/: the extension points,
# the handle, the decisions), never the engine (src/sched/framework/internal/: the scheduler,
# its forecast, the drivers' reading rule); their tests and benchmarks may.
engine=0
while IFS= read -r hit; do
  echo "$hit: a plugin includes the engine; include the contract (sched/framework/api/) instead"
  engine=$((engine + 1))
done < <(grep -n -E '#[[:space:]]*include[[:space:]]*"sched/framework/internal/' src/sched/plugins/*.h src/sched/plugins/*.cc |
         grep -v -E '^src/sched/plugins/[a-z_]+_(test|bench)\.cc:')

# A managed job's state changes only in src/live/job_book.cc (JobBook::Move / Enter over the
# tables of src/live/job_state.h; LiveJob's state has no public setter): any other assignment
# of a job state goes around them (views.cc fills the API's QueueEntry).
state_writes=0
while IFS= read -r hit; do
  echo "$hit: a live job's state is written outside src/live/job_book.cc (use JobBook::Move or Enter)"
  state_writes=$((state_writes + 1))
done < <(grep -n -E '(\.|->)state_? = (JobState::|\*?next|r\.tr\.next|tr\.next|first)' src/live/*.cc |
         grep -v -E '^src/live/(job_book\.cc|views\.cc|[a-z_]+_test\.cc):')

if [[ $violations -gt 0 || $engine -gt 0 || $state_writes -gt 0 ]]; then
  echo "check-deps: $violations forbidden include(s), $engine plugin include(s) of the engine," \
       "$state_writes live job state write(s) outside job_book.cc"
  exit 1
fi
echo "check-deps: $checked project includes checked, dependency direction respected; plugins see only the core's" \
     "contract; live job states change only in job_book.cc"
