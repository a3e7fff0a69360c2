#pragma once
// The oneDNN lowering of a graph (dnnl_graph.cpp: tensors, layouts, dense ops, convolution, normalisation;
// dnnl_graph_ops.cpp: elementwise, binary, pooling, copies and views; dnnl_graph_reduce.cpp: mean, sum, amax;
// dnnl_graph_resample.cpp: pad, expand, interpolate; ridgeline's own loops share dnnl_loops.hpp;
// dnnl_graph_attention.cpp: rms_norm, rotary, attention, kv_cache). Private to cpu/.
//
// A graph (a whole model, or one layer as a one-layer model) is prepared once: every tensor gets a
// dnnl::memory (a producer's output in the buffer of a tensor no later layer reads, where one is free), weights are
// reordered into the layouts the primitives prefer, scratchpads are allocated,
// and the model inputs are stored directly in the layout their first consumer wants. run() then only
// executes primitives (and ridgeline's own steps where oneDNN has none, named in notes()). Layouts flow between
// layers as oneDNN chooses them (blocked nChw8c for convolutions, for example); a reorder step is added where a
// consumer needs another layout, and it is part of the end-to-end time (as it would be in a framework), never of
// a single layer's time. Views alias their source's buffer with new dims and strides; consumers that need dense
// data get a copy.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "dnnl_common.hpp"
#include "ridgeline/backend_api/backend.hpp"

namespace ridgeline::cpu::dnnl_detail {

/// An eltwise primitive's algorithm and parameters.
struct eltwise_spec {
    dnnl::algorithm alg;
    float alpha = 0;
    float beta = 0;
};

/// oneDNN's eltwise for the activations a group runs as post-ops (core::is_fusable_activation); throws
/// backend_api::unsupported for any other op.
eltwise_spec activation_eltwise(const core::op& o);

/// A tensor of the graph.
struct slot {
    memory mem;
    bool constant = false;  // a model input: layout changes happen at prepare time
    bool strided = false;  // a non-dense view (transpose, slice): dense consumers need a copy
    bool view = false;  // aliases another tensor's buffer
    bool holds_state = false;  // a KV cache's buffer: the run writes only the new entries, so it is never poisoned
};

class dnnl_graph final : public backend_api::prepared {
public:
    dnnl_graph(dnnl::engine& engine, dnnl::stream& stream, core::dtype dt)
        : engine_(engine), stream_(stream), dt_(dt) {}

    void build(const core::model_analysis& graph, const backend_api::graph_data& data);
    void run() override;
    bool run_marked(const std::function<void(std::size_t layer)>& mark) override;
    void poison_outputs() override;
    std::vector<backend_api::host_tensor> outputs() override;
    [[nodiscard]] std::int64_t workspace_bytes() const override;
    [[nodiscard]] std::string notes() const override;

private:
    struct step {
        dnnl::primitive prim;
        std::unordered_map<int, memory> args;
        std::function<void()> fn;
    };
    static core::shape find_shape(const core::model_analysis& g, const std::string& name);
    memory upload(const backend_api::host_tensor& host, const memory::desc& md);
    memory upload_param(const core::layer& l, const std::string& param, const memory::desc& md,
                        const std::optional<dims>& host_dims = std::nullopt);
    memory to_layout(const std::string& name, const memory::desc& md);
    memory dense(const std::string& name);
    memory dense_or_blocked(const std::string& name);
    memory scratchpad(const dnnl::primitive_desc_base& pd);
    /// A buffer for a tensor every run writes before anything reads it (a producer's output): the smallest free
    /// buffer of a tensor no later layer reads, else a new one. As a deployment's memory planner does, a pass then
    /// touches about the live activations rather than every tensor's bytes (docs/performance.md: mobilenet_v2
    /// 26.7 MB of activations, 6.0 MB live at the peak). Only such outputs are drawn from here: a buffer written when
    /// prepared (weights, a held addend, a KV cache) is its own.
    memory fresh(const memory::desc& md);
    /// The output of an elementwise step (eltwise, binary) that reads `src`, tensor `input`'s buffer: `src` itself
    /// (in place, note "in place") when the output has its layout and no later layer reads the input, as a
    /// deployment's memory planner runs elementwise ops; else fresh(). An input that is a constant, a view, a strided
    /// view, held state or a copy in another layout is never written.
    /// A step running ridgeline's SiLU loop (dnnl_silu.hpp) from float32 `src` into `dst` (the same buffer, or one of
    /// the same size), note "ridgeline silu loop".
    void add_silu_step(const memory& src, const memory& dst);
    memory elementwise_dst(const memory::desc& md, const std::string& input, const memory& src);
    /// After layer `layer` is built: frees each drawn buffer in which no tensor still to be read lies (read by a
    /// later layer, a model output, a model input or held state).
    void release_dead_buffers(std::size_t layer);
    /// Whether tensor `name` (slot `s`) must keep its bytes after layer `layer`: a later layer reads it, or it is a
    /// model output, a model input or held state.
    [[nodiscard]] bool live_after(const std::string& name, const slot& s, std::size_t layer) const;
    struct drawn_buffer {
        std::shared_ptr<void> data;
        std::size_t bytes = 0;
        bool in_use = false;
    };
    std::vector<drawn_buffer> drawn_;
    void record(const dnnl::primitive_desc_base& pd);
    void set_output(const std::string& name, memory m, bool strided = false, bool view = false);
    /// A float32 result of one of ridgeline's own loops as the layer's output: itself in fp32, else a reorder to the
    /// graph's data type (a step of its own, named in the notes).
    void set_output_from_f32(const std::string& name, const memory& y32);
    dnnl::primitive_attr attr() const;
    void add_layer(const core::layer_analysis& la);

