#!/usr/bin/env bash
# Quick start: install what is missing, build the release preset, and run the main job on a built-in
# default (profile resnet18 on the best available device). Extra arguments replace the default command,
# e.g. scripts/quickstart.sh summary --model vgg16
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target ridgeline  # the binary only; scripts/test.sh builds the tests
if [[ $# -eq 0 ]]; then
  set -- profile --model resnet18
fi
echo "+ build/release/ridgeline $*" >&2
exec build/release/ridgeline "$@"
