// The GPU graph (cuda_graph.hpp): the transformer layers. rms_norm and rotary are ridgeline's kernels
// (kernels_attention.cu); attention is two cuBLAS strided-batched GEMMs (float scores, then probabilities times
// values) around ridgeline's masked softmax kernel, grouped-query heads read in place (a kv head's query heads are
// adjacent rows of one GEMM); the KV cache append is a 2-D copy into the cache's buffer.
#include <cstring>

#include "cuda_graph.hpp"

namespace ridgeline::cuda::graph_detail {

void cuda_graph::add(const core::layer_analysis& la, const core::rms_norm& op) {
    const dev_tensor& x = dense(la.layer.inputs[0]);
    const i64 inner = core::shape(op.normalized_shape).numel();
    const i64 rows = la.input_shapes[0].numel() / inner;
    const float* gamma = nullptr;
    if (op.elementwise_affine) {
        auto g = upload_floats(param(la.layer, "weight"));
        keep_.push_back(g);
        gamma = static_cast<const float*>(g->get());
    }
    dev_tensor y = new_tensor(la.output_shape.dims());
    const void* xp = x.data();
    void* yp = y.data();
    const float eps = static_cast<float>(op.eps);
    const kernels::elem e = elem_;
    cudaStream_t s = ctx_.s();
    notes_.emplace_back("ridgeline:rms_norm");
    steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::rms_norm(e, xp, yp, gamma, rows, inner, eps, s)); });
    set_output(la, std::move(y));
}

void cuda_graph::add(const core::layer_analysis& la, const core::rotary& op) {
    const dev_tensor& x = dense(la.layer.inputs[0]);
    const auto& d = la.output_shape.dims();
    const core::rotary::tables t = op.make_tables(d[3], d[2]);
    auto cos = upload_floats(t.cos);
    auto sin = upload_floats(t.sin);
    keep_.insert(keep_.end(), {cos, sin});
    dev_tensor y = new_tensor(d);
    const void* xp = x.data();
    void* yp = y.data();
    const auto* cp = static_cast<const float*>(cos->get());
    const auto* sp = static_cast<const float*>(sin->get());
    const i64 rows = d[0] * d[1] * d[2], seq = d[2], dim = d[3];
    const kernels::elem e = elem_;
    cudaStream_t s = ctx_.s();
    notes_.emplace_back("ridgeline:rotary");
    steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::rotary(e, xp, yp, cp, sp, rows, seq, dim, s)); });
    set_output(la, std::move(y));
}

