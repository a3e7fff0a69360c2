#pragma once
// What the reference loops' files share (cpu/src/reference.cpp, reference_conv.cpp): the checked view of one call
// (inputs, parameters, output). Private to cpu/.
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/backend_api/tensor.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/model.hpp"

namespace ridgeline::cpu::reference_detail {

using backend_api::backend_error;
using backend_api::host_tensor;
using core::shape;
using i64 = std::int64_t;

// ------------------------------------------------------------------ inputs, parameters, output

/// The checked view of one call: every input present with as many values as its shape needs, every
/// parameter of the op present with the element count of its spec, and out_shape the shape the inputs
/// give. Handlers read through it and never re-check.
class layer_io {
public:
    layer_io(const core::layer& l, const std::vector<const host_tensor*>& inputs,
             const std::map<std::string, const host_tensor*>& params, const shape& out_shape)
        : where_(core::where(l)), inputs_(inputs), params_(params), out_shape_(out_shape) {
        const auto [min_inputs, max_inputs] = std::visit(
            [](const auto& o) {
                using T = std::decay_t<decltype(o)>;
                return std::pair<int, int>{T::min_inputs, T::max_inputs};
            },
            l.op);
        const auto count = static_cast<int>(inputs.size());
        if (count < min_inputs)
            fail("input " + std::to_string(count + 1) + " is missing (the layer takes " +
                 (min_inputs == max_inputs ? std::to_string(min_inputs) : "at least " + std::to_string(min_inputs)) +
                 ", got " + std::to_string(count) + ")");
        if (max_inputs >= 0 && count > max_inputs)
            fail("takes " + std::to_string(max_inputs) + " input" + (max_inputs == 1 ? "" : "s") + ", got " +
                 std::to_string(count));
        core::shapes in_shapes;
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const host_tensor* t = inputs[i];
            if (t == nullptr) fail("input " + std::to_string(i + 1) + " is missing (null)");
            if (static_cast<i64>(t->data.size()) != t->dims.numel())
                fail("input " + std::to_string(i + 1) + " has " + std::to_string(t->data.size()) +
                     " values but its shape " + t->dims.to_string() + " needs " + std::to_string(t->dims.numel()));
            in_shapes.push_back(t->dims);
        }
        for (const core::param_spec& spec : core::parameters_of(l.op)) {
            const auto it = params.find(spec.name);
            if (it == params.end() || it->second == nullptr)
                fail("parameter \"" + spec.name + "\" (" + spec.dims.to_string() + ") is missing");
            if (static_cast<i64>(it->second->data.size()) != spec.dims.numel())
                fail("parameter \"" + spec.name + "\" has " + std::to_string(it->second->data.size()) +
                     " values, expected " + std::to_string(spec.dims.numel()) + " (" + spec.dims.to_string() + ")");
        }
        // The loops index the inputs with out_shape: an out_shape that does not fit them would read out of
        // bounds, so it is checked against the shape rules of core (which also validate the inputs).
        shape expected;
        try {
            expected = core::infer_shape(l, in_shapes);
        } catch (const core::error& e) {
            throw backend_error(e.what());
        }
        if (expected != out_shape)
            fail("out_shape " + out_shape.to_string() + " does not match the shape " + expected.to_string() +
                 " of these inputs");
    }

    [[noreturn]] void fail(const std::string& message) const { throw backend_error(where_ + ": " + message); }

    [[nodiscard]] const host_tensor& input(std::size_t i) const { return *inputs_[i]; }
    [[nodiscard]] std::size_t input_count() const { return inputs_.size(); }
    [[nodiscard]] const shape& out_shape() const { return out_shape_; }
    [[nodiscard]] const std::string& where() const { return where_; }

    /// A parameter of the op's spec (checked in the constructor).
    [[nodiscard]] const float* param(const std::string& name) const {
        const auto it = params_.find(name);
        if (it == params_.end() || it->second == nullptr) fail("parameter \"" + name + "\" is missing");
        return it->second->data.data();
    }

    /// The output tensor, poisoned with NaN so that an element a loop forgets shows up in verification.
    [[nodiscard]] host_tensor make_output() const {
        return host_tensor{out_shape_, std::vector<float>(static_cast<std::size_t>(out_shape_.numel()),
                                                          std::numeric_limits<float>::quiet_NaN())};
    }

private:
    std::string where_;
    const std::vector<const host_tensor*>& inputs_;
    const std::map<std::string, const host_tensor*>& params_;
    const shape& out_shape_;
};

/// torch.nn.Conv2d (reference_conv.cpp): tiled over output positions, accumulating in double.
host_tensor conv2d_forward(const core::conv2d& op, const layer_io& io);

/// torch.nn.functional.pad and torch.nn.functional.interpolate (reference_resample.cpp).
host_tensor pad_forward(const core::pad& op, const layer_io& io);
host_tensor interpolate_forward(const core::interpolate& op, const layer_io& io);

/// The transformer layers (reference_attention.cpp).
host_tensor rms_norm_forward(const core::rms_norm& op, const layer_io& io);
host_tensor rotary_forward(const core::rotary& op, const layer_io& io);
host_tensor attention_forward(const core::attention& op, const layer_io& io);
host_tensor kv_cache_forward(const core::kv_cache& op, const layer_io& io);

}  // namespace ridgeline::cpu::reference_detail
