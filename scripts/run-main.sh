#!/usr/bin/env bash
# Installs dependencies, builds Orrery (Release) into build/ and runs `orrery simulate`
# with no arguments (the embedded default cluster and workload).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh main  # only what the orrery binary needs; scripts/test.sh adds the rest
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# Tests, benchmarks and the Python module off here (their packages come with the test command,
# which turns them on).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DORRERY_TESTS=OFF -DORRERY_BENCH=OFF -DORRERY_PYTHON=OFF "${launcher[@]}"
cmake --build build --target orrery -j "$(nproc)"
exec ./build/orrery simulate
