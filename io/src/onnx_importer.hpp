#pragma once
// The ONNX importer, internal to io/ (RIDGELINE_HAVE_ONNX == 1): only io/src includes ONNX and protobuf
// headers, and none of them appear in its public headers. One importer reads one file: its members are defined
// in onnx_import.cpp (the driver and the op dispatch), onnx_load.cpp, onnx_values.cpp and one file per op
// family (onnx_ops_window.cpp, onnx_ops_dense.cpp, onnx_ops_elementwise.cpp, onnx_ops_shape.cpp,
// onnx_ops_attention.cpp). Its state is three parts (the end of the class): the graph index (what the file says,
// read-only once indexed: graph()), the constant store (what folding knows) and the model being built (what the
// conversion writes).
#include "ridgeline/io/onnx_import.hpp"

#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "ridgeline/core/file.hpp"
#include "ridgeline/core/checked.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::io::onnx_detail {

/// Longest ONNX shape inference may take (resnet50 needs well under a second).
constexpr int shape_inference_timeout_s = 120;

// AddressSanitizer (GCC's -fsanitize=address defines __SANITIZE_ADDRESS__, clang says so by __has_feature) maps
// terabytes of shadow memory: no address-space cap under it
#if defined(__SANITIZE_ADDRESS__)
#define RIDGELINE_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define RIDGELINE_UNDER_ASAN 1
#endif
#endif
#ifndef RIDGELINE_UNDER_ASAN
#define RIDGELINE_UNDER_ASAN 0
#endif

/// Most address space ONNX shape inference may take (its child process; resnet50 needs well under 1 GiB).
constexpr rlim_t shape_inference_memory_bytes = rlim_t{8} << 30;

namespace fs = std::filesystem;

/// A tensor whose value is known when the file is read: an initializer or a Constant node's output.
struct constant {
    std::vector<std::int64_t> dims;
    std::vector<float> values;       // floating-point tensors
    std::vector<std::int64_t> ints;  // integer tensors
    bool integer = false;
    std::string origin;  // what it is made of: "<initializer name>" plus any transform
    bool absent = false; // shapes_only: made from an initializer whose external data is absent (zeros here)
    bool initializer = false;  // an initializer's data, or a view of it (folded Transpose, Reshape, ...): a parameter

    [[nodiscard]] std::size_t size() const { return integer ? ints.size() : values.size(); }
    [[nodiscard]] std::string shape_text() const {
        return dims.empty() ? std::string("scalar") : core::shape(dims).to_string();
    }
};
using constant_ptr = std::shared_ptr<const constant>;

/// Why a node cannot be imported. `listed`: the node itself is at fault (it goes into the error), as
/// opposed to a node that only reads the output of one that is.
/// Constant folding's caps (onnx_fold.cpp): all folded nodes of a file make at most 64 Mi elements together (one
/// node at most 16 Mi, onnx_fold_rules.cpp); past that only small results fold (shape arithmetic).
constexpr std::int64_t max_folded_total = std::int64_t{1} << 26;
constexpr std::int64_t max_small_fold = 4096;

/// Thrown by a fold rule (or what it calls) for a node that is no constant; try_fold() catches it.
struct not_foldable {};

/// A node the importer cannot convert, with the reason; import() catches it per node and gathers the nodes into
/// its one error. A core::error like every error ridgeline raises, so one that escapes still reads as one line.
struct unsupported : core::error {
    bool listed = true;
    explicit unsupported(const std::string& reason, bool listed_ = true) : core::error(reason), listed(listed_) {}
};

struct issue {
    skipped_node node;
    bool listed = true;
};

struct unavailable {
    std::string reason;
    bool producer_listed = true;
};

/// A parameter slot of an emitted layer and the data that fills it.
struct param_use {
    std::size_t layer = 0;
    std::string param;
    std::vector<float> data;
    std::string origin;
    bool absent = false;  // shapes_only: no data; backends use seeded random weights
};

