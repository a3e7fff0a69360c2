// The oneDNN lowering (dnnl_graph.hpp): pad, expand and interpolate. oneDNN 2.6 has no pad primitive and its resampling
// rounds differently from PyTorch in some cases, so these are partly ridgeline's own loops, named in notes():
// - pad, expand, and nearest interpolation that is not an integer upscale: "ridgeline index gather", one table of source
//   offsets per output dimension (core::resample_coordinates for interpolate), rows split over OpenMP threads,
//   the innermost row copied element by element from its table, or by one memcpy where it is a plain run;
// - bilinear: "ridgeline bilinear loop", float32, the same tables (oneDNN's linear resampling computes the source
//   coordinate as (o + 0.5) * in / out - 0.5, PyTorch as (in / out) * (o + 0.5) - 0.5, both in float32: at a few
//   thousand pixels the weights differ by 1e-3, a relative error of 4e-4 on a 7000-wide row);
// - oneDNN's resampling_forward for nearest with integer upscale factors, where its round((o + 0.5) / F - 0.5) is
//   PyTorch's floor(o / F).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "dnnl_graph.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::cpu::dnnl_detail {
namespace {

using i64 = std::int64_t;

/// y[i_0, ..., i_{r-1}] = x[sum_d table[d][i_d]] (offsets in elements), or `fill` where any table entry is -1.
/// `run`: the innermost table is a contiguous run (x offsets t0, t0+1, ...) between [run_lo, run_hi).
template <class T>
void index_gather(const T* x, T* y, const std::vector<i64>& out, const std::vector<std::vector<i64>>& table, T fill,
                  i64 run_lo, i64 run_hi) {
    const std::size_t rank = out.size();
    const i64 inner = out[rank - 1];
    i64 rows = 1;
    for (std::size_t d = 0; d + 1 < rank; ++d) rows *= out[d];
    const std::vector<i64>& last = table[rank - 1];
#pragma omp parallel for schedule(static)
    for (i64 r = 0; r < rows; ++r) {
        i64 rem = r, base = 0;
        bool outside = false;
        for (std::size_t d = rank - 1; d-- > 0;) {
            const i64 t = table[d][static_cast<std::size_t>(rem % out[d])];
            rem /= out[d];
            if (t < 0) outside = true;
            base += t;
        }
        T* row = y + r * inner;
        if (outside) {
            std::fill(row, row + inner, fill);
            continue;
        }
        for (i64 j = 0; j < run_lo; ++j) row[j] = last[j] < 0 ? fill : x[base + last[j]];
        if (run_hi > run_lo)
            std::memcpy(row + run_lo, x + base + last[run_lo], static_cast<std::size_t>(run_hi - run_lo) * sizeof(T));
        for (i64 j = std::max(run_lo, run_hi); j < inner; ++j) row[j] = last[j] < 0 ? fill : x[base + last[j]];
    }
}

/// The longest stretch [lo, hi) of `t` where t[j] = t[lo] + (j - lo), all >= 0 (pad's interior).
std::pair<i64, i64> contiguous_run(const std::vector<i64>& t) {
    i64 best_lo = 0, best_hi = 0;
    for (i64 lo = 0; lo < static_cast<i64>(t.size());) {
        i64 hi = lo + 1;
        if (t[static_cast<std::size_t>(lo)] >= 0)
            while (hi < static_cast<i64>(t.size()) && t[static_cast<std::size_t>(hi)] == t[static_cast<std::size_t>(hi - 1)] + 1)
                ++hi;
        if (t[static_cast<std::size_t>(lo)] >= 0 && hi - lo > best_hi - best_lo) best_lo = lo, best_hi = hi;
        lo = hi;
    }
    return {best_lo, best_hi};
}

}  // namespace

