#pragma once
// A graph (a whole model, or one layer as a one-layer model) prepared on the GPU.
//
// build(): every model input and parameter is uploaded in the storage type (float for normalisation
// parameters), every tensor gets device memory in row-major (NCHW) layout, cuDNN algorithms are found and
// cuBLASLt algorithms timed, workspaces sized; each layer appends its work as steps that only enqueue
// kernels, library calls and copies on the context's stream. run() executes the steps (or replays them
// as one CUDA Graph after enable_graph_replay()); nothing in run() allocates, searches or synchronises.
//
// Views (flatten, reshape, transpose, slice) alias their source's buffer with new dims, strides and offset,
// at no cost; a consumer that needs dense data gets a copy (a strided_copy step, shared by every consumer
// of that view), which is part of the consumer's time, as in a framework.
//
// The class is split along its seams: this header holds its state and the build / run machinery,
// cuda_graph.cpp the dense layers (cuBLASLt, cuDNN), cuda_graph_elementwise.cpp the elementwise, reduction,
// pooling, data-movement and view layers and held tensors (ridgeline's own kernels, kernels.cu),
// cuda_graph_attention.cpp the transformer layers (kernels_attention.cu), cuda_graph_fused.cpp the fused groups.
#include <optional>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "context.hpp"
#include "library_types.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::cuda::graph_detail {

using i64 = std::int64_t;

/// A tensor of the graph: a buffer, and how this tensor sees it.
struct dev_tensor {
    std::shared_ptr<device_buffer> buffer;
    strided_view view;
    i64 element_bytes = 4;
    bool ids = false;    // int64 token ids (a model input read by embeddings)
    bool alias = false;  // shares another tensor's buffer (a view) or is a model input
    bool holds_state = false;  // a KV cache's buffer: a run writes only the new entries, so it is never poisoned
    [[nodiscard]] void* data() const {
        return static_cast<unsigned char*>(buffer->get()) + view.offset * element_bytes;
    }
    [[nodiscard]] i64 numel() const {
        i64 n = 1;
        for (auto d : view.dims) n *= d;
        return n;
    }
};

/// The walk as a kernel index map (contiguous dimensions merged); unsupported beyond kernels::max_rank.
kernels::index_map to_map(const strided_walk& w, const std::string& where);

/// Bytes of free device memory the algorithm searches may use as scratch: a quarter of what is free,
/// between 32 MiB and 1 GiB.
std::size_t search_workspace_bytes();

/// The layers that are one launch of ridgeline's elementwise, binary or reduction kernel (kernels.hpp): which kernel,
/// its parameter, and its name in the profile's notes ("ridgeline:<name>"). cuda_graph adds each the same way.
struct unary_launch {
    kernels::unary_op op;
    float alpha;
    const char* name;
};
struct binary_launch {
    kernels::binary_op op;
    const char* name;
};
struct reduce_launch {  // over the op's `dim`
    kernels::reduce_op op;
    const char* name;
};
inline unary_launch launch_of(const core::relu&) { return {kernels::unary_op::relu, 0, "relu"}; }
inline unary_launch launch_of(const core::relu6&) { return {kernels::unary_op::relu6, 0, "relu6"}; }
inline unary_launch launch_of(const core::gelu& op) {
    return op.tanh_approximation ? unary_launch{kernels::unary_op::gelu_tanh, 0, "gelu_tanh"}
                                 : unary_launch{kernels::unary_op::gelu_erf, 0, "gelu"};
}
inline unary_launch launch_of(const core::tanh_op&) { return {kernels::unary_op::tanh, 0, "tanh"}; }
inline unary_launch launch_of(const core::sigmoid&) { return {kernels::unary_op::sigmoid, 0, "sigmoid"}; }
inline unary_launch launch_of(const core::hardswish&) { return {kernels::unary_op::hardswish, 0, "hardswish"}; }
inline unary_launch launch_of(const core::hardsigmoid&) { return {kernels::unary_op::hardsigmoid, 0, "hardsigmoid"}; }
inline unary_launch launch_of(const core::silu&) { return {kernels::unary_op::silu, 0, "silu"}; }
inline unary_launch launch_of(const core::scale& op) {
    return {kernels::unary_op::scale, static_cast<float>(op.factor), "scale"};
}
inline unary_launch launch_of(const core::erf_op&) { return {kernels::unary_op::erf, 0, "erf"}; }
inline unary_launch launch_of(const core::sqrt_op&) { return {kernels::unary_op::sqrt, 0, "sqrt"}; }
inline unary_launch launch_of(const core::exp_op&) { return {kernels::unary_op::exp, 0, "exp"}; }
inline unary_launch launch_of(const core::neg&) { return {kernels::unary_op::neg, 0, "neg"}; }
inline unary_launch launch_of(const core::pow_op& op) {
    return {kernels::unary_op::pow, static_cast<float>(op.exponent), "pow"};
}
inline binary_launch launch_of(const core::add&) { return {kernels::binary_op::add, "add"}; }
inline binary_launch launch_of(const core::mul&) { return {kernels::binary_op::mul, "mul"}; }
inline binary_launch launch_of(const core::sub&) { return {kernels::binary_op::sub, "sub"}; }
inline binary_launch launch_of(const core::div&) { return {kernels::binary_op::div, "div"}; }
inline reduce_launch launch_of(const core::mean_op&) { return {kernels::reduce_op::mean, "mean"}; }
inline reduce_launch launch_of(const core::sum_op&) { return {kernels::reduce_op::sum, "sum"}; }
inline reduce_launch launch_of(const core::amax&) { return {kernels::reduce_op::max, "amax"}; }

