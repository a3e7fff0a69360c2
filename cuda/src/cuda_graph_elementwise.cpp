// The GPU graph (cuda_graph.hpp): elementwise, reduction, pooling, data-movement and view layers and held
// tensors, each a step that launches one of ridgeline's kernels (kernels.cu) or a copy.
#include <algorithm>
#include <string>

#include "cuda_graph.hpp"

namespace ridgeline::cuda::graph_detail {

void cuda_graph::unary(const core::layer_analysis& la, kernels::unary_op op, float alpha, const char* name) {
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

void cuda_graph::add(const core::layer_analysis& la, const core::softmax& op) {
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

void cuda_graph::binary(const core::layer_analysis& la, kernels::binary_op op, const char* name) {
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

void cuda_graph::reduce(const core::layer_analysis& la, kernels::reduce_op op, const std::vector<std::int64_t>& dim,
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

kernels::pool_geometry cuda_graph::geometry(const pool_params& p) {
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
void cuda_graph::pooling(const core::layer_analysis& la, const pool_params& p, const char* name, Launch launch) {
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

void cuda_graph::add(const core::layer_analysis& la, const core::max_pool2d& op) {
    pooling(la, max_pool_params(op, la.input_shapes[0], la.output_shape), "max_pool", kernels::max_pool);
}

void cuda_graph::add(const core::layer_analysis& la, const core::avg_pool2d& op) {
    pooling(la, avg_pool_params(op, la.input_shapes[0], la.output_shape), "avg_pool", kernels::avg_pool);
}

void cuda_graph::add(const core::layer_analysis& la, const core::adaptive_avg_pool2d&) {
    pooling(la, adaptive_pool_params(la.input_shapes[0], la.output_shape), "adaptive_avg_pool",
            kernels::adaptive_avg_pool);
}

void cuda_graph::add(const core::layer_analysis& la, const core::concat& op) {
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
                throw backend_api::unsupported(core::where(la.layer) + ": rows of " + format_bytes(static_cast<i64>(out_block)) +
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

void cuda_graph::reinterpret(const core::layer_analysis& la) {
    dev_tensor t = dense(la.layer.inputs[0]);
    t.view.dims = la.output_shape.dims();
    t.view.strides = row_major_strides(t.view.dims);
    t.alias = true;
    set_output(la, std::move(t));
}

void cuda_graph::add(const core::layer_analysis& la, const core::parameter&) {
    const auto& host = data_->tensors.at(backend_api::param_key(la.layer, "value"));
    dev_tensor t;
    t.view = dense_view(la.output_shape);
    t.alias = true;
    t.buffer = upload(backend_api::broadcast_to(host, la.output_shape).data);
    t.element_bytes = esize_;
    notes_.emplace_back("held tensor");
    set_output(la, std::move(t));
}

void cuda_graph::add(const core::layer_analysis& la, const core::flatten&) { reinterpret(la); }

void cuda_graph::add(const core::layer_analysis& la, const core::reshape&) { reinterpret(la); }

void cuda_graph::add(const core::layer_analysis& la, const core::transpose& op) {
    dev_tensor t = tensor(la.layer.inputs[0]);
    if (t.ids) throw backend_api::unsupported(core::where(la.layer) + ": views of token ids are not supported");
    t.view = transpose_view(t.view, op.dim0, op.dim1);
    t.alias = true;
    set_output(la, std::move(t));
}

void cuda_graph::add(const core::layer_analysis& la, const core::slice& op) {
    dev_tensor t = tensor(la.layer.inputs[0]);
    if (t.ids) throw backend_api::unsupported(core::where(la.layer) + ": views of token ids are not supported");
    const std::size_t d = core::normalize_dim(op.dim, la.output_shape.rank(), core::where(la.layer));
    t.view = slice_view(t.view, op, la.output_shape[d]);
    t.alias = true;
    set_output(la, std::move(t));
}

// ------------------------------------------------------------ resampling copies

void cuda_graph::gather_by_tables(const core::layer_analysis& la, std::vector<std::vector<i64>> table, float fill,
                                  const char* name) {
    const dev_tensor& x = dense(la.layer.inputs[0]);
    if (table.size() > static_cast<std::size_t>(kernels::max_rank))
        throw backend_api::unsupported(core::where(la.layer) + ": rank " + std::to_string(table.size()) + " above " +
                                    std::to_string(kernels::max_rank));
    kernels::gather_tables g;
    g.rank = static_cast<int>(table.size());
    std::vector<i64> flat;
    const std::vector<i64> stride = row_major_strides(x.view.dims);
    const std::size_t lead = table.size() - stride.size();  // new leading dimensions (expand) read offset 0
    for (std::size_t d = 0; d < table.size(); ++d) {
        g.dims[d] = static_cast<i64>(table[d].size());
        g.start[d] = static_cast<i64>(flat.size());
        for (const i64 t : table[d]) flat.push_back(t < 0 ? -1 : d < lead ? 0 : t * stride[d - lead]);
    }
    auto tables = upload_bytes(flat.data(), flat.size() * sizeof(i64));
    keep_.push_back(tables);
    dev_tensor y = new_tensor(la.output_shape.dims());
    const void* xp = x.data();
    void* yp = y.data();
    const i64 n = y.numel();
    const auto* tp = static_cast<const i64*>(tables->get());
    const kernels::elem e = elem_;
    cudaStream_t s = ctx_.s();
    notes_.emplace_back(std::string("ridgeline:") + name);
    steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::index_gather(e, xp, yp, n, g, tp, fill, s)); });
    set_output(la, std::move(y));
}

void cuda_graph::add(const core::layer_analysis& la, const core::pad& op) {
    const core::shape& x = la.input_shapes[0];
    std::vector<std::vector<std::int64_t>> table;
    for (std::size_t d = 0; d < x.rank(); ++d) table.push_back(op.source_indices(d, x));
    gather_by_tables(la, std::move(table), static_cast<float>(op.value), "pad");
}

void cuda_graph::add(const core::layer_analysis& la, const core::expand& op) {
    gather_by_tables(la, op.source_indices(la.input_shapes[0], la.output_shape), 0.0f, "expand");
}

void cuda_graph::add(const core::layer_analysis& la, const core::interpolate& op) {
    const core::shape& x = la.input_shapes[0];
    const core::resample_axis rows = core::resample_coordinates(op, x[2], op.size.h);
    const core::resample_axis cols = core::resample_coordinates(op, x[3], op.size.w);
    if (op.mode == core::interpolate::mode_t::nearest) {
        std::vector<std::vector<i64>> table(4);
        for (i64 i = 0; i < x[0]; ++i) table[0].push_back(i);
        for (i64 i = 0; i < x[1]; ++i) table[1].push_back(i);
        table[2] = rows.index0;
        table[3] = cols.index0;
        gather_by_tables(la, std::move(table), 0.0f, "nearest");
        return;
    }
    std::vector<i64> r = rows.index0, c = cols.index0;
    r.insert(r.end(), rows.index1.begin(), rows.index1.end());
    c.insert(c.end(), cols.index1.begin(), cols.index1.end());
    auto rb = upload_bytes(r.data(), r.size() * sizeof(i64));
    auto cb = upload_bytes(c.data(), c.size() * sizeof(i64));
    auto rl = upload_floats(rows.lambda);
    auto cl = upload_floats(cols.lambda);
    for (const auto& b : {rb, cb, rl, cl}) keep_.push_back(b);
    const dev_tensor& xt = dense(la.layer.inputs[0]);
    dev_tensor y = new_tensor(la.output_shape.dims());
    const void* xp = xt.data();
    void* yp = y.data();
    const i64 planes = x[0] * x[1], ih = x[2], iw = x[3], oh = op.size.h, ow = op.size.w;
    const auto* rp = static_cast<const i64*>(rb->get());
    const auto* cp = static_cast<const i64*>(cb->get());
    const auto* rlp = static_cast<const float*>(rl->get());
    const auto* clp = static_cast<const float*>(cl->get());
    const kernels::elem e = elem_;
    cudaStream_t s = ctx_.s();
    notes_.emplace_back("ridgeline:bilinear");
    steps_.push_back(
        [=] { RIDGELINE_CUDA_CHECK(kernels::bilinear(e, xp, yp, planes, ih, iw, oh, ow, rp, cp, rlp, clp, s)); });
    set_output(la, std::move(y));
}

void cuda_graph::add(const core::layer_analysis& la, const core::where_op&) {
    const std::vector<i64> out = la.output_shape.dims();
    if (out.size() > static_cast<std::size_t>(kernels::max_rank))
        throw backend_api::unsupported(core::where(la.layer) + ": rank " + std::to_string(out.size()) + " above " +
                                    std::to_string(kernels::max_rank));
    kernels::select_map m;
    m.rank = static_cast<int>(out.size());
    const void* p[3];
    for (std::size_t k = 0; k < 3; ++k) {
        const dev_tensor& t = dense(la.layer.inputs[k]);
        p[k] = t.data();
        i64* stride = k == 0 ? m.stride_c : k == 1 ? m.stride_a : m.stride_b;
        const std::vector<i64>& d = t.view.dims;
        i64 step = 1;
        for (std::size_t i = 0; i < d.size(); ++i) {
            const std::size_t din = d.size() - 1 - i, dout = out.size() - 1 - i;
            stride[dout] = d[din] == 1 ? 0 : step;
            step *= d[din];
        }
    }
    for (std::size_t d = 0; d < out.size(); ++d) m.dims[d] = out[d];
    dev_tensor y = new_tensor(out);
    void* yp = y.data();
    const i64 n = y.numel();
    const void *cp = p[0], *ap = p[1], *bp = p[2];
    const kernels::elem e = elem_;
    cudaStream_t s = ctx_.s();
    notes_.emplace_back("ridgeline:where");
    steps_.push_back([=] { RIDGELINE_CUDA_CHECK(kernels::select(e, cp, ap, bp, yp, n, m, s)); });
    set_output(la, std::move(y));
}

}  // namespace ridgeline::cuda::graph_detail
