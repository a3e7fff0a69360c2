// The GPU graph (cuda_graph.hpp): its dense layers, on cuBLASLt and cuDNN, and build_graph.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "cuda_graph.hpp"

namespace ridgeline::cuda {

// translate.cpp names cuDNN's forward algorithms by value
static_assert(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM == 0 && CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM == 1 &&
              CUDNN_CONVOLUTION_FWD_ALGO_GEMM == 2 && CUDNN_CONVOLUTION_FWD_ALGO_DIRECT == 3 &&
              CUDNN_CONVOLUTION_FWD_ALGO_FFT == 4 && CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING == 5 &&
              CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD == 6 && CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED == 7 &&
              CUDNN_CONVOLUTION_FWD_ALGO_COUNT == 8);

namespace graph_detail {

kernels::index_map to_map(const strided_walk& w, const std::string& where) {
    const strided_walk c = coalesce(w);
    if (c.dims.size() > static_cast<std::size_t>(kernels::max_rank))
        throw backend_api::unsupported(where + ": more than " + std::to_string(kernels::max_rank) +
                                    " dimensions after merging contiguous ones");
    kernels::index_map m;
    m.rank = static_cast<int>(c.dims.size());
    for (std::size_t d = 0; d < c.dims.size(); ++d) {
        m.dims[d] = c.dims[d];
        m.stride_a[d] = c.strides_a[d];
        m.stride_b[d] = c.strides_b[d];
    }
    return m;
}

std::size_t search_workspace_bytes() {
    std::size_t free = 0, total = 0;
    if (!RIDGELINE_CUDA_STATUS(cudaMemGetInfo(&free, &total)).ok()) return gemm_workspace_bytes;
    return std::clamp<std::size_t>(free / 4, gemm_workspace_bytes, std::size_t{1} << 30);
}

// ------------------------------------------------------------ dense

void cuda_graph::add_linear(const core::layer_analysis& la, const core::linear& op, fused_activation act,
                            const std::optional<std::string>& residual) {
    const dev_tensor& x = dense(la.layer.inputs[0]);
    const i64 rows = x.numel() / op.in_features;
    const void* addend = nullptr;  // the residual as cuBLASLt's C: [rows, out_features] row-major, as y
    if (residual) {
        const dev_tensor& r = dense(*residual);
        if (r.numel() != rows * op.out_features)
            throw backend_api::unsupported(core::where(la.layer) + ": a residual of " + std::to_string(r.numel()) +
                                           " elements is not cuBLASLt's C for an output of " +
                                           std::to_string(rows * op.out_features));
        addend = r.data();
    }
    auto w = upload(param(la.layer, "weight"));
    std::shared_ptr<device_buffer> b = op.bias ? upload(param(la.layer, "bias")) : nullptr;
    dev_tensor y = new_tensor(la.output_shape.dims());
    std::size_t ws_bytes = 0;
    void* ws = search_workspace(ws_bytes);
    const gemm_shape g = linear_gemm(rows, op.in_features, op.out_features);
    std::shared_ptr<lt_gemm> plan = plan_lt_gemm(ctx_, dt_, g, w->get(), x.data(), y.data(), b ? b->get() : nullptr,
                                                 ws, ws_bytes, act, addend);
    workspace_need_ = std::max(workspace_need_, plan->workspace_bytes);
    const char* activation = act == fused_activation::relu ? "relu" : act == fused_activation::gelu_tanh ? "gelu" : "";
    std::string epilogue = std::string(activation) + (op.bias ? (*activation ? "+bias" : "bias") : "");
    notes_.push_back(plan->note + (epilogue.empty() ? "" : " +" + epilogue + " epilogue") +
                     (addend ? " +residual as C (beta 1)" : ""));
    const void* xp = x.data();
    void* yp = y.data();
    keep_.push_back(w);
    if (b) keep_.push_back(b);
    steps_.push_back([this, plan, w, xp, yp, addend] {
        run_lt_gemm(ctx_, *plan, w->get(), xp, yp, workspace_.get(), workspace_.bytes(), addend);
    });
    set_output(la, std::move(y));
}

void cuda_graph::add(const core::layer_analysis& la, const core::matmul&) {
    const dev_tensor& a = dense(la.layer.inputs[0]);
    const dev_tensor& b = dense(la.layer.inputs[1]);
    const batched_gemm bg = matmul_gemm(la.input_shapes[0], la.input_shapes[1], la.output_shape);
    dev_tensor c = new_tensor(la.output_shape.dims());
    const int m = to_int(bg.gemm.m, "matmul N"), n = to_int(bg.gemm.n, "matmul M"), k = to_int(bg.gemm.k, "matmul K");
    const int lda = to_int(bg.gemm.lda, "lda"), ldb = to_int(bg.gemm.ldb, "ldb"), ldc = to_int(bg.gemm.ldc, "ldc");
    const int batch = to_int(bg.batch, "matmul batch");
    const cudaDataType_t type = storage_type(dt_);
    const cublasComputeType_t compute = compute_type(dt_);
    auto* base_a = static_cast<unsigned char*>(b.data());  // cuBLAS's A is the layer's B
    auto* base_b = static_cast<unsigned char*>(a.data());  // cuBLAS's B is the layer's A
    auto* base_c = static_cast<unsigned char*>(c.data());
    cublasHandle_t h = ctx_.blas.get();
    if (bg.uniform) {
        const long long sa = bg.stride_a, sb = bg.stride_b, sc = bg.stride_c;
        notes_.push_back("cublasGemmStridedBatchedEx " + cublas_compute_name(compute) + " batch " +
                         std::to_string(batch));
        steps_.push_back([=] {
            const float alpha = 1.0f, beta = 0.0f;
            RIDGELINE_CUDA_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, base_a, type,
                                                            lda, sa, base_b, type, ldb, sb, &beta, base_c, type, ldc,
                                                            sc, batch, compute, CUBLAS_GEMM_DEFAULT));
        });
    } else {
        std::vector<const void*> pa(static_cast<std::size_t>(batch)), pb(pa.size());
        std::vector<void*> pc(pa.size());
        for (std::size_t i = 0; i < pa.size(); ++i) {
            pa[i] = base_a + bg.offset_a[i] * esize_;
            pb[i] = base_b + bg.offset_b[i] * esize_;
            pc[i] = base_c + static_cast<i64>(i) * bg.stride_c * esize_;
        }
        auto da = upload_bytes(pa.data(), pa.size() * sizeof(void*));
        auto db = upload_bytes(pb.data(), pb.size() * sizeof(void*));
        auto dc = upload_bytes(pc.data(), pc.size() * sizeof(void*));
        keep_.insert(keep_.end(), {da, db, dc});
        const auto* arr_a = static_cast<const void* const*>(da->get());
        const auto* arr_b = static_cast<const void* const*>(db->get());
        auto* arr_c = static_cast<void* const*>(dc->get());
        notes_.push_back("cublasGemmBatchedEx " + cublas_compute_name(compute) + " batch " + std::to_string(batch));
        steps_.push_back([=] {
            const float alpha = 1.0f, beta = 0.0f;
            RIDGELINE_CUDA_CHECK(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, arr_a, type, lda,
                                                     arr_b, type, ldb, &beta, arr_c, type, ldc, batch, compute,
                                                     CUBLAS_GEMM_DEFAULT));
        });
    }
    set_output(la, std::move(c));
}