class cuda_graph final : public backend_api::prepared {
public:
    cuda_graph(device_context& ctx, core::dtype dt)
        : ctx_(ctx), dt_(dt), elem_(elem_of(dt)), esize_(precision_of(dt).storage_bytes) {}

    void build(const core::model_analysis& model, const backend_api::graph_data& data) {
        data_ = &data;
        for (const auto& in : model.inputs) add_input(in, data.tensors.at(in.name));
        step_layer_.assign(steps_.size(), no_layer);
        for (std::size_t i = 0; i < model.layers.size(); ++i) {
            const auto& la = model.layers[i];
            if (la.fused.empty())
                std::visit([&](const auto& op) { add(la, op); }, la.layer.op);
            else
                add_fused(la);
            step_layer_.resize(steps_.size(), i);  // the steps this layer added are its work
        }
        for (const auto& o : model.outputs) {
            dev_tensor& t = tensor(o);
            if (t.ids) throw backend_api::unsupported("graph output \"" + o + "\" is a token-id tensor");
            // an output that aliases another buffer (a view, a model input) gets its own, so that poisoning
            // and reading it never touch the source
            if (t.alias || !is_dense(t.view)) {
                const dev_tensor src = t;
                dev_tensor dst = new_tensor(src.view.dims);
                add_copy(src, dst);
                t = dst;
            }
            outputs_.push_back(o);
            output_shapes_.push_back(core::shape(t.view.dims));
        }
        search_ws_.reset();  // the searches are over; only the chosen algorithms' workspace stays
        workspace_ = device_buffer(workspace_need_);
        RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
        data_ = nullptr;
    }

    void run() override {
        if (exec_) {
            RIDGELINE_CUDA_CHECK(cudaGraphLaunch(exec_.get(), ctx_.s()));
            return;
        }
        for (auto& st : steps_) st();
    }

    bool run_marked(const std::function<void(std::size_t layer)>& mark) override {
        if (exec_) return false;  // one captured launch: its layers cannot be told apart
        step_layer_.resize(steps_.size(), no_layer);  // the outputs' own copies belong to no layer
        for (std::size_t k = 0; k < steps_.size(); ++k) {
            steps_[k]();
            const std::size_t layer = step_layer_[k];
            if (layer != no_layer && (k + 1 == steps_.size() || step_layer_[k + 1] != layer)) {
                RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
                mark(layer);
            }
        }
        RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
        return true;
    }

    void poison_outputs() override {
        // all-ones bytes are a NaN in fp32 (0xffffffff), fp16 (0xffff) and bf16 (0xffff)
        for (const auto& o : outputs_) {
            const dev_tensor& t = tensor(o);
            if (t.holds_state) continue;
            RIDGELINE_CUDA_CHECK(cudaMemsetAsync(t.data(), 0xff, static_cast<std::size_t>(t.numel() * t.element_bytes),
                                                 ctx_.s()));
        }
    }

