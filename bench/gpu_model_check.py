#!/usr/bin/env python3
"""The op-class models of a GPU (core/gpu_model.hpp) against published per-kernel measurements of real GPUs.

None of these figures set a constant: the constants' own sources are in docs/roofline.md ("Predicting another class
of device"); these are other people's measurements, kept apart to check the models. Each kernel is made a one-layer
report here (`ridgeline summary --layer ... --format json`, its counts and shapes exact, given a source time that
the op-class models do not read), predicted with `ridgeline predict --to TARGET`, and the predicted time turned into
the figure the source published (TFLOP/s, GB/s or ms).

Usage: bench/gpu_model_check.py [path/to/ridgeline]   (seconds)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

# (target, what, layer, inputs, dtype, unit, published, source). Units: "TFLOP/s" (the layer's FLOPs over the time),
# "GB/s" (its bytes over the time, as bandwidthTest counts a copy: read and write), "us" (the time).
FIGURES = [
    # xzwgit/gpu-flops-bench, nvidia/results/20260810T090857Z/report.md: cuBLASLt, dense, median time, isolated runs
    ("h200-nvl", "gemm 12288^3", "matmul", ["12288x12288", "12288x12288"], "fp32", "TFLOP/s", 47.28,
     "gpu-flops-bench (cuBLASLt)"),
    # the same report's isolated best in bf16 (its README's 853.29 is from the concurrent section)
    ("h200-nvl", "gemm 16384^3", "matmul", ["16384x16384", "16384x16384"], "bf16", "TFLOP/s", 852.21,
     "gpu-flops-bench (cuBLASLt)"),
    # xzwgit/gpu-flops-bench, nvidia/results/20260811T022856Z/report.md
    ("rtx4090", "gemm 8192^3", "matmul", ["8192x8192", "8192x8192"], "fp32", "TFLOP/s", 57.55,
     "gpu-flops-bench (cuBLASLt)"),
    ("rtx4090", "gemm 4096^3", "matmul", ["4096x4096", "4096x4096"], "bf16", "TFLOP/s", 179.20,
     "gpu-flops-bench (cuBLASLt)"),
    # zzc0721/torch-performance-test-data, database.md: torch.mm, square N x N, the best of N in {1024 ... 10240}
    # (taken here at 8192), TF32 off
    ("rtx4090", "gemm 8192^3", "matmul", ["8192x8192", "8192x8192"], "fp32", "TFLOP/s", 55.01,
     "torch-performance-test-data (torch.mm)"),
    ("rtx4090", "gemm 8192^3", "matmul", ["8192x8192", "8192x8192"], "bf16", "TFLOP/s", 170.06,
     "torch-performance-test-data (torch.mm)"),
    # its "NVIDIA A100 40GB" row: taken as the PCIe 40GB entry (the SXM4 40GB has the same peaks)
    ("a100-pcie-40gb", "gemm 8192^3", "matmul", ["8192x8192", "8192x8192"], "fp32", "TFLOP/s", 18.11,
     "torch-performance-test-data (torch.mm)"),
    ("a100-pcie-40gb", "gemm 8192^3", "matmul", ["8192x8192", "8192x8192"], "bf16", "TFLOP/s", 246.33,
     "torch-performance-test-data (torch.mm)"),
    ("a100-sxm4-80gb", "gemm 8192^3", "matmul", ["8192x8192", "8192x8192"], "fp32", "TFLOP/s", 19.18,
     "torch-performance-test-data (torch.mm)"),
    ("a100-sxm4-80gb", "gemm 8192^3", "matmul", ["8192x8192", "8192x8192"], "bf16", "TFLOP/s", 264.53,
     "torch-performance-test-data (torch.mm)"),
    # ahmadsharif1/cuda_study, README.md: cuBLAS, M=4096, K=16384, N=8192, 100 iterations, "NVIDIA H100 SXM5"
    ("h100", "gemm 4096x16384x8192", "matmul", ["4096x16384", "16384x8192"], "fp32", "TFLOP/s", 35.5,
     "cuda_study (cuBLAS)"),
    ("h100", "gemm 4096x16384x8192", "matmul", ["4096x16384", "16384x8192"], "tf32", "TFLOP/s", 319.7,
     "cuda_study (cuBLAS, TF32)"),
    # KnowingNothing/MatmulTutorial, examples/matmul/cublas/call_cublas.cu: cublasGemmEx, fp16 in and out, fp32
    # compute, M=N=5376, K=2048, "A100 PCIE 80GB", 10 warm-up and 200 timed calls
    ("a100-pcie-80gb", "gemm 5376x2048x5376", "matmul", ["5376x2048", "2048x5376"], "fp16", "TFLOP/s", 150.864,
     "MatmulTutorial (cublasGemmEx)"),
    # lcy-seso/CudaPlayground, bench_quant_gemv/benchmark/H100.md and A100.md, row 18: torch act @ weight, bf16, one
    # decode token (M=1) through K=4096 -> N=14336, mean of 100 CUDA-event timings; the cards' variants are not
    # named: taken as the SXM5 H100 and the SXM4 80GB A100
    ("h100", "decode gemv 1x4096x14336", "matmul", ["1x4096", "4096x14336"], "bf16", "us", 56.6,
     "CudaPlayground (torch, M=1)"),
    ("a100-sxm4-80gb", "decode gemv 1x4096x14336", "matmul", ["1x4096", "4096x14336"], "bf16", "us", 100.3,
     "CudaPlayground (torch, M=1)"),
    # router-gao/cuda-demo, cuda-samples/02-cuda-bandwidth.md: bandwidthTest device to device, 32,000,000 bytes
    # (a copy: read and write counted); modelled as a stream of 8,000,000 fp32 elements in and out
    ("t4", "copy 32 MB", "relu", ["8000000"], "fp32", "GB/s", 239.6, "cuda-demo (bandwidthTest D2D)"),
    ("a100-sxm4-40gb", "copy 32 MB", "relu", ["8000000"], "fp32", "GB/s", 1157.5, "cuda-demo (bandwidthTest D2D)"),
    # HydraQYH/hp_rms_norm, README.md at fe74e65c: a fused residual add + RMSNorm over 4096 tokens x 4096 (bf16, the
    # test's default), 33.09 us on an H200; its passes (read the input and the residual, write the output) modelled
    # as a stream of three 4096 x 4096 bf16 tensors
    ("h200", "add + rms_norm 4096x4096", "add", ["4096x4096", "4096x4096"], "bf16", "us", 33.09,
     "hp_rms_norm (fused kernel)"),
]


def one_layer_report(binary, layer, inputs, dtype, folder):
    """A profile report of one layer, its counts from `ridgeline summary`, its source time 1 ms (not read)."""
    args = [binary, "summary", "--layer", layer, "--dtype", dtype, "--format", "json"]
    for i in inputs:
        args += ["--input", i]
    summary = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    summary["schema"] = "ridgeline.profile/2"
    summary["device"] = {"backend": "cpu", "name": "a CPU", "threads": 1}
    summary["timing"] = {"mode": "hot"}
    for l in summary["layers"]:
        l["state"] = "measured"
        l["time"] = {"median_ms": 1.0, "ci95_low_ms": 1.0, "ci95_high_ms": 1.0, "disturbed": False}
    path = os.path.join(folder, f"{layer}_{'_'.join(inputs)}_{dtype}.json")
    with open(path, "w") as f:
        json.dump(summary, f)
    return path


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "build/release/ridgeline"
    errors = []
    with tempfile.TemporaryDirectory() as folder:
        print(f"{'target':15s} {'kernel':27s} {'dtype':5s} {'model':>9s} {'published':>10s} {'unit':7s} "
              f"{'error':>7s}  source")
        for target, what, layer, inputs, dtype, unit, published, source in FIGURES:
            report = one_layer_report(binary, layer, inputs, dtype, folder)
            out = subprocess.run([binary, "predict", "--from", report, "--to", target, "--format", "json"],
                                 check=True, capture_output=True, text=True).stdout
            l = json.loads(out)["layers"][0]
            ms = l["time"]["median_ms"]
            model = {"TFLOP/s": l["flops"] / (ms * 1e9), "GB/s": l["bytes"] / (ms * 1e6), "us": ms * 1e3}[unit]
            # the error of the model's time against the published one (a rate's error is the inverse)
            err = (published / model - 1) if unit != "us" else (model / published - 1)
            errors.append(abs(err))
            print(f"{target:15s} {what:27s} {dtype:5s} {model:9.1f} {published:10.2f} {unit:7s} {100 * err:+6.1f}%  "
                  f"{source} [{l['rule']}]")
    print(f"{len(errors)} figures: median |time error| {100 * statistics.median(errors):.1f}%, "
          f"largest {100 * max(errors):.1f}% (positive: the model's time is longer than the measured one)")


if __name__ == "__main__":
    main()
