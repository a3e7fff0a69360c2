#!/usr/bin/env bash
# Differential testing at scale (docs/reliability.md): `ridgeline-differential` (tests/support/differential.hpp) draws
# CASES random valid cases of every op per data type the backend runs here, from SEED, and compares each with the
# reference loops. CI runs 200 fp32 and 100 bf16 cases per op with a fixed seed; this runs many more, with a new seed
# each time you pass one. Exit status 1 on any mismatch or failure (listed as PROBLEM lines).
#   bench/differential.sh [build dir, default build/ci] [cases per op, default 5000] [seed, default 11] [device, default cpu]
set -euo pipefail
build=${1:-build/ci}
cases=${2:-5000}
seed=${3:-11}
device=${4:-cpu}
tool="$build/tests/ridgeline-differential"
[[ -x "$tool" ]] || { echo "differential.sh: $tool is missing: the tool is built with the tests (cmake --preset ci && cmake --build --preset ci; or scripts/test.sh), then bench/differential.sh build/ci" >&2; exit 2; }
exec "$tool" --device "$device" --cases "$cases" --seed "$seed"
