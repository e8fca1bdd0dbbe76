# Sourced by scripts/test.sh (the CI fuzz stage) and scripts/fuzz-campaign.sh: the one home of
# the libFuzzer limits and of where a target's seeds come from.
#
# Limits: an input may not make one allocation of FUZZ_MALLOC_LIMIT_MB or more, nor grow the
# process past FUZZ_RSS_LIMIT_MB, nor take FUZZ_TIMEOUT_S seconds; each is a failure of the
# target (libFuzzer writes the input as an oom-/timeout- artifact). Inputs are at most 64 KiB.

FUZZ_MALLOC_LIMIT_MB=${FUZZ_MALLOC_LIMIT_MB:-512}
FUZZ_RSS_LIMIT_MB=${FUZZ_RSS_LIMIT_MB:-2048}
FUZZ_TIMEOUT_S=${FUZZ_TIMEOUT_S:-25}
FUZZ_MAX_LEN=65536

# A UBSan report stops the run and counts as a defect, whatever the build's recover flags.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The libFuzzer flags every run shares (bash array).
FUZZ_FLAGS=(
  -malloc_limit_mb="$FUZZ_MALLOC_LIMIT_MB"
  -rss_limit_mb="$FUZZ_RSS_LIMIT_MB"
  -timeout="$FUZZ_TIMEOUT_S"
  -max_len="$FUZZ_MAX_LEN"
)

# fuzz_target_flags TARGET: the flags one target adds to FUZZ_FLAGS when it runs (not when
# its corpus is merged), one per line. The slowest targets (the cluster and slurm.conf
# readers, squeue/sacct output, launch configs, failure and progress logs; 7,000 to 31,000
# coverage features each) run libFuzzer's plain scheduler: with its default entropic one,
# weighing the features took half to two thirds of their time, and plain scheduling runs them
# 1.5 to 6 times as fast (docs/reliability.md).
fuzz_target_flags() {
  case $1 in
    cluster_config_fuzz | diagnose_fuzz | inspect_fuzz | progress_fuzz | slurm_conf_fuzz | slurm_parse_fuzz)
      echo "-entropic=0" ;;
  esac
  return 0
}

# fuzz_seed TARGET DIR: copies TARGET's seeds into DIR (created; files already there are kept).
# Seeds: the committed corpus tests/fixtures/fuzz/TARGET/, the fixtures of the parser
# (tests/fixtures/<TARGET minus _fuzz>/, and tests/fixtures/<FORMAT>/ for import_<FORMAT>_fuzz),
# and configs/*.toml for the config parsers. Run from the repository root.
fuzz_seed() {
  local target=$1 dir=$2 seeds base=${1%_fuzz}
  mkdir -p "$dir"
  for seeds in "tests/fixtures/fuzz/$target" "tests/fixtures/$base" "tests/fixtures/${base#import_}"; do
    [[ -d $seeds ]] && find "$seeds" -maxdepth 1 -type f -size -1048576c -exec cp -n {} "$dir/" \;
  done
  if [[ $target == *config* ]]; then cp -n configs/*.toml "$dir/" 2>/dev/null; fi
  return 0
}

# fuzz_targets BUILD_DIR: the *_fuzz executables that BUILD_DIR's Ninja files define, sorted.
fuzz_targets() {
  ninja -C "$1" -t targets all 2>/dev/null |
    sed -nE 's/^([A-Za-z0-9_]+_fuzz): CXX_EXECUTABLE_LINKER.*/\1/p' | sort -u
}

# fuzz_configure BUILD_DIR [extra cmake args]: configures the clang libFuzzer build of the
# fuzz campaigns (-O2, fuzz targets only).
fuzz_configure() {
  local dir=$1
  shift
  CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DORRERY_FUZZ=ON -DORRERY_TESTS=OFF -DORRERY_BENCH=OFF "$@"
}

# sanitize_configure BUILD_DIR [extra cmake args]: configures the one clang ASan+UBSan tree
# of CI (scripts/test.sh): -O1, unit tests and fuzz targets both, so that the library is
# compiled with the sanitizers once and serves both stages.
sanitize_configure() {
  local dir=$1
  shift
  CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
    -DORRERY_FUZZ=ON -DORRERY_TESTS=ON -DORRERY_BENCH=OFF "$@"
}
