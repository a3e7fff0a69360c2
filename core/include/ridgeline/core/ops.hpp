#pragma once
// Layer descriptors: one struct per op, with PyTorch's argument names as fields.
//
// Every op provides the same members, used by core/layer.cpp through std::visit:
//   static constexpr std::string_view kind;          name in layer strings ("conv2d")
//   static constexpr int min_inputs, max_inputs;     arity (max_inputs = -1: any number)
//   static T read(attribute_reader&);                parse and validate attributes
//   void write(attribute_writer&) const;             canonical attributes (defaults omitted)
//   shape infer(const std::vector<shape>&, const std::string& where) const;
//                                                    validate inputs, return the output shape
//   std::vector<param_spec> parameters() const;      weight / bias / buffers with shapes
//   cost work(const std::vector<shape>& in, const shape& out, dtype) const;
//                                                    macs, flops, bias_flops, bytes (params and
//                                                    buffers are filled from parameters())
// Shapes are NCHW for 2-D ops and [..., features] for Linear, row-major as in PyTorch.
// Errors: parse_error for bad attributes, invalid_layer for inputs that break a rule; both start with
// `<kind> "<name>":`. Formulas and their sources are in docs/conventions.md.
//
// To add an op, follow docs/adding-an-op.md (every place an op must be named, in order; a test checks that
// the JSON schema, the docs' op list and the golden file agree with op_kinds()).

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ridgeline/core/attributes.hpp"
#include "ridgeline/core/cost.hpp"
#include "ridgeline/core/dtype.hpp"
#include "ridgeline/core/shape.hpp"

namespace ridgeline::core {

using shapes = std::vector<shape>;

// The members every op declares (see the list at the top), spelled once: RIDGELINE_OP_MEMBERS for an op with
// parameters or buffers (parameters() defined in its .cpp), RIDGELINE_OP_MEMBERS_NO_PARAMS for one without.
#define RIDGELINE_OP_COMMON_MEMBERS(T)                                                     \
    static T read(attribute_reader& r);                                                    \
    void write(attribute_writer& w) const;                                                 \
    [[nodiscard]] shape infer(const shapes& in, const std::string& where) const;          \
    [[nodiscard]] cost work(const shapes& in, const shape& out, dtype dt) const;           \
    bool operator==(const T&) const = default;
#define RIDGELINE_OP_MEMBERS(T)                                                            \
    RIDGELINE_OP_COMMON_MEMBERS(T)                                                         \
    [[nodiscard]] std::vector<param_spec> parameters() const;
#define RIDGELINE_OP_MEMBERS_NO_PARAMS(T)                                                  \
    RIDGELINE_OP_COMMON_MEMBERS(T)                                                         \
    [[nodiscard]] std::vector<param_spec> parameters() const { return {}; }

// ---------------------------------------------------------------- dense: linear, matmul, embedding

/// y = x W^T + b. Input [..., in_features] (rank >= 1; all leading dims are rows), output
/// [..., out_features]. macs = rows * in_features * out_features (torch.nn.Linear).
struct linear {
    static constexpr std::string_view kind = "linear";
    static constexpr int min_inputs = 1, max_inputs = 1;
    std::int64_t in_features = 0;
    std::int64_t out_features = 0;
    bool bias = true;

    RIDGELINE_OP_MEMBERS(linear)
};

/// Batched matrix product of two activations (torch.matmul): A [..., M, K] x B [..., K, N] ->
/// [..., M, N], batch dims broadcast. Both ranks >= 2. macs = batch * M * K * N.
struct matmul {
    static constexpr std::string_view kind = "matmul";
    static constexpr int min_inputs = 2, max_inputs = 2;

    RIDGELINE_OP_MEMBERS(matmul)
};

/// Table lookup (torch.nn.Embedding, or F.embedding / table[index] of a parameter). Input: int64 token ids of any
/// shape; or, with `indices` (a shape), no input: the layer holds its ids as a buffer "indices" (a registered index
/// buffer, as Swin's relative_position_index reading its relative_position_bias_table). Output [..., embedding_dim].
/// bytes: ids at 8 bytes, the looked-up rows read once (at most min(ids, num_embeddings) rows), the output written once.
struct embedding {
    static constexpr std::string_view kind = "embedding";
    static constexpr int min_inputs = 0, max_inputs = 1;  // one input, or none with `indices`
    std::int64_t num_embeddings = 0;
    std::int64_t embedding_dim = 0;
    std::vector<std::int64_t> indices;  // shape of the held ids; empty: the ids are the input