    // ------------------------------------------------------------ dense ops
    void add(const core::layer_analysis& la, const core::linear& op);
    memory with_rank(const memory& m, std::size_t rank);
    void add(const core::layer_analysis& la, const core::matmul&);
    void add(const core::layer_analysis& la, const core::embedding& op);

    // ------------------------------------------------------------ convolution
    void add(const core::layer_analysis& la, const core::conv2d& op);
    static void avoid_amx_on_padding_only_outputs(dnnl::convolution_forward::primitive_desc& pd,
                                                  const core::conv2d& op, const core::shape& input,
                                                  const core::shape& output);
    memory to_layout_dense_first(const std::string& name, const memory::desc& md);

    // ------------------------------------------------------------ normalisation
    void add(const core::layer_analysis& la, const core::batch_norm2d& op);
    void add(const core::layer_analysis& la, const core::layer_norm& op);

    // ------------------------------------------------------------ elementwise
    void eltwise(const core::layer_analysis& la, dnnl::algorithm alg, float alpha, float beta);
    void activation(const core::layer_analysis& la);
    void add(const core::layer_analysis& la, const core::relu&);
    void add(const core::layer_analysis& la, const core::relu6&);
    void add(const core::layer_analysis& la, const core::gelu& op);
    void add(const core::layer_analysis& la, const core::tanh_op&);
    void add(const core::layer_analysis& la, const core::sigmoid&);
    void add(const core::layer_analysis& la, const core::hardswish&);
    void add(const core::layer_analysis& la, const core::hardsigmoid&);
    void add(const core::layer_analysis& la, const core::silu&);
    void add(const core::layer_analysis& la, const core::scale& op);
    void add(const core::layer_analysis& la, const core::softmax& op);
    /// a op b, NumPy broadcasting; `commutes`: the operands may be swapped (oneDNN broadcasts its second only).
    void binary(const core::layer_analysis& la, dnnl::algorithm alg, bool commutes = true);
    void add(const core::layer_analysis& la, const core::add&);
    void add(const core::layer_analysis& la, const core::mul&);
    void add(const core::layer_analysis& la, const core::sub&);
    void add(const core::layer_analysis& la, const core::div&);
    void add(const core::layer_analysis& la, const core::erf_op&);
    void add(const core::layer_analysis& la, const core::sqrt_op&);
    void add(const core::layer_analysis& la, const core::exp_op&);
    void add(const core::layer_analysis& la, const core::neg&);
    void add(const core::layer_analysis& la, const core::pow_op& op);
    void reduce(const core::layer_analysis& la, dnnl::algorithm alg, const std::vector<std::int64_t>& dim);
    void add(const core::layer_analysis& la, const core::mean_op& op);
    void add(const core::layer_analysis& la, const core::sum_op& op);
    void add(const core::layer_analysis& la, const core::amax& op);
    void add(const core::layer_analysis& la, const core::where_op&);

    // ------------------------------------------------------------ pooling
    static core::pair2d right_padding(const core::layer_analysis& la, core::pair2d kernel, core::pair2d stride,
                                      core::pair2d pad, core::pair2d dilation);
    void pooling(const core::layer_analysis& la, dnnl::algorithm alg, core::pair2d kernel, core::pair2d stride,
                 core::pair2d pad, core::pair2d dilation, bool plain_dst = false);
    void add(const core::layer_analysis& la, const core::max_pool2d& op);
    void add(const core::layer_analysis& la, const core::avg_pool2d& op);
    void add(const core::layer_analysis& la, const core::adaptive_avg_pool2d& op);
    void adaptive_as_matmuls(const core::layer_analysis& la, const core::adaptive_avg_pool2d& op);

