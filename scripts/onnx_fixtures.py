#!/usr/bin/python3
"""Writes tests/data/onnx/: graph-only ONNX exports of everyday PyTorch models, and manifest.json with PyTorch's own
counts of each, which the CI tests `OnnxFixtures.*` (tests/io/onnx_fixtures_test.cpp) import and compare.

Each model is exported twice with torch.onnx.export (opset 14, eval mode, unmodified node order):
  <name>_folded.onnx  the default export (BatchNorm folded into the convolutions);
  <name>_bn.onnx      BatchNorm kept: training=TrainingMode.PRESERVE, do_constant_folding=False.
Float initializers of 128 bytes or more are then moved to external data, <name>_<variant>.data beside the file, which
is NOT committed (.gitignore): a clone has the graphs (under 300 kB each), not the weights. ridgeline imports such
a file with --shapes-only (seeded random weights, exact counts); with the .data file present it reads the weights.

Parameters and buffers are drawn at random (seeded) before export: freshly initialised models hold many equal
tensors (BatchNorm's ones and zeros, the cloned layers of nn.TransformerEncoder), which the exporter stores once
and ridgeline would count once, unlike model.parameters().

PyTorch's counts (manifest.json, per model): params = sum(p.numel() for p in model.parameters()); hook_macs =
forward hooks on every nn.Conv2d (output elements x in_channels/groups x kh x kw) and nn.Linear (output elements x
in_features). torch 1.13 has no FlopCounterMode; what hooks cannot see (nn.MultiheadAttention's projections and its
two matmuls) is derived by hand in the test's comment.

Needs Debian's python3-torch, python3-torchvision and python3-onnx (not run by CI):
    sudo apt-get install python3-torch python3-torchvision python3-onnx
    /usr/bin/python3 scripts/onnx_fixtures.py [--only resnet18,...]
"""
import argparse
import json
import math
import os
import sys
import warnings

import onnx
import torch
import torch.nn as nn
import torchvision

warnings.filterwarnings("ignore")

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "onnx")


def transformer_encoder():
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=2), torch.randn(1, 16, 64)


class GPT2Block(nn.Module):
    """A GPT-2 decoder block as GPT-2 writes it (no nn.MultiheadAttention): pre-LayerNorm causal self-attention with
    a registered causal-mask buffer and masked_fill, then an MLP with GPT-2's tanh GELU (NewGELU), residuals."""

    def __init__(self, d=64, heads=4, t=16):
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.c_fc, self.mlp_proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.register_buffer("bias", torch.tril(torch.ones(t, t)).view(1, 1, t, t))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.c_proj(y)
        h = self.c_fc(self.ln_2(x))
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
        return x + self.mlp_proj(h)


def gpt2_block():
    return GPT2Block(), torch.randn(1, 16, 64)


def tv(name, size=224, **kw):
    return lambda: (getattr(torchvision.models, name)(**kw), torch.randn(1, 3, size, size))


MODELS = {
    "resnet18": tv("resnet18"),
    "resnet50": tv("resnet50"),
    "resnext50_32x4d": tv("resnext50_32x4d"),
    "mobilenet_v2": tv("mobilenet_v2"),
    "mobilenet_v3_large": tv("mobilenet_v3_large"),
    "shufflenet_v2_x1_0": tv("shufflenet_v2_x1_0"),
    "mnasnet1_0": tv("mnasnet1_0"),
    "densenet121": tv("densenet121"),
    "inception_v3": tv("inception_v3", 299, init_weights=False, aux_logits=False),
    "googlenet": tv("googlenet", init_weights=False, aux_logits=False),
    "efficientnet_b0": tv("efficientnet_b0"),
    "regnet_y_400mf": tv("regnet_y_400mf"),
    "squeezenet1_0": tv("squeezenet1_0"),
    "vgg11_bn": tv("vgg11_bn"),
    "transformer_encoder": transformer_encoder,
    "convnext_tiny": tv("convnext_tiny"),
    "vit_b_16": tv("vit_b_16"),
    "gpt2_block": gpt2_block,
    "swin_t": tv("swin_t"),
}

# buffers kept in the graph (not moved to external data): the causal mask's values decide which scores are masked
INLINE = {"gpt2_block": {"bias"}}


def randomise(model, seed, model_name=""):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.is_floating_point() or name in INLINE.get(model_name, ()):
                continue
            v = torch.rand(t.shape, generator=g) * 0.2 - 0.1
            if name.endswith("running_var"):
                v = v.abs() + 0.5  # a variance is positive
            t.copy_(v)


def hook_macs(model, x):
    total = [0]

    def conv(m, inp, out):
        total[0] += out.numel() * (m.in_channels // m.groups) * m.kernel_size[0] * m.kernel_size[1]

    def linear(m, inp, out):
        total[0] += out.numel() * m.in_features

    hooks = []
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            hooks.append(m.register_forward_hook(conv))
        elif isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(linear))
    model(x)  # with autograd on: in eval mode under no_grad, nn.TransformerEncoder takes a fused fast path
    for h in hooks:
        h.remove()
    return total[0]


def externalise(path, data_name, keep=()):
    m = onnx.load(path)
    moved = 0
    for t in m.graph.initializer:
        if t.name in keep:
            continue
        if t.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16) and len(t.raw_data) >= 128:
            onnx.external_data_helper.set_external_data(t, data_name)
            moved += 1
    onnx.save_model(m, path)  # writes the raw data of the marked tensors to data_name, beside the file
    return moved


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="comma-separated model names (default: all)")
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    os.makedirs(OUT, exist_ok=True)
    manifest_path = os.path.join(OUT, "manifest.json")
    manifest = json.load(open(manifest_path)) if os.path.exists(manifest_path) else {}
    manifest["about"] = ("PyTorch's counts of the models exported to tests/data/onnx by scripts/onnx_fixtures.py "
                         "(torch %s, torchvision %s, onnx %s, opset 14)" %
                         (torch.__version__, torchvision.__version__, onnx.__version__))
    models = manifest.setdefault("models", {})
    for name in names:
        i = list(MODELS).index(name)  # seeds by the model, so --only makes the same files
        torch.manual_seed(i)
        model, x = MODELS[name]()
        model.eval()
        randomise(model, 1000 + i, name)
        entry = {
            "input": list(x.shape),
            "params": sum(p.numel() for p in model.parameters()),
            "hook_macs": hook_macs(model, x),
            "files": {},
        }
        for variant in ("folded", "bn"):
            kw = dict(opset_version=14)
            if variant == "bn":
                kw.update(training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
            base = "%s_%s" % (name, variant)
            path = os.path.join(OUT, base + ".onnx")
            data = base + ".data"
            if os.path.exists(os.path.join(OUT, data)):
                os.remove(os.path.join(OUT, data))
            torch.onnx.export(model, x, path, **kw)
            moved = externalise(path, data, INLINE.get(name, ()))
            size = os.path.getsize(path)
            entry["files"][variant] = base + ".onnx"
            print("%-32s %8d bytes, %3d initializers in %s" % (base + ".onnx", size, moved, data), flush=True)
            if size > 300 * 1024:
                print("  warning: over 300 kB", file=sys.stderr)
        models[name] = entry
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