inline float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = (h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t man = h & 0x3ffu;
    if (exp == 0) {  // zero or subnormal: man * 2^-24
        const float v = std::ldexp(static_cast<float>(man), -24);
        return sign ? -v : v;
    }
    if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
    return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
}

/// A float32 from the file as the double of its shortest decimal form (1e-6f -> 1e-06, not 9.99999997e-07),
/// so eps and scale factors print as they were written before export.
inline double tidy(float f) {
    char buf[32];
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, f);
    if (ec != std::errc()) return static_cast<double>(f);
    *ptr = '\0';
    return std::strtod(buf, nullptr);
}

inline std::string dims_text(const std::vector<std::int64_t>& d) {
    return d.empty() ? "scalar" : core::shape(d).to_string();
}

inline std::string join_ints(const std::vector<std::int64_t>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
    return s;
}

inline std::string number_text(double v) {
    std::ostringstream o;
    o.precision(9);
    o << v;
    return o.str();
}

/// The name of an ONNX element type code ("FLOAT16"), or "code 99" for a code this ONNX does not name.
inline std::string type_name(int t) {
    const std::string& n = onnx::TensorProto::DataType_Name(t);
    return n.empty() ? "code " + std::to_string(t) : n;
}

inline bool is_float_type(int t) {
    using tp = onnx::TensorProto;
    return t == tp::FLOAT || t == tp::FLOAT16 || t == tp::DOUBLE || t == tp::BFLOAT16;
}
inline bool is_int_type(int t) {
    using tp = onnx::TensorProto;
    return t == tp::INT64 || t == tp::INT32 || t == tp::INT16 || t == tp::INT8 || t == tp::UINT8 || t == tp::UINT16 ||
           t == tp::UINT32 || t == tp::UINT64 || t == tp::BOOL;
}

class importer {
public:
    importer(const fs::path& file, const onnx_options& options)
        : file_(file), options_(options), label_(file.string()) {}

    onnx_model run();

private:
    // ------------------------------------------------------------------ loading
    [[noreturn]] void fail(const std::string& message) const { throw core::error(label_ + ": " + message); }

    void load();

    /// Real inputs (graph inputs that are not initializers) with concrete shapes written into the proto, so
    /// ONNX's shape inference sees them.
    void set_input_shapes();

    static std::string example_shape(const google::protobuf::RepeatedPtrField<onnx::TensorShapeProto_Dimension>& dims);

    /// ONNX's shape inference, in a child process. ONNX 1.12 (Debian 12) crashes on some malformed graphs
    /// (fuzz_onnx found a Conv whose input has fewer dimensions than its weight: a SEGV inside
    /// onnx::convPoolShapeInference), and no check before it could know every intermediate rank. The child
    /// runs it on its copy of the model and sends back the inferred value_info and outputs; a crash, a hang
    /// (shape_inference_timeout_s) or ONNX's own exception becomes one error line here.
    void infer_shapes();

    void index_graph();

    // ------------------------------------------------------------------ order and constant folding (onnx_fold.cpp)
    /// Sorts the graph's nodes topologically, in place; file order is kept among nodes that are ready.
    void order_nodes();

    /// Evaluates every node whose inputs are known when the file is read (onnx_fold.cpp lists the ops) into
    /// consts_.values, before any layer is made; records them in consts_.folded and consts_.folded_nodes.
    void fold_constants();

    /// Folds one node: true when its outputs are now in consts_.values. Finds the node's rule in fold_rules() and checks
    /// what every rule needs first (its inputs known and present, absent data only through views).
    bool fold(const onnx::NodeProto& n);