    RIDGELINE_OP_MEMBERS(embedding)
};

// ---------------------------------------------------------------- convolution

/// Padding of a 2-D convolution: explicit (symmetric "1" / "1x2", or "top x left x bottom x right"),
/// "same" (stride 1 only; an odd total puts the extra row/column after, as PyTorch) or "valid" (none).
struct padding2d {
    enum class mode : std::uint8_t { explicit_pads, same, valid };
    mode kind = mode::explicit_pads;
    std::int64_t top = 0, left = 0, bottom = 0, right = 0;
    bool operator==(const padding2d&) const = default;
};

/// torch.nn.Conv2d. Input N x in_channels x H x W, weight out_channels x in_channels/groups x kh x kw.
/// H_out = floor((H + pad_top + pad_bottom - dilation_h*(kh-1) - 1) / stride_h) + 1, W_out alike.
/// macs = N * out_channels * H_out * W_out * (in_channels/groups) * kh * kw (padding taps included).
struct conv2d {
    static constexpr std::string_view kind = "conv2d";
    static constexpr int min_inputs = 1, max_inputs = 1;
    std::int64_t in_channels = 0;
    std::int64_t out_channels = 0;
    pair2d kernel_size{};
    pair2d stride{1, 1};
    padding2d padding{};
    pair2d dilation{1, 1};
    std::int64_t groups = 1;
    bool bias = true;

    /// Pads actually applied (top, left, bottom, right), "same" resolved for this kernel and dilation.
    [[nodiscard]] padding2d resolved_padding() const;

    RIDGELINE_OP_MEMBERS(conv2d)
};

// ---------------------------------------------------------------- normalisation

/// torch.nn.BatchNorm2d in inference: y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta,
/// folded to one multiply and one add per element. params 2C (gamma, beta), buffers 2C.
struct batch_norm2d {
    static constexpr std::string_view kind = "batch_norm2d";
    static constexpr int min_inputs = 1, max_inputs = 1;
    std::int64_t num_features = 0;
    double eps = 1e-5;
    bool affine = true;

    RIDGELINE_OP_MEMBERS(batch_norm2d)
};

/// torch.nn.LayerNorm over the trailing dims `normalized_shape`. flops 8 per element with the affine
/// transform (mean 1, variance 3, normalise 2, affine 2), 6 without.
struct layer_norm {
    static constexpr std::string_view kind = "layer_norm";
    static constexpr int min_inputs = 1, max_inputs = 1;
    std::vector<std::int64_t> normalized_shape;
    double eps = 1e-5;
    bool elementwise_affine = true;
    bool bias = true;  // with elementwise_affine: a bias as well as the weight (nn.LayerNorm(bias=False), PyTorch 2.1)

    RIDGELINE_OP_MEMBERS(layer_norm)
};

/// Root-mean-square normalisation over the trailing dims `normalized_shape` (torch.nn.RMSNorm; Hugging Face's
/// LlamaRMSNorm, Qwen2RMSNorm, MistralRMSNorm): y = x / sqrt(mean(x^2) + eps) * weight, the statistics in float32.
/// flops 4 per element with the weight (square, accumulate, normalise, weight), 3 without (derived: the per-row
/// divide, add and rsqrt are not counted, as layer_norm's). params: weight (normalized_shape) when
/// elementwise_affine. eps: Hugging Face's rms_norm_eps (its default 1e-6).
struct rms_norm {
    static constexpr std::string_view kind = "rms_norm";
    static constexpr int min_inputs = 1, max_inputs = 1;
    std::vector<std::int64_t> normalized_shape;
    double eps = 1e-6;
    bool elementwise_affine = true;

