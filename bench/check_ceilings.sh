#!/usr/bin/env bash
# Checks ridgeline's measured ceilings against independent plain loops built here on their own:
#   - FMA peak vs bench/fma_check.cpp (GCC vector extensions, -march=native): should agree within 10%
#   - GEMM roof below the FMA peak
#   - triad bandwidth vs bench/stream_check.cpp (classic STREAM triad, best of 20; bench/dram_roof.sh puts the DRAM
#     roof beside it with arrays of 4x the caches, in the same minute)
# Usage: bench/check_ceilings.sh [path/to/ridgeline] [threads]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/ridgeline}
threads=${2:-$(nproc)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
g++ -O3 -march=native -fopenmp bench/fma_check.cpp -o "$tmp/fma_check"
g++ -O3 -march=native -fopenmp bench/stream_check.cpp -o "$tmp/stream_check"
"$bin" ceilings --device cpu --threads "$threads" --recalibrate --format json --quiet > "$tmp/ceilings.json"
fma_ind=$("$tmp/fma_check" "$threads")
triad_ind=$("$tmp/stream_check" "$threads" | cut -d" " -f1)  # ordinary stores (the second figure: non-temporal)
python3 - "$tmp/ceilings.json" "$fma_ind" "$triad_ind" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
fma_ind, triad_ind = float(sys.argv[2]), float(sys.argv[3])
fma = c["fma_peak_gflops"]["fp32"]
gemm = c["peak_gflops"]["fp32"]
triad = c["triad_gbs"]
print(f"FMA peak      ridgeline {fma:8.1f} GFLOP/s   independent {fma_ind:8.1f}   ratio {fma / fma_ind:.3f}")
print(f"GEMM roof     ridgeline {gemm:8.1f} GFLOP/s   = {100 * gemm / fma:.0f}% of the FMA peak")
print(f"triad         ridgeline {triad:8.1f} GB/s      independent {triad_ind:8.1f}   ratio {triad / triad_ind:.3f}")
ok = abs(fma / fma_ind - 1) <= 0.10 and gemm < fma
print("FMA within 10% and GEMM below it:", "yes" if ok else "NO")
sys.exit(0 if ok else 1)
PY
