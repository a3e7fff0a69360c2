#!/usr/bin/env python3
"""The anchors a GPU's ceilings are checked against: what PyTorch on the same machine attains for an 8192^3 bf16
matmul and a large device-to-device copy (scripts/gpu-check.sh runs it beside `ridgeline ceilings --device cuda`).
On an H100/H200 expect roughly 780-850 TFLOP/s and 3.0-4.4 TB/s (the device tool's KINDS.md: 769-798 TFLOP/s and
4.3 TB/s read through PyTorch on an H200); a ridgeline ceiling far from these is a measurement bug.

Each figure is timed with CUDA events around `--reps` back-to-back calls after 3 warm-ups, in `--rounds` rounds;
the best round is kept (a ceiling is what the device can do) and every round is written.

  bench/torch_anchor.py [--output FILE.json] [--rounds 5] [--reps 20] [--smoke]
    --smoke   on the CPU with small sizes: checks the script itself where there is no GPU (figures meaningless)
"""
import argparse
import json
import sys
import time


def rounds_of(fn, rounds, reps, sync, timer):
    """Seconds per call of fn in each round (reps calls per round, after 3 warm-up calls)."""
    for _ in range(3):
        fn()
    sync()
    out = []
    for _ in range(rounds):
        out.append(timer(fn, reps) / reps)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--output", help="write the figures as JSON here")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--smoke", action="store_true", help="CPU, small sizes: check the script only")
    a = ap.parse_args()
    if a.rounds < 1 or a.reps < 1:
        sys.exit("torch_anchor.py: --rounds and --reps must be at least 1")
    try:
        import torch
    except ImportError as e:
        sys.exit(f"torch_anchor.py: PyTorch is not importable here ({e})")
    if a.smoke:
        dev, n, copy_bytes = torch.device("cpu"), 256, 64 << 20
    else:
        if not torch.cuda.is_available():
            sys.exit("torch_anchor.py: no CUDA device visible to PyTorch (--smoke checks the script on the CPU)")
        dev, n, copy_bytes = torch.device("cuda"), 8192, 4 << 30  # 4 GiB each way, far past any L2

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def timer(fn, reps):
        if dev.type == "cuda":
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(reps):
                fn()
            stop.record()
            stop.synchronize()
            return start.elapsed_time(stop) * 1e-3
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        return time.perf_counter() - t0

    g = torch.Generator(device=dev).manual_seed(1)
    x = torch.rand((n, n), generator=g, device=dev, dtype=torch.float32).to(torch.bfloat16) - 0.5
    w = torch.rand((n, n), generator=g, device=dev, dtype=torch.float32).to(torch.bfloat16) - 0.5
    y = torch.empty((n, n), device=dev, dtype=torch.bfloat16)
    mm = rounds_of(lambda: torch.matmul(x, w, out=y), a.rounds, a.reps, sync, timer)
    del x, w, y
    src = torch.rand(copy_bytes // 4, generator=g, device=dev, dtype=torch.float32)
    dst = torch.empty_like(src)
    cp = rounds_of(lambda: dst.copy_(src), a.rounds, a.reps, sync, timer)
    flops = 2.0 * n * n * n
    result = {
        "schema": "ridgeline.torch_anchor/1",
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu (smoke: figures meaningless)",
        "bf16_matmul": {"n": n, "tflops_best": flops / min(mm) / 1e12,
                        "tflops_rounds": [flops / s / 1e12 for s in mm]},
        "copy": {"bytes_each_way": copy_bytes, "tbs_best": 2.0 * copy_bytes / min(cp) / 1e12,
                 "tbs_rounds": [2.0 * copy_bytes / s / 1e12 for s in cp],
                 "counted": "bytes read plus bytes written, as ridgeline's device_copy_gbs"},
    }
    text = json.dumps(result, indent=2)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    print(f"torch_anchor: {result['device']}, PyTorch {result['torch']}: bf16 {n}^3 matmul "
          f"{result['bf16_matmul']['tflops_best']:.1f} TFLOP/s, copy {result['copy']['tbs_best']:.3f} TB/s "
          f"(best of {a.rounds} rounds of {a.reps} calls)")


if __name__ == "__main__":
    main()