    RIDGELINE_OP_MEMBERS(rms_norm)
};

// ---------------------------------------------------------------- elementwise and activations

/// Unary elementwise ops share one shape rule (output = input) and differ in flops per element.
#define RIDGELINE_UNARY_OP_MEMBERS(T)                                                      \
    static constexpr int min_inputs = 1, max_inputs = 1;                                   \
    RIDGELINE_OP_MEMBERS_NO_PARAMS(T)                                                      \
    [[nodiscard]] std::int64_t flops_per_element() const;

/// max(x, 0): 1 flop per element.
struct relu {
    static constexpr std::string_view kind = "relu";
    RIDGELINE_UNARY_OP_MEMBERS(relu)
};
/// min(max(x, 0), 6): 1 flop per element (one clamp).
struct relu6 {
    static constexpr std::string_view kind = "relu6";
    RIDGELINE_UNARY_OP_MEMBERS(relu6)
};
/// approximate=none: 0.5*x*(1+erf(x/sqrt(2))), 5 flops; approximate=tanh:
/// 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))), 9 flops (a transcendental counts as one).
struct gelu {
    static constexpr std::string_view kind = "gelu";
    bool tanh_approximation = false;
    RIDGELINE_UNARY_OP_MEMBERS(gelu)
};
/// tanh(x): 1 flop per element.
struct tanh_op {
    static constexpr std::string_view kind = "tanh";
    RIDGELINE_UNARY_OP_MEMBERS(tanh_op)
};
/// 1/(1+exp(-x)): 3 flops per element.
struct sigmoid {
    static constexpr std::string_view kind = "sigmoid";
    RIDGELINE_UNARY_OP_MEMBERS(sigmoid)
};
/// x * relu6(x + 3) / 6 (torch.nn.Hardswish, MobileNetV3): 4 flops per element (add, clamp, multiply,
/// divide).
struct hardswish {
    static constexpr std::string_view kind = "hardswish";
    RIDGELINE_UNARY_OP_MEMBERS(hardswish)
};
/// relu6(x + 3) / 6 (torch.nn.Hardsigmoid; ONNX HardSigmoid with alpha 1/6, beta 0.5): 3 flops per element
/// (add, clamp, divide).
struct hardsigmoid {
    static constexpr std::string_view kind = "hardsigmoid";
    RIDGELINE_UNARY_OP_MEMBERS(hardsigmoid)
};
/// x * sigmoid(x) (torch.nn.SiLU, swish): 4 flops per element (sigmoid's 3 and a multiply).
struct silu {
    static constexpr std::string_view kind = "silu";
    RIDGELINE_UNARY_OP_MEMBERS(silu)
};
/// x * factor (attention's 1/sqrt(d_k)): 1 flop per element.
struct scale {
    static constexpr std::string_view kind = "scale";
    double factor = 1.0;
    RIDGELINE_UNARY_OP_MEMBERS(scale)
};
/// softmax along `dim`: 5 flops per element (max, subtract, exp, sum, divide).
struct softmax {
    static constexpr std::string_view kind = "softmax";
    std::int64_t dim = -1;
    RIDGELINE_UNARY_OP_MEMBERS(softmax)
};

/// Elementwise functions of one tensor as ONNX graphs spell them out (Erf, Sqrt, Exp, Neg, Pow): 1 flop per
/// element each (a function evaluation counts one, as tanh; docs/conventions.md).
/// torch.erf.
struct erf_op {
    static constexpr std::string_view kind = "erf";
    RIDGELINE_UNARY_OP_MEMBERS(erf_op)
};
/// torch.sqrt (NaN for x < 0, as PyTorch).
struct sqrt_op {
    static constexpr std::string_view kind = "sqrt";
    RIDGELINE_UNARY_OP_MEMBERS(sqrt_op)
};
/// torch.exp.
struct exp_op {
    static constexpr std::string_view kind = "exp";
    RIDGELINE_UNARY_OP_MEMBERS(exp_op)
};
/// torch.neg: -x.
struct neg {
    static constexpr std::string_view kind = "neg";
    RIDGELINE_UNARY_OP_MEMBERS(neg)
};
/// torch.pow(x, exponent) with a constant exponent (x^3 in the tanh GELU, x^2 in a variance).
struct pow_op {
    static constexpr std::string_view kind = "pow";
    double exponent = 1.0;
    RIDGELINE_UNARY_OP_MEMBERS(pow_op)
};

#undef RIDGELINE_UNARY_OP_MEMBERS

/// Elementwise binary ops with NumPy broadcasting, operands in order (torch.add, torch.mul, torch.sub,
/// torch.div); 1 flop per output element.
#define RIDGELINE_BINARY_OP_MEMBERS(T)                                                     \
    static constexpr int min_inputs = 2, max_inputs = 2;                                   \
    RIDGELINE_OP_MEMBERS_NO_PARAMS(T)
struct add {
    static constexpr std::string_view kind = "add";
    RIDGELINE_BINARY_OP_MEMBERS(add)
};
struct mul {
    static constexpr std::string_view kind = "mul";
    RIDGELINE_BINARY_OP_MEMBERS(mul)
};
struct sub {
    static constexpr std::string_view kind = "sub";
    RIDGELINE_BINARY_OP_MEMBERS(sub)
};
struct div {
    static constexpr std::string_view kind = "div";
    RIDGELINE_BINARY_OP_MEMBERS(div)
};
#undef RIDGELINE_BINARY_OP_MEMBERS

/// torch.where(condition, input, other): input where the condition holds, other elsewhere, NumPy broadcasting of
/// all three. The condition is a float tensor, true where > 0 (a bool mask is held as 0/1: HF GPT-2's causal mask
/// filled with finfo.min). A selection: 0 flops; bytes: the three inputs read, the output written.
struct where_op {
    static constexpr std::string_view kind = "where";
    static constexpr int min_inputs = 3, max_inputs = 3;
    RIDGELINE_OP_MEMBERS_NO_PARAMS(where_op)
};

// ---------------------------------------------------------------- attention

/// Rotary position embedding (RoPE, Su et al. arXiv 2104.09864) in Hugging Face's rotate-half convention
/// (modeling_llama.apply_rotary_pos_emb): input [B, heads, S, D] (D even), output the same; token s sits at
/// position offset + s. With x1 = x[..., :D/2], x2 = x[..., D/2:] and angle(p, i) = p * inv_freq[i mod D/2]:
///   y[..., i] = x1 * cos - x2 * sin,   y[..., D/2 + i] = x2 * cos + x1 * sin
/// with cos and sin scaled by the attention factor of the scaling type. inv_freq = 1 / theta^(2i/D), changed by
/// `scaling` as Hugging Face's modeling_rope_utils.py: linear (/ factor), dynamic (NTK: theta grows once
/// offset + S passes max_position_embeddings), yarn (ramped interpolation between beta_fast and beta_slow; the
/// attention factor 0.1 ln(factor) + 1 unless given), llama3 (low and high frequency bands of
/// original_max_position_embeddings). flops 3 per element (two multiplies and an add or subtract; the negation of
/// rotate_half folds into the subtract). bytes: input read, output written, and the cos and sin tables (S x D each)
/// read once. The tables are computed once per forward (Hugging Face's rotary_emb), not by this layer: not counted.
struct rotary {
    static constexpr std::string_view kind = "rotary";
    static constexpr int min_inputs = 1, max_inputs = 1;
    enum class scaling_t { none, linear, dynamic, yarn, llama3 };
    double theta = 10000.0;
    std::int64_t offset = 0;
    scaling_t scaling = scaling_t::none;
    double factor = 1.0;
    std::int64_t max_position_embeddings = 0;           // dynamic, yarn
    std::int64_t original_max_position_embeddings = 0;  // llama3
    double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
    double attention_factor = 0.0;                       // yarn; 0: 0.1 ln(factor) + 1
    double beta_fast = 32.0, beta_slow = 1.0;            // yarn

