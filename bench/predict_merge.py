#!/usr/bin/env python3
"""Merges rounds of one profile (bench/predict.sh): each layer, and the end-to-end pass, from the round where its
median was lowest (other work only slows a layer; this VM's speed has modes minutes apart, and one profile's layers
moved by 15% (median) against the same profile a few minutes later). Prints the per-layer median |difference|
between the first two rounds: the noise floor no prediction can beat.
Usage: predict_merge.py OUT.json ROUND1.json ROUND2.json ..."""
import json
import statistics
import sys


def median_of(layer):
    t = layer.get("time")
    if not isinstance(t, dict) or t.get("disturbed") or not t.get("median_ms"):
        return None
    return t["median_ms"]


def main():
    out, rounds = sys.argv[1], [json.load(open(p)) for p in sys.argv[2:]]
    merged = json.loads(json.dumps(rounds[0]))
    for i, layer in enumerate(merged["layers"]):
        best = None
        for r in rounds:
            m = median_of(r["layers"][i])
            if m is not None and (best is None or m < median_of(best)):
                best = r["layers"][i]
        if best is not None:
            merged["layers"][i] = best
    e2es = [r["end_to_end"] for r in rounds if r.get("end_to_end", {}).get("state") == "measured"]
    if e2es:
        merged["end_to_end"] = min(e2es, key=lambda e: e["time"]["median_ms"])
    merged["sum_of_layers_ms"] = sum(median_of(l) or 0 for l in merged["layers"])
    with open(out, "w") as f:
        json.dump(merged, f)
    diffs = []
    for a, b in zip(rounds[0]["layers"], rounds[1]["layers"]) if len(rounds) > 1 else []:
        ma, mb = median_of(a), median_of(b)
        if ma and mb:
            diffs.append(abs(mb / ma - 1))
    if diffs:
        print(f"{statistics.median(diffs) * 100:.1f}")


if __name__ == "__main__":
    main()