void cuda_graph::add(const core::layer_analysis& la, const core::embedding& op) {
    const std::string source = op.indices.empty() ? la.layer.inputs.at(0) : la.layer.name + "\x01indices";
    if (!op.indices.empty()) {  // held ids: uploaded once, here, like a model input of ids
        const auto& held = data_->tensors.at(backend_api::param_key(la.layer, "indices"));
        add_input(core::model_input{source, held.dims, true}, held);
    }
    const dev_tensor& ids = tensor(source);
    if (!ids.ids || !host_ids_.count(source))
        throw backend_api::unsupported(core::where(la.layer) + ": an embedding reads token ids from a model input only");
    for (auto id : host_ids_.at(source))
        if (id < 0 || id >= op.num_embeddings)
            throw backend_api::backend_error(core::where(la.layer) + ": token id " + std::to_string(id) +
                                          " is not in [0, " + std::to_string(op.num_embeddings) + ")");
    auto table = upload(param(la.layer, "weight"));
    keep_.push_back(table);
    dev_tensor y = new_tensor(la.output_shape.dims());
    const auto* idp = static_cast<const std::int64_t*>(ids.data());
    const void* tp = table->get();
    void* yp = y.data();
    const i64 count = ids.numel(), dim = op.embedding_dim;
    const kernels::elem e = elem_;
    cudaStream_t s = ctx_.s();
    notes_.emplace_back("ridgeline:gather");
    steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::embedding(e, idp, tp, yp, count, dim, s)); });
    set_output(la, std::move(y));
}

