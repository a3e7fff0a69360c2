#pragma once
// The analytic cost of a layer or a model. Conventions (the full per-op table is docs/conventions.md):
// - params: trainable parameter elements (weights, biases, BatchNorm/LayerNorm gamma and beta), as
//   torchvision counts them; buffers: non-trainable state (BatchNorm running mean and variance).
// - macs: multiply-accumulates of Linear, Conv2d and MatMul (padding taps included, as PyTorch counts).
// - skipped_macs: the part of macs a kernel skips: conv2d taps that fall in the padding, attention's query-key
//   pairs the causal mask or sliding window removes; executed_macs() = macs - skipped_macs is the work a kernel
//   must do (benchdnn's rates count the same for convolutions).
// - flops: everything the layer computes: 2*macs, plus one add per output element for a bias, plus the
//   elementwise work of each op. bias_flops is the part of flops spent on bias adds.
// - bytes: minimal compulsory traffic at the data type's size: every input element read once, every
//   parameter and buffer element read once, every output element written once; views move 0 bytes.
// Every field is int64 and every sum or product is overflow-checked (core::overflow_error).

#include <cstdint>
#include <optional>
#include <string>

#include "ridgeline/core/shape.hpp"

namespace ridgeline::core {

struct cost {
    std::int64_t params = 0;
    std::int64_t buffers = 0;
    std::int64_t macs = 0;
    std::int64_t skipped_macs = 0;  // MACs on padding taps (conv2d) or masked pairs (attention), included in macs
    std::int64_t flops = 0;
    std::int64_t bias_flops = 0;
    std::int64_t bytes = 0;

    /// MACs a kernel must execute: macs without the padding taps.
    [[nodiscard]] std::int64_t executed_macs() const { return macs - skipped_macs; }
    /// FLOPs a kernel must execute: flops without the 2 FLOP of each skipped MAC.
    [[nodiscard]] std::int64_t executed_flops() const { return flops - 2 * skipped_macs; }

    /// flops / bytes (FLOP per byte); empty when the layer moves no bytes (views).
    [[nodiscard]] std::optional<double> arithmetic_intensity() const;

    /// Field-wise checked sum; throws overflow_error naming the field.
    cost& operator+=(const cost& other);
    bool operator==(const cost&) const = default;
};

/// A parameter or buffer tensor of a layer ("weight", "bias", "running_mean", ...).
struct param_spec {
    std::string name;
    shape dims;
    bool trainable = true;
};

}  // namespace ridgeline::core

namespace ridgeline::core::conventions {

/// What torchvision, fvcore and thop call "FLOPs"/"MACs": multiply-accumulates.
inline std::int64_t torchvision_macs(const cost& c) { return c.macs; }

/// PyTorch's torch.utils.flop_counter.FlopCounterMode: 2 * macs (bias and elementwise work not counted).
std::int64_t flop_counter_mode_flops(const cost& c);

/// TinyTorch's Profiler: per-sample FLOPs, bias adds excluded (2*macs + elementwise, divided by batch).
double tinytorch_flops(const cost& c, std::int64_t batch);

}  // namespace ridgeline::core::conventions
