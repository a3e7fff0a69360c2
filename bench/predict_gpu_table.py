#!/usr/bin/env python3
"""One block of a transformer predicted on several GPUs (bench/predict_gpu.sh): per layer, the predicted time on each
target and the model that produced it; then each target's end to end and its time by layer class.

Usage: predict_gpu_table.py NAME PREDICTION.json [PREDICTION.json ...]
"""
import json
import re
import sys
from collections import defaultdict


def block_of(name):
    """The index of the transformer block a layer belongs to (encoder.layer.N., transformer.h.N.), or None."""
    m = re.search(r"\.(?:layer|h|layers)\.(\d+)\.", name)
    return int(m.group(1)) if m else None


def us(ms):
    return f"{ms * 1000:.1f}"


def main():
    name, files = sys.argv[1], sys.argv[2:]
    runs = [json.load(open(f)) for f in files]
    targets = [r["prediction"]["to"].replace(" (datasheet)", "") for r in runs]
    print(f"\n{name}: block 0, predicted us per layer (model), from {runs[0]['prediction']['from']}")
    header = f"{'layer':44s} {'op':10s} {'source us':>10s}" + "".join(f" {t[:22]:>22s}" for t in targets)
    print(header)
    print("-" * len(header))
    layers = [{l["name"]: l for l in r["layers"]} for r in runs]
    for l in runs[0]["layers"]:
        if block_of(l["name"]) != 0:
            continue
        cells = []
        for by_name in layers:
            p = by_name.get(l["name"])
            cells.append(f"{us(p['time']['median_ms'])} ({p['rule'][:6]})" if p else "-")
        print(f"{l['name'][:44]:44s} {l['op'][:10]:10s} {us(l['source_time']['median_ms']):>10s}" +
              "".join(f" {c:>22s}" for c in cells))
    print()
    for t, r in zip(targets, runs):
        by_op = defaultdict(float)
        for l in r["layers"]:
            by_op[l["op"]] += l["time"]["median_ms"]
        total = r["end_to_end"]["time"]["median_ms"]
        top = ", ".join(f"{op} {ms:.2f}" for op, ms in sorted(by_op.items(), key=lambda x: -x[1])[:5])
        print(f"{t}: end to end {total:.2f} ms (interval {r['end_to_end']['time']['ci95_low_ms']:.2f}-"
              f"{r['end_to_end']['time']['ci95_high_ms']:.2f}); by op: {top}")


if __name__ == "__main__":
    main()
