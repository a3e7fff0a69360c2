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


class RMSNorm(nn.Module):
    """Hugging Face's LlamaRMSNorm."""

    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class LlamaLayer(nn.Module):
    """modeling_llama.LlamaDecoderLayer written out in plain torch: RMSNorm, q/k/v without bias, rotary embeddings
    (rotate-half), grouped-query attention (repeat_kv), a causal mask by masked_fill, o_proj, SwiGLU MLP."""

    def __init__(self, d, heads, kv_heads, ffn, t):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.input_layernorm, self.post_attention_layernorm = RMSNorm(d), RMSNorm(d)
        self.q_proj = nn.Linear(d, heads * self.hd, bias=False)
        self.k_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(heads * self.hd, d, bias=False)
        self.gate_proj, self.up_proj = nn.Linear(d, ffn, bias=False), nn.Linear(d, ffn, bias=False)
        self.down_proj = nn.Linear(ffn, d, bias=False)
        self.register_buffer("causal", torch.tril(torch.ones(t, t)).view(1, 1, t, t))

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v_proj(h).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        g = self.heads // self.kv_heads  # repeat_kv
        k = k[:, :, None].expand(b, self.kv_heads, g, t, self.hd).reshape(b, self.heads, t, self.hd)
        v = v[:, :, None].expand(b, self.kv_heads, g, t, self.hd).reshape(b, self.heads, t, self.hd)
        att = (q @ k.transpose(2, 3)) / math.sqrt(self.hd)
        att = att.masked_fill(self.causal[:, :, :t, :t] == 0, float("-inf"))
        y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.o_proj(y)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(nn.functional.silu(self.gate_proj(h)) * self.up_proj(h))


class LlamaModel(nn.Module):
    """A two-layer LlamaForCausalLM in plain torch (hidden 64, 4 heads of 16, 2 kv heads, MLP 128, vocabulary 100,
    theta 10000, LM head untied): the config of the built-in check in tests/io/onnx_fixtures_test.cpp."""

    def __init__(self, vocab=100, d=64, heads=4, kv_heads=2, ffn=128, layers=2, t=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList(LlamaLayer(d, heads, kv_heads, ffn, t) for _ in range(layers))
        self.norm = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        hd = d // heads
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd)))

    def forward(self, ids):
        t = ids.shape[1]
        freqs = torch.arange(t).float()[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.norm(x))


def llama_block():
    return LlamaModel(), torch.randint(0, 100, (1, 16))


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
    "llama_block": llama_block,
}

# buffers kept in the graph (not moved to external data): the causal mask's values decide which scores are masked
INLINE = {"gpt2_block": {"bias"}, "llama_block": {"inv_freq", "layers.0.causal", "layers.1.causal"}}


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
    # the angles a rotary embedding takes the cos and sin of are values of the computation, not weights: kept
    keep = set(keep) | {i for n in m.graph.node if n.op_type in ("Cos", "Sin") for i in n.input}
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