    /// inv_freq (D/2 values, float32 as Hugging Face computes them) for head dimension `dim` when the last position
    /// is `seq_end - 1` (dynamic scaling reads it).
    [[nodiscard]] std::vector<float> inv_freq(std::int64_t dim, std::int64_t seq_end) const;
    /// The factor cos and sin are multiplied by (yarn's attention factor; 1 otherwise).
    [[nodiscard]] double table_scale() const;
    /// cos and sin tables [S, D] (row s: position offset + s), float32 as Hugging Face's rotary_emb computes them
    /// (angle = float(position) * inv_freq in float32); shared by every backend so that they cannot differ.
    struct tables {
        std::vector<float> cos, sin;
    };
    [[nodiscard]] tables make_tables(std::int64_t dim, std::int64_t seq) const;
    RIDGELINE_OP_MEMBERS_NO_PARAMS(rotary)
};

/// Scaled dot-product attention as one layer (torch.nn.functional.scaled_dot_product_attention; the attention of
/// Hugging Face's BERT, GPT-2, OPT, Llama, Mistral, Qwen2). Inputs: queries [B, H, Sq, D], keys [B, KVH, Skv, D],
/// values [B, KVH, Skv, Dv], optionally an additive mask broadcastable to [B, H, Sq, Skv]; H a multiple of KVH
/// (grouped-query attention: query head h reads kv head h / (H / KVH), as repeat_kv, without a copy). Output
/// [B, H, Sq, Dv] = softmax(q k^T * scale + mask) v, scale 1/sqrt(D) unless given.
/// is_causal: query i sits at position Skv - Sq + i (after the cached tokens: prefill has Skv = Sq, a decode step
/// Sq = 1 over the cache and itself; Hugging Face's cache_position) and attends keys j <= its position. This is
/// Hugging Face's convention; PyTorch's own is_causal aligns to the top left (query i sees keys j <= i), which
/// differs only when Sq != Skv. sliding_window W (with is_causal; Mistral): keys within W positions,
/// position - j < W. An explicit mask and is_causal together are refused, as PyTorch does.
/// macs B*H*Sq*Skv*(D + Dv) (q k^T and p v), flops 2*macs: what PyTorch's FlopCounterMode counts for SDPA (softmax
/// and scaling not counted). skipped_macs: the (D + Dv) MACs of each pair the causal mask or window removes, so
/// executed_flops counts only the pairs kept (attention_pairs). bytes: q, k, v (kv heads once), the mask, the output.
struct attention {
    static constexpr std::string_view kind = "attention";
    static constexpr int min_inputs = 3, max_inputs = 4;
    bool is_causal = false;
    double scale = 0.0;               // 0: 1/sqrt(D)
    std::int64_t sliding_window = 0;  // 0: none