    std::vector<backend_api::host_tensor> outputs() override {
        RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
        std::vector<backend_api::host_tensor> out;
        for (std::size_t i = 0; i < outputs_.size(); ++i) {
            const dev_tensor& t = tensor(outputs_[i]);
            const auto n = static_cast<std::size_t>(t.numel());
            std::vector<unsigned char> bytes(n * static_cast<std::size_t>(t.element_bytes));
            RIDGELINE_CUDA_CHECK(cudaMemcpyAsync(bytes.data(), t.data(), bytes.size(), cudaMemcpyDeviceToHost, ctx_.s()));
            RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
            backend_api::host_tensor h{output_shapes_[i], std::vector<float>(n)};
            from_storage(bytes.data(), n, dt_, h.data.data());
            out.push_back(std::move(h));
        }
        return out;
    }

    [[nodiscard]] std::int64_t workspace_bytes() const override { return static_cast<std::int64_t>(workspace_need_); }

    [[nodiscard]] std::string notes() const override {
        std::string s;
        for (const auto& n : notes_) s += (s.empty() ? "" : "+") + n;
        if (exec_) s += (s.empty() ? "" : "+") + std::string("cuda graph");
        return s;
    }

    bool enable_graph_replay() override {
        if (exec_) return true;
        RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
        RIDGELINE_CUDA_CHECK(cudaStreamBeginCapture(ctx_.s(), cudaStreamCaptureModeThreadLocal));
        try {
            for (auto& st : steps_) st();
        } catch (...) {
            cudaGraph_t broken = nullptr;
            RIDGELINE_CUDA_CHECK_NOTHROW(cudaStreamEndCapture(ctx_.s(), &broken));
            graph discard(broken);
            throw;
        }
        cudaGraph_t captured = nullptr;
        RIDGELINE_CUDA_CHECK(cudaStreamEndCapture(ctx_.s(), &captured));
        graph_ = graph(captured);
        cudaGraphExec_t exec = nullptr;
        RIDGELINE_CUDA_CHECK(cudaGraphInstantiate(&exec, graph_.get(), 0));
        exec_ = graph_exec(exec);
        RIDGELINE_CUDA_CHECK(cudaGraphUpload(exec_.get(), ctx_.s()));
        return true;
    }

private:
    using step_fn = std::function<void()>;

    dev_tensor& tensor(const std::string& name) {
        auto it = tensors_.find(name);
        if (it == tensors_.end()) throw backend_api::backend_error("unknown tensor \"" + name + "\"");
        return it->second;
    }

    dev_tensor new_tensor(const std::vector<i64>& dims) {
        dev_tensor t;
        i64 n = 1;
        for (auto d : dims) n *= d;
        t.buffer = std::make_shared<device_buffer>(static_cast<std::size_t>(std::max<i64>(n, 1) * esize_));
        t.view = strided_view{dims, row_major_strides(dims), 0};
        t.element_bytes = esize_;
        return t;
    }

    std::shared_ptr<device_buffer> upload_bytes(const void* host, std::size_t bytes) {
        auto b = std::make_shared<device_buffer>(std::max<std::size_t>(bytes, 1));
        if (bytes) RIDGELINE_CUDA_CHECK(cudaMemcpyAsync(b->get(), host, bytes, cudaMemcpyHostToDevice, ctx_.s()));
        // pageable host memory: the copy is staged before cudaMemcpyAsync returns, but keep the order simple
        RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
        return b;
    }

    /// Host floats in the storage type of the graph's data type.
    std::shared_ptr<device_buffer> upload(const std::vector<float>& v) {
        const auto bytes = to_storage(v.data(), v.size(), dt_);
        return upload_bytes(bytes.data(), bytes.size());
    }

    /// Host floats as float (normalisation parameters in every data type).
    std::shared_ptr<device_buffer> upload_floats(const std::vector<float>& v) {
        return upload_bytes(v.data(), v.size() * sizeof(float));
    }

    /// A parameter's host values: a fused group's folded weight or bias where there is one (add_fused).
    const std::vector<float>& param(const core::layer& l, const std::string& name) {
        const std::string key = backend_api::param_key(l, name);
        if (const auto it = folded_.find(key); it != folded_.end()) return it->second.data;
        return data_->tensors.at(key).data;
    }

    void add_input(const core::model_input& in, const backend_api::host_tensor& host) {
        dev_tensor t;
        t.view = dense_view(in.dims);
        t.alias = true;
        if (in.indices) {
            std::vector<std::int64_t> ids(host.data.size());
            for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>(host.data[i]);
            t.buffer = upload_bytes(ids.data(), ids.size() * sizeof(std::int64_t));
            t.element_bytes = 8;
            t.ids = true;
            host_ids_[in.name] = std::move(ids);
        } else {
            t.buffer = upload(host.data);
            t.element_bytes = esize_;
        }
        tensors_[in.name] = std::move(t);
    }

