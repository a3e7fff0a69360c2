#!/usr/bin/python3
"""Writes the ONNX files bench/ort_parity.sh times in ridgeline and in ONNX Runtime: random-weight PyTorch exports
(torch.onnx.export, opset 14, eval mode, BatchNorm folded by the export as a deployment exports it), weights inside
the file, into OUT_DIR:
  resnet18, resnet50, mobilenet_v2, efficientnet_b0  torchvision's models, input 1x3x224x224;
  bert_base                                         a BERT-base encoder written out as Hugging Face's modeling_bert
                                                    writes it (below), token ids 1x128.
Weights are drawn at random (seeded) with scripts/onnx_fixtures.py's randomise(): equal tensors would be stored once.

Needs Debian's python3-torch, python3-torchvision and python3-onnx (not run by CI):
    /usr/bin/python3 bench/ort_parity_models.py OUT_DIR [names...]
"""
import math
import os
import sys
import warnings

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import onnx_fixtures  # noqa: E402  (randomise, tv)

warnings.filterwarnings("ignore")


class BertLayer(nn.Module):
    """modeling_bert.BertLayer (eval, absolute positions, no attention mask): self-attention with q/k/v projections,
    softmax(QK^T / sqrt(d_head)) V, output projection, residual and LayerNorm (post-norm); then the intermediate
    linear with erf GELU, the output linear, residual and LayerNorm."""

    def __init__(self, d, heads, ffn, eps):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.query, self.key, self.value = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.attn_out, self.attn_norm = nn.Linear(d, d), nn.LayerNorm(d, eps=eps)
        self.intermediate, self.output = nn.Linear(d, ffn), nn.Linear(ffn, d)
        self.out_norm = nn.LayerNorm(d, eps=eps)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = (p(x).view(b, t, self.heads, self.hd).transpose(1, 2) for p in (self.query, self.key, self.value))
        att = torch.softmax((q @ k.transpose(-1, -2)) / math.sqrt(self.hd), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = self.attn_norm(x + self.attn_out(y))
        return self.out_norm(x + self.output(nn.functional.gelu(self.intermediate(x))))


class BertEncoder(nn.Module):
    """BertModel's embeddings (word + absolute position + token type 0, LayerNorm) and encoder, without the pooler:
    bert-base-uncased's config.json (hidden 768, 12 layers, 12 heads, intermediate 3072, vocabulary 30522, 512
    positions, layer_norm_eps 1e-12)."""

    def __init__(self, vocab=30522, d=768, layers=12, heads=12, ffn=3072, positions=512, eps=1e-12):
        super().__init__()
        self.word, self.position, self.token_type = nn.Embedding(vocab, d), nn.Embedding(positions, d), nn.Embedding(2, d)
        self.norm = nn.LayerNorm(d, eps=eps)
        self.layers = nn.ModuleList(BertLayer(d, heads, ffn, eps) for _ in range(layers))

    def forward(self, ids):
        t = ids.shape[1]
        pos = torch.arange(t)[None, :]
        x = self.norm(self.word(ids) + self.position(pos) + self.token_type(torch.zeros_like(ids)))
        for layer in self.layers:
            x = layer(x)
        return x


MODELS = {
    "resnet18": onnx_fixtures.tv("resnet18"),
    "resnet50": onnx_fixtures.tv("resnet50"),
    "mobilenet_v2": onnx_fixtures.tv("mobilenet_v2"),
    "efficientnet_b0": onnx_fixtures.tv("efficientnet_b0"),
    "bert_base": lambda: (BertEncoder(), torch.randint(0, 30522, (1, 128))),
}


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: bench/ort_parity_models.py OUT_DIR [names...]")
    out = sys.argv[1]
    names = sys.argv[2:] or list(MODELS)
    os.makedirs(out, exist_ok=True)
    for i, name in enumerate(names):
        if name not in MODELS:
            sys.exit("bench/ort_parity_models.py: unknown model '%s' (known: %s)" % (name, ", ".join(MODELS)))
        path = os.path.join(out, name + ".onnx")
        if os.path.exists(path):
            continue
        torch.manual_seed(i)
        model, x = MODELS[name]()
        model.eval()
        onnx_fixtures.randomise(model, 2000 + list(MODELS).index(name))
        torch.onnx.export(model, x, path, opset_version=14)
        print("%-22s %6.1f MB, input %s" % (name + ".onnx", os.path.getsize(path) / 1e6, "x".join(map(str, x.shape))),
              flush=True)


if __name__ == "__main__":
    main()
