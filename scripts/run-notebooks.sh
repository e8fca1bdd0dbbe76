#!/usr/bin/env bash
# Executes every examples/*.ipynb with jupyter nbconvert against a build of Orrery and fails if
# any notebook fails (ctest `notebooks`). The executed copies go to a temporary folder; the
# notebooks in examples/ are never written.
#
#   scripts/run-notebooks.sh BUILD_DIR
#
# Environment: ORRERY_SHARED_DIR (default ../shared from the repository root), ORRERY_BINARY
# (default BUILD_DIR/orrery); PYTHONPATH is set to BUILD_DIR/python.
set -uo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "$1" && pwd) || { echo "run-notebooks: no build folder $1" >&2; exit 2; }

export PYTHONPATH="$BUILD/python"
export ORRERY_BINARY="${ORRERY_BINARY:-$BUILD/orrery}"
export ORRERY_SHARED_DIR="${ORRERY_SHARED_DIR:-$ROOT/../shared}"
export ORRERY_SOURCE_DIR="$ROOT"
export PYTHONDONTWRITEBYTECODE=1
export MPLBACKEND=Agg

# Debian's python3 is the one the module, pandas, matplotlib and nbconvert are installed for.
PYTHON=/usr/bin/python3
[[ -x $PYTHON ]] || PYTHON=python3
if ! "$PYTHON" -c "import nbconvert, ipykernel, matplotlib" 2>/dev/null; then
  echo "run-notebooks: $PYTHON lacks nbconvert, ipykernel or matplotlib (scripts/install-deps.sh)" >&2
  exit 1
fi

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# Jupyter's runtime files (kernel connection files) go to the temporary folder too.
export JUPYTER_RUNTIME_DIR="$OUT/runtime"

shopt -s nullglob
notebooks=("$ROOT"/examples/*.ipynb)
if [[ ${#notebooks[@]} -eq 0 ]]; then
  echo "run-notebooks: no notebooks in $ROOT/examples" >&2
  exit 1
fi

failed=()
for nb in "${notebooks[@]}"; do
  name=$(basename "$nb")
  start=$(date +%s%N)
  if "$PYTHON" -m jupyter nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
       --ExecutePreprocessor.kernel_name=python3 --output-dir "$OUT" "$nb" >"$OUT/$name.log" 2>&1; then
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    printf 'run-notebooks: ok     %-32s %d.%03d s\n' "$name" $((ms / 1000)) $((ms % 1000))
  else
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    printf 'run-notebooks: FAILED %-32s %d.%03d s\n' "$name" $((ms / 1000)) $((ms % 1000))
    tail -n 40 "$OUT/$name.log" | sed 's/^/    /'
    failed+=("$name")
  fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "run-notebooks: ${#failed[@]} of ${#notebooks[@]} notebooks failed: ${failed[*]}" >&2
  exit 1
fi
echo "run-notebooks: all ${#notebooks[@]} notebooks ran"
