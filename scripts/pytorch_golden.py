#!/usr/bin/python3
"""Writes tests/data/golden/pytorch_reference.json: PyTorch's outputs for a few hundred tiny cases of every op, which the
CI test `Golden.ReferenceAgreesWithPyTorch` (tests/cpu/golden_test.cpp) runs through ridgeline's reference loops.

The cases come from ridgeline's own differential generator (`ridgeline-differential --emit`, tests/support/
differential.hpp), so they walk the same parameter space as the differential tests: every key of every op. Inputs
are multiples of 1/8 in [-2, 2] ([-8, 8] for activations) and weights multiples of 1/16 (exact in float32 and short in JSON); PyTorch computes
in float64 and the outputs are stored with 9 significant digits.

Needs Debian's python3-torch (not run by CI):
    sudo apt-get install python3-torch
    /usr/bin/python3 scripts/pytorch_golden.py build/ci/tests/ridgeline-differential [--per-op 12] [--seed 5]

A case PyTorch rejects, or whose output shape differs from ridgeline's, is reported and the script fails: ridgeline's
shape rules are meant to be PyTorch's.
"""
import argparse
import json
import math
import os
import subprocess
import sys

import torch
import torch.nn.functional as F
import warnings

warnings.filterwarnings("ignore", message="Using padding=.same.")


def parse_layer(text):
    kind, _, rest = text.partition(":")
    attrs = {}
    if rest:
        for item in rest.split(","):
            k, _, v = item.partition("=")
            attrs[k] = v
    return kind, attrs


def pair(v, default=None):
    if v is None:
        return default
    parts = [int(p) for p in v.split("x")]
    return (parts[0], parts[0]) if len(parts) == 1 else (parts[0], parts[1])


def ints(v):
    return [int(p) for p in v.split("x")]


def boolean(v, default):
    return default if v is None else v in ("true", "1", "True")


def grid(gen, shape, step, lo, hi):
    """Uniform multiples of `step` in [lo, hi]."""
    n = int(round((hi - lo) / step))
    return (torch.randint(0, n + 1, shape, generator=gen, dtype=torch.int64).double() * step + lo)