    void add_copy(const dev_tensor& src, const dev_tensor& dst) {
        strided_walk w{src.view.dims, src.view.strides, std::vector<i64>(src.view.dims.size(), 0)};
        const kernels::index_map map = to_map(w, "copy");
        const i64 n = src.numel();
        const void* from = src.data();
        void* to = dst.data();
        const kernels::elem e = elem_;
        cudaStream_t s = ctx_.s();
        steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::strided_copy(e, from, to, map, n, s)); });
    }

    /// The tensor as a dense row-major buffer: itself when it is one, else a copy made once per run.
    const dev_tensor& dense(const std::string& name) {
        const dev_tensor& t = tensor(name);
        if (t.ids) throw backend_api::unsupported("token ids \"" + name + "\" can only be read by an embedding");
        if (is_dense(t.view)) return t;
        auto it = dense_copies_.find(name);
        if (it != dense_copies_.end()) return it->second;
        dev_tensor d = new_tensor(t.view.dims);
        add_copy(t, d);
        notes_.emplace_back("copy");
        return dense_copies_.emplace(name, std::move(d)).first->second;
    }

    void set_output(const core::layer_analysis& la, dev_tensor t) {
        if (t.view.dims != la.output_shape.dims())
            throw backend_api::backend_error(core::where(la.layer) + ": output " + core::shape(t.view.dims).to_string() +
                                          " differs from the inferred " + la.output_shape.to_string());
        tensors_[la.layer.name] = std::move(t);
    }

    void* search_workspace(std::size_t& bytes) {
        if (!search_ws_.get()) search_ws_ = device_buffer(search_workspace_bytes());
        bytes = search_ws_.bytes();
        return search_ws_.get();
    }

    // ------------------------------------------------------------ dense
    void add(const core::layer_analysis& la, const core::linear& op) { add_linear(la, op, fused_activation::none, {}); }
    /// y = act(x W^T + b + r) on cuBLASLt, `act` as the epilogue and r, the tensor named `residual` where one is given
    /// (of y's shape), as C with beta = 1 (a fused group's, plan_fused). Throws backend_api::unsupported when no
    /// algorithm runs with that epilogue, or when the residual's shape differs from y's.
    void add_linear(const core::layer_analysis& la, const core::linear& op, fused_activation act,
                    const std::optional<std::string>& residual);
    void add(const core::layer_analysis& la, const core::matmul&);
    void add(const core::layer_analysis& la, const core::embedding& op);
    // ------------------------------------------------------------ convolution
    void add(const core::layer_analysis& la, const core::conv2d& op) { add_conv(la, op, nullptr); }
    /// What a fused group's convolution asks of cudnnConvolutionBiasActivationForward beyond its bias: the tensor
    /// added as z (a residual of the output's shape), and relu (else IDENTITY).
    struct conv_epilogue {
        std::optional<std::string> residual;
        bool relu = false;
    };
    /// y = conv(x, w) (+ bias); with `fused` one cudnnConvolutionBiasActivationForward call that also adds the
    /// residual and applies relu (its bias zeros where the convolution has none). Returns whether that call took them: false where there is no `fused` or
    /// cuDNN refused it at prepare time (the plain convolution and the bias kernel then run, with a note why).
    bool add_conv(const core::layer_analysis& la, const core::conv2d& op, const conv_epilogue* fused);
    /// add_conv's fused call planned and run once on y (plan_cudnn_conv_fused), or null with the reason in `note`;
    /// `zp` the residual's data (dense), or null.
    std::shared_ptr<const cudnn_conv_fused> plan_conv_fused(const core::layer_analysis& la, const cudnn_conv& plan,
                                                            const conv_epilogue& fused, const void* xp, const void* wp,
                                                            const void* bp, dev_tensor& y, std::string& note,
                                                            const void*& zp);
    // ------------------------------------------------------------ normalisation
    void add(const core::layer_analysis& la, const core::batch_norm2d& op);
    void add(const core::layer_analysis& la, const core::layer_norm& op);

    // ------------------------------------------------------------ fused groups (cuda_graph_fused.cpp)
    /// A group (core/fusion.hpp) as plan_fused says: the producer's call with what it takes, then the other members.
    void add_fused(const core::layer_analysis& la);
    std::map<std::string, backend_api::host_tensor> folded_;  // a group's folded weight and bias, by param_key

    // ------------------------------------------------------------ elementwise
    void unary(const core::layer_analysis& la, kernels::unary_op op, float alpha, const char* name);
    /// A layer that is one launch of a kernel (launch_of above).
    template <class Op>
        requires requires(const Op& op) { launch_of(op); }
    void add(const core::layer_analysis& la, const Op& op) {
        const auto l = launch_of(op);
        if constexpr (std::is_same_v<decltype(l), const unary_launch>)
            unary(la, l.op, l.alpha, l.name);
        else if constexpr (std::is_same_v<decltype(l), const binary_launch>)
            binary(la, l.op, l.name);
        else
            reduce(la, l.op, op.dim, l.name);
    }
    void add(const core::layer_analysis& la, const core::softmax& op);
    void binary(const core::layer_analysis& la, kernels::binary_op op, const char* name);
    /// mean / sum / amax: one thread per output walking its inputs (kernels::reduce).
    void reduce(const core::layer_analysis& la, kernels::reduce_op op, const std::vector<std::int64_t>& dim,
                const char* name);
    // ------------------------------------------------------------ pooling
    static kernels::pool_geometry geometry(const pool_params& p);
    template <class Launch>
    void pooling(const core::layer_analysis& la, const pool_params& p, const char* name, Launch launch);
    void add(const core::layer_analysis& la, const core::max_pool2d& op);
    void add(const core::layer_analysis& la, const core::avg_pool2d& op);
    void add(const core::layer_analysis& la, const core::adaptive_avg_pool2d&);
    // ------------------------------------------------------------ data movement and views
    void add(const core::layer_analysis& la, const core::concat& op);
    /// flatten / reshape: the same elements in the same order, new dims (a dense copy first for a strided view).
    void reinterpret(const core::layer_analysis& la);
    /// A held tensor: uploaded at prepare time (broadcast to `expand` on the host), like a model input.
    void add(const core::layer_analysis& la, const core::parameter&);
    void add(const core::layer_analysis& la, const core::flatten&);
    void add(const core::layer_analysis& la, const core::reshape&);
    void add(const core::layer_analysis& la, const core::transpose& op);
    void add(const core::layer_analysis& la, const core::slice& op);
    // ------------------------------------------------------------ resampling copies (kernels_resample.cu)
    /// y[i_0, ...] = x[table[0][i_0], ...] (source indices per output dimension; -1: `fill`).
    void gather_by_tables(const core::layer_analysis& la, std::vector<std::vector<i64>> table, float fill,
                          const char* name);
    void add(const core::layer_analysis& la, const core::pad& op);
    void add(const core::layer_analysis& la, const core::expand& op);
    void add(const core::layer_analysis& la, const core::interpolate& op);
    void add(const core::layer_analysis& la, const core::where_op&);
    // ------------------------------------------------------------ transformer layers (cuda_graph_attention.cpp)
    void add(const core::layer_analysis& la, const core::rms_norm& op);
    void add(const core::layer_analysis& la, const core::rotary& op);
    void add(const core::layer_analysis& la, const core::attention& op);
    void add(const core::layer_analysis& la, const core::kv_cache& op);

    device_context& ctx_;
    core::dtype dt_;
    kernels::elem elem_;
    i64 esize_;
    const backend_api::graph_data* data_ = nullptr;
    std::map<std::string, dev_tensor> tensors_;
    std::map<std::string, dev_tensor> dense_copies_;
    std::map<std::string, std::vector<std::int64_t>> host_ids_;
    std::vector<std::shared_ptr<device_buffer>> keep_;  // parameters, pointer arrays, padded inputs
    std::vector<step_fn> steps_;
    /// The layer (its index in the graph) each step does the work of; no_layer for the outputs' own copies.
    static constexpr std::size_t no_layer = static_cast<std::size_t>(-1);
    std::vector<std::size_t> step_layer_;
    std::vector<std::string> outputs_;
    std::vector<core::shape> output_shapes_;
    std::vector<std::string> notes_;
    device_buffer search_ws_;      // scratch of the algorithm searches, freed at the end of build()
    std::size_t workspace_need_ = 0;
    device_buffer workspace_;      // shared by every step: they run one after another on one stream
    graph graph_;
    graph_exec exec_;
};

}  // namespace ridgeline::cuda::graph_detail
