// The oneDNN lowering of a fused group (dnnl_graph.hpp, core/fusion.hpp): one primitive of the producer (convolution,
// inner product, matmul), a batch norm folded into its weights and bias at prepare time, the residual add as a sum
// post-op and the activations as eltwise post-ops (oneDNN's "Primitive Attributes: Post-ops"). A binary-add post-op
// would read the residual without the copy a sum may need, but oneDNN 2.6 runs a convolution with a full-tensor
// binary post-op on its slower jit kernel, not brgconv (5.0 ms against 1.0 ms for a 64-channel 3x3 convolution on
// 56x56, 2 threads of a Zen 4): the sum keeps the fast kernel.
#include <algorithm>
#include <cmath>

#include "dnnl_graph.hpp"
#include "dnnl_silu.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/fusion.hpp"

namespace ridgeline::cpu::dnnl_detail {

void dnnl_graph::add_fused(const core::layer_analysis& la) {
    core::layer_analysis producer = la;  // the group's inputs and output shape, run as its producer's op
    producer.fused.clear();
    producer.layer.op = la.fused.front().layer.op;
    post_ops_ = dnnl::post_ops();
    sum_operand_.clear();
    bool silu_after = false;
    producer_inputs_.assign(la.layer.inputs.begin(),
                            la.layer.inputs.begin() + static_cast<std::ptrdiff_t>(la.fused.front().layer.inputs.size()));
    for (std::size_t k = 1; k < la.fused.size(); ++k) {
        const core::layer_analysis& m = la.fused[k];
        switch (core::rule_of(la, k)) {
            case core::fusion_rule::fold_batch_norm: {
                fold_batch_norm(la.fused.front().layer, m.layer);
                std::get<core::conv2d>(producer.layer.op).bias = true;
                break;
            }
            case core::fusion_rule::sum_post_op:
                sum_operand_ = la.layer.inputs.at(core::outside_operand(la, k).value());
                post_ops_.append_sum(1.0f);
                break;
            case core::fusion_rule::activation_post_op: {
                if (k + 1 == la.fused.size() && silu_as_loop(m.layer.op, la.output_shape)) {
                    silu_after = true;  // after the producer, in place (dnnl_silu.hpp: a third of the post-op's time)
                    break;
                }
                const eltwise_spec e = activation_eltwise(m.layer.op);
                post_ops_.append_eltwise(1.0f, e.alg, e.alpha, e.beta);
                break;
            }
        }
    }
    post_ops_pending_ = true;
    try {
        std::visit([&](const auto& op) { add(producer, op); }, producer.layer.op);
    } catch (...) {
        post_ops_pending_ = false;
        sum_operand_.clear();
        throw;
    }
    post_ops_pending_ = false;
    sum_operand_.clear();
    if (silu_after) {
        const memory y = slots_.at(la.layer.name).mem;
        add_silu_step(y, y);
    }
}

bool dnnl_graph::silu_as_loop(const core::op& activation, const core::shape& output) const {
    return std::holds_alternative<core::silu>(activation) && dt_ == core::dtype::fp32 &&
           output.numel() >= silu_loop_min_elements;
}

/// BatchNorm(eval) after a convolution, folded by backend_api::fold_batch_norm (PyTorch's fuse_conv_bn_eval), stored
/// as the convolution's weight and bias.
void dnnl_graph::fold_batch_norm(const core::layer& conv_layer, const core::layer& bn_layer) {
    backend_api::folded_conv f = backend_api::fold_batch_norm(*data_, conv_layer, bn_layer);
    folded_[backend_api::param_key(conv_layer, "weight")] = std::move(f.weight);
    folded_[backend_api::param_key(conv_layer, "bias")] = std::move(f.bias);
}

bool dnnl_graph::dead_after(const std::string& name) const {
    const auto it = last_reader_.find(name);
    if (it == last_reader_.end() || it->second != current_layer_ || viewed_.count(name) ||
        std::find(outputs_.begin(), outputs_.end(), name) != outputs_.end())
        return false;
    // no other tensor still to be read may lie in its bytes: an output that aliases its input without being a view
    // layer (a reduction over dimensions of size 1 only) is not in viewed_
    const memory& m = slots_.at(name).mem;
    const auto* lo = static_cast<const char*>(m.get_data_handle());
    const auto* hi = lo + std::max<std::size_t>(m.get_desc().get_size(), 1);
    for (const auto& [other, s] : slots_) {
        if (other == name || !live_after(other, s, current_layer_)) continue;
        const auto* p = static_cast<const char*>(s.mem.get_data_handle());
        if (p < hi && lo < p + std::max<std::size_t>(s.mem.get_desc().get_size(), 1)) return false;
    }
    return true;
}

memory dnnl_graph::producer_dst(const memory::desc& md) {
    if (sum_operand_.empty()) return fresh(md);
    const std::string& name = sum_operand_;
    const slot& s = slots_.at(name);
    const memory::desc addend_md = s.mem.get_desc();
    const bool same_layout = addend_md == md || (addend_md.dims() != md.dims() && is_plain_dense(addend_md) &&
                                                 is_plain_dense(md) && addend_md.get_size() == md.get_size());
    const bool read_by_producer = std::find(producer_inputs_.begin(), producer_inputs_.end(), name) != producer_inputs_.end();
    if (!s.constant && !s.view && !s.strided && !s.holds_state && same_layout && !read_by_producer && dead_after(name)) {
        notes_.emplace_back("sum in place");
        return memory(md, engine_, s.mem.get_data_handle());  // the addend's buffer, which nothing reads later
    }
    // a copy of the addend in the producer's layout (dims as the producer sees them: linear's rows x features)
    memory addend = addend_md.dims() == md.dims() ? dense_or_blocked(name) : dense(name);
    if (addend.get_desc().dims() != md.dims())
        addend = memory(addend.get_desc().reshape(md.dims()), engine_, addend.get_data_handle());
    memory dst = s.constant ? memory(md, engine_) : fresh(md);  // a model input's copy is made once: its own
    dnnl::reorder copy(addend, dst);
    if (s.constant) {  // a model input: copied once; poison_outputs copies it again
        memory held(md, engine_);
        dnnl::reorder(addend, held).execute(stream_, addend, held);
        copy.execute(stream_, addend, dst);
        stream_.wait();
        addends_.emplace_back(dst, held);
        return dst;
    }
    steps_.push_back({copy, {{DNNL_ARG_FROM, addend}, {DNNL_ARG_TO, dst}}, {}});
    notes_.emplace_back("reorder");
    return dst;
}

}  // namespace ridgeline::cpu::dnnl_detail
