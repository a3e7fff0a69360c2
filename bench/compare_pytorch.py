#!/usr/bin/python3
"""ridgeline vs PyTorch on the CPU, same layers, same thread count, same protocol, in one run.

For every case it times the forward pass in ridgeline (`ridgeline profile --layer ... --format json`, or
`ridgeline sweep --model NAME --batch 1` for whole models) and in PyTorch (Debian's python3-torch and
python3-torchvision, eval mode, no_grad, NCHW), and prints the ratio of the medians
(ridgeline / PyTorch: below 1 means ridgeline is faster). Both use the same protocol: warm-up runs, then
samples of batched runs lasting >= 1 ms, until the 95% CI of the median is within 2% or 2 s passed.
Also prints each case's GFLOP/s against the FMA peak ridgeline measured (`ridgeline ceilings`).

Usage: bench/compare_pytorch.py [--ridgeline build/release/ridgeline] [--threads N] [--json out.json]
Needs /usr/bin/python3 with python3-torch and python3-torchvision (apt-get install python3-torchvision).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

try:
    import torch
    import torchvision
except ImportError:
    sys.exit("bench: needs Debian's PyTorch: sudo apt-get install python3-torch python3-torchvision "
             "(and run this with /usr/bin/python3)")

CASES = [
    # name, ridgeline layer string, input shape, torch module factory
    ("linear 1024->512 b1", "linear:in_features=1024,out_features=512", (1, 1024),
     lambda: torch.nn.Linear(1024, 512)),
    ("linear 1024->512 b64", "linear:in_features=1024,out_features=512", (64, 1024),
     lambda: torch.nn.Linear(1024, 512)),
    ("linear 4096->4096 b512", "linear:in_features=4096,out_features=4096", (512, 4096),
     lambda: torch.nn.Linear(4096, 4096)),
    ("conv 3x3 64->64 56x56", "conv2d:in_channels=64,out_channels=64,kernel_size=3,padding=1", (1, 64, 56, 56),
     lambda: torch.nn.Conv2d(64, 64, 3, padding=1)),
    ("conv 7x7/2 3->64 224x224", "conv2d:in_channels=3,out_channels=64,kernel_size=7,stride=2,padding=3",
     (1, 3, 224, 224), lambda: torch.nn.Conv2d(3, 64, 7, stride=2, padding=3)),
    ("conv 1x1 256->64 8x56x56", "conv2d:in_channels=256,out_channels=64,kernel_size=1", (8, 256, 56, 56),
     lambda: torch.nn.Conv2d(256, 64, 1)),
    ("depthwise 3x3 144 112x112", "conv2d:in_channels=144,out_channels=144,kernel_size=3,padding=1,groups=144",
     (1, 144, 112, 112), lambda: torch.nn.Conv2d(144, 144, 3, padding=1, groups=144)),
]
MODELS = ["resnet18", "resnet50", "mobilenet_v2"]


def median_ci_width(samples):
    """Relative width of the distribution-free 95% CI of the median (docs/timing.md)."""
    n = len(samples)
    s = sorted(samples)
    cdf, j = 0.0, 0
    for i in range(n):
        nxt = cdf + math.comb(n, i) / 2 ** n
        if nxt > 0.025:
            break
        cdf, j = nxt, i + 1
    if j < 1:
        return float("inf")
    med = statistics.median(s)
    return (s[n - j] - s[j - 1]) / med


def time_torch(fn):
    """The ridgeline protocol in Python: warm-up, batched samples >= 1 ms, noise-based stop."""
    t0 = time.perf_counter()
    runs = 0
    while runs < 3 or time.perf_counter() - t0 < 0.02:
        fn()
        runs += 1
    one = (time.perf_counter() - t0) / runs
    n = max(1, math.ceil(1e-3 / one))
    samples, start = [], time.perf_counter()
    while True:
        a = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - a) / n * 1e3)
        elapsed = time.perf_counter() - start
        if len(samples) >= 10 and elapsed >= 0.05 and median_ci_width(samples) <= 0.02:
            break
        if elapsed >= 2.0 and len(samples) >= 10:
            break
    return statistics.median(samples)


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ridgeline", default="build/release/ridgeline")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rl = [args.ridgeline]
    common = ["--device", "cpu", "--threads", str(args.threads), "--quiet", "--format", "json"]
    ceil = run_json(rl + ["ceilings", "--device", "cpu", "--threads", str(args.threads), "--format", "json", "--quiet"])
    fma = ceil["fma_peak_gflops"]["fp32"]
    print(f"threads {args.threads}; PyTorch {torch.__version__}; FMA peak {fma:.1f} GFLOP/s; "
          f"ridgeline GEMM roof {ceil['peak_gflops']['fp32']:.1f} GFLOP/s")
    print(f"{'case':28s} {'ridgeline':>11s} {'pytorch':>11s} {'ratio':>7s} {'GFLOP/s':>9s} {'%FMA':>6s}")
    rows = []
    with torch.no_grad():
        for name, layer, shape, make in CASES:
            r = run_json(rl + ["profile", "--layer", layer, "--input", "x".join(map(str, shape)), "--no-verify",
                               "--no-end-to-end", "--no-roofline"] + common)
            l = r["layers"][0]
            ours = l["time"]["median_ms"]
            m = make().eval()
            x = torch.randn(*shape)
            theirs = time_torch(lambda: m(x))
            gf = l["flops"] / (ours * 1e6)
            rows.append({"case": name, "ridgeline_ms": ours, "pytorch_ms": theirs, "ratio": ours / theirs,
                         "ridgeline_gflops": gf, "fraction_of_fma_peak": gf / fma})
            print(f"{name:28s} {ours:9.4f}ms {theirs:9.4f}ms {ours / theirs:7.3f} {gf:9.1f} {100 * gf / fma:5.0f}%")
        for model in MODELS:
            r = run_json(rl + ["sweep", "--model", model, "--batch", "1"] + common)
            p = r["points"][0]
            ours = p["time"]["median_ms"]
            m = getattr(torchvision.models, model)().eval()
            x = torch.randn(1, 3, 224, 224)
            theirs = time_torch(lambda: m(x))
            gf = p["flops"] / (ours * 1e6)
            rows.append({"case": model + " b1", "ridgeline_ms": ours, "pytorch_ms": theirs, "ratio": ours / theirs,
                         "ridgeline_gflops": gf, "fraction_of_fma_peak": gf / fma})
            print(f"{model + ' b1':28s} {ours:9.4f}ms {theirs:9.4f}ms {ours / theirs:7.3f} {gf:9.1f} {100 * gf / fma:5.0f}%")
    geo = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows))
    print(f"geometric mean ratio {geo:.3f} (ridgeline / PyTorch; < 1: ridgeline faster)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "torch": torch.__version__, "fma_peak_gflops": fma,
                       "gemm_roof_gflops": ceil["peak_gflops"]["fp32"], "cases": rows, "geomean_ratio": geo}, f,
                      indent=2)


if __name__ == "__main__":
    main()
