// The oneDNN lowering of a fused group (dnnl_graph.hpp, core/fusion.hpp): one primitive of the producer (convolution,
// inner product, matmul), a batch norm folded into its weights and bias at prepare time, the residual add as a sum
// post-op and the activations as eltwise post-ops (oneDNN's "Primitive Attributes: Post-ops"). A binary-add post-op
// would read the residual without the copy a sum may need, but oneDNN 2.6 runs a convolution with a full-tensor
// binary post-op on its slower jit kernel, not brgconv (5.0 ms against 1.0 ms for a 64-channel 3x3 convolution on
// 56x56, 2 threads of a Zen 4): the sum keeps the fast kernel.
#include <algorithm>
#include <cmath>

#include "dnnl_graph.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/fusion.hpp"

namespace ridgeline::cpu::dnnl_detail {

void dnnl_graph::add_fused(const core::layer_analysis& la) {
    core::layer_analysis producer = la;  // the group's inputs and output shape, run as its producer's op
    producer.fused.clear();
    producer.layer.op = la.fused.front().layer.op;
    post_ops_ = dnnl::post_ops();
    sum_operand_.clear();
    producer_inputs_.assign(la.layer.inputs.begin(),
                            la.layer.inputs.begin() + static_cast<std::ptrdiff_t>(la.fused.front().layer.inputs.size()));
    for (std::size_t k = 1; k < la.fused.size(); ++k) {
        const core::layer_analysis& m = la.fused[k];
        switch (core::rule_of(la, k)) {
            case core::fusion_rule::fold_batch_norm: {
                auto& conv = std::get<core::conv2d>(producer.layer.op);
                fold_batch_norm(la.fused.front().layer, conv, m.layer, std::get<core::batch_norm2d>(m.layer.op));
                conv.bias = true;
                break;
            }
            case core::fusion_rule::sum_post_op:
                sum_operand_ = la.layer.inputs.at(core::outside_operand(la, k).value());
                post_ops_.append_sum(1.0f);
                break;
            case core::fusion_rule::activation_post_op: {
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
}

/// BatchNorm(eval) after a convolution, folded (PyTorch's torch.nn.utils.fusion.fuse_conv_bn_weights):
/// s = gamma / sqrt(running_var + eps); W'[c] = W[c] * s[c]; b'[c] = (b[c] - running_mean[c]) * s[c] + beta[c]
/// (b = 0 without a bias; gamma = 1, beta = 0 without affine). Computed in double from the values the reference
/// reads, stored as the convolution's weight and bias.
void dnnl_graph::fold_batch_norm(const core::layer& conv_layer, const core::conv2d& conv, const core::layer& bn_layer,
                                 const core::batch_norm2d& bn) {
    auto param = [&](const core::layer& l, const std::string& name) -> const std::vector<float>& {
        return data_->tensors.at(backend_api::param_key(l, name)).data;
    };
    const std::int64_t channels = conv.out_channels;
    const auto& mean = param(bn_layer, "running_mean");
    const auto& var = param(bn_layer, "running_var");
    std::vector<double> s(static_cast<std::size_t>(channels));
    for (std::size_t c = 0; c < s.size(); ++c) {
        const double gamma = bn.affine ? param(bn_layer, "weight")[c] : 1.0;
        s[c] = gamma / std::sqrt(static_cast<double>(var[c]) + bn.eps);
    }
    backend_api::host_tensor w = data_->tensors.at(backend_api::param_key(conv_layer, "weight"));
    const std::size_t per_channel = w.data.size() / s.size();
    for (std::size_t i = 0; i < w.data.size(); ++i) w.data[i] = static_cast<float>(w.data[i] * s[i / per_channel]);
    backend_api::host_tensor b{core::shape({channels}), std::vector<float>(s.size())};
    for (std::size_t c = 0; c < s.size(); ++c) {
        const double bias = conv.bias ? param(conv_layer, "bias")[c] : 0.0;
        const double beta = bn.affine ? param(bn_layer, "bias")[c] : 0.0;
        b.data[c] = static_cast<float>((bias - mean[c]) * s[c] + beta);
    }
    folded_[backend_api::param_key(conv_layer, "weight")] = std::move(w);
    folded_[backend_api::param_key(conv_layer, "bias")] = std::move(b);
}

bool dnnl_graph::dead_after(const std::string& name) const {
    const auto it = last_reader_.find(name);
    return it != last_reader_.end() && it->second == current_layer_ && !viewed_.count(name) &&
           std::find(outputs_.begin(), outputs_.end(), name) == outputs_.end();
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