    /// Whether query row i (0-based, of Sq) may attend key j (of Skv).
    [[nodiscard]] bool keeps(std::int64_t i, std::int64_t j, std::int64_t sq, std::int64_t skv) const;
    /// Query-key pairs one head computes: Sq*Skv, or those the causal mask and window keep (exact, closed form).
    [[nodiscard]] std::int64_t pairs(std::int64_t sq, std::int64_t skv) const;
    /// The scale applied to q k^T for head dimension d.
    [[nodiscard]] double scale_for(std::int64_t d) const;
    RIDGELINE_OP_MEMBERS_NO_PARAMS(attention)
};

/// A KV cache that a decode step appends to (Hugging Face's StaticCache: a preallocated buffer per layer for keys,
/// another for values). Holds the buffer "cache" [batch, num_heads, past + new_tokens, head_dim] whose first `past`
/// positions hold earlier tokens; the input [batch, num_heads, new_tokens, head_dim] is written at positions past ..
/// past + new_tokens - 1 and the output is the whole buffer (a view of it: attention reads it in place). bytes: the
/// new entries read and written (0 flops); the buffer counts in buffers and in the memory summary's KV cache.
struct kv_cache {
    static constexpr std::string_view kind = "kv_cache";
    static constexpr int min_inputs = 1, max_inputs = 1;
    std::int64_t batch = 0;
    std::int64_t num_heads = 0;
    std::int64_t head_dim = 0;
    std::int64_t past = 0;
    std::int64_t new_tokens = 1;

    RIDGELINE_OP_MEMBERS(kv_cache)
};

// ---------------------------------------------------------------- reductions

/// torch.mean, torch.sum and torch.amax over `dim` (a list, "2x3"; empty: every dimension), keepdim as PyTorch.
/// flops: sum and amax one add or comparison per input element beyond the first of each output
/// (in - out); mean those and one divide per output (in).
#define RIDGELINE_REDUCE_OP_MEMBERS(T)                                                     \
    static constexpr int min_inputs = 1, max_inputs = 1;                                   \
    std::vector<std::int64_t> dim;                                                         \
    bool keepdim = false;                                                                  \
    RIDGELINE_OP_MEMBERS_NO_PARAMS(T)
struct mean_op {
    static constexpr std::string_view kind = "mean";
    RIDGELINE_REDUCE_OP_MEMBERS(mean_op)
};
struct sum_op {
    static constexpr std::string_view kind = "sum";
    RIDGELINE_REDUCE_OP_MEMBERS(sum_op)
};
struct amax {
    static constexpr std::string_view kind = "amax";
    RIDGELINE_REDUCE_OP_MEMBERS(amax)
};
#undef RIDGELINE_REDUCE_OP_MEMBERS

/// The dimensions a reduction keeps and removes: `reduced[i]` for each input dimension (its `dim` normalised,
/// every dimension when empty); throws invalid_layer for a dimension out of range or given twice.
std::vector<bool> reduced_dims(const std::vector<std::int64_t>& dim, std::size_t rank, const std::string& where);

// ---------------------------------------------------------------- pooling

/// torch.nn.MaxPool2d. stride defaults to kernel_size. Output size as PyTorch (ceil_mode drops a last
/// window that would start in the right padding). flops kh*kw-1 comparisons per output element.
struct max_pool2d {
    static constexpr std::string_view kind = "max_pool2d";
    static constexpr int min_inputs = 1, max_inputs = 1;
    pair2d kernel_size{};
    pair2d stride{};  // {0,0} until read: then kernel_size when not given
    pair2d padding{0, 0};
    pair2d dilation{1, 1};
    bool ceil_mode = false;

