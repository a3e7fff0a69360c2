// cuDNN forward convolutions planned once (context.hpp): descriptors from ridgeline's conv_params, then
// cudnnFindConvolutionForwardAlgorithmEx runs every algorithm on the real buffers with the search workspace, and the
// fastest whose math the data type allows (no TF32 for fp32) and whose workspace fits is kept. All of this happens at
// prepare time, never inside a timed region.
#include <algorithm>

#include "context.hpp"
#include "library_types.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::cuda {

using i64 = std::int64_t;

std::shared_ptr<const cudnn_conv> plan_cudnn_conv(device_context& ctx, core::dtype dt, const conv_params& p,
                                                  const core::layer_analysis& la, const void* xp, const void* wp,
                                                  void* yp, void* ws, std::size_t ws_bytes) {
    auto st = std::make_shared<cudnn_conv>();
    st->x = make_tensor_desc();
    st->y = make_tensor_desc();
    st->w = make_filter_desc();
    st->conv = make_conv_desc();
    const cudnnDataType_t type = cudnn_type(dt);
    RIDGELINE_CUDA_CHECK(cudnnSetTensor4dDescriptor(st->x.get(), CUDNN_TENSOR_NCHW, type, to_int(p.n, "conv N"),
                                                    to_int(p.c, "conv C"), to_int(p.h, "conv H"), to_int(p.w, "conv W")));
    RIDGELINE_CUDA_CHECK(cudnnSetFilter4dDescriptor(st->w.get(), type, CUDNN_TENSOR_NCHW, to_int(p.k, "conv K"),
                                                    to_int(p.c_per_group, "conv C/groups"), to_int(p.r, "conv R"),
                                                    to_int(p.s, "conv S")));
    RIDGELINE_CUDA_CHECK(cudnnSetConvolution2dDescriptor(
        st->conv.get(), to_int(p.pad_h, "pad"), to_int(p.pad_w, "pad"), to_int(p.stride_h, "stride"),
        to_int(p.stride_w, "stride"), to_int(p.dilation_h, "dilation"), to_int(p.dilation_w, "dilation"),
        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    RIDGELINE_CUDA_CHECK(cudnnSetConvolutionGroupCount(st->conv.get(), to_int(p.groups, "groups")));
    RIDGELINE_CUDA_CHECK(cudnnSetConvolutionMathType(st->conv.get(), cudnn_math(dt)));
    int on = 0, oc = 0, oh = 0, ow = 0;
    RIDGELINE_CUDA_CHECK(
        cudnnGetConvolution2dForwardOutputDim(st->conv.get(), st->x.get(), st->w.get(), &on, &oc, &oh, &ow));
    if (on != p.n || oc != p.k || oh != p.out_h || ow != p.out_w)
        throw backend_api::backend_error(core::where(la.layer) + ": cuDNN's output " + std::to_string(on) + "x" +
                                      std::to_string(oc) + "x" + std::to_string(oh) + "x" + std::to_string(ow) +
                                      " differs from " + la.output_shape.to_string());
    RIDGELINE_CUDA_CHECK(cudnnSetTensor4dDescriptor(st->y.get(), CUDNN_TENSOR_NCHW, type, on, oc, oh, ow));

    // cudnnFind...Ex runs every algorithm on the real buffers with the search workspace
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {};
    int returned = 0;
    RIDGELINE_CUDA_CHECK(cudnnFindConvolutionForwardAlgorithmEx(ctx.dnn.get(), st->x.get(), xp, st->w.get(), wp,
                                                                st->conv.get(), st->y.get(), yp,
                                                                CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf, ws,
                                                                ws_bytes));
    std::vector<algo_candidate> candidates;
    for (int i = 0; i < returned; ++i) {
        algo_candidate c;
        c.name = conv_fwd_algo_name(static_cast<int>(perf[i].algo));
        c.ran = perf[i].status == CUDNN_STATUS_SUCCESS;
        c.time_ms = static_cast<double>(perf[i].time);
        c.workspace_bytes = static_cast<i64>(perf[i].memory);
        c.math = cudnn_math_name(perf[i].mathType);
        c.allowed = math_allowed(dt, c.math, ctx.props.major);
        candidates.push_back(std::move(c));
    }
    const auto best = pick_fastest(candidates, static_cast<i64>(ws_bytes));
    if (!best)
        throw backend_api::unsupported(core::where(la.layer) + ": cuDNN " + std::to_string(cudnnGetVersion()) +
                                    " found no algorithm for this convolution in " + std::string(core::to_string(dt)) +
                                    " (" + std::string(precision_of(dt).cudnn_math) + ", " + std::to_string(returned) +
                                    " tried)");
    const auto& chosen = perf[*best];
    st->algo = chosen.algo;
    RIDGELINE_CUDA_CHECK(cudnnSetConvolutionMathType(st->conv.get(), chosen.mathType));
    st->workspace_bytes = chosen.memory;
    st->note = describe_choice("cudnn", candidates, *best);
    return st;
}

void run_cudnn_conv(device_context& ctx, const cudnn_conv& c, const void* x, const void* w, void* y, void* ws,
                    std::size_t ws_bytes) {
    const float alpha = 1.0f, beta = 0.0f;  // float for float, half and bfloat16 data
    RIDGELINE_CUDA_CHECK(cudnnConvolutionForward(ctx.dnn.get(), &alpha, c.x.get(), x, c.w.get(), w, c.conv.get(),
                                                 c.algo, ws, ws_bytes, &beta, c.y.get(), y));
}

std::shared_ptr<const cudnn_conv_fused> plan_cudnn_conv_fused(device_context& ctx, core::dtype dt,
                                                              const cudnn_conv& c, std::int64_t k, bool relu,
                                                              const void* x, const void* w, const void* z,
                                                              const void* bias, void* y, void* ws,
                                                              std::size_t ws_bytes) {
    auto f = std::make_shared<cudnn_conv_fused>();
    f->bias = make_tensor_desc();
    RIDGELINE_CUDA_CHECK(
        cudnnSetTensor4dDescriptor(f->bias.get(), CUDNN_TENSOR_NCHW, cudnn_type(dt), 1, to_int(k, "conv K"), 1, 1));
    f->act = make_activation_desc(relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY);
    // RELU: the convolution's own algorithm first; where cuDNN refuses the fused call with it (the API reference
    // restricts only IDENTITY, but other callers keep a fallback), IMPLICIT_PRECOMP_GEMM, the one IDENTITY takes
    std::vector<cudnnConvolutionFwdAlgo_t> algos = {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM};
    if (relu && c.algo != algos.front()) algos.insert(algos.begin(), c.algo);
    for (std::size_t i = 0; i < algos.size(); ++i) {
        f->algo = algos[i];
        try {
            RIDGELINE_CUDA_CHECK(cudnnGetConvolutionForwardWorkspaceSize(
                ctx.dnn.get(), c.x.get(), c.w.get(), c.conv.get(), c.y.get(), f->algo, &f->workspace_bytes));
            if (f->workspace_bytes > ws_bytes)
                throw backend_api::unsupported("the fused call's workspace (" + std::to_string(f->workspace_bytes) +
                                               " bytes) is larger than the search workspace");
            run_cudnn_conv_fused(ctx, c, *f, x, w, z, bias, y, ws, ws_bytes);
            return f;
        } catch (const backend_api::unsupported&) {
            if (i + 1 == algos.size()) throw;
        }
    }
    return f;  // not reached: the last algorithm returns or throws
}

void run_cudnn_conv_fused(device_context& ctx, const cudnn_conv& c, const cudnn_conv_fused& f, const void* x,
                          const void* w, const void* z, const void* bias, void* y, void* ws, std::size_t ws_bytes) {
    const float alpha1 = 1.0f, alpha2 = z ? 1.0f : 0.0f;  // float for float, half and bfloat16 data
    RIDGELINE_CUDA_CHECK(cudnnConvolutionBiasActivationForward(
        ctx.dnn.get(), &alpha1, c.x.get(), x, c.w.get(), w, c.conv.get(), f.algo, ws, ws_bytes, &alpha2, c.y.get(),
        z ? z : y, f.bias.get(), bias, f.act.get(), c.y.get(), y));
}

}  // namespace ridgeline::cuda