    // ------------------------------------------------------------ data movement and views
    void add(const core::layer_analysis& la, const core::concat& op);
    void reinterpret(const core::layer_analysis& la);
    void add(const core::layer_analysis& la, const core::parameter&);
    void add(const core::layer_analysis& la, const core::flatten&);
    void add(const core::layer_analysis& la, const core::reshape&);
    memory viewable(const std::string& name);
    void add(const core::layer_analysis& la, const core::transpose& op);
    void add(const core::layer_analysis& la, const core::slice& op);

    // ------------------------------------------------------------ resampling copies (dnnl_graph_resample.cpp)
    /// y[i_0, ...] = x[table[0][i_0], table[1][i_1], ...] (source indices per output dimension; -1: `fill`).
    void gather_by_tables(const core::layer_analysis& la, std::vector<std::vector<std::int64_t>> table, float fill);
    void add(const core::layer_analysis& la, const core::pad& op);
    void add(const core::layer_analysis& la, const core::expand& op);
    void add(const core::layer_analysis& la, const core::interpolate& op);

    // ------------------------------------------------------------ transformer layers (dnnl_graph_attention.cpp)
    void add(const core::layer_analysis& la, const core::rms_norm& op);
    void add(const core::layer_analysis& la, const core::rotary& op);
    void add(const core::layer_analysis& la, const core::attention& op);
    void add(const core::layer_analysis& la, const core::kv_cache& op);

    // ------------------------------------------------------------ fused groups (dnnl_graph_fused.cpp)
    /// A group (core/fusion.hpp) as its producer's primitive: a folded batch norm in its weights and bias, the sum
    /// and activations as post-ops.
    void add_fused(const core::layer_analysis& la);
    /// Whether a group's last activation runs as ridgeline's SiLU loop after the producer instead of oneDNN's swish
    /// post-op: a float32 silu of at least silu_loop_min_elements (dnnl_silu.hpp).
    [[nodiscard]] bool silu_as_loop(const core::op& activation, const core::shape& output) const;
    /// The batch norm after the group's convolution folded into its weight and bias (folded_).
    void fold_batch_norm(const core::layer& conv_layer, const core::layer& bn_layer);
    /// The producer's output buffer for descriptor `md`; with a sum post-op pending, one that holds the addend when
    /// the producer runs: the addend's own buffer where nothing reads it later, else a copy (a step before the
    /// producer; made once for a model input, and restored by poison_outputs).
    memory producer_dst(const memory::desc& md);
    /// Whether the layer being added is the last to read tensor `name`, which is no output, has no view, and shares
    /// no byte with a tensor still live after this layer (live_after).
    [[nodiscard]] bool dead_after(const std::string& name) const;
    dnnl::post_ops post_ops_;
    bool post_ops_pending_ = false;
    std::string sum_operand_;
    std::vector<std::string> producer_inputs_;  // what the group's producer reads (never written in place)
    std::map<std::string, backend_api::host_tensor> folded_;  // weights and bias with a batch norm folded in, by key
    std::vector<std::pair<memory, memory>> addends_;  // (a producer's output, the model input it starts from)
    std::map<std::string, std::size_t> last_reader_;  // tensor -> the last layer (index) reading it
    std::set<std::string> viewed_;                    // tensors a view layer aliases
    std::size_t current_layer_ = 0;

    dnnl::engine& engine_;
    dnnl::stream& stream_;
    core::dtype dt_;
    const backend_api::graph_data* data_ = nullptr;
    std::map<std::string, slot> slots_;
    std::map<std::string, std::vector<std::pair<memory::desc, memory>>> converted_;
    std::map<std::string, std::vector<std::int64_t>> ids_;
    void run_step(step& st);
    std::vector<step> steps_;
    /// The layer (its index in the graph) each step does the work of; no_layer for the outputs' own copies.
    static constexpr std::size_t no_layer = static_cast<std::size_t>(-1);
    std::vector<std::size_t> step_layer_;
    std::vector<memory> keep_;
    std::vector<std::string> outputs_;
    std::vector<core::shape> output_shapes_;
    std::vector<std::string> notes_;
    std::int64_t workspace_ = 0;
    memory pending_a_, pending_b_;
};

}  // namespace ridgeline::cpu::dnnl_detail