bool cuda_graph::add_conv(const core::layer_analysis& la, const core::conv2d& op, const conv_epilogue* fused) {
    const conv_params p = conv2d_params(op, la.input_shapes[0], la.output_shape);
    const dev_tensor& x0 = dense(la.layer.inputs[0]);
    const kernels::elem e = elem_;
    cudaStream_t s = ctx_.s();
    std::string note;
    // asymmetric padding: copy into a zero-bordered buffer first (the border is zeroed once, here)
    const void* xp = x0.data();
    if (p.pre_padded()) {
        dev_tensor padded = new_tensor({p.n, p.c, p.h, p.w});
        RIDGELINE_CUDA_CHECK(cudaMemsetAsync(padded.data(), 0, padded.buffer->bytes(), s));
        const void* from = x0.data();
        void* to = padded.data();
        const i64 planes = p.n * p.c;
        steps_.push_back([=] {
            RIDGELINE_CUDA_CHECK(
                kernels::pad_copy(e, from, to, planes, p.in_h, p.in_w, p.h, p.w, p.pre_top, p.pre_left, s));
        });
        xp = padded.data();
        keep_.push_back(padded.buffer);
        note = "pad " + std::to_string(p.pre_top) + "x" + std::to_string(p.pre_left) + "x" +
               std::to_string(p.pre_bottom) + "x" + std::to_string(p.pre_right) + "+";
    }
    auto w = upload(param(la.layer, "weight"));
    std::shared_ptr<device_buffer> bias = op.bias ? upload(param(la.layer, "bias")) : nullptr;
    keep_.push_back(w);
    if (bias) keep_.push_back(bias);
    dev_tensor y = new_tensor(la.output_shape.dims());

    std::size_t ws_bytes = 0;
    void* ws = search_workspace(ws_bytes);
    const std::shared_ptr<const cudnn_conv> plan =
        plan_cudnn_conv(ctx_, dt_, p, la, xp, w->get(), y.data(), ws, ws_bytes);
    workspace_need_ = std::max(workspace_need_, plan->workspace_bytes);
    note += plan->note;
    if (op.bias) note += "+bias";

    void* yp = y.data();
    const void* wp = w->get();
    if (fused) {
        // the fused call adds a bias: the convolution's, or zeros where it has none
        std::shared_ptr<device_buffer> fused_bias =
            bias ? bias : upload(std::vector<float>(static_cast<std::size_t>(p.k), 0.0f));
        const void* zp = nullptr;
        if (auto f = plan_conv_fused(la, *plan, *fused, xp, wp, fused_bias->get(), y, note, zp)) {
            notes_.push_back(note);
            keep_.push_back(fused_bias);
            const void* bp = fused_bias->get();
            steps_.push_back([this, plan, f, xp, wp, zp, bp, yp] {
                run_cudnn_conv_fused(ctx_, *plan, *f, xp, wp, zp, bp, yp, workspace_.get(), workspace_.bytes());
            });
            set_output(la, std::move(y));
            return true;
        }
    }
    notes_.push_back(note);
    steps_.push_back([this, plan, xp, wp, yp] {
        run_cudnn_conv(ctx_, *plan, xp, wp, yp, workspace_.get(), workspace_.bytes());
    });
    if (bias) {
        const void* bp = bias->get();
        const i64 n = p.n, k = p.k, hw = p.out_h * p.out_w;
        steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::bias_nchw(e, yp, bp, n, k, hw, s)); });
    }
    set_output(la, std::move(y));
    return false;
}

