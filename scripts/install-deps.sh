#!/usr/bin/env bash
# Installs the Debian 12 packages Orrery needs: `install-deps.sh main` those that building and
# running the `orrery` binary needs (scripts/run-main.sh), `install-deps.sh` (or `all`) those
# and the ones the tests need (scripts/test.sh). Idempotent: when all are already installed it
# does nothing (no apt-get update). Works as root, or via sudo otherwise.
set -euo pipefail

SET=${1:-all}
MAIN=(
  cmake ninja-build g++ pkg-config
  libfmt-dev libcli11-dev nlohmann-json3-dev libtoml11-dev libyaml-cpp-dev zlib1g-dev
  libxgboost-dev libsqlite3-dev libcpp-httplib-dev
)
TESTS=(
  clang libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  slurmctld slurmd slurm-client munge
  slurmdbd slurm-wlm-mysql-plugin mariadb-server
  chromium
  python3-torch
  python3-pybind11 pybind11-dev python3-pandas
  python3-nbconvert python3-ipykernel python3-matplotlib jupyter-nbconvert
  universal-ctags
)
case $SET in
  main) PACKAGES=("${MAIN[@]}") ;;
  all) PACKAGES=("${MAIN[@]}" "${TESTS[@]}") ;;
  *) echo "install-deps: expected 'main' or 'all', got '$SET'" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
# npm vendors Vega-Lite for the HTML reports at build time (web/); any npm on PATH will do.
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "install-deps: not root and sudo is not available; install as root: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
