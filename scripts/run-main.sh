#!/usr/bin/env bash
# Installs dependencies, builds Orrery (Release) into build/ and runs `orrery simulate`
# with no arguments (the embedded default cluster and workload).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}"
cmake --build build --target orrery -j "$(nproc)"
exec ./build/orrery simulate