std::shared_ptr<const cudnn_conv_fused> cuda_graph::plan_conv_fused(const core::layer_analysis& la,
                                                                    const cudnn_conv& plan, const conv_epilogue& fused,
                                                                    const void* xp, const void* wp, const void* bp,
                                                                    dev_tensor& y, std::string& note,
                                                                    const void*& zp) {
    zp = nullptr;
    if (fused.residual) {
        const dev_tensor& z = dense(*fused.residual);
        if (z.numel() != y.numel()) {
            note += " (fused call refused: a residual of " + std::to_string(z.numel()) + " elements is not z)";
            return nullptr;
        }
        zp = z.data();
    }
    std::size_t ws_bytes = 0;
    void* ws = search_workspace(ws_bytes);
    std::shared_ptr<const cudnn_conv_fused> f;
    try {
        f = plan_cudnn_conv_fused(ctx_, dt_, plan, la.output_shape[1], fused.relu, xp, wp, zp, bp, y.data(), ws,
                                  ws_bytes);
    } catch (const core::error& e) {  // backend_api::unsupported (cuDNN's NOT_SUPPORTED) and any other status
        note += std::string(" (fused call refused: ") + e.what() + ")";
        return nullptr;
    }
    // outside the refusals above: an asynchronous CUDA error is the graph's failure, not cuDNN's refusal
    RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
    workspace_need_ = std::max(workspace_need_, f->workspace_bytes);
    note += std::string(fused.residual ? "+z" : "") + (fused.relu ? "+relu" : "") +
            " in cudnnConvolutionBiasActivationForward";
    return f;
}

void cuda_graph::add(const core::layer_analysis& la, const core::batch_norm2d& op) {
    const dev_tensor& x = dense(la.layer.inputs[0]);
    // y = (x - mean) / sqrt(var + eps) * gamma + beta = x * scale + shift, folded here in double
    const auto c = static_cast<std::size_t>(op.num_features);
    const auto& mean = param(la.layer, "running_mean");
    const auto& var = param(la.layer, "running_var");
    std::vector<float> scale(c), shift(c);
    for (std::size_t i = 0; i < c; ++i) {
        const double g = op.affine ? double{param(la.layer, "weight")[i]} : 1.0;
        const double b = op.affine ? double{param(la.layer, "bias")[i]} : 0.0;
        const double sc = g / std::sqrt(double{var[i]} + op.eps);
        scale[i] = static_cast<float>(sc);
        shift[i] = static_cast<float>(b - double{mean[i]} * sc);
    }
    auto ds = upload_floats(scale), dh = upload_floats(shift);
    keep_.insert(keep_.end(), {ds, dh});
    dev_tensor y = new_tensor(la.output_shape.dims());
    const auto& d = la.input_shapes[0];
    const i64 n = d[0], ch = d[1], hw = d.numel() / (d[0] * d[1]);
    const void* xp = x.data();
    void* yp = y.data();
    const auto* sp = static_cast<const float*>(ds->get());
    const auto* hp = static_cast<const float*>(dh->get());
    const kernels::elem e = elem_;
    cudaStream_t s = ctx_.s();
    notes_.emplace_back("ridgeline:scale_shift");
    steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::scale_shift_nchw(e, xp, yp, sp, hp, n, ch, hw, s)); });
    set_output(la, std::move(y));
}

void cuda_graph::add(const core::layer_analysis& la, const core::layer_norm& op) {
    const dev_tensor& x = dense(la.layer.inputs[0]);
    i64 inner = 1;
    for (auto d : op.normalized_shape) inner *= d;
    const i64 rows = x.numel() / inner;
    std::shared_ptr<device_buffer> g, b;
    if (op.elementwise_affine) {
        g = upload_floats(param(la.layer, "weight"));
        keep_.push_back(g);
        if (op.bias) {
            b = upload_floats(param(la.layer, "bias"));
            keep_.push_back(b);
        }
    }
    dev_tensor y = new_tensor(la.output_shape.dims());
    const void* xp = x.data();
    void* yp = y.data();
    const auto* gp = g ? static_cast<const float*>(g->get()) : nullptr;
    const auto* bp = b ? static_cast<const float*>(b->get()) : nullptr;
    const auto eps = static_cast<float>(op.eps);
    const kernels::elem e = elem_;
    cudaStream_t s = ctx_.s();
    notes_.emplace_back("ridgeline:layer_norm");
    steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::layer_norm(e, xp, yp, gp, bp, rows, inner, eps, s)); });
    set_output(la, std::move(y));
}

}  // namespace graph_detail

std::unique_ptr<backend_api::prepared> build_graph(device_context& ctx, const core::model_analysis& model,
                                                const backend_api::graph_data& data) {
    ctx.activate();
    auto g = std::make_unique<graph_detail::cuda_graph>(ctx, model.data_type);
    g->build(model, data);
    return g;
}

}  // namespace ridgeline::cuda
