#!/usr/bin/env python3
"""Writes examples/tiny_cnn.onnx: a small CNN with its weights inside the file, for the README's ONNX examples
(`summary --onnx`, `profile --onnx`, `weights --onnx`). Built with onnx.helper (Debian's python3-onnx 1.12, opset
14), weights from a seeded numpy generator, so the file is the same every time it is written.

  x [1, 3, 32, 32] -> Conv 3->16 3x3 pad 1 -> BatchNormalization -> Relu -> MaxPool 2x2
    -> Conv 16->32 3x3 pad 1 -> Relu -> GlobalAveragePool -> Flatten -> Gemm 32->10 -> y [1, 10]

The first conv's weights have a tenth of their values set to exactly 0, so `weights --onnx` has zeros to count.
Usage: python3 examples/make_tiny_cnn_onnx.py [OUTPUT]   (default: examples/tiny_cnn.onnx beside this script)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny_cnn.onnx")
    rng = np.random.default_rng(20261206)

    def weight(name, shape, scale):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    w1 = rng.standard_normal((16, 3, 3, 3)).astype(np.float32) * 0.2
    w1.flat[:: 10] = 0.0
    inits = [
        numpy_helper.from_array(w1, "conv1.weight"),
        weight("conv1.bias", (16,), 0.05),
        numpy_helper.from_array(np.abs(rng.standard_normal(16)).astype(np.float32) + 0.5, "bn1.weight"),
        weight("bn1.bias", (16,), 0.1),
        weight("bn1.running_mean", (16,), 0.1),
        numpy_helper.from_array(np.abs(rng.standard_normal(16)).astype(np.float32) + 0.5, "bn1.running_var"),
        weight("conv2.weight", (32, 16, 3, 3), 0.1),
        weight("conv2.bias", (32,), 0.05),
        weight("fc.weight", (10, 32), 0.2),
        weight("fc.bias", (10,), 0.05),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], ["c1"], name="conv1", pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "bn1.weight", "bn1.bias", "bn1.running_mean", "bn1.running_var"],
                         ["b1"], name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], name="conv2", pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten", axis=1),
        helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(nodes, "tiny_cnn",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, producer_name="ridgeline examples/make_tiny_cnn_onnx.py",
                              opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)
    print(f"wrote {out}: {os.path.getsize(out)} bytes")


if __name__ == "__main__":
    main()
