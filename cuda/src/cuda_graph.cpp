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
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "context.hpp"
#include "library_types.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::cuda {

// translate.cpp names cuDNN's forward algorithms by value
static_assert(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM == 0 && CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM == 1 &&
              CUDNN_CONVOLUTION_FWD_ALGO_GEMM == 2 && CUDNN_CONVOLUTION_FWD_ALGO_DIRECT == 3 &&
              CUDNN_CONVOLUTION_FWD_ALGO_FFT == 4 && CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING == 5 &&
              CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD == 6 && CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED == 7 &&
              CUDNN_CONVOLUTION_FWD_ALGO_COUNT == 8);

namespace {

using i64 = std::int64_t;

/// A tensor of the graph: a buffer, and how this tensor sees it.
struct dev_tensor {
    std::shared_ptr<device_buffer> buffer;
    strided_view view;
    i64 element_bytes = 4;
    bool ids = false;    // int64 token ids (a model input read by embeddings)
    bool alias = false;  // shares another tensor's buffer (a view) or is a model input
    [[nodiscard]] void* data() const {
        return static_cast<unsigned char*>(buffer->get()) + view.offset * element_bytes;
    }
    [[nodiscard]] i64 numel() const {
        i64 n = 1;
        for (auto d : view.dims) n *= d;
        return n;
    }
};

kernels::index_map to_map(const strided_walk& w, const std::string& where) {
    const strided_walk c = coalesce(w);
    if (c.dims.size() > static_cast<std::size_t>(kernels::max_rank))
        throw backends::unsupported(where + ": more than " + std::to_string(kernels::max_rank) +
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

/// Bytes of free device memory the algorithm searches may use as scratch: a quarter of what is free,
/// between 32 MiB and 1 GiB.
std::size_t search_workspace_bytes() {
    std::size_t free = 0, total = 0;
    if (!RIDGELINE_CUDA_STATUS(cudaMemGetInfo(&free, &total)).ok()) return gemm_workspace_bytes;
    return std::clamp<std::size_t>(free / 4, gemm_workspace_bytes, std::size_t{1} << 30);
}

class cuda_graph final : public backends::prepared {
public:
    cuda_graph(device_context& ctx, core::dtype dt)
        : ctx_(ctx), dt_(dt), elem_(elem_of(dt)), esize_(precision_of(dt).storage_bytes) {}

    void build(const core::model_analysis& model, const backends::graph_data& data) {
        data_ = &data;
        for (const auto& in : model.inputs) add_input(in, data.tensors.at(in.name));
        for (const auto& la : model.layers) std::visit([&](const auto& op) { add(la, op); }, la.layer.op);
        for (const auto& o : model.outputs) {
            dev_tensor& t = tensor(o);
            if (t.ids) throw backends::unsupported("graph output \"" + o + "\" is a token-id tensor");
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

    void poison_outputs() override {
        // all-ones bytes are a NaN in fp32 (0xffffffff), fp16 (0xffff) and bf16 (0xffff)
        for (const auto& o : outputs_) {
            const dev_tensor& t = tensor(o);
            RIDGELINE_CUDA_CHECK(cudaMemsetAsync(t.data(), 0xff, static_cast<std::size_t>(t.numel() * t.element_bytes),
                                                 ctx_.s()));
        }
    }

    std::vector<backends::host_tensor> outputs() override {
        RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
        std::vector<backends::host_tensor> out;
        for (std::size_t i = 0; i < outputs_.size(); ++i) {
            const dev_tensor& t = tensor(outputs_[i]);
            const auto n = static_cast<std::size_t>(t.numel());
            std::vector<unsigned char> bytes(n * static_cast<std::size_t>(t.element_bytes));
            RIDGELINE_CUDA_CHECK(cudaMemcpyAsync(bytes.data(), t.data(), bytes.size(), cudaMemcpyDeviceToHost, ctx_.s()));
            RIDGELINE_CUDA_CHECK(cudaStreamSynchronize(ctx_.s()));
            backends::host_tensor h{output_shapes_[i], std::vector<float>(n)};
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
        if (it == tensors_.end()) throw backends::backend_error("unknown tensor \"" + name + "\"");
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

    const std::vector<float>& param(const core::layer& l, const std::string& name) {
        return data_->tensors.at(backends::param_key(l, name)).data;
    }

    void add_input(const core::model_input& in, const backends::host_tensor& host) {
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
        if (t.ids) throw backends::unsupported("token ids \"" + name + "\" can only be read by an embedding");
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
            throw backends::backend_error(core::where(la.layer) + ": output " + core::shape(t.view.dims).to_string() +
                                          " differs from the inferred " + la.output_shape.to_string());
        tensors_[la.layer.name] = std::move(t);
    }

    void* search_workspace(std::size_t& bytes) {
        if (!search_ws_.get()) search_ws_ = device_buffer(search_workspace_bytes());
        bytes = search_ws_.bytes();
        return search_ws_.get();
    }

    // ------------------------------------------------------------ dense

    void add(const core::layer_analysis& la, const core::linear& op) {
        const dev_tensor& x = dense(la.layer.inputs[0]);
        const i64 rows = x.numel() / op.in_features;
        auto w = upload(param(la.layer, "weight"));
        std::shared_ptr<device_buffer> b = op.bias ? upload(param(la.layer, "bias")) : nullptr;
        dev_tensor y = new_tensor(la.output_shape.dims());
        std::size_t ws_bytes = 0;
        void* ws = search_workspace(ws_bytes);
        const gemm_shape g = linear_gemm(rows, op.in_features, op.out_features);
        std::shared_ptr<lt_gemm> plan = plan_lt_gemm(ctx_, dt_, g, w->get(), x.data(), y.data(), b ? b->get() : nullptr,
                                                     ws, ws_bytes);
        workspace_need_ = std::max(workspace_need_, plan->workspace_bytes);
        notes_.push_back(plan->note + (op.bias ? " +bias epilogue" : ""));
        const void* xp = x.data();
        void* yp = y.data();
        keep_.push_back(w);
        if (b) keep_.push_back(b);
        steps_.push_back([this, plan, w, xp, yp] {
            run_lt_gemm(ctx_, *plan, w->get(), xp, yp, workspace_.get(), workspace_.bytes());
        });
        set_output(la, std::move(y));
    }

    void add(const core::layer_analysis& la, const core::matmul&) {
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

    void add(const core::layer_analysis& la, const core::embedding& op) {
        const dev_tensor& ids = tensor(la.layer.inputs[0]);
        if (!ids.ids || !host_ids_.count(la.layer.inputs[0]))
            throw backends::unsupported(core::where(la.layer) + ": an embedding reads token ids from a model input only");
        for (auto id : host_ids_.at(la.layer.inputs[0]))
            if (id < 0 || id >= op.num_embeddings)
                throw backends::backend_error(core::where(la.layer) + ": token id " + std::to_string(id) +
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

    // ------------------------------------------------------------ convolution

    void add(const core::layer_analysis& la, const core::conv2d& op) {
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
        notes_.push_back(note);

        void* yp = y.data();
        const void* wp = w->get();
        steps_.push_back([this, plan, xp, wp, yp] {
            run_cudnn_conv(ctx_, *plan, xp, wp, yp, workspace_.get(), workspace_.bytes());
        });
        if (bias) {
            const void* bp = bias->get();
            const i64 n = p.n, k = p.k, hw = p.out_h * p.out_w;
            steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::bias_nchw(e, yp, bp, n, k, hw, s)); });
        }
        set_output(la, std::move(y));
    }

    // ------------------------------------------------------------ normalisation

    void add(const core::layer_analysis& la, const core::batch_norm2d& op) {
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

    void add(const core::layer_analysis& la, const core::layer_norm& op) {
        const dev_tensor& x = dense(la.layer.inputs[0]);
        i64 inner = 1;
        for (auto d : op.normalized_shape) inner *= d;
        const i64 rows = x.numel() / inner;
        std::shared_ptr<device_buffer> g, b;
        if (op.elementwise_affine) {
            g = upload_floats(param(la.layer, "weight"));
            b = upload_floats(param(la.layer, "bias"));
            keep_.insert(keep_.end(), {g, b});
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

    // ------------------------------------------------------------ elementwise

    void unary(const core::layer_analysis& la, kernels::unary_op op, float alpha, const char* name) {
        const dev_tensor& x = dense(la.layer.inputs[0]);
        dev_tensor y = new_tensor(la.output_shape.dims());
        const void* xp = x.data();
        void* yp = y.data();
        const i64 n = x.numel();
        const kernels::elem e = elem_;
        cudaStream_t s = ctx_.s();
        notes_.emplace_back(std::string("ridgeline:") + name);
        steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::unary(e, op, alpha, xp, yp, n, s)); });
        set_output(la, std::move(y));
    }
    void add(const core::layer_analysis& la, const core::relu&) { unary(la, kernels::unary_op::relu, 0, "relu"); }
    void add(const core::layer_analysis& la, const core::relu6&) { unary(la, kernels::unary_op::relu6, 0, "relu6"); }
    void add(const core::layer_analysis& la, const core::gelu& op) {
        if (op.tanh_approximation)
            unary(la, kernels::unary_op::gelu_tanh, 0, "gelu_tanh");
        else
            unary(la, kernels::unary_op::gelu_erf, 0, "gelu");
    }
    void add(const core::layer_analysis& la, const core::tanh_op&) { unary(la, kernels::unary_op::tanh, 0, "tanh"); }
    void add(const core::layer_analysis& la, const core::sigmoid&) { unary(la, kernels::unary_op::sigmoid, 0, "sigmoid"); }
    void add(const core::layer_analysis& la, const core::hardswish&) {
        unary(la, kernels::unary_op::hardswish, 0, "hardswish");
    }
    void add(const core::layer_analysis& la, const core::hardsigmoid&) {
        unary(la, kernels::unary_op::hardsigmoid, 0, "hardsigmoid");
    }
    void add(const core::layer_analysis& la, const core::silu&) { unary(la, kernels::unary_op::silu, 0, "silu"); }
    void add(const core::layer_analysis& la, const core::scale& op) {
        unary(la, kernels::unary_op::scale, static_cast<float>(op.factor), "scale");
    }

    void add(const core::layer_analysis& la, const core::softmax& op) {
        const dev_tensor& x = dense(la.layer.inputs[0]);
        const axis_split a = split_at(la.input_shapes[0], op.dim);
        dev_tensor y = new_tensor(la.output_shape.dims());
        const void* xp = x.data();
        void* yp = y.data();
        const kernels::elem e = elem_;
        cudaStream_t s = ctx_.s();
        notes_.emplace_back(a.inner == 1 ? "ridgeline:softmax_rows" : "ridgeline:softmax_columns");
        steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::softmax(e, xp, yp, a.outer, a.size, a.inner, s)); });
        set_output(la, std::move(y));
    }

    void binary(const core::layer_analysis& la, kernels::binary_op op, const char* name) {
        const dev_tensor& a = dense(la.layer.inputs[0]);
        const dev_tensor& b = dense(la.layer.inputs[1]);
        dev_tensor y = new_tensor(la.output_shape.dims());
        const void* ap = a.data();
        const void* bp = b.data();
        void* yp = y.data();
        const i64 n = y.numel();
        const kernels::elem e = elem_;
        cudaStream_t s = ctx_.s();
        const bool same = la.input_shapes[0] == la.output_shape && la.input_shapes[1] == la.output_shape;
        if (same) {
            notes_.emplace_back(std::string("ridgeline:") + name);
            steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::binary(e, op, ap, bp, yp, n, nullptr, s)); });
        } else {
            const strided_walk w{la.output_shape.dims(), broadcast_strides(la.input_shapes[0], la.output_shape),
                                 broadcast_strides(la.input_shapes[1], la.output_shape)};
            const kernels::index_map map = to_map(w, core::where(la.layer));
            notes_.emplace_back(std::string("ridgeline:") + name + "_broadcast");
            steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::binary(e, op, ap, bp, yp, n, &map, s)); });
        }
        set_output(la, std::move(y));
    }
    void add(const core::layer_analysis& la, const core::add&) { binary(la, kernels::binary_op::add, "add"); }
    void add(const core::layer_analysis& la, const core::mul&) { binary(la, kernels::binary_op::mul, "mul"); }
    /// mean / sum / amax: one thread per output walking its inputs (kernels::reduce).
    void reduce(const core::layer_analysis& la, kernels::reduce_op op, const std::vector<std::int64_t>& dim,
                const char* name) {
        const dev_tensor& x = dense(la.layer.inputs[0]);
        const auto& xd = la.input_shapes[0].dims();
        const auto r = core::reduced_dims(dim, xd.size(), core::where(la.layer));
        const auto xs = row_major_strides(xd);
        std::vector<i64> kept, kept_s, red, red_s;
        for (std::size_t k = 0; k < xd.size(); ++k) {
            (r[k] ? red : kept).push_back(xd[k]);
            (r[k] ? red_s : kept_s).push_back(xs[k]);
        }
        if (kept.empty()) kept = {1}, kept_s = {0};
        const std::string where = core::where(la.layer);
        const kernels::index_map out_map = to_map(strided_walk{kept, kept_s, std::vector<i64>(kept.size(), 0)}, where);
        const kernels::index_map red_map = to_map(strided_walk{red, red_s, std::vector<i64>(red.size(), 0)}, where);
        dev_tensor y = new_tensor(la.output_shape.dims());
        const void* xp = x.data();
        void* yp = y.data();
        const i64 out_n = y.numel(), red_n = la.input_shapes[0].numel() / std::max<i64>(out_n, 1);
        const kernels::elem e = elem_;
        cudaStream_t s = ctx_.s();
        steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::reduce(e, op, xp, yp, out_n, out_map, red_n, red_map, s)); });
        notes_.emplace_back(std::string("ridgeline:") + name);
        set_output(la, std::move(y));
    }
    void add(const core::layer_analysis& la, const core::mean_op& op) { reduce(la, kernels::reduce_op::mean, op.dim, "mean"); }
    void add(const core::layer_analysis& la, const core::sum_op& op) { reduce(la, kernels::reduce_op::sum, op.dim, "sum"); }
    void add(const core::layer_analysis& la, const core::amax& op) { reduce(la, kernels::reduce_op::max, op.dim, "amax"); }
    void add(const core::layer_analysis& la, const core::sub&) { binary(la, kernels::binary_op::sub, "sub"); }
    void add(const core::layer_analysis& la, const core::div&) { binary(la, kernels::binary_op::div, "div"); }
    void add(const core::layer_analysis& la, const core::erf_op&) { unary(la, kernels::unary_op::erf, 0, "erf"); }
    void add(const core::layer_analysis& la, const core::sqrt_op&) { unary(la, kernels::unary_op::sqrt, 0, "sqrt"); }
    void add(const core::layer_analysis& la, const core::exp_op&) { unary(la, kernels::unary_op::exp, 0, "exp"); }
    void add(const core::layer_analysis& la, const core::neg&) { unary(la, kernels::unary_op::neg, 0, "neg"); }
    void add(const core::layer_analysis& la, const core::pow_op& op) {
        unary(la, kernels::unary_op::pow, static_cast<float>(op.exponent), "pow");
    }

    // ------------------------------------------------------------ pooling

    static kernels::pool_geometry geometry(const pool_params& p) {
        kernels::pool_geometry g;
        g.planes = p.planes;
        g.in_h = p.in_h;
        g.in_w = p.in_w;
        g.out_h = p.out_h;
        g.out_w = p.out_w;
        g.kernel_h = p.kernel_h;
        g.kernel_w = p.kernel_w;
        g.stride_h = p.stride_h;
        g.stride_w = p.stride_w;
        g.pad_h = p.pad_h;
        g.pad_w = p.pad_w;
        g.dilation_h = p.dilation_h;
        g.dilation_w = p.dilation_w;
        g.count_include_pad = p.count_include_pad;
        return g;
    }

    template <class Launch>
    void pooling(const core::layer_analysis& la, const pool_params& p, const char* name, Launch launch) {
        const dev_tensor& x = dense(la.layer.inputs[0]);
        dev_tensor y = new_tensor(la.output_shape.dims());
        const void* xp = x.data();
        void* yp = y.data();
        const kernels::pool_geometry g = geometry(p);
        const kernels::elem e = elem_;
        cudaStream_t s = ctx_.s();
        notes_.emplace_back(std::string("ridgeline:") + name);
        steps_.push_back([=] { RIDGELINE_CUDA_CHECK(launch(e, xp, yp, g, s)); });
        set_output(la, std::move(y));
    }
    void add(const core::layer_analysis& la, const core::max_pool2d& op) {
        pooling(la, max_pool_params(op, la.input_shapes[0], la.output_shape), "max_pool", kernels::max_pool);
    }
    void add(const core::layer_analysis& la, const core::avg_pool2d& op) {
        pooling(la, avg_pool_params(op, la.input_shapes[0], la.output_shape), "avg_pool", kernels::avg_pool);
    }
    void add(const core::layer_analysis& la, const core::adaptive_avg_pool2d&) {
        pooling(la, adaptive_pool_params(la.input_shapes[0], la.output_shape), "adaptive_avg_pool",
                kernels::adaptive_avg_pool);
    }

    // ------------------------------------------------------------ data movement and views

    void add(const core::layer_analysis& la, const core::concat& op) {
        const auto& out = la.output_shape;
        const std::size_t d = core::normalize_dim(op.dim, out.rank(), core::where(la.layer));
        i64 outer = 1, inner = 1;
        for (std::size_t i = 0; i < out.rank(); ++i) {
            if (i < d) outer *= out[i];
            if (i > d) inner *= out[i];
        }
        dev_tensor y = new_tensor(out.dims());
        auto* yp = static_cast<unsigned char*>(y.data());
        const auto out_block = static_cast<std::size_t>(out[d] * inner * esize_);
        std::size_t offset = 0;
        cudaStream_t s = ctx_.s();
        for (std::size_t t = 0; t < la.layer.inputs.size(); ++t) {
            const dev_tensor& x = dense(la.layer.inputs[t]);
            const auto block = static_cast<std::size_t>(la.input_shapes[t][d] * inner * esize_);
            const void* xp = x.data();
            unsigned char* dst = yp + offset;
            if (outer == 1) {
                steps_.push_back([=] {
                    RIDGELINE_CUDA_CHECK(cudaMemcpyAsync(dst, xp, block, cudaMemcpyDeviceToDevice, s));
                });
            } else {
                if (out_block > ctx_.props.memPitch)
                    throw backends::unsupported(core::where(la.layer) + ": rows of " + format_bytes(static_cast<i64>(out_block)) +
                                                " exceed cudaMemcpy2D's pitch limit");
                const auto rows = static_cast<std::size_t>(outer);
                steps_.push_back([=] {
                    RIDGELINE_CUDA_CHECK(
                        cudaMemcpy2DAsync(dst, out_block, xp, block, block, rows, cudaMemcpyDeviceToDevice, s));
                });
            }
            offset += block;
        }
        notes_.emplace_back(outer == 1 ? "cudaMemcpyAsync" : "cudaMemcpy2DAsync");
        set_output(la, std::move(y));
    }

    /// flatten / reshape: the same elements in the same order, new dims (a dense copy first for a strided view).
    void reinterpret(const core::layer_analysis& la) {
        dev_tensor t = dense(la.layer.inputs[0]);
        t.view.dims = la.output_shape.dims();
        t.view.strides = row_major_strides(t.view.dims);
        t.alias = true;
        set_output(la, std::move(t));
    }
    /// A held tensor: uploaded at prepare time (broadcast to `expand` on the host), like a model input.
    void add(const core::layer_analysis& la, const core::parameter&) {
        const auto& host = data_->tensors.at(backends::param_key(la.layer, "value"));
        dev_tensor t;
        t.view = dense_view(la.output_shape);
        t.alias = true;
        t.buffer = upload(backends::broadcast_to(host, la.output_shape).data);
        t.element_bytes = esize_;
        notes_.emplace_back("held tensor");
        set_output(la, std::move(t));
    }
    void add(const core::layer_analysis& la, const core::flatten&) { reinterpret(la); }
    void add(const core::layer_analysis& la, const core::reshape&) { reinterpret(la); }

    void add(const core::layer_analysis& la, const core::transpose& op) {
        dev_tensor t = tensor(la.layer.inputs[0]);
        if (t.ids) throw backends::unsupported(core::where(la.layer) + ": views of token ids are not supported");
        t.view = transpose_view(t.view, op.dim0, op.dim1);
        t.alias = true;
        set_output(la, std::move(t));
    }

    void add(const core::layer_analysis& la, const core::slice& op) {
        dev_tensor t = tensor(la.layer.inputs[0]);
        if (t.ids) throw backends::unsupported(core::where(la.layer) + ": views of token ids are not supported");
        const std::size_t d = core::normalize_dim(op.dim, la.output_shape.rank(), core::where(la.layer));
        t.view = slice_view(t.view, op, la.output_shape[d]);
        t.alias = true;
        set_output(la, std::move(t));
    }

    device_context& ctx_;
    core::dtype dt_;
    kernels::elem elem_;
    i64 esize_;
    const backends::graph_data* data_ = nullptr;
    std::map<std::string, dev_tensor> tensors_;
    std::map<std::string, dev_tensor> dense_copies_;
    std::map<std::string, std::vector<std::int64_t>> host_ids_;
    std::vector<std::shared_ptr<device_buffer>> keep_;  // parameters, pointer arrays, padded inputs
    std::vector<step_fn> steps_;
    std::vector<std::string> outputs_;
    std::vector<core::shape> output_shapes_;
    std::vector<std::string> notes_;
    device_buffer search_ws_;      // scratch of the algorithm searches, freed at the end of build()
    std::size_t workspace_need_ = 0;
    device_buffer workspace_;      // shared by every step: they run one after another on one stream
    graph graph_;
    graph_exec exec_;
};

}  // namespace

std::unique_ptr<backends::prepared> build_graph(device_context& ctx, const core::model_analysis& model,
                                                const backends::graph_data& data) {
    ctx.activate();
    auto g = std::make_unique<cuda_graph>(ctx, model.data_type);
    g->build(model, data);
    return g;
}

}  // namespace ridgeline::cuda
