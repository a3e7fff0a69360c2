#!/usr/bin/env bash
# ridgeline's own CPU loops (where oneDNN 2.6.3 has no primitive) on large tensors, beside the DRAM level's STREAM:
# each op's achieved GB/s (its minimal bytes, the layer's `bytes`: every input at its own size read once and the
# output written once, over its median) as a % of STREAM copy, of the DRAM bandwidth roof (`ridgeline ceilings
# --format json`: the roof of the op's working set, as the profile judges it; docs/roofline.md) and of the bound for
# the op's own mix of reads and writes (%mix, derived in the table's script below). Every working set here is past 4x the caches (the DRAM level) on a 2-core Zen 4 VM (32 MiB L3); the reductions and the embedding gather
# run oneDNN's reduction and a memcpy per row, for comparison.
# Binaries are interleaved op by op and round by round (this VM's neighbours move times by up to 2x from one minute to
# the next); the table gives the lowest median of the rounds for each binary (the least disturbed), against the best
# round's STREAM, measured again (--recalibrate) at the start of every round.
#   bench/own_loops.sh [rounds] [binary...]      (default: 3 rounds of build/ci/ridgeline)
#   bench/own_loops.sh 3 /tmp/ridgeline-before build/ci/ridgeline
#   OPS='where expand' bench/own_loops.sh        (only those ops, by the names below)
#   DTYPE=bf16 bench/own_loops.sh                (the layers in bf16: --dtype of `ridgeline profile`; default fp32)
set -euo pipefail
rounds=${1:-3}
[[ $rounds =~ ^[1-9][0-9]*$ ]] ||
  { echo "own_loops.sh: the first argument is the number of rounds, a positive integer; got '$rounds'" >&2; exit 2; }
shift $(( $# > 0 ? 1 : 0 ))
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(build/ci/ridgeline)
py=/usr/bin/python3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# name | layer | inputs (one --input each)
cases=(
  "where|where|1x1x1024x1024 4x20x1024x1024 1"        # GPT-2 Large's causal mask: condition and value broadcast
  "where_full|where|4096x8192 4096x8192 4096x8192"
  "expand|expand:size=4x20x1024x1024|1x1x1024x1024"
  "expand_inner|expand:size=16384x8192|16384x1"
  "pad|pad:pad=1x1x1x1|4x64x512x512"
  "pad_reflect|pad:pad=2x2x2x2,mode=reflect|4x64x512x512"
  "nearest|interpolate:size=768x768|4x64x512x512"
  "bilinear|interpolate:size=768x768,mode=bilinear|4x64x512x512"
  "rms_norm|rms_norm:normalized_shape=4096|16384x4096"
  "rotary|rotary|4x32x2048x128"
  "gather|embedding:num_embeddings=32000,embedding_dim=4096|8x2048"
  "sum_last|sum:dim=-1|16384x8192"
  "mean_first|mean:dim=0|16384x8192"
  "amax_last|amax:dim=-1|16384x8192"
)
want=" ${OPS:-} "
known=" "
for c in "${cases[@]}"; do known+="${c%%|*} "; done
for o in ${OPS:-}; do
  [[ $known == *" $o "* ]] ||
    { echo "own_loops.sh: OPS names '$o', not one of:$known(separated by spaces)" >&2; exit 2; }
done

for b in "${bins[@]}"; do
  [ -f "$b" ] && [ -x "$b" ] || { echo "own_loops.sh: $b is not an executable file" >&2; exit 2; }
done
for ((i = 1; i <= rounds; i++)); do
  # STREAM in the same minutes as the loops (measured again each round; the best round's kept, as the ops' lowest
  # median): a roof cached at a quiet hour against loops timed beside busy neighbours would read as a slow loop
  "${bins[-1]}" ceilings --device cpu --recalibrate --quiet --format json --output "$out/ceilings.$i.json" \
    >/dev/null 2>"$out/ceilings.err" ||
    { echo "own_loops.sh: '${bins[-1]} ceilings' failed:" >&2; cat "$out/ceilings.err" >&2; exit 1; }
  [ -s "$out/ceilings.$i.json" ] ||
    { echo "own_loops.sh: '${bins[-1]} ceilings' wrote no $out/ceilings.$i.json" >&2; exit 1; }
  for c in "${cases[@]}"; do
    IFS='|' read -r name layer inputs <<<"$c"
    [ "$want" = "  " ] || [[ "$want" == *" $name "* ]] || continue
    args=()
    for s in $inputs; do args+=(--input "$s"); done
    for k in "${!bins[@]}"; do
      "${bins[$k]}" profile --layer "$layer" "${args[@]}" --dtype "${DTYPE:-fp32}" --device cpu --no-verify \
        --no-roofline --no-end-to-end \
        --quiet --format json --output "$out/$name.$k.$i.json" >/dev/null 2>"$out/err" ||
        { echo "own_loops.sh: $name failed on ${bins[$k]}:" >&2; cat "$out/err" >&2; exit 1; }
    done
  done
  echo "round $i of $rounds done" >&2
done

"$py" - "$out" "${bins[@]}" <<'PY'
import glob, json, math, os, sys
out, bins = sys.argv[1], sys.argv[2:]
cs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, "ceilings.*.json")))]
cs = [c.get("ceilings", c) for c in cs]
for k in ("copy_gbs", "triad_gbs", "bandwidth_gbs"):
    print(f"{k} by round: " + ", ".join(f"{c[k]:.1f}" for c in cs))
