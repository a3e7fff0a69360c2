#pragma once
// The model as a deployment engine runs it (`--fuse`): a producer (conv2d, linear, matmul) and the layers a
// deployment engine runs inside the producer's kernel become one fused group, timed as one kernel.
//
// Rules, each applied where the producer's output is read by the next member only (no other reader, not a model
// output), in this order along a chain:
//   fold batch norm     conv2d -> batch_norm2d (eval): the scale and shift are folded into the convolution's weights
//                       and bias at load time (ONNX Runtime's ConvBNFusion; PyTorch's fuse_conv_bn_eval;
//                       TensorRT). Only directly after the convolution, before any post-op.
//   sum post-op         -> add(x, skip) with skip of the output's shape (no broadcast): the residual is added in the
//                       producer's output (oneDNN's sum/binary post-op, ONNX Runtime's FusedConv "Z" input, cuDNN's
//                       convolution-bias-activation with z). One per group, before any activation (ONNX Runtime's
//                       Conv+Add+Act takes the activation after the sum only).
//   activation post-op  -> relu, relu6, gelu, silu, hardswish, sigmoid, tanh (oneDNN's eltwise post-ops; ONNX
//                       Runtime's ConvActivationFusion and MatMul/Gemm activation fusion; cuBLASLt's RELU/GELU
//                       epilogues), after the sum too (a residual block's final relu); max_post_ops members in all.
// A group's counts are its members' sums (MACs, FLOPs, params, buffers); its bytes are only what crosses its
// boundary (derived: each tensor between two members is written and read inside the kernel, so its write and read
// leave the sum; a folded batch norm's four vectors become the convolution's bias). Source of the engines'
// rules: onnxruntime/core/optimizer (conv_bn_fusion.cc, conv_activation_fusion.cc, conv_add_fusion.cc), oneDNN's
// "Primitive Attributes: Post-ops" page.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/core/model.hpp"

namespace ridgeline::core {

/// Members after a group's producer, at most: oneDNN's post-op chain holds 32 (post_ops::append fails beyond), so a longer chain of activations starts a layer of its own.
inline constexpr std::size_t max_post_ops = 32;

/// A rewrite a deployment engine makes, one per member after a group's producer.
enum class fusion_rule { fold_batch_norm, sum_post_op, activation_post_op };

/// "fold batch norm", "sum post-op", "activation post-op".
std::string_view to_string(fusion_rule r);

/// The rule that put member `k` (>= 1) of a fused group into it. Throws core::error for k out of range.
fusion_rule rule_of(const layer_analysis& group, std::size_t k);

/// Whether an op can lead a group (conv2d, linear, matmul).
bool is_fusion_producer(const op& o);

/// Whether an op runs as an activation post-op (relu, relu6, gelu, silu, hardswish, sigmoid, tanh).
bool is_fusable_activation(const op& o);

/// `a` rewritten as a deployment engine runs it: every group of two or more members is one layer at the place of its
/// last member, named as its producer (readers of the last member read the group). Layers no rule joins stay as they
/// are. Totals: the same params and buffers, MACs and FLOPs; bytes the sum of the rows'.
model_analysis fuse(const model_analysis& a);

/// Member `k` (>= 1) of a fused group reads one operand from outside the group (a residual add's skip): its index in
/// group.layer.inputs; empty for members that read only the previous member.
std::optional<std::size_t> outside_operand(const layer_analysis& group, std::size_t k);

/// "layer1.0.conv1+bn1+relu": the producer's name, then each later member's name without the prefix it shares with
/// the producer's, cut at a separator ('.' or '/': "/layer1/layer1.0/conv2/Conv+bn2/BatchNormalization"). A plain
/// layer's own name.
std::string group_label(const layer_analysis& la);

/// The tensors `layer` reads, as a report names rows: a fused group by its label (group_label), other tensors by
/// name; joined by ';' (the CSV's "inputs", where each row is named by its label).
std::string input_labels(const model_analysis& a, const layer_analysis& layer);

/// The model `fuse` rewrote, as it was before (the groups' members back in their places and names): what a training
/// step runs (core::estimate_training), since folding a batch norm is an inference rewrite. `a` itself where nothing
/// was fused.
model_analysis unfuse(const model_analysis& a);

/// What `fuse` did, counted by rule: "20 batch norms folded, 17 activations and 8 residual adds as post-ops";
/// "nothing to fuse (...)" where `fuse` ran and no rule matched (model_analysis::fusion_applied); empty for a model
/// `fuse` never rewrote.
std::string describe_fusion(const model_analysis& fused);

}  // namespace ridgeline::core