    /// What a fold rule reads: the node, and its input k as a constant (null when the node has no input k).
    struct fold_args {
        const onnx::NodeProto& n;
        const std::function<constant_ptr(int)>& in;
    };
    struct fold_rule {
        bool (importer::*fold)(const fold_args&);
        int inputs = 1;                    // inputs the rule reads without asking
        bool before_inputs_known = false;  // Constant, Shape, Size: run before fold() checks the inputs
    };
    /// Op type -> its rule (onnx_fold_rules.cpp): the list of what folds.
    static const std::map<std::string, fold_rule, std::less<>>& fold_rules();
    bool fold_constant(const fold_args& a);
    bool fold_shape(const fold_args& a);  // Shape and Size
    bool fold_identity(const fold_args& a);
    bool fold_transpose(const fold_args& a);
    bool fold_cast(const fold_args& a);
    bool fold_gather(const fold_args& a);
    bool fold_squeeze(const fold_args& a);  // Squeeze and Unsqueeze
    bool fold_reshape(const fold_args& a);  // Reshape and Flatten
    bool fold_concat(const fold_args& a);
    bool fold_slice(const fold_args& a);
    bool fold_range(const fold_args& a);
    bool fold_constant_of_shape(const fold_args& a);  // ConstantOfShape and Expand
    bool fold_scatter_nd(const fold_args& a);
    bool fold_where(const fold_args& a);
    bool fold_unary(const fold_args& a);   // Not, Neg, Abs, Sqrt, Exp, Erf, Cos, Sin, Floor, Ceil, Reciprocal
    bool fold_binary(const fold_args& a);  // Add, Sub, Mul, Div, Pow, Max, Min, Equal, Less, Greater, Mod

    /// Is `t` a constant now (an initializer or a folded output), or no tensor at all ("")?
    bool known(const std::string& t) const;
    /// Folds node `i` into constants when its inputs are known (fold()), within the file's cap, and records it in
    /// consts_.folded and consts_.folded_nodes; false (nothing changed) when it cannot be folded. Run over every node before
    /// any is converted, and again for each node the conversion reaches.
    bool try_fold(int i);

    /// The dims of `t` when they are fixed: a constant, a graph input, or what shape inference found.
    std::vector<std::int64_t> static_dims(const std::string& t) const;

    // ------------------------------------------------------------------ tensors and constants
    std::string unique(const std::string& base);

    /// The bytes of an initializer stored as external data; empty with options_.shapes_only when the file
    /// does not exist (the tensor is then absent).
    std::vector<char> external_bytes(const onnx::TensorProto& t, std::size_t need) const;

    constant_ptr decode(const onnx::TensorProto& t, const std::string& origin) const;

    enum class source { activation, constant, unavailable };
    struct value {
        source k = source::activation;
        std::string tensor;  // core tensor (activation)
        constant_ptr c;
        std::string why;
        bool producer_listed = true;
    };

    value resolve(const onnx::NodeProto& n, const std::string& t);

    bool has_input(const onnx::NodeProto& n, int i) const { return i < n.input_size() && !n.input(i).empty(); }

    value input(const onnx::NodeProto& n, int i);

    std::string activation(const onnx::NodeProto& n, int i);

    constant_ptr constant_input(const onnx::NodeProto& n, int i);

    /// Input i as a core tensor: an activation, or a float constant held by a parameter layer (made once per
    /// ONNX tensor; trainable when it is an initializer or a view of one, as PyTorch's nn.Parameter). Integer
    /// constants are unsupported.
    std::string operand(const onnx::NodeProto& n, int i);

    /// The parameter layer holding constant `c`, made once per `key` (the ONNX tensor), broadcast to `expand`
    /// when given.
    std::string held(const std::string& key, const constant_ptr& c, const std::vector<std::int64_t>& expand = {});

    /// Expand of a float constant (ViT's class token to the batch) -> a parameter layer that broadcasts it (its
    /// params are its own size); of an activation: unsupported.
    void expand_node(const onnx::NodeProto& n);
    /// True when every reader of n's output (an Expand of an activation of dims x to `expanded`) is an elementwise
    /// op that broadcasts x to the same output: the Expand is then a view folded into them.
    bool broadcast_by_readers(const onnx::NodeProto& n, const std::vector<std::int64_t>& x,
                              const std::vector<std::int64_t>& expanded);

    const core::shape& shape_of(const std::string& tensor) const { return built_.shapes.at(tensor); }

