// cuBLASLt GEMMs planned once: the heuristic proposes up to 8 algorithms for the exact problem (types,
// shapes, pointer alignments, epilogue), each is timed on the real buffers (the median of 3 windows of >= 100 us,
// candidate_time_ms), and the fastest is kept, the heuristic's order standing within 2%
// (cuBLASLt's own heuristic ranks by estimate, not by measurement; the documentation suggests timing the
// top candidates). All of this happens at prepare time, never inside a timed region.
#include <algorithm>
#include <cstdint>

#include "context.hpp"
#include "library_types.hpp"

namespace ridgeline::cuda {

namespace {

/// Largest power of two (at most 256) dividing the address: what cuBLASLt's MIN_ALIGNMENT preferences want.
std::uint32_t alignment_of(const void* p) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    std::uint32_t a = 256;
    while (a > 1 && (address % a) != 0) a /= 2;
    return a;
}

template <class T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& value) {
    RIDGELINE_CUDA_CHECK(cublasLtMatmulDescSetAttribute(d, attr, &value, sizeof value));
}

template <class T>
void set_pref(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const T& value) {
    RIDGELINE_CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(p, attr, &value, sizeof value));
}

std::string algo_name(const cublasLtMatmulAlgo_t& algo) {
    std::int32_t id = -1;
    std::uint32_t tile = 0, stages = 0;
    std::size_t written = 0;
    std::string name = "algo";
    if (RIDGELINE_CUDA_STATUS(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id,
                                                                   &written))
            .ok())
        name += " " + std::to_string(id);
    if (RIDGELINE_CUDA_STATUS(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                                                   sizeof tile, &written))
            .ok())
        name += " tile " + std::to_string(tile);
    if (RIDGELINE_CUDA_STATUS(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                                                   sizeof stages, &written))
            .ok())
        name += " stages " + std::to_string(stages);
    return name;
}

/// The epilogue of `act` after an optional bias (cublasLt.h's cublasLtEpilogue_t: "apply Bias and then" the
/// transform). CUBLASLT_EPILOGUE_GELU is GELU's tanh approximation, the only one cuBLASLt has.
cublasLtEpilogue_t lt_epilogue(fused_activation act, bool bias) {
    switch (act) {
        case fused_activation::relu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
        case fused_activation::gelu_tanh: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
        case fused_activation::none: break;
    }
    return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

void enqueue(device_context& ctx, const lt_gemm& g, const cublasLtMatmulAlgo_t& algo, const void* a, const void* b,
             void* c, void* ws, std::size_t ws_bytes, const void* addend) {
    // scale type CUDA_R_32F for every compute type used here; C is the addend (out of place: C and D differ) or D
    const float alpha = 1.0f, beta = addend ? 1.0f : 0.0f;
    const void* c_in = addend ? addend : c;
    RIDGELINE_CUDA_CHECK(cublasLtMatmul(ctx.blas_lt.get(), g.desc.get(), &alpha, a, g.a.get(), b, g.b.get(), &beta,
                                        c_in, g.c.get(), c, g.c.get(), &algo, ws, ws_bytes, ctx.s()));
}

}  // namespace

std::unique_ptr<lt_gemm> plan_lt_gemm(device_context& ctx, core::dtype dt, const gemm_shape& shape, const void* a,
                                      const void* b, void* c, const void* bias, void* ws, std::size_t ws_bytes,
                                      fused_activation act, const void* addend) {
    auto g = std::make_unique<lt_gemm>();
    const cudaDataType_t type = storage_type(dt);
    const cublasComputeType_t compute = compute_type(dt);
    g->desc = make_lt_matmul_desc(compute, CUDA_R_32F);
    const cublasOperation_t ta = shape.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = shape.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    set_desc(g->desc.get(), CUBLASLT_MATMUL_DESC_TRANSA, ta);
    set_desc(g->desc.get(), CUBLASLT_MATMUL_DESC_TRANSB, tb);
    if (const cublasLtEpilogue_t epilogue = lt_epilogue(act, bias != nullptr); epilogue != CUBLASLT_EPILOGUE_DEFAULT)
        set_desc(g->desc.get(), CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
    // bias of D's type (the default of CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE), one per row of D
    if (bias) set_desc(g->desc.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
    // layouts as stored (column-major rows x cols), before op()
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    g->a = make_lt_layout(type, u(shape.trans_a ? shape.k : shape.m), u(shape.trans_a ? shape.m : shape.k), shape.lda);
    g->b = make_lt_layout(type, u(shape.trans_b ? shape.n : shape.k), u(shape.trans_b ? shape.k : shape.n), shape.ldb);
    g->c = make_lt_layout(type, u(shape.m), u(shape.n), shape.ldc);

    lt_preference pref = make_lt_preference();
    const std::uint64_t max_ws = std::min<std::uint64_t>(ws_bytes, gemm_workspace_bytes);
    set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, max_ws);
    set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_of(a));
    set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_of(b));
    set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment_of(addend ? addend : c));
    set_pref(pref.get(), CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment_of(c));

    constexpr int requested = 8;
    cublasLtMatmulHeuristicResult_t results[requested] = {};
    int returned = 0;
    RIDGELINE_CUDA_CHECK(cublasLtMatmulAlgoGetHeuristic(ctx.blas_lt.get(), g->desc.get(), g->a.get(), g->b.get(),
                                                        g->c.get(), g->c.get(), pref.get(), requested, results,
                                                        &returned));
    const std::string math = std::string(precision_of(dt).cublas_compute);
    std::vector<algo_candidate> candidates;
    for (int i = 0; i < returned; ++i) {
        const auto& r = results[i];
        algo_candidate cand;
        cand.math = math;
        cand.workspace_bytes = static_cast<std::int64_t>(r.workspaceSize);
        cand.ran = r.state == CUBLAS_STATUS_SUCCESS;
        if (cand.ran) {
            cand.name = algo_name(r.algo);
            try {
                cand.time_ms = candidate_time_ms(ctx, [&] { enqueue(ctx, *g, r.algo, a, b, c, ws, ws_bytes, addend); });
            } catch (const backend_api::unsupported&) {
                cand.ran = false;
            } catch (const backend_api::backend_error&) {
                cand.ran = false;
            }
        }
        candidates.push_back(std::move(cand));
    }
    // the heuristic's order stands unless a later candidate is faster by more than 2%
    const auto best = pick_fastest(candidates, static_cast<std::int64_t>(max_ws), 0.02);
    if (!best)
        throw backend_api::unsupported("cuBLASLt has no algorithm for this " + std::string(core::to_string(dt)) +
                                    " GEMM (m=" + std::to_string(shape.m) + ", n=" + std::to_string(shape.n) +
                                    ", k=" + std::to_string(shape.k) + "; " + std::to_string(returned) +
                                    " heuristic candidates)");
    g->algo = results[*best].algo;
    g->workspace_bytes = results[*best].workspaceSize;
    g->note = describe_choice("cublasLt", candidates, *best);
    return g;
}

void run_lt_gemm(device_context& ctx, const lt_gemm& g, const void* a, const void* b, void* c, void* ws,
                 std::size_t ws_bytes, const void* addend) {
    enqueue(ctx, g, g.algo, a, b, c, ws, ws_bytes, addend);
}

}  // namespace ridgeline::cuda