void cuda_graph::add(const core::layer_analysis& la, const core::attention& op) {
    const core::shape& qs = la.input_shapes[0];
    const core::shape& ks = la.input_shapes[1];
    const core::shape& vs = la.input_shapes[2];
    const i64 batch = qs[0], heads = qs[1], sq = qs[2], d = qs[3], kv_heads = ks[1], skv = ks[2], dv = vs[3];
    const i64 groups = batch * kv_heads, rows = heads / kv_heads * sq;
    const dev_tensor& q = dense(la.layer.inputs[0]);
    const dev_tensor& k = dense(la.layer.inputs[1]);
    const dev_tensor& v = dense(la.layer.inputs[2]);
    kernels::attention_mask m;
    m.groups = groups;
    m.rows = rows;
    m.sq = sq;
    m.skv = skv;
    m.kv_heads = kv_heads;
    m.causal = op.is_causal;
    m.window = op.sliding_window;
    if (la.input_shapes.size() == 4) {  // the mask in float, read through its broadcast strides
        const dev_tensor& mt = dense(la.layer.inputs[3]);
        if (dt_ != core::dtype::fp32 && dt_ != core::dtype::tf32)
            throw backend_api::unsupported(core::where(la.layer) + ": an explicit attention mask runs in fp32 and tf32 only");
        m.mask = static_cast<const float*>(mt.data());
        const auto st = broadcast_strides(la.input_shapes[3], core::shape{batch, heads, sq, skv});
        for (int i = 0; i < 4; ++i) m.stride[i] = st[static_cast<std::size_t>(i)];
    }
    // scores (float) and probabilities (storage type): the unfused kernel's intermediates
    auto scores = std::make_shared<device_buffer>(static_cast<std::size_t>(groups * rows * skv) * sizeof(float));
    auto probs = std::make_shared<device_buffer>(static_cast<std::size_t>(groups * rows * skv * esize_));
    keep_.insert(keep_.end(), {scores, probs});
    dev_tensor out = new_tensor(la.output_shape.dims());
    const int im = to_int(skv, "attention keys"), in = to_int(rows, "attention rows"), ik = to_int(d, "head_dim");
    const int idv = to_int(dv, "value head_dim"), batches = to_int(groups, "attention batch");
    const long long s_k = skv * d, s_q = rows * d, s_s = rows * skv, s_v = skv * dv, s_o = rows * dv;
    const cudaDataType_t type = storage_type(dt_);
    const cublasComputeType_t compute = compute_type(dt_);
    const float scale = static_cast<float>(op.scale_for(d));
    const void* qp = q.data();
    const void* kp = k.data();
    const void* vp = v.data();
    void* sp = scores->get();
    void* pp = probs->get();
    void* op_ = out.data();
    cublasHandle_t h = ctx_.blas.get();
    const kernels::elem e = elem_;
    cudaStream_t s = ctx_.s();
    notes_.push_back("cublasGemmStridedBatchedEx " + cublas_compute_name(compute) + " x2 batch " +
                     std::to_string(batches) + "+ridgeline:attention_softmax");
    steps_.push_back([=] {
        // column-major: scores^T (skv x rows) = K (d x skv)^T * Q^T (d x rows), scaled
        const float zero = 0.0f, one = 1.0f;
        RIDGELINE_CUDA_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, im, in, ik, &scale, kp, type, ik, s_k,
                                                        qp, type, ik, s_q, &zero, sp, CUDA_R_32F, im, s_s, batches,
                                                        compute, CUBLAS_GEMM_DEFAULT));
        RIDGELINE_CUDA_CHECK(kernels::attention_softmax(e, static_cast<const float*>(sp), pp, m, s));
        // out^T (dv x rows) = V^T (dv x skv) * P^T (skv x rows)
        RIDGELINE_CUDA_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, idv, in, im, &one, vp, type, idv,
                                                        s_v, pp, type, im, s_s, &zero, op_, type, idv, s_o, batches,
                                                        compute, CUBLAS_GEMM_DEFAULT));
    });
    set_output(la, std::move(out));
}

void cuda_graph::add(const core::layer_analysis& la, const core::kv_cache& op) {
    const dev_tensor& x = dense(la.layer.inputs[0]);
    dev_tensor cache = new_tensor(la.output_shape.dims());
    const auto bytes = to_storage(param(la.layer, "cache").data(), static_cast<std::size_t>(cache.numel()), dt_);
    RIDGELINE_CUDA_CHECK(cudaMemcpyAsync(cache.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice, ctx_.s()));
    RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
    // each (batch, head) row of the buffer gets the new entries at position `past`
    const std::size_t row = static_cast<std::size_t>(op.new_tokens * op.head_dim * esize_);
    const std::size_t pitch = static_cast<std::size_t>((op.past + op.new_tokens) * op.head_dim * esize_);
    const std::size_t height = static_cast<std::size_t>(op.batch * op.num_heads);
    void* dst = static_cast<unsigned char*>(cache.data()) + static_cast<std::size_t>(op.past * op.head_dim * esize_);
    const void* src = x.data();
    cudaStream_t s = ctx_.s();
    notes_.emplace_back("cudaMemcpy2DAsync");
    steps_.push_back(
        [=] { RIDGELINE_CUDA_CHECK(cudaMemcpy2DAsync(dst, pitch, src, row, row, height, cudaMemcpyDeviceToDevice, s)); });
    cache.holds_state = true;
    set_output(la, std::move(cache));
}

}  // namespace ridgeline::cuda::graph_detail
