// The GPU lowering of a fused group (core/fusion.hpp), following plan_fused (translate.hpp): the producer's library
// call with a batch norm folded into its weights and bias at prepare time (backend_api::fold_batch_norm) and what
// else the call takes; then the group's remaining members in order on ridgeline's own kernels, each into a buffer
// of its own (the kernels' operands are __restrict__: an input is never its output).
//
// Wired: the fold; linear's bias, relu/gelu epilogue and a residual of the output's shape as cuBLASLt's C with
// beta = 1 (D = act(x W^T + bias + C)); a convolution's bias (its own, the folded one, or zeros), a residual of the
// output's shape as z and/or relu in one cudnnConvolutionBiasActivationForward (y = relu(conv(x) + z + bias); the
// legacy API, deprecated in cuDNN 9 as the convolution path's other calls are), tried once at prepare time and
// replaced by the plain convolution, bias kernel and own kernels where cuDNN refuses it (a note says why). Not wired:
// matmul's epilogues (ridgeline's matmul runs on cublasGemm(Strided)BatchedEx, which has none).
#include "cuda_graph.hpp"
#include "ridgeline/core/fusion.hpp"

namespace ridgeline::cuda::graph_detail {

namespace {

/// How many members (from the producer on) the producer's call takes as wired today: the plan's, but for matmul
/// (ridgeline's runs on cublasGemm(Strided)BatchedEx, which has no epilogue) the producer alone.
std::size_t wired_members(const core::layer_analysis& la, const fused_plan& plan) {
    return std::holds_alternative<core::matmul>(la.fused.front().layer.op) ? 1 : plan.library_members;
}

/// The members the fold leaves: how many the fold itself takes (the producer and a folded batch norm).
std::size_t folded_members(const core::layer_analysis& la, std::size_t wired) {
    std::size_t n = 1;
    while (n < wired && core::rule_of(la, n) == core::fusion_rule::fold_batch_norm) ++n;
    return n;
}

}  // namespace

void cuda_graph::add_fused(const core::layer_analysis& la) {
    const fused_plan plan = plan_fused(la, dt_);
    std::size_t wired = wired_members(la, plan);
    const std::size_t last = la.fused.size() - 1;
    // member k's output: the group's name for the last member; the member's own name for the others (fuse removed
    // those layers from the graph, so no tensor has it), a name no layer has for the producer (it has the group's)
    auto output_name = [&](std::size_t k) {
        return k == last ? la.layer.name : k == 0 ? la.layer.name + "\x01producer" : la.fused[k].layer.name;
    };
    core::layer_analysis producer = la.fused.front();  // its name and parameters, the group's inputs
    producer.layer.inputs.assign(la.layer.inputs.begin(),
                                 la.layer.inputs.begin() + static_cast<std::ptrdiff_t>(producer.layer.inputs.size()));
    fused_activation act = fused_activation::none;
    std::optional<std::string> residual;  // linear's C or the convolution's z (wired_members)
    for (std::size_t k = 1; k < wired; ++k) {
        if (core::rule_of(la, k) == core::fusion_rule::sum_post_op) {
            residual = la.layer.inputs.at(core::outside_operand(la, k).value());
            continue;
        }
        if (core::rule_of(la, k) != core::fusion_rule::fold_batch_norm) {
            act = plan.activation;  // linear's epilogue or the convolution's relu (wired_members)
            continue;
        }
        backend_api::folded_conv f = backend_api::fold_batch_norm(*data_, producer.layer, la.fused[k].layer);
        folded_[backend_api::param_key(producer.layer, "weight")] = std::move(f.weight);
        folded_[backend_api::param_key(producer.layer, "bias")] = std::move(f.bias);
        std::get<core::conv2d>(producer.layer.op).bias = true;
        notes_.emplace_back("bn folded");
    }
    try {
        if (const auto* lin = std::get_if<core::linear>(&producer.layer.op)) {
            try {
                add_linear(producer, *lin, act, residual);
            } catch (const backend_api::unsupported& e) {
                if (act == fused_activation::none && !residual) throw;
                // no cuBLASLt algorithm with this epilogue or C for these shapes: the plain GEMM (with its bias),
                // and every other member after it as a kernel
                notes_.push_back(std::string("epilogue refused (") + e.what() + ")");
                act = fused_activation::none;
                residual.reset();
                wired = 1;
                add_linear(producer, *lin, act, residual);
            }
        } else if (const auto* conv = std::get_if<core::conv2d>(&producer.layer.op)) {
            const conv_epilogue ep{residual, act == fused_activation::relu};
            const bool beyond_fold = wired > folded_members(la, wired);
            if (!add_conv(producer, *conv, beyond_fold ? &ep : nullptr) && beyond_fold)
                wired = folded_members(la, wired);  // cuDNN refused the fused call: residual and relu run after
        } else {
            std::visit([&](const auto& op) { add(producer, op); }, producer.layer.op);
        }
    } catch (...) {
        folded_.clear();
        throw;
    }
    folded_.clear();
    if (const std::string target = output_name(wired - 1); target != producer.layer.name) {
        // the call's output under the name of the last member it takes
        dev_tensor out = std::move(tensors_.at(producer.layer.name));
        tensors_.erase(producer.layer.name);
        tensors_[target] = std::move(out);
    }
    if (wired - 1 != last)
        notes_.push_back("then " + std::to_string(la.fused.size() - wired) + " own kernels (" +
                         (wired < plan.library_members ? std::string("the library call did not take them") : plan.after) + ")");
    for (std::size_t k = wired; k <= last; ++k) {
        core::layer_analysis m = la.fused[k];
        const std::string& previous = la.fused[k - 1].layer.name;
        const auto outside = core::outside_operand(la, k);
        for (auto& t : m.layer.inputs) t = t == previous ? output_name(k - 1) : la.layer.inputs.at(outside.value());
        m.layer.name = output_name(k);
        std::visit([&](const auto& op) { add(m, op); }, m.layer.op);
    }
}

}  // namespace ridgeline::cuda::graph_detail