def parameters(kind, a, gen):
    """Parameter tensors by ridgeline's names (core/src/ops_*.cpp: parameters())."""
    p = {}
    if kind == "linear":
        p["weight"] = grid(gen, (int(a["out_features"]), int(a["in_features"])), 1 / 16, -1, 1)
        if boolean(a.get("bias"), True):
            p["bias"] = grid(gen, (int(a["out_features"]),), 1 / 16, -1, 1)
    elif kind == "embedding":
        p["weight"] = grid(gen, (int(a["num_embeddings"]), int(a["embedding_dim"])), 1 / 16, -1, 1)
        if "indices" in a:  # ids the layer holds (a registered index buffer)
            p["indices"] = torch.randint(0, int(a["num_embeddings"]), tuple(ints(a["indices"])), generator=gen).double()
    elif kind == "conv2d":
        kh, kw = pair(a["kernel_size"])
        groups = int(a.get("groups", 1))
        p["weight"] = grid(gen, (int(a["out_channels"]), int(a["in_channels"]) // groups, kh, kw), 1 / 16, -1, 1)
        if boolean(a.get("bias"), True):
            p["bias"] = grid(gen, (int(a["out_channels"]),), 1 / 16, -1, 1)
    elif kind == "batch_norm2d":
        c = int(a["num_features"])
        if boolean(a.get("affine"), True):
            p["weight"] = grid(gen, (c,), 1 / 16, 0.5, 1.5)
            p["bias"] = grid(gen, (c,), 1 / 16, -0.5, 0.5)
        p["running_mean"] = grid(gen, (c,), 1 / 16, -0.5, 0.5)
        p["running_var"] = grid(gen, (c,), 1 / 16, 0.5, 1.5)
    elif kind == "layer_norm":
        if boolean(a.get("elementwise_affine"), True):
            ns = tuple(ints(a["normalized_shape"]))
            p["weight"] = grid(gen, ns, 1 / 16, 0.5, 1.5)
            if boolean(a.get("bias"), True):
                p["bias"] = grid(gen, ns, 1 / 16, -0.5, 0.5)
    elif kind == "parameter":
        p["value"] = grid(gen, tuple(ints(a["shape"])), 1 / 16, -1, 1)
    elif kind == "rms_norm":
        if boolean(a.get("elementwise_affine"), True):
            p["weight"] = grid(gen, tuple(ints(a["normalized_shape"])), 1 / 16, 0.5, 1.5)
    elif kind == "kv_cache":
        shape = (int(a["batch"]), int(a["num_heads"]), int(a["past"]) + int(a.get("new_tokens", 1)), int(a["head_dim"]))
        p["cache"] = grid(gen, shape, 1 / 16, -1, 1)
    return p


def rope_inv_freq(a, dim, seq_end):
    """Hugging Face's modeling_rope_utils.py (_compute_*_parameters), in float32 as there: inv_freq and the factor
    cos and sin are scaled by."""
    base = float(a.get("theta", 10000))
    kind = a.get("scaling", "none")
    factor = float(a.get("factor", 1))
    exponent = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
    scale = 1.0
    if kind == "dynamic":
        max_pos = int(a["max_position_embeddings"])
        if seq_end > max_pos:
            base = base * ((factor * seq_end / max_pos) - (factor - 1)) ** (dim / (dim - 2))
    inv = 1.0 / (base ** exponent)
    if kind == "linear":
        inv = inv / factor
    elif kind == "yarn":
        max_pos = int(a["max_position_embeddings"])
        af = float(a.get("attention_factor", 0))
        scale = af if af > 0 else 0.1 * math.log(factor) + 1.0
        beta_fast, beta_slow = float(a.get("beta_fast", 32)), float(a.get("beta_slow", 1))

        def correction(rot):
            return (dim * math.log(max_pos / (rot * 2 * math.pi))) / (2 * math.log(base))

        low = max(math.floor(correction(beta_fast)), 0)
        high = min(math.ceil(correction(beta_slow)), dim - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        extrapolation = 1 - ramp
        inv = inv / factor * (1 - extrapolation) + inv * extrapolation
    elif kind == "llama3":
        old = int(a["original_max_position_embeddings"])
        low_f, high_f = float(a["low_freq_factor"]), float(a["high_freq_factor"])
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > old / low_f, inv / factor, inv)
        smooth = (old / wavelen - low_f) / (high_f - low_f)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < old / high_f) * ~(wavelen > old / low_f)
        inv = torch.where(medium, smoothed, scaled)
    return inv.float(), scale


def rotary(a, x):
    """apply_rotary_pos_emb of modeling_llama.py: x * cos + rotate_half(x) * sin, positions offset .. offset + S - 1;
    the tables in float32 as LlamaRotaryEmbedding computes them."""
    seq, dim = x.shape[2], x.shape[3]
    offset = int(a.get("offset", 0))
    inv, scale = rope_inv_freq(a, dim, offset + seq)
    pos = torch.arange(offset, offset + seq, dtype=torch.float32)
    freqs = pos[:, None] * inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = (emb.cos() * scale).double(), (emb.sin() * scale).double()
    x1, x2 = x[..., : dim // 2], x[..., dim // 2:]
    return x * cos + torch.cat((-x2, x1), dim=-1) * sin


def attention(a, xs):
    """scaled_dot_product_attention with repeat_kv (grouped-query heads) and Hugging Face's causal alignment (query i
    at position Skv - Sq + i), a sliding window of `sliding_window` keys (Mistral), or an additive mask."""
    q, k, v = xs[0], xs[1], xs[2]
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    sq, skv = q.shape[2], k.shape[2]
    scale = float(a.get("scale", 0)) or 1 / math.sqrt(q.shape[3])
    scores = q @ k.transpose(-1, -2) * scale
    if boolean(a.get("is_causal"), False):
        pos = torch.arange(skv - sq, skv)[:, None]
        j = torch.arange(skv)[None, :]
        keep = j <= pos
        window = int(a.get("sliding_window", 0))
        if window > 0:
            keep = keep & (pos - j < window)
        scores = scores.masked_fill(~keep, float("-inf"))
    elif len(xs) == 4:
        scores = scores + xs[3]
    return torch.softmax(scores, dim=-1) @ v


def forward(kind, a, xs, p):
    x = xs[0] if xs else None
    if kind == "linear":
        return F.linear(x, p["weight"], p.get("bias"))
    if kind == "matmul":
        return torch.matmul(xs[0], xs[1])
    if kind == "embedding":
        return F.embedding(p["indices"].long() if "indices" in p else x, p["weight"])
    if kind == "conv2d":
        pad = a.get("padding", "0")
        stride, dilation, groups = pair(a.get("stride"), (1, 1)), pair(a.get("dilation"), (1, 1)), int(a.get("groups", 1))
        if pad in ("same", "valid"):
            return F.conv2d(x, p["weight"], p.get("bias"), stride, pad, dilation, groups)
        v = ints(pad)
        if len(v) == 4:  # top x left x bottom x right
            x = F.pad(x, (v[1], v[3], v[0], v[2]))
            return F.conv2d(x, p["weight"], p.get("bias"), stride, 0, dilation, groups)
        return F.conv2d(x, p["weight"], p.get("bias"), stride, pair(pad), dilation, groups)
    if kind == "batch_norm2d":
        return F.batch_norm(x, p["running_mean"], p["running_var"], p.get("weight"), p.get("bias"), False, 0.0,
                            float(a.get("eps", "1e-5")))
    if kind == "layer_norm":
        return F.layer_norm(x, tuple(ints(a["normalized_shape"])), p.get("weight"), p.get("bias"),
                            float(a.get("eps", "1e-5")))
    if kind == "relu":
        return F.relu(x)
    if kind == "relu6":
        return F.relu6(x)
    if kind == "gelu":
        return F.gelu(x, approximate=a.get("approximate", "none"))
    if kind == "tanh":
        return torch.tanh(x)
    if kind == "sigmoid":
        return torch.sigmoid(x)
    if kind == "hardswish":
        return F.hardswish(x)
    if kind == "hardsigmoid":
        return F.hardsigmoid(x)
    if kind == "silu":
        return F.silu(x)
    if kind == "scale":
        return x * float(a["factor"])
    if kind == "softmax":
        return F.softmax(x, int(a.get("dim", -1)))
    if kind == "erf":
        return torch.erf(x)
    if kind == "sqrt":
        return torch.sqrt(x)
    if kind == "exp":
        return torch.exp(x)
    if kind == "neg":
        return torch.neg(x)
    if kind == "pow":
        return torch.pow(x, float(a["exponent"]))
    if kind == "sub":
        return xs[0] - xs[1]
    if kind == "div":
        return xs[0] / xs[1]
    if kind in ("mean", "sum", "amax"):
        dims = ints(a["dim"]) if "dim" in a else list(range(x.dim()))
        f = {"mean": torch.mean, "sum": torch.sum, "amax": torch.amax}[kind]
        return f(x, dim=dims, keepdim=boolean(a.get("keepdim"), False))
    if kind == "parameter":  # a tensor the module holds (nn.Parameter or a buffer), read as it is
        return p["value"].expand(*ints(a["expand"])) if "expand" in a else p["value"]
    if kind == "add":
        return xs[0] + xs[1]
    if kind == "mul":
        return xs[0] * xs[1]
    if kind in ("max_pool2d", "avg_pool2d"):
        k = pair(a["kernel_size"])
        stride, padding = pair(a.get("stride"), k), pair(a.get("padding"), (0, 0))
        ceil_mode = boolean(a.get("ceil_mode"), False)
        if kind == "max_pool2d":
            return F.max_pool2d(x, k, stride, padding, pair(a.get("dilation"), (1, 1)), ceil_mode)
        return F.avg_pool2d(x, k, stride, padding, ceil_mode, boolean(a.get("count_include_pad"), True))
    if kind == "adaptive_avg_pool2d":
        return F.adaptive_avg_pool2d(x, pair(a["output_size"]))
    if kind == "concat":
        return torch.cat(xs, int(a.get("dim", 1)))
    if kind == "flatten":
        return torch.flatten(x, int(a.get("start_dim", 1)), int(a.get("end_dim", -1)))
    if kind == "reshape":
        return x.reshape([x.shape[i] if d == 0 else d for i, d in enumerate(ints(a["shape"]))])
    if kind == "transpose":
        return x.transpose(int(a["dim0"]), int(a["dim1"]))
    if kind == "slice":
        d = int(a.get("dim", 0)) % x.dim()
        end = int(a["end"]) if "end" in a else None
        index = [slice(None)] * x.dim()
        index[d] = slice(int(a.get("start", 0)), end, int(a.get("step", 1)))
        return x[tuple(index)]
    if kind == "pad":
        amounts, mode = ints(a["pad"]), a.get("mode", "constant")
        if mode == "constant":
            return F.pad(x, amounts, value=float(a.get("value", 0)))
        try:
            return F.pad(x, amounts, mode=mode)
        except (RuntimeError, NotImplementedError, AssertionError, ValueError):
            # ranks PyTorch's reflect/replicate kernels do not take (they pad the last 1-3 dims of 2-5-D inputs):
            # numpy.pad, whose "reflect" and "edge" are PyTorch's reflect and replicate
            import numpy as np
            width = [(0, 0)] * x.dim()
            for i in range(len(amounts) // 2):
                width[x.dim() - 1 - i] = (amounts[2 * i], amounts[2 * i + 1])
            return torch.from_numpy(np.pad(x.numpy(), width, mode={"reflect": "reflect", "replicate": "edge"}[mode]))
    if kind == "expand":  # Tensor.expand, made contiguous
        return x.expand(*ints(a["size"])).contiguous()
    if kind == "where":  # the condition is a float tensor, true where > 0
        return torch.where(xs[0] > 0, xs[1], xs[2])
    if kind == "rms_norm":  # LlamaRMSNorm
        dims = tuple(range(-len(ints(a["normalized_shape"])), 0))
        y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + float(a.get("eps", 1e-6)))
        return y * p["weight"] if "weight" in p else y
    if kind == "rotary":
        return rotary(a, x)
    if kind == "attention":
        return attention(a, xs)
    if kind == "kv_cache":  # StaticCache.update: the new entries written at positions past ..
        y = p["cache"].clone()
        past = int(a["past"])
        y[:, :, past:past + x.shape[2]] = x
        return y
    if kind == "interpolate":
        mode = a.get("mode", "nearest")
        corners = boolean(a.get("align_corners"), False) if mode == "bilinear" else None
        return F.interpolate(x, size=pair(a["size"]), mode=mode, align_corners=corners)
    raise ValueError("no PyTorch mapping for " + kind)


def values(t):
    """9 significant digits; infinities and NaN as the strings "inf", "-inf", "nan" (JSON has no such numbers)."""
    return [float(f"{v:.9g}") if math.isfinite(v) else str(v) for v in t.flatten().tolist()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tool", help="path of the built ridgeline-differential")
    ap.add_argument("--per-op", type=int, default=20, help="cases per op kind")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--output", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data", "golden",
                                                     "pytorch_reference.json"))
    args = ap.parse_args()
    if not (os.path.isfile(args.tool) and os.access(args.tool, os.X_OK)):
        ap.error(f"{args.tool} is not an executable file (build it: cmake --build --preset ci; it is "
                 "build/ci/tests/ridgeline-differential)")
    if not 1 <= args.per_op <= 1000:
        ap.error(f"--per-op {args.per_op} is outside 1 to 1000")
    if not 0 <= args.seed < 2**63:
        ap.error(f"--seed {args.seed} is outside 0 to 2^63-1")
    if os.path.isdir(args.output):
        ap.error(f"--output {args.output} is a folder; give the file to write")
    run = subprocess.run([args.tool, "--emit", str(args.per_op), "--seed", str(args.seed)], capture_output=True,
                         text=True)
    if run.returncode != 0:
        last = (run.stderr.strip().splitlines() or ["(no message)"])[-1]
        ap.error(f"{args.tool} --emit exited with {run.returncode}: {last}")
    lines = run.stdout.splitlines()
    gen = torch.Generator().manual_seed(args.seed)
    cases, problems = [], []
    for line in lines:
        c = json.loads(line)
        kind, a = parse_layer(c["layer"])
        if kind == "embedding":
            xs = [torch.randint(0, int(a["num_embeddings"]), tuple(s), generator=gen) for s in c["inputs"]]
        else:
            # activations see [-8, 8] (relu6's clamp, the tails of gelu, tanh and sigmoid), the rest [-2, 2]
            r = 8 if kind in ("relu", "relu6", "gelu", "tanh", "sigmoid", "hardswish", "hardsigmoid", "silu",
                              "softmax") else 2
            xs = [grid(gen, tuple(s), 1 / 8, -r, r) for s in c["inputs"]]
            if kind in ("sqrt", "pow"):  # real only for x >= 0, as the differential harness draws them
                xs = [x.abs() for x in xs]
            if kind == "div":  # the grid holds 0: no division by zero (0/0 is NaN, which compares unequal)
                xs = [torch.where(x == 0, torch.full_like(x, 0.125), x) for x in xs]
            if c.get("same_input"):  # one tensor read twice: the same values (transposed for matmul's second)
                xs = [xs[0], xs[0].transpose(-1, -2)] if kind == "matmul" else [xs[0]] * len(xs)
        p = parameters(kind, a, gen)
        try:
            y = forward(kind, a, xs, p)
        except Exception as e:  # a case ridgeline accepts and PyTorch rejects: a finding
            problems.append(f"{c['layer']} on {c['inputs']}: PyTorch says {str(e).splitlines()[0]}")
            continue
        if list(y.shape) != c["output"]:
            problems.append(f"{c['layer']} on {c['inputs']}: PyTorch's output {list(y.shape)}, ridgeline's {c['output']}")
            continue
        cases.append({
            "layer": c["layer"],
            "inputs": [{"dims": list(x.shape), "values": [float(v) for v in x.flatten().tolist()]} for x in xs],
            "params": {name: {"dims": list(t.shape), "values": values(t)} for name, t in p.items()},
            "output": {"dims": list(y.shape), "values": values(y)},
        })
    for pr in problems:
        print("MISMATCH", pr)
    doc = {
        "about": "PyTorch's outputs (float64, 9 significant digits) for tiny cases of ridgeline's differential "
                 "generator; written by scripts/pytorch_golden.py, read by tests/cpu/golden_test.cpp",
        "torch_version": torch.__version__,
        "seed": args.seed,
        "per_op": args.per_op,
        "cases": cases,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    kinds = sorted({parse_layer(c["layer"])[0] for c in cases})
    print(f"{len(cases)} cases of {len(kinds)} op kinds, {os.path.getsize(args.output):,} bytes -> {args.output}; "
          f"{len(problems)} disagreements")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
