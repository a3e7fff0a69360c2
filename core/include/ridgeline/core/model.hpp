#pragma once
// A model: a DAG of named layers joined by named tensors. A layer's output tensor carries the layer's
// name; model inputs are named tensors with a shape. Residual adds and concats read several tensors.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ridgeline/core/cost.hpp"
#include "ridgeline/core/dtype.hpp"
#include "ridgeline/core/layer.hpp"

namespace ridgeline::core {

/// A model input. `indices` marks int64 token ids (read only by embedding layers).
struct model_input {
    std::string name;
    shape dims;
    bool indices = false;
};

enum class transformer_phase { prefill, decode };
std::string_view to_string(transformer_phase p);

/// What one forward pass of a transformer processes: a prefill of `seq` tokens per sequence, or a decode step (one
/// new token per sequence) over a KV cache of `kv_len` tokens. Reports print it beside the model's name.
struct transformer_run {
    transformer_phase phase = transformer_phase::prefill;
    std::int64_t batch = 1;
    std::int64_t seq = 0;     // prefill: tokens per sequence
    std::int64_t kv_len = 0;  // decode: cached tokens per sequence
    bool operator==(const transformer_run&) const = default;
};

/// "prefill of 128 tokens" / "decode step over a KV cache of 1024 tokens" (the batch is printed elsewhere).
std::string describe(const transformer_run& r);

class model {
public:
    explicit model(std::string name = "model") : name_(std::move(name)) {}

    [[nodiscard]] const std::string& name() const { return name_; }
    void set_name(std::string n) { name_ = std::move(n); }
    void add_input(model_input in) { inputs_.push_back(std::move(in)); }
    void add_layer(layer l) { layers_.push_back(std::move(l)); }
    [[nodiscard]] const std::vector<model_input>& inputs() const { return inputs_; }
    [[nodiscard]] const std::vector<layer>& layers() const { return layers_; }
    std::vector<model_input>& inputs() { return inputs_; }
    std::vector<layer>& layers() { return layers_; }
    /// Tensors the model returns although a layer reads them (an ONNX graph's output in mid-graph: a convolution's
    /// output that the next layer reads too); a tensor no layer reads is an output anyway. Each names a layer
    /// (analyze() throws otherwise); such a tensor is kept whole, never fused into its readers.
    void add_output(std::string name) { outputs_.push_back(std::move(name)); }
    [[nodiscard]] const std::vector<std::string>& outputs() const { return outputs_; }
    /// The pass a transformer was built for (build_transformer sets it); empty for other models.
    [[nodiscard]] const std::optional<transformer_run>& run() const { return run_; }
    void set_run(transformer_run r) { run_ = r; }

private:
    std::string name_;
    std::optional<transformer_run> run_;
    std::vector<model_input> inputs_;
    std::vector<layer> layers_;
    std::vector<std::string> outputs_;
};

/// Builds a model layer by layer. then() reads the previous layer's output (a Sequential);
/// add() names its inputs explicitly (residuals, concats).
class model_builder {
public:
    explicit model_builder(std::string name) : model_(std::move(name)) {}

    /// Declares a model input and makes it the current tensor.
    std::string input(const std::string& name, shape dims, bool indices = false);
    /// Appends a layer reading `inputs`; returns its output tensor's name (= name) and makes it current.
    std::string add(const std::string& name, op o, std::vector<std::string> inputs);
    /// Appends a layer reading the current tensor.
    std::string then(const std::string& name, op o);
    /// Ties parameter `param` of the last layer to the shared tensor `shared` (counted once).
    void tie_last(const std::string& param, const std::string& shared);
    [[nodiscard]] const std::string& current() const { return current_; }
    void set_current(std::string t) { current_ = std::move(t); }
    [[nodiscard]] model build() const { return model_; }
    void set_run(transformer_run r) { model_.set_run(r); }

private:
    model model_;
    std::string current_;
};

/// One layer after shape inference and costing; or a fused group (core/fusion.hpp): then `fused` holds its members as
/// analysed before the rewrite (the producer first), `layer` is the producer with the group's inputs (the producer's,
/// then each later member's operand from outside the group, in member order), `output_shape` the last member's, and
/// `cost` the members' counts with only the bytes that cross the group's boundary.
struct layer_analysis {
    core::layer layer;
    shapes input_shapes;
    shape output_shape;
    core::cost cost;
    std::vector<layer_analysis> fused;
};

/// The layers whose work a row does: a fused group's members, else the layer itself.
std::vector<const layer_analysis*> work_layers(const layer_analysis& la);

/// What makes two layers the same work: the op's kind and canonical attributes, the input shapes and the data
/// type ("conv2d:in_channels=512,...|1x512x7x7|fp32"); not the name, nor which layers feed it. Layers of one model
/// with equal signatures are twins (resnet18's layer4.0.conv2 and layer4.1.conv2, a transformer's repeated
/// blocks): the same kernel on the same shapes, so their times must agree (the profiler's twin check).
std::string layer_signature(const layer_analysis& l, dtype dt);

struct model_analysis {
    std::string model_name;
    dtype data_type = dtype::fp32;
    std::int64_t batch = 1;
    std::vector<model_input> inputs;
    std::vector<layer_analysis> layers;  // in topological order
    std::vector<std::string> outputs;    // tensors that no layer reads and those model::outputs() declares, in layer order
    std::optional<transformer_run> run;  // the model's transformer pass, if any
    bool fusion_applied = false;         // core::fuse rewrote it (true even where no rule matched: nothing to fuse)
    /// Sum over layers, except that params and buffers count every distinct tensor once (tied tensors).
    core::cost totals;
};

/// Validates the DAG and infers every shape and cost. Errors (core::error), each naming the layer or
/// tensor: empty or duplicate names, unknown input tensors, cycles, shape rules of each op, token-id
/// inputs read by anything but an embedding (or an embedding reading activations), tied tensors of
/// different sizes, counts that overflow int64.
model_analysis analyze(const model& m, dtype dt);

/// The model of one layer, as `profile --layer`, `sweep`, the API's profile_layer, the fuzzers and the tests build it:
/// `o` reading `inputs`, named "input" (one) or "input0", "input1", ... (several); an embedding's input holds token
/// ids. `layer_name` names the layer (empty: the op's kind, as `profile --layer` shows it). Not validated: analyze()
/// reports bad shapes, naming the layer and the input.
model single_layer_model(const op& o, const std::vector<shape>& inputs, const std::string& layer_name = {},
                         const std::string& model_name = "layer");

}  // namespace ridgeline::core