    RIDGELINE_OP_MEMBERS_NO_PARAMS(max_pool2d)
};

/// torch.nn.AvgPool2d. flops kh*kw per output element (kh*kw-1 adds and one divide).
struct avg_pool2d {
    static constexpr std::string_view kind = "avg_pool2d";
    static constexpr int min_inputs = 1, max_inputs = 1;
    pair2d kernel_size{};
    pair2d stride{};
    pair2d padding{0, 0};
    bool ceil_mode = false;
    bool count_include_pad = true;

    RIDGELINE_OP_MEMBERS_NO_PARAMS(avg_pool2d)
};

/// torch.nn.AdaptiveAvgPool2d. Window of output i: [floor(i*H/out), ceil((i+1)*H/out)); flops per output
/// element = its window's size (adds plus one divide), summed exactly.
struct adaptive_avg_pool2d {
    static constexpr std::string_view kind = "adaptive_avg_pool2d";
    static constexpr int min_inputs = 1, max_inputs = 1;
    pair2d output_size{};

    RIDGELINE_OP_MEMBERS_NO_PARAMS(adaptive_avg_pool2d)
};

// ---------------------------------------------------------------- data movement and views

/// torch.cat along `dim` (default 1, channels). 0 flops; bytes: inputs read, output written.
struct concat {
    static constexpr std::string_view kind = "concat";
    static constexpr int min_inputs = 1, max_inputs = -1;
    std::int64_t dim = 1;

    RIDGELINE_OP_MEMBERS_NO_PARAMS(concat)
};

/// Views: no arithmetic and no data movement (0 flops, 0 bytes).
/// torch.flatten(start_dim, end_dim).
struct flatten {
    static constexpr std::string_view kind = "flatten";
    static constexpr int min_inputs = 1, max_inputs = 1;
    std::int64_t start_dim = 1;
    std::int64_t end_dim = -1;

    RIDGELINE_OP_MEMBERS_NO_PARAMS(flatten)
};

/// Reshape to `shape` ("0x0x12x64"): 0 copies the input's dimension at that position, -1 is inferred
/// (at most one), as ONNX Reshape. The element count must not change.
struct reshape {
    static constexpr std::string_view kind = "reshape";
    static constexpr int min_inputs = 1, max_inputs = 1;
    std::vector<std::int64_t> target;

    RIDGELINE_OP_MEMBERS_NO_PARAMS(reshape)
};

/// torch.transpose(dim0, dim1).
struct transpose {
    static constexpr std::string_view kind = "transpose";
    static constexpr int min_inputs = 1, max_inputs = 1;
    std::int64_t dim0 = 0;
    std::int64_t dim1 = 1;

    RIDGELINE_OP_MEMBERS_NO_PARAMS(transpose)
};

/// x[..., start:end:step, ...] along `dim`, Python rules (negative indices count from the end, end is
/// clamped). An empty result is an error.
struct slice {
    static constexpr std::string_view kind = "slice";
    static constexpr int min_inputs = 1, max_inputs = 1;
    static constexpr std::int64_t to_end = INT64_MAX;
    std::int64_t dim = 0;
    std::int64_t start = 0;
    std::int64_t end = to_end;
    std::int64_t step = 1;

