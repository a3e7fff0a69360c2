#pragma once
// Pure translations from ridgeline's layer descriptors to what cuBLAS, cuBLASLt and cuDNN take, and the
// arithmetic of the GPU ceilings. No CUDA type and no device: unit-tested on any machine
// (tests/cuda/translate_test.cpp); the backend turns these numbers into library calls.
//
// Conventions: tensors are row-major (NCHW for images) as everywhere in ridgeline; cuBLAS is
// column-major, so a row-major R x C matrix is cuBLAS's C x R matrix with leading dimension C.
// Errors: backend_api::unsupported for a problem the libraries cannot express (a dimension over 2^31 - 1),
// backend_api::backend_error when the descriptor and the shapes disagree.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ridgeline/core/dtype.hpp"
#include "ridgeline/core/model.hpp"
#include "ridgeline/core/ops.hpp"
#include "ridgeline/core/shape.hpp"

namespace ridgeline::cuda {

// ------------------------------------------------------------------------------------------ data types

/// How a data type is stored and computed on the GPU (docs/cuda.md, "Data types"). The names are the
/// libraries' own enumerators; cuda/src/library_types.hpp maps them to the enum values.
struct precision {
    std::int64_t storage_bytes = 4;
    std::string_view storage;         // cudaDataType: "CUDA_R_32F", "CUDA_R_16F", "CUDA_R_16BF"
    std::string_view cublas_compute;  // "CUBLAS_COMPUTE_32F" (fp32, fp16, bf16: fp32 accumulation),
                                      // "CUBLAS_COMPUTE_32F_FAST_TF32" (tf32)
    std::string_view cudnn_math;      // "CUDNN_FMA_MATH" (fp32: no tensor cores, so no TF32),
                                      // "CUDNN_TENSOR_OP_MATH" (tf32, fp16, bf16)
    bool tensor_cores = false;        // whether the libraries may use tensor cores
    std::string_view description;     // for reports: "fp32 (FMA, TF32 off)"
};
precision precision_of(core::dtype dt);

/// Whether a cuDNN algorithm that ran with math type `math` ("CUDNN_FMA_MATH", ...) keeps the data type's
/// promise: fp32 only FMA (CUDNN_DEFAULT_MATH too before compute capability 8.0, where it cannot use
/// TF32: cuDNN's cudnnMathType_t documentation); tf32, fp16 and bf16 any math type except
/// CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, which would convert tf32 data to fp16.
bool math_allowed(core::dtype dt, std::string_view math, int compute_capability_major);

// ------------------------------------------------------------------------------------------ GEMM

/// One column-major GEMM as cuBLAS takes it: C (m x n, ldc) = op(A) (m x k) * op(B) (k x n), where
/// op(X) = X^T when trans_x. lda/ldb are the leading dimensions of A and B as stored.
struct gemm_shape {
    bool trans_a = false;
    bool trans_b = false;
    std::int64_t m = 0, n = 0, k = 0;
    std::int64_t lda = 0, ldb = 0, ldc = 0;
    bool operator==(const gemm_shape&) const = default;
};

/// torch.nn.Linear, y[rows x out] = x[rows x in] W^T + b, with W [out x in] row-major:
/// column-major y^T (out x rows) = W' (out x in) x^T (in x rows), where cuBLAS's A is W's memory read as
/// in x out (lda = in) and transposed, B is x's memory read as in x rows (ldb = in), C is y's memory
/// (ldc = out). So m = out_features, n = rows, k = in_features, trans_a, !trans_b; the bias (length m,
/// one per row of C) is what cuBLASLt's CUBLASLT_EPILOGUE_BIAS adds.
gemm_shape linear_gemm(std::int64_t rows, std::int64_t in_features, std::int64_t out_features);

/// torch.matmul, C[..., M, N] = A[..., M, K] B[..., K, N] with batch dims broadcast (NumPy rules):
/// column-major C^T (N x M) = B^T (N x K) A^T (K x M), so cuBLAS's A is the layer's B (lda = N) and
/// cuBLAS's B is the layer's A (ldb = K), neither transposed; m = N, n = M, k = K, ldc = N.
struct batched_gemm {
    gemm_shape gemm;
    std::int64_t batch = 1;
    /// Element offset, per output batch element, of cuBLAS's A (in the layer's B) and B (in the layer's A).
    std::vector<std::int64_t> offset_a, offset_b;
    std::int64_t stride_c = 0;  // m * n
    /// When offset_x[i] == i * stride_x for every i (stride 0: one matrix broadcast over the batch), one
    /// cublasGemmStridedBatchedEx does it; otherwise cublasGemmBatchedEx with pointer arrays.
    bool uniform = false;
    std::int64_t stride_a = 0, stride_b = 0;
};
batched_gemm matmul_gemm(const core::shape& a, const core::shape& b, const core::shape& out);

/// Throws backend_api::unsupported naming `what` when v does not fit cuBLAS's / cuDNN's int.
int to_int(std::int64_t v, std::string_view what);

// ------------------------------------------------------------------------------------------ convolution

/// torch.nn.Conv2d as cuDNN's legacy convolution descriptors take it (cudnnSetTensor4dDescriptor,
/// cudnnSetFilter4dDescriptor, cudnnSetConvolution2dDescriptor + cudnnSetConvolutionGroupCount).
/// cuDNN pads symmetrically: the symmetric part min(top, bottom) x min(left, right) goes to cuDNN, and the
/// rest (padding=same with an even kernel, or explicit TxLxBxR padding) is added before the convolution by
/// copying the input into a buffer with a zero border of pre_top/pre_left/pre_bottom/pre_right, as
/// PyTorch does with F.pad. Output size (cudnnGetConvolution2dForwardOutputDim's formula):
///   out = 1 + (in + pre + 2 pad - ((kernel - 1) dilation + 1)) / stride, floor division.
struct conv_params {
    std::int64_t n = 0, c = 0, h = 0, w = 0;          // the input cuDNN reads (after pre-padding)
    std::int64_t k = 0, c_per_group = 0, r = 0, s = 0;  // filter: out_channels x in_channels/groups x kh x kw
    std::int64_t pad_h = 0, pad_w = 0;
    std::int64_t stride_h = 1, stride_w = 1;
    std::int64_t dilation_h = 1, dilation_w = 1;
    std::int64_t groups = 1;
    std::int64_t out_h = 0, out_w = 0;
    std::int64_t in_h = 0, in_w = 0;                  // the layer's input, before pre-padding
    std::int64_t pre_top = 0, pre_left = 0, pre_bottom = 0, pre_right = 0;
    [[nodiscard]] bool pre_padded() const { return pre_top || pre_left || pre_bottom || pre_right; }
};
/// Throws backend_api::backend_error when the output shape differs from `out` (they must agree).
conv_params conv2d_params(const core::conv2d& op, const core::shape& in, const core::shape& out);

// ------------------------------------------------------------------------------------------ fused groups

/// The activation a fused library call applies last: none (cuDNN's CUDNN_ACTIVATION_IDENTITY, cuBLASLt's
/// CUBLASLT_EPILOGUE_DEFAULT / BIAS), relu (CUDNN_ACTIVATION_RELU, CUBLASLT_EPILOGUE_RELU / RELU_BIAS) or the tanh
/// approximation of gelu (CUBLASLT_EPILOGUE_GELU / GELU_BIAS).
enum class fused_activation { none, relu, gelu_tanh };

/// How the CUDA backend runs a fused group (core/fusion.hpp), as a deployment engine would: the producer's library
/// call takes members 1 .. library_members - 1 of group.fused; the members from library_members on run after it, in
/// order, as ridgeline's own kernels (each into a buffer of its own).
///
/// conv2d: cudnnConvolutionBiasActivationForward, y = act(alpha1 * conv(x) + alpha2 * z + bias) (cuDNN's
///   cudnn_cnn.h and its API reference page of that name). It takes a folded batch norm (in the weights and the
///   bias, at prepare time), the bias (zeros where there is none), one residual add of the output's shape (no
///   broadcast) as z with alpha2 = 1, and relu. The page allows only
///   CUDNN_ACTIVATION_RELU and CUDNN_ACTIVATION_IDENTITY, and IDENTITY only with
///   CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM (implicit_precomp_gemm_only). relu6, silu, hardswish, sigmoid,
///   tanh and gelu run after. bf16 keeps the plain convolution (library_members counts the folded batch norm only):
///   the page's table of supported configurations is not confirmed here for bfloat16.
/// linear, matmul: cublasLtMatmul, D = epilogue(alpha * op(A) op(B) + beta * C + bias) (cuBLAS's
///   cublasLtMatmul and cublasLtEpilogue_t pages: the bias "is broadcasted to all columns and added before applying
///   final postprocessing", and the postprocessing is a transform of the results, which include beta * C). It takes
///   the bias, one residual add of the output's shape as C = the skip with beta = 1, and relu, or gelu when the
///   model's is the tanh
///   approximation (core::gelu::tanh_approximation; CUBLASLT_EPILOGUE_GELU is the tanh form). So a residual then an
///   activation is legal; an activation before the residual add is not (the epilogue would come after the add), and
///   nothing follows the epilogue's activation in the call.
/// Throws core::error for a group without members or whose producer is none of the three.
struct fused_plan {
    enum class call { cudnn_conv_bias_activation, cublaslt_matmul };
    call library = call::cudnn_conv_bias_activation;
    std::size_t library_members = 1;      // the producer and the members its call takes
    bool fold_batch_norm = false;         // member 1 is a batch norm folded into the weights and bias
    bool bias = false;                    // the call adds a real bias (the producer's own, or the folded one)
    std::optional<std::size_t> residual;  // the member whose skip the call adds (z or C)
    fused_activation activation = fused_activation::none;
    bool implicit_precomp_gemm_only = false;  // cuDNN with IDENTITY (no activation): only that algorithm fuses
    std::string after;  // why member library_members runs after the call; empty when the call takes every member
};
fused_plan plan_fused(const core::layer_analysis& group, core::dtype dt);

// ------------------------------------------------------------------------------------------ pooling

/// A 2-D pooling window over `planes` = N x C planes, with PyTorch's output size (ceil_mode included).
/// Our kernels clip each window to the input exactly as PyTorch (see cpu/src/reference.cpp); pad_bottom
/// and pad_right are the right-hand padding a library with explicit two-sided padding (cuDNN's
/// cudnnSetPoolingNdDescriptor pads symmetrically, oneDNN takes both sides) would need for the floor
/// formula to give PyTorch's ceil_mode output: max(0, (out - 1) stride + (kernel - 1) dilation + 1 - in - pad).
struct pool_params {
    std::int64_t planes = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
    std::int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
    std::int64_t pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
    std::int64_t pad_bottom = 0, pad_right = 0;
    bool count_include_pad = true;  // avg_pool2d
};
pool_params max_pool_params(const core::max_pool2d& op, const core::shape& in, const core::shape& out);
pool_params avg_pool_params(const core::avg_pool2d& op, const core::shape& in, const core::shape& out);
pool_params adaptive_pool_params(const core::shape& in, const core::shape& out);

// ------------------------------------------------------------------------------------------ layouts

/// A tensor seen through a view: dims, strides (elements) and offset (elements) into its buffer.
struct strided_view {
    std::vector<std::int64_t> dims;
    std::vector<std::int64_t> strides;
    std::int64_t offset = 0;
    bool operator==(const strided_view&) const = default;
};
std::vector<std::int64_t> row_major_strides(const std::vector<std::int64_t>& dims);
strided_view dense_view(const core::shape& s);
/// Row-major and without gaps (the offset may be anything).
bool is_dense(const strided_view& v);
/// torch.transpose: dims and strides of dim0 and dim1 swapped.
strided_view transpose_view(const strided_view& v, std::int64_t dim0, std::int64_t dim1);
/// x[..., start:end:step, ...] along dim, Python's rules for start (as core::slice), `size` elements kept.
strided_view slice_view(const strided_view& v, const core::slice& op, std::int64_t size);

/// Strides (elements) of a row-major tensor `in` read as `out` under NumPy broadcasting: dims aligned on
/// the right, 0 where `in` has size 1 or no dim.
std::vector<std::int64_t> broadcast_strides(const core::shape& in, const core::shape& out);

/// A walk over `dims` (row-major) reading operand a with strides_a and operand b with strides_b (elements).
struct strided_walk {
    std::vector<std::int64_t> dims;
    std::vector<std::int64_t> strides_a;
    std::vector<std::int64_t> strides_b;
    bool operator==(const strided_walk&) const = default;
};
/// The same walk with fewer dims, so a kernel does less index arithmetic: dims of size 1 are dropped and
/// neighbouring dims d, d+1 that both operands step through contiguously (stride[d] == stride[d+1] x
/// dims[d+1], broadcast strides 0 included) are merged. Example: [32, 64, 56, 56] reading a dense tensor
/// and a [64, 1, 1] bias gives [32, 64, 3136] with strides {200704, 3136, 1} and {0, 1, 0}. A walk of
/// one element keeps one dim of size 1.
strided_walk coalesce(const strided_walk& w);

/// softmax / layer_norm geometry: dims before `dim` (outer), the dim itself (size), the dims after (inner).
struct axis_split {
    std::int64_t outer = 1, size = 1, inner = 1;
    bool operator==(const axis_split&) const = default;
};
axis_split split_at(const core::shape& s, std::int64_t dim);

// ------------------------------------------------------------------------------------------ algorithms

/// One algorithm tried at prepare time (a cuDNN find result, a cuBLASLt heuristic candidate).
struct algo_candidate {
    std::string name;             // "IMPLICIT_PRECOMP_GEMM", "algo 21 tile 15 stages 8"
    bool ran = true;              // the library ran it successfully
    double time_ms = 0;           // as timed at prepare time
    std::int64_t workspace_bytes = 0;
    std::string math;             // "CUDNN_TENSOR_OP_MATH", "CUBLAS_COMPUTE_32F"
    bool allowed = true;          // keeps the data type's promise (math_allowed)
};

/// The fastest candidate that ran, is allowed and needs at most `workspace_limit` bytes; a tie (equal
/// times) goes to the smaller workspace, then to the earlier candidate. With `keep_order_within` > 0 a later
/// candidate displaces an earlier one only when it is faster by more than that fraction (cuBLASLt's heuristic
/// order stands within 2%: a difference inside the timing's noise is no reason to leave it). Empty when none
/// qualifies.
std::optional<std::size_t> pick_fastest(const std::vector<algo_candidate>& candidates, std::int64_t workspace_limit,
                                        double keep_order_within = 0.0);

/// The CUDA event timer's resolution from readings (ns) of start/stop pairs around no work: the smallest step
/// between two distinct readings, or the smallest positive reading where they are all equal; `documented_ns`
/// (cudaEventElapsedTime's "around 0.5 microseconds") where no reading is positive.
double event_resolution_ns(std::vector<double> readings_ns, double documented_ns = 500.0);

/// SM 0's mean clock in MHz between two sm0_timestamps readings (global ns, SM 0 cycles): cycles / ns x 1000;
/// 0 where either reading is missing (0: no block landed on SM 0) or time did not advance.
double mean_clock_mhz(std::uint64_t start_ns, std::uint64_t start_cycles, std::uint64_t stop_ns,
                      std::uint64_t stop_cycles);

/// NVML's clock event (throttle) reasons as words: "power cap", "thermal (software)", ... joined by ", "; the
/// bits of nvmlClocksEventReasons (nvml.h): 0x1 GPU idle, 0x2 application clocks setting, 0x4 software power cap,
/// 0x8 hardware slowdown, 0x10 sync boost, 0x20 software thermal slowdown, 0x40 hardware thermal slowdown, 0x80
/// hardware power brake, 0x100 display clock setting; "none" for 0, unknown bits as hex.
std::string clock_event_reasons_text(std::uint64_t mask);

/// How many back-to-back calls one timed window of a candidate holds: enough that the window lasts at least
/// `window_ms` (100 us: CUDA events resolve about 0.5 us, a GEMM of a few us timed alone is noise), from one call's
/// time `one_call_ms`; 1 for a call as long as the window, at most `max_calls`; `max_calls` where the call's time is
/// 0 or not finite.
int calls_per_window(double one_call_ms, double window_ms = 0.1, int max_calls = 10000);

/// What notes() records: "cudnn IMPLICIT_PRECOMP_GEMM CUDNN_TENSOR_OP_MATH ws 1.5 MiB (fastest of 6)".
std::string describe_choice(std::string_view library, const std::vector<algo_candidate>& candidates,
                            std::size_t chosen);

/// cudnnConvolutionFwdAlgo_t's name without the CUDNN_CONVOLUTION_FWD_ALGO_ prefix ("FFT_TILING").
std::string conv_fwd_algo_name(int algo);

/// "1.5 MiB", "256 B".
std::string format_bytes(std::int64_t bytes);

// ------------------------------------------------------------------------------------------ ceilings

/// 2 m n k FLOPs (one multiply and one add per MAC) in `time_ms`, in GFLOP/s.
double gemm_gflops(std::int64_t m, std::int64_t n, std::int64_t k, double time_ms);
/// A device-to-device copy of `bytes` moves 2 x bytes (read plus write); in GB/s (10^9 B/s).
double copy_gbs(std::int64_t bytes, double time_ms);
/// DRAM peak from the clocks: 2 (double data rate) x memory clock (kHz) x bus width (bits) / 8, in GB/s.
double theoretical_bandwidth_gbs(std::int64_t memory_clock_khz, std::int64_t bus_width_bits);
/// Bytes of the L2 flush buffer: at least twice the L2 (a read of it evicts every line), at least
/// 8 MiB, rounded up to a whole MiB.
std::int64_t flush_bytes(std::int64_t l2_bytes);
/// Bytes copied to measure DRAM bandwidth: 8x the L2 but at least 256 MiB (64 MiB quick), never more
/// than a quarter of the free memory (two buffers of that size are needed), rounded down to a MiB.
std::int64_t copy_bench_bytes(std::int64_t l2_bytes, std::int64_t free_bytes, bool quick);
/// Working sets of the copy sweep: 256 KiB doubling up to `max_bytes`.
std::vector<std::int64_t> working_set_sizes(std::int64_t max_bytes);
/// m = n = k of the GEMM that measures a data type's roof: 8192 for tensor-core types, 4096 for fp32
/// (SIMT is about 15x slower); a quarter with `quick`.
std::int64_t roof_gemm_size(core::dtype dt, bool quick);

}  // namespace ridgeline::cuda