void dnnl_graph::gather_by_tables(const core::layer_analysis& la, std::vector<std::vector<std::int64_t>> table,
                                  float fill) {
    const memory x = dense(la.layer.inputs[0]);
    const memory::desc md = x.get_desc();
    const dims in = md.dims();
    const dims out = to_dims(la.output_shape);
    const dims in_stride = row_major_strides(in);
    const std::size_t lead = table.size() - in.size();  // new leading dimensions (expand) read offset 0
    for (std::size_t d = 0; d < table.size(); ++d)
        for (auto& t : table[d]) t = t < 0 ? -1 : d < lead ? 0 : t * in_stride[d - lead];
    // the fill value in the tensor's own type, converted by a reorder of one element
    memory fill32(plain_md({1}, memory::data_type::f32), engine_);
    *static_cast<float*>(fill32.get_data_handle()) = fill;
    memory fill_dt(plain_md({1}, md.data_type()), engine_);
    dnnl::reorder(fill32, fill_dt).execute(stream_, fill32, fill_dt);
    stream_.wait();
    memory y(plain_md(out, md.data_type()), engine_);
    const auto [lo, hi] = contiguous_run(table.back());
    const std::size_t es = memory::data_type_size(md.data_type());
    if (es == 4) {
        const std::uint32_t f = *static_cast<const std::uint32_t*>(fill_dt.get_data_handle());
        steps_.push_back({{}, {}, [x, y, out, table, f, lo = lo, hi = hi] {
                              index_gather(static_cast<const std::uint32_t*>(x.get_data_handle()),
                                           static_cast<std::uint32_t*>(y.get_data_handle()), out, table, f, lo, hi);
                          }});
    } else if (es == 2) {
        const std::uint16_t f = *static_cast<const std::uint16_t*>(fill_dt.get_data_handle());
        steps_.push_back({{}, {}, [x, y, out, table, f, lo = lo, hi = hi] {
                              index_gather(static_cast<const std::uint16_t*>(x.get_data_handle()),
                                           static_cast<std::uint16_t*>(y.get_data_handle()), out, table, f, lo, hi);
                          }});
    } else {
        throw backend_api::unsupported(core::where(la.layer) + ": elements of " + std::to_string(es) + " bytes");
    }
    notes_.emplace_back("ridgeline index gather");
    set_output(la.layer.name, y);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::pad& op) {
    const core::shape& x = la.input_shapes[0];
    std::vector<std::vector<std::int64_t>> table;
    for (std::size_t d = 0; d < x.rank(); ++d) table.push_back(op.source_indices(d, x));
    gather_by_tables(la, std::move(table), static_cast<float>(op.value));
}

void dnnl_graph::add(const core::layer_analysis& la, const core::expand& op) {
    gather_by_tables(la, op.source_indices(la.input_shapes[0], la.output_shape), 0.0f);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::interpolate& op) {
    const core::shape& x = la.input_shapes[0];
    const bool nearest = op.mode == core::interpolate::mode_t::nearest;
    if (nearest && op.size.h % x[2] == 0 && op.size.w % x[3] == 0) {
        const memory src = dense_or_blocked(la.layer.inputs[0]);
        const auto dt = to_dnnl(dt_);
        dnnl::resampling_forward::desc d(dnnl::prop_kind::forward_inference,
                                         dnnl::algorithm::resampling_nearest,
                                         src.get_desc(), any_md(to_dims(la.output_shape), dt));
        dnnl::resampling_forward::primitive_desc pd(d, attr(), engine_);
        record(pd);
        memory dst(pd.dst_desc(), engine_);
        steps_.push_back({dnnl::resampling_forward(pd),
                          {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                          {}});
        set_output(la.layer.name, dst);
        return;
    }
    const core::resample_axis rows = core::resample_coordinates(op, x[2], op.size.h);
    const core::resample_axis cols = core::resample_coordinates(op, x[3], op.size.w);
    if (nearest) {
        std::vector<std::vector<std::int64_t>> table(4);
        for (i64 i = 0; i < x[0]; ++i) table[0].push_back(i);
        for (i64 i = 0; i < x[1]; ++i) table[1].push_back(i);
        table[2] = rows.index0;
        table[3] = cols.index0;
        gather_by_tables(la, std::move(table), 0.0f);
        return;
    }
    // bilinear: float32, converted by reorders around it in other data types
    const dims out = to_dims(la.output_shape);
    const memory src = to_layout(la.layer.inputs[0], plain_md(to_dims(x), memory::data_type::f32));
    memory y32(plain_md(out, memory::data_type::f32), engine_);
    const i64 planes = x[0] * x[1], ih = x[2], iw = x[3], oh = op.size.h, ow = op.size.w;
    steps_.push_back({{}, {}, [src, y32, rows, cols, planes, ih, iw, oh, ow] {
                          const auto* xp = static_cast<const float*>(src.get_data_handle());
                          auto* yp = static_cast<float*>(y32.get_data_handle());
#pragma omp parallel for schedule(static)
                          for (i64 p = 0; p < planes; ++p) {
                              const float* xs = xp + p * ih * iw;
                              float* ys = yp + p * oh * ow;
                              for (i64 r = 0; r < oh; ++r) {
                                  const auto ri = static_cast<std::size_t>(r);
                                  const float h1 = rows.lambda[ri], h0 = 1 - h1;
                                  const float* a = xs + rows.index0[ri] * iw;
                                  const float* b = xs + rows.index1[ri] * iw;
                                  for (i64 c = 0; c < ow; ++c) {
                                      const auto ci = static_cast<std::size_t>(c);
                                      const float w1 = cols.lambda[ci], w0 = 1 - w1;
                                      const i64 c0 = cols.index0[ci], c1 = cols.index1[ci];
                                      ys[r * ow + c] = h0 * (w0 * a[c0] + w1 * a[c1]) + h1 * (w0 * b[c0] + w1 * b[c1]);
                                  }
                              }
                          }
                      }});
    notes_.emplace_back("ridgeline bilinear loop");
    set_output_from_f32(la.layer.name, y32);
}

}  // namespace ridgeline::cpu::dnnl_detail