    RIDGELINE_OP_MEMBERS_NO_PARAMS(slice)
};

/// torch.nn.functional.pad(x, pad, mode, value): `pad` lists (before, after) pairs from the last dimension
/// backwards, as PyTorch ("1x1x2x2" pads W by 1 and 1, H by 2 and 2), at most one pair per dimension, every
/// amount >= 0. mode: constant (`value` around), reflect (mirrored without the edge: x[1], x[0] | x[0] ...;
/// each amount < that dimension's size) or replicate (the edge repeated). A copy: 0 flops; bytes: input read,
/// output written.
struct pad {
    static constexpr std::string_view kind = "pad";
    static constexpr int min_inputs = 1, max_inputs = 1;
    enum class mode_t { constant, reflect, replicate };
    std::vector<std::int64_t> amounts;  // attribute "pad"
    mode_t mode = mode_t::constant;
    double value = 0.0;

    /// (before, after) of dimension d of a rank-`rank` input; 0 for dimensions `pad` does not reach.
    [[nodiscard]] std::pair<std::int64_t, std::int64_t> of_dim(std::size_t d, std::size_t rank) const;
    /// The input index each output index of dimension d reads (-1: the constant `value`), for the backends.
    [[nodiscard]] std::vector<std::int64_t> source_indices(std::size_t d, const shape& in) const;
    RIDGELINE_OP_MEMBERS_NO_PARAMS(pad)
};

/// Tensor.expand(size) made contiguous (ONNX Expand of an activation): dimensions of size 1 repeat, new leading
/// dimensions may be added, -1 keeps a dimension. PyTorch's expand is a view its reader broadcasts; ridgeline
/// materialises it, as ONNX Expand does: a copy, 0 flops; bytes: input read, output written.
struct expand {
    static constexpr std::string_view kind = "expand";
    static constexpr int min_inputs = 1, max_inputs = 1;
    std::vector<std::int64_t> size;

    /// The input index each output index reads, per output dimension (0 on a repeated or new leading dimension;
    /// the backends index the input aligned on the right).
    [[nodiscard]] std::vector<std::vector<std::int64_t>> source_indices(const shape& in, const shape& out) const;
    RIDGELINE_OP_MEMBERS_NO_PARAMS(expand)
};

/// torch.nn.functional.interpolate(x, size, mode, align_corners) of an NCHW input to `size` (H_out x W_out).
/// nearest: source index floor(o * in / out) (PyTorch's "nearest", ONNX Resize asymmetric + floor), 0 flops.
/// bilinear: source coordinate (o + 0.5) * in / out - 0.5 clamped at 0 (align_corners=false), or
/// o * (in - 1) / (out - 1) (align_corners=true); 9 flops per output element, ATen's upsample_bilinear2d
/// h0*(w0*a + w1*b) + h1*(w0*c + w1*d): 6 multiplies and 3 adds. bytes: input read once, output written.
struct interpolate {
    static constexpr std::string_view kind = "interpolate";
    static constexpr int min_inputs = 1, max_inputs = 1;
    enum class mode_t { nearest, bilinear };
    pair2d size{};
    mode_t mode = mode_t::nearest;
    bool align_corners = false;

    RIDGELINE_OP_MEMBERS_NO_PARAMS(interpolate)
};

/// Source coordinates of one output axis of `interpolate`, shared by every backend so that they cannot differ:
/// nearest: index0 only; bilinear: out = (1 - lambda) * in[index0] + lambda * in[index1].
struct resample_axis {
    std::vector<std::int64_t> index0, index1;
    std::vector<float> lambda;
};
resample_axis resample_coordinates(const interpolate& op, std::int64_t in, std::int64_t out);

/// A tensor the model holds rather than computes: an nn.Parameter read directly (ViT's class token and
/// position embedding, ConvNeXt's layer scale) or a constant buffer (an additive attention mask). No inputs;
/// output: the stored tensor of dims `shape`, or its broadcast to `expand` (Tensor.expand: a dimension of
/// size 1 repeats, no copy). A view: 0 flops, 0 bytes (its readers count the reads). params: numel(shape)
/// when `trainable` (PyTorch's model.parameters()), otherwise buffers.
struct parameter {
    static constexpr std::string_view kind = "parameter";
    static constexpr int min_inputs = 0, max_inputs = 0;
    std::vector<std::int64_t> dims;    // attribute "shape"
    std::vector<std::int64_t> expand;  // empty: no broadcast
    bool trainable = true;

    RIDGELINE_OP_MEMBERS(parameter)
};

#undef RIDGELINE_OP_MEMBERS_NO_PARAMS
#undef RIDGELINE_OP_MEMBERS
#undef RIDGELINE_OP_COMMON_MEMBERS

}  // namespace ridgeline::core