copy, triad, roof, read = (max(c[k] for c in cs) for k in ("copy_gbs", "triad_gbs", "bandwidth_gbs", "read_gbs"))
print(f"DRAM level, best round: STREAM copy {copy:.1f} GB/s, triad {triad:.1f} GB/s, read {read:.1f} GB/s, "
      f"roof (bandwidth_gbs) {roof:.1f} GB/s")
# The roof a layer of `size` bytes in the DRAM level is judged against (ceilings::dram_roof_gbs(bytes), docs/roofline.md
# "A larger working set"): the DRAM level's readings (its sweep points, copy at 2/3 of stream_bytes, triad and read
# at stream_bytes), each a floor for smaller sizes; log-linear between, the largest's past them. %roof uses the best
# round's; stream_bytes 0 (an older build) gives the one-number roof.
def dram_roof(c, size):
    dram = c.get("dram_level_bytes", 0)
    points = [(s, g) for s, g in c["working_set_gbs"] if dram > 0 and s >= dram]
    flat = max([c["bandwidth_gbs"]] + [g for _, g in points])
    sb = c.get("stream_bytes", 0)
    if sb <= 0 or dram <= 0:
        return flat
    r = sorted(points + [(sb // 3 * 2, c["copy_gbs"]), (sb, max(c["triad_gbs"], c["read_gbs"]))])
    if c["bandwidth_gbs"] > max(g for _, g in r) * (1 + 1e-9):
        return flat
    for i in range(len(r) - 2, -1, -1):
        r[i] = (r[i][0], max(r[i][1], r[i + 1][1]))
    if size <= r[0][0]:
        return r[0][1]
    if size >= r[-1][0]:
        return r[-1][1]
    hi = next(i for i, (s, _) in enumerate(r) if s >= size)
    (s0, g0), (s1, g1) = r[hi - 1], r[hi]
    return g1 if s1 == s0 else g0 + (math.log(size) - math.log(s0)) / (math.log(s1) - math.log(s0)) * (g1 - g0)
# The bound for an op's own mix of reads and writes (%mix): its bytes read at the read bandwidth plus its bytes
# written at the write bandwidth, the two in turn (one memory bus). The write bandwidth is derived from STREAM copy
# (8 bytes read and 8 written an element, non-temporal stores): 16 / copy = 8 / read + 8 / write, so
# 1 / write = 2 / copy - 1 / read. A copy-like op cannot pass copy_gbs, so the roof (the read kernel's) over-asks it.
def write_gbs(copy, read):
    inv = 2 / copy - 1 / read
    return 1 / inv if inv > 0 else float("inf")
write = write_gbs(copy, read)
print(f"derived write bandwidth: {write:.1f} GB/s (%mix: bytes read / read + bytes written / write)")
# %mix per round: the op's median of round i against round i's own STREAM (measured in the same minute, where the
# best round's STREAM may come from a quieter minute than the op's best round); the median of the rounds and their range
by_round = {}
for p in glob.glob(os.path.join(out, "ceilings.*.json")):
    c = json.load(open(p))
    c = c.get("ceilings", c)
    by_round[os.path.basename(p).split(".")[1]] = (c["read_gbs"], write_gbs(c["copy_gbs"], c["read_gbs"]))
print("%mix per round (median of the rounds, lowest-highest), each round against its own STREAM: column 'rounds'")
for k, b in enumerate(bins):
    print(f"binary {k}: {b}")
head = f"{'op':<14}{'MB':>8}"
for k in range(len(bins)):
    head += f" | {k}: {'ms':>8} {'GB/s':>6} {'%copy':>6} {'%roof':>6} {'%mix':>5} {'rounds':>11}"
print(head + " | implementation")
names = sorted({os.path.basename(p).split(".")[0] for p in glob.glob(os.path.join(out, "*.0.*.json"))},
               key=lambda n: min(os.path.getmtime(p) for p in glob.glob(os.path.join(out, n + ".0.*.json"))))
for n in names:
    line, impl = "", ""
    for k in range(len(bins)):
        paths = glob.glob(os.path.join(out, f"{n}.{k}.*.json"))
        layers = [json.load(open(p))["layers"][0] for p in paths]
        timed = [l for l in layers if l.get("time")]
        if not timed:
            line += f" | {k}: {'-':>8} {'':>6} {'':>6} {'':>6} {'':>5} {'':>11}"
            continue
        per_round = []
        for p, l in zip(paths, layers):
            if not l.get("time"):
                continue
            r_read, r_write = by_round[os.path.basename(p).split(".")[2]]
            w = l["activation_bytes"]
            per_round.append(100 * ((l["bytes"] - w) / r_read + w / r_write) / 1e6 / l["time"]["median_ms"])
        per_round.sort()
        mid = per_round[len(per_round) // 2] if len(per_round) % 2 else sum(per_round[len(per_round) // 2 - 1:][:2]) / 2
        rounds_col = f"{mid:.0f} ({per_round[0]:.0f}-{per_round[-1]:.0f})"
        ms = min(l["time"]["median_ms"] for l in timed)
        mb = timed[0]["bytes"] / 1e6
        gbs = timed[0]["bytes"] / ms / 1e6
        written = timed[0]["activation_bytes"]  # the output, written once
        mix_ms = (timed[0]["bytes"] - written) / read / 1e6 + written / write / 1e6
        op_roof = max(dram_roof(c, timed[0]["bytes"]) for c in cs)  # the roof of its working set, best round's
        line += (f" | {k}: {ms:8.2f} {gbs:6.1f} {100 * gbs / copy:6.0f} {100 * gbs / op_roof:6.0f} {100 * mix_ms / ms:5.0f}"
                 f" {rounds_col:>11}")
        impl = timed[0].get("implementation", "")
    print(f"{n:<14}{mb:8.0f}{line} | {impl}")
PY