    // ------------------------------------------------------------------ attributes
    static const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name);
    static std::int64_t attr_int(const onnx::NodeProto& n, const std::string& name, std::int64_t fallback);
    static double attr_float(const onnx::NodeProto& n, const std::string& name, double fallback);
    static std::string attr_string(const onnx::NodeProto& n, const std::string& name, const std::string& fallback);
    static std::vector<std::int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name,
                                               std::vector<std::int64_t> fallback);
    /// Integers that moved from an attribute to an input across opsets (ReduceMean's and Squeeze's axes,
    /// Split's sizes): input `input` when the node has it (a constant of integers, else unsupported
    /// "<what> are not integers"), otherwise the attribute `name` (empty when absent).
    std::vector<std::int64_t> attr_or_input_ints(const onnx::NodeProto& n, const std::string& name, int input,
                                                 const std::string& what);

    // ------------------------------------------------------------------ emitting layers
    std::string node_name(const onnx::NodeProto& n) const;

    core::op make(const std::string& kind, const std::vector<core::attribute>& attrs, const std::string& name);

    /// Appends a layer named after the node, infers its shape, and records its parameters' data.
    std::string emit(const onnx::NodeProto& n, core::op o, std::vector<std::string> inputs,
                     std::vector<std::pair<std::string, constant_ptr>> params = {});

    void fuse(int node);

    void map_output(const std::string& onnx_tensor, const std::string& core_tensor);

    /// Outputs other than the first must not be read (Dropout's mask, MaxPool's indices, ...).
    void only_first_output(const onnx::NodeProto& n) const;

    static std::shared_ptr<constant> derived(const constant& c, const std::string& tag);

    /// Row-major [r, k] -> [k, r].
    static std::shared_ptr<constant> transposed2d(const constant& c);

    /// The value of a one-element constant; unsupported when it has another size or no data (--shapes-only).
    static double scalar_of(const constant& c) {
        if (c.size() != 1)
            throw unsupported{"\"" + c.origin + "\" is a constant of shape " + c.shape_text() + ", not one value"};
        if (c.absent)
            throw unsupported{"the value of \"" + c.origin +
                              "\" is needed here, but its external data is absent (imported by shape only)"};
        return c.integer ? static_cast<double>(c.ints.at(0)) : tidy(c.values.at(0));
    }

    // ------------------------------------------------------------------ conversion
    void convert(const onnx::NodeProto& n, int index);

    void skip(const onnx::NodeProto& n, const unsupported& u);

    static std::string op_type(const onnx::NodeProto& n);

    void cross_check(const onnx::NodeProto& n);

    /// Converts one node: its op type's converter from converters(), or unsupported with the reason.
    void handle(const onnx::NodeProto& n, int index);

    /// How one ONNX op type becomes layers (index: the node's position, for the pattern matchers).
    using converter = void (*)(importer&, const onnx::NodeProto& n, int index);
    using converter_map = std::map<std::string, converter, std::less<>>;
    /// Op type -> converter. Each family registers its op types in the file that converts them (the
    /// add_*_converters functions at the end of onnx_ops_window.cpp, onnx_ops_dense.cpp, onnx_ops_elementwise.cpp,
    /// onnx_ops_shape.cpp and onnx_values.cpp); adding an ONNX op is one entry there. An op type registered
    /// twice is a programming error (std::logic_error when the table is first built).
    static const converter_map& converters();
    static void add_converter(converter_map& table, std::string_view op_type, converter c);
    static void add_window_converters(converter_map& table);
    static void add_dense_converters(converter_map& table);
    static void add_elementwise_converters(converter_map& table);
    static void add_shape_converters(converter_map& table);
    static void add_values_converters(converter_map& table);

    void unary(const onnx::NodeProto& n, const std::string& kind);

    void pass_through(const onnx::NodeProto& n);

    void constant_node(const onnx::NodeProto& n);

    /// (top, left, bottom, right) pads of a 2-D window op, auto_pad resolved against the input size.
    std::array<std::int64_t, 4> pads_of(const onnx::NodeProto& n, const core::shape& x, std::array<std::int64_t, 2> k,
                                        std::array<std::int64_t, 2> s, std::array<std::int64_t, 2> d) const;

    static std::array<std::int64_t, 2> pair_attr(const onnx::NodeProto& n, const std::string& name,
                                                 std::int64_t fallback);

    /// a * b, or the node is unsupported (its attributes are out of any sensible range).
    static std::int64_t checked_or_unsupported(std::int64_t a, std::int64_t b, const std::string& what);

    static std::string pair_text(std::array<std::int64_t, 2> p) {
        return std::to_string(p[0]) + "x" + std::to_string(p[1]);
    }

    void conv(const onnx::NodeProto& n);

    void pool(const onnx::NodeProto& n, bool max);

    void global_avg_pool(const onnx::NodeProto& n);

    /// Pad: all zeros is no layer; zeros around H and W read by one Conv or AveragePool (no pads of its own)
    /// become that op's padding; anything else is unsupported.
    void pad(const onnx::NodeProto& n);
    /// Resize and Upsample (PyTorch's F.interpolate, nearest and bilinear) as an interpolate layer.
    void resize(const onnx::NodeProto& n);

    /// PyTorch's LayerNorm before opset 17, starting at its first ReduceMean over the trailing `axes`
    /// (sorted, non-negative): emits one layer_norm and fuses the rest; false when the nodes differ.
    bool layer_norm_pattern(const onnx::NodeProto& rm1, const std::vector<std::int64_t>& axes);

    /// ReduceMean over H and W of NCHW -> adaptive_avg_pool2d(1) (+ flatten when keepdims=0); the first
    /// node of a decomposed LayerNorm -> layer_norm; over other axes -> mean.
    void reduce_mean(const onnx::NodeProto& n);

    /// ReduceMean / ReduceSum / ReduceMax over any axes -> mean / sum / amax (keepdims as ONNX, default 1).
    void reduce_node(const onnx::NodeProto& n, const std::string& kind);

    /// Slice's starts, ends, axes and steps (attributes before opset 10, constant inputs after), axes and
    /// steps defaulted; throws unsupported when they are not integer constants of one length.
    struct slice_arguments {
        std::vector<std::int64_t> starts, ends, axes, steps;
    };
    slice_arguments slice_args(const onnx::NodeProto& n);

    /// Slice of an activation -> one slice layer per axis that is cut (a whole axis is none).
    void slice_node(const onnx::NodeProto& n);

    /// A chain of transpose layers that applies `perm` (output dim i = input dim perm[i]); returns the last
    /// tensor (x itself for the identity permutation).
    std::string permute(const onnx::NodeProto& n, std::string x, const std::vector<std::int64_t>& perm);
    /// Einsum of two activations where it is a (batched) matmul, with the views around it; unsupported otherwise.
    void einsum(const onnx::NodeProto& n);

    void gemm(const onnx::NodeProto& n);

    /// The Add that follows a MatMul with a constant B and adds a constant vector of out_features (how
    /// PyTorch exports nn.Linear on inputs of rank > 2): its index, or -1.
    int bias_add_after(const onnx::NodeProto& n, std::int64_t out);

    void matmul(const onnx::NodeProto& n, int index);

    void batch_norm(const onnx::NodeProto& n);

    void clip(const onnx::NodeProto& n);

    /// HardSigmoid with PyTorch's alpha 1/6 and beta 0.5 -> hardsigmoid; other constants are unsupported.
    void hard_sigmoid(const onnx::NodeProto& n);

    /// Sigmoid -> sigmoid, or with the Mul by its own input that reads it (x * sigmoid(x)) -> one silu.
    void sigmoid_node(const onnx::NodeProto& n);

    void gelu_node(const onnx::NodeProto& n);

    /// The single reader of `t` when it is a node of type `op` and `t` is not a graph output; else -1.
    int only_reader(const std::string& t, const std::string& op) const;

    /// Is `t` a scalar constant close to `v`?
    bool scalar_near(const onnx::NodeProto& n, const std::string& t, double v);

    /// PyTorch's export of GELU (erf form): y = Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5), operands of
    /// the commutative ops in either order, every intermediate read once. Returns the node indices
    /// (Erf, Add, Mul, Mul) after the Div, or an empty vector.
    std::vector<int> gelu_pattern(const onnx::NodeProto& div);

    /// A pattern of nodes found before conversion that becomes one layer reading one activation: the nodes after the
    /// first are fused, and the first emits `kind` with `attrs` reading x, named `name` in the scope of node
    /// `scope_of` (emit_found). convert() marks `output` unavailable when the layer cannot be made, naming `what`.
    struct found_pattern {
        std::string x, output, scope_of, name, kind, what;
        std::vector<core::attribute> attrs;
    };
    /// PyTorch's export of the tanh GELU (GPT-2's NewGELU): one gelu(approximate=tanh).
    void find_tanh_gelus();
    /// Rotary embeddings in Hugging Face's rotate-half form (onnx_ops_attention.cpp): one rotary layer.
    void find_rotaries();
    void emit_found(const onnx::NodeProto& n, const found_pattern& m);

    void binary(const onnx::NodeProto& n, int index);

    /// Scaled dot-product attention as exported (onnx_ops_attention.cpp): MatMul(q, kT) -> [Div/Mul by a scalar] ->
    /// [Add of a constant mask | Where(constant causal condition, x, a large negative fill)] -> Softmax(last axis)
    /// -> MatMul(., v), every intermediate read once, q/kT/v of rank 4: one attention layer (is_causal for the
    /// causal mask, an all-zero mask dropped, another additive mask held). False, changing nothing, otherwise.
    bool attention_pattern(const onnx::NodeProto& mm);
    /// Hugging Face's repeat_kv as exported: Reshape(Expand(Unsqueeze(x, axes [2]), [B, KVH, G, S, D]),
    /// [B, KVH*G, S, D]), every intermediate read once. x's ONNX tensor, the repeat G and the three nodes; or an
    /// empty x. The attention that reads the result reads x instead (grouped-query heads, no copy).
    struct repeat_kv_match {
        std::string x;
        std::int64_t repeat = 0;
        std::vector<int> nodes;
    };
    repeat_kv_match repeat_kv_of(const std::string& t);
    /// When attention's kT (MatMul mm's second input, a Transpose of the last two axes) and v (pv's second input)
    /// both come through repeat_kv of one repeat: the kv heads' core tensors into keys and values, the copies marked
    /// for drop_orphans, true; false, changing nothing, otherwise.
    bool read_past_repeat_kv(const onnx::NodeProto& mm, const onnx::NodeProto& pv, std::string& keys, std::string& values);
    /// Layers left unread by a pattern that reads past them (repeat_kv's copies): dropped at finish() while no
    /// layer reads them.
    void drop_orphans();
    /// RMSNorm as exported: Pow(x, 2) -> ReduceMean(last axis) -> Add(eps) -> Sqrt -> Div(1, .) or Reciprocal ->
    /// Mul(x, .) -> [Mul by a constant of the last dim], every intermediate read once: one rms_norm layer (with that
    /// weight). False, changing nothing, otherwise.
    bool rms_norm_pattern(const onnx::NodeProto& pow);

    /// Pow(x, a constant scalar exponent) -> pow.
    void pow_node(const onnx::NodeProto& n);

    /// Where(constant mask, -inf or inf, x) (or the fill second) -> add(x, a held buffer of fill and zeros): the same
    /// tensor as masked_fill for finite x. Other Where nodes are unsupported.
    void where_node(const onnx::NodeProto& n);

    void concat(const onnx::NodeProto& n);

    void flatten(const onnx::NodeProto& n);

    void reshape(const onnx::NodeProto& n);

    void transpose(const onnx::NodeProto& n);

    void softmax(const onnx::NodeProto& n);

    void layer_norm(const onnx::NodeProto& n);

    void gather(const onnx::NodeProto& n);
    /// Gather of an activation x by constant indices: one index is a slice (and a reshape for a scalar index),
    /// several are slices of their runs and a concat.
    void gather_of_activation(const onnx::NodeProto& n, const std::string& x);
    /// table[index] by a constant index map: an embedding that holds its ids.
    void gather_by_held_ids(const onnx::NodeProto& n, const constant_ptr& table);

    /// Squeeze / Unsqueeze of an activation -> one reshape (a view).
    void squeeze_unsqueeze(const onnx::NodeProto& n);

    /// Split of an activation -> one slice layer per output (views).
    void split(const onnx::NodeProto& n);

    // ------------------------------------------------------------------ result
    onnx_model finish();

    struct input_info {
        std::string name;
        core::shape dims;
        bool indices = false;
    };

    /// What the file says, indexed once as it is read (load, set_input_shapes, order_nodes, infer_shapes and
    /// index_graph write it): the graph, its inputs, initializers, writers and readers, ONNX's shapes and types.
    /// Everything after reads it through graph() (const).
    struct graph_index {
        onnx::ModelProto proto;
        std::int64_t opset = 13;
        std::vector<input_info> inputs;
        std::map<std::string, const onnx::TensorProto*> initializer;
        std::map<std::string, std::vector<int>> readers;   // ONNX tensor -> the nodes that read it
        std::set<std::string> outputs;                     // the graph's outputs
        std::map<std::string, std::vector<std::int64_t>> dims;  // ONNX tensor -> its shape as inference found it
        std::map<std::string, int> types;                  // ONNX tensor -> its element type
        std::map<std::string, int> producer;               // ONNX tensor -> the node that makes it
    };
    /// What constant folding knows (onnx_fold.cpp writes it; converters read it, and note what they cannot have):
    /// the value of every tensor known when the file is read, and why others have none.
    struct constant_store {
        std::map<std::string, constant_ptr> values;           // ONNX tensor -> constant value
        std::map<std::string, unavailable> missing;           // ONNX tensor -> why it has no value
        std::set<int> folded;                                 // nodes evaluated into constants
        std::vector<skipped_node> folded_nodes;               // the same, for onnx_model::folded
        std::int64_t folded_total = 0;                        // elements folded so far (capped, onnx_fold.cpp)
        mutable std::vector<std::string> absent;              // shapes_only: initializers without data, first use first
    };
    /// The model being built, which only the conversion writes (the converters, emit(), finish()): its layers, the
    /// core tensor of each ONNX tensor, the nodes fused into a layer, the parameters and what the node being
    /// converted changed (rolled back when it is unsupported).
    struct model_build {
        core::model model;
        std::map<std::string, std::string> act;      // ONNX tensor -> core tensor (input or layer name)
        std::map<std::string, core::shape> shapes;   // core tensor -> shape
        std::set<std::string> used;                  // core tensor names taken
        std::set<int> fused;                         // nodes folded into an earlier node's layer
        std::map<int, found_pattern> found_at;       // first node of a pattern found before conversion -> it
        std::map<std::string, std::string> held;     // ONNX constant tensor -> its parameter layer
        std::set<std::string> broadcast_views;       // Expands folded into their readers (broadcast_by_readers)
        std::set<std::string> orphans;               // core layers a pattern read past (drop_orphans)
        std::vector<param_use> uses;
        std::vector<issue> issues;
        bool resized_inputs = false;  // --batch or --input gave an input a shape other than the file's concrete one
        int current_index = 0;        // the node being converted
        // what the node being converted added, undone when it turns out unsupported
        std::vector<std::string> held_now, mapped_now, orphans_now;
        std::vector<int> fused_now;
    };

    [[nodiscard]] const graph_index& graph() const { return graph_; }

    fs::path file_;
    const onnx_options& options_;
    std::string label_;
    fs::path dir_;
    graph_index graph_;
    constant_store consts_;
    model_build built_;
};

}  // namespace ridgeline::io::onnx_detail
