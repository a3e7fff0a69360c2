#!/usr/bin/env python3
"""Scores ridgeline predictions against real profiles (bench/predict.sh feeds it).

stdin: one line per pair, "MODEL DIRECTION PREDICTION.json MEASURED.json". For each: the median absolute
per-layer error of the prediction and of the naive baseline (baseline_ms: the source time scaled by the ratio of
the floors), over the layers both have a clean time for, the end-to-end error of both, and the share of layers whose real time
lies in the predicted interval. Pass (held-out models): end to end within 10%, per-layer median within 20%, and
both better than the baseline."""
import json
import statistics
import sys

held_out = {"resnet50", "mobilenet_v2"}
rows, ok, held_out_errors = [], True, []
for line in sys.stdin:
    if not line.strip():
        continue
    model, direction, pred_path, meas_path = line.split()
    pred, meas = json.load(open(pred_path)), json.load(open(meas_path))
    measured = {l["name"]: l for l in meas["layers"]
                if isinstance(l.get("time"), dict) and not l["time"].get("disturbed", False)}
    err, base, covered = [], [], 0
    for l in pred["layers"]:
        m = measured.get(l["name"])
        if m is None or l.get("baseline_ms") is None:
            continue
        t = m["time"]["median_ms"]
        err.append(abs(l["time"]["median_ms"] / t - 1))
        base.append(abs(l["baseline_ms"] / t - 1))
        covered += l["time"]["ci95_low_ms"] <= t <= l["time"]["ci95_high_ms"]
    if model in held_out:
        held_out_errors.extend(err)
    e2e_meas = (meas.get("end_to_end") or {}).get("time") or {}
    e2e_meas = e2e_meas.get("median_ms")
    e2e = pred["end_to_end"]
    e2e_err = abs(e2e["time"]["median_ms"] / e2e_meas - 1) if e2e_meas else float("nan")
    e2e_base = abs(e2e["baseline_ms"] / e2e_meas - 1) if e2e_meas else float("nan")
    med, med_base = statistics.median(err), statistics.median(base)
    passed = e2e_err <= 0.10 and med <= 0.20 and med <= med_base and e2e_err <= e2e_base
    if model in held_out:
        ok = ok and passed
    rows.append((model + (" (held out)" if model in held_out else " (fit)"), direction, len(err), med, med_base,
                 e2e_err, e2e_base, covered / len(err), "yes" if passed else "NO"))
print(f"{'model':26} {'pair':10} {'layers':>6} {'per-layer median |err|':>23} {'baseline':>9} "
      f"{'end-to-end |err|':>17} {'baseline':>9} {'in interval':>11}  pass")
for r in rows:
    print(f"{r[0]:26} {r[1]:10} {r[2]:6d} {100 * r[3]:22.1f}% {100 * r[4]:8.1f}% {100 * r[5]:16.1f}% {100 * r[6]:8.1f}% "
          f"{100 * r[7]:10.0f}%  {r[8]}")
held_out_errors.sort()
if held_out_errors:
    p90 = held_out_errors[int(0.9 * (len(held_out_errors) - 1))]
    print(f"held-out per-layer |error|: 90th percentile {100 * p90:.1f}% of {len(held_out_errors)} layers "
          "(core::prediction_error widens every interval by it)")
print("held-out models pass:", "yes" if ok else "NO")
sys.exit(0 if ok else 1)
