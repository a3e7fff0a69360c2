#!/usr/bin/env bash
# Install what is missing (build and test dependencies), build the ci preset and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
cmake --preset ci
cmake --build --preset ci
ctest --preset ci
