// The oneDNN lowering (dnnl_graph.hpp): pad, expand and interpolate. oneDNN 2.6 has no pad primitive and its resampling
// rounds differently from PyTorch in some cases, so these are partly ridgeline's own loops, named in notes():
// - pad, expand, and nearest interpolation that is not an integer upscale: "ridgeline index gather", one table of source
//   offsets per output dimension (core::resample_coordinates for interpolate), the innermost table cut once into
//   copies of contiguous runs, splats of a repeated element, fill stretches and element-by-element gathers
//   (vectorised where 16 outputs read within 32 source elements: dnnl_window_gather.hpp); an output past the
//   last-level cache made in L1 blocks across row boundaries and streamed with its lines whole (stream_flat),
//   otherwise rows split over OpenMP threads (dnnl_loops.hpp);
// - bilinear: "ridgeline bilinear loop", float32 and bf16 (rounded once, at the output), the same tables, separable
//   (each source row resampled along the width once, by the same vectorised gathers, then the output rows blended
//   from two of them, streamed straight from the registers: blend_rows, blend_rows_bf16); oneDNN's linear resampling computes the source coordinate as
//   (o + 0.5) * in / out - 0.5, PyTorch as (in / out) * (o + 0.5) - 0.5, both in float32: at a few thousand pixels
//   the weights differ by 1e-3, a relative error of 4e-4 on a 7000-wide row;
// - oneDNN's resampling_forward for nearest with integer upscale factors, where its round((o + 0.5) / F - 0.5) is
//   PyTorch's floor(o / F).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "dnnl_graph.hpp"
#include "dnnl_loops.hpp"
#include "dnnl_window_gather.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::cpu::dnnl_detail {
namespace {

using i64 = std::int64_t;

/// A stretch [lo, hi) of the innermost output dimension and how a row fills it: a contiguous source run starting at
/// element `src` of the row's source (copy), that one source element repeated (splat), the fill value (fill), or
/// each element from its own table entry (gather).
struct segment {
    enum kind_t { copy, splat, fill, gather } kind;
    i64 lo, hi, src;
};

/// The innermost table (source offsets, -1 for fill) as segments: runs and repeats of at least 8 elements as copies
/// and splats (pad's interior, expand's broadcast innermost dimension), fill stretches, and the rest as gathers.
std::vector<segment> segments_of(const std::vector<i64>& t) {
    constexpr i64 min_len = 8;
    const auto n = static_cast<i64>(t.size());
    auto at = [&t](i64 j) { return t[static_cast<std::size_t>(j)]; };
    std::vector<segment> out;
    for (i64 j = 0; j < n;) {
        i64 run = j + 1, same = j + 1;
        if (at(j) < 0) {
            while (run < n && at(run) < 0) ++run;
            out.push_back({segment::fill, j, run, 0});
            j = run;
            continue;
        }
        while (run < n && at(run) == at(run - 1) + 1) ++run;
        while (same < n && at(same) == at(j)) ++same;
        if (std::max(run, same) - j >= min_len) {
            const bool copy = run >= same;
            out.push_back({copy ? segment::copy : segment::splat, j, copy ? run : same, at(j)});
            j = copy ? run : same;
        } else if (!out.empty() && out.back().kind == segment::gather && out.back().hi == j) {
            out.back().hi = ++j;
        } else {
            out.push_back({segment::gather, j, j + 1, 0});
            ++j;
        }
    }
    return out;
}

/// y[i_0, ..., i_{r-1}] = x[sum_d table[d][i_d]] (offsets in elements), or `fill` where any table entry is -1: the
/// outer tables give a row's source, the innermost table's segments fill the row.
template <class T>
struct gather_plan {
    const T* x;
    const dims& out;
    const std::vector<std::vector<i64>>& table;
    const std::vector<segment>& segments;
    const window_blocks& windows;
    T fill;

    /// The source row of the output row at outer index `index` (out.size() - 1 entries), nullptr where a table entry
    /// is -1 (the row lies outside the input: every element the fill).
    const T* source(const std::vector<i64>& index) const {
        i64 base = 0;
        for (std::size_t d = 0; d + 1 < out.size(); ++d) {
            const i64 t = table[d][static_cast<std::size_t>(index[d])];
            if (t < 0) return nullptr;
            base += t;
        }
        return x + base;
    }

    /// Elements [j0, j1) of the row whose source is `src` to o[0, j1 - j0), segment by segment (they are in order:
    /// from the first that ends past j0 to the last that starts before j1).
    void make(const T* src, T* o, i64 j0, i64 j1) const {
        if (src == nullptr) {
            splat_run(o, j1 - j0, fill);
            return;
        }
        const i64* last = table.back().data();
        const auto ends_before = [j0](const segment& s) { return s.hi <= j0; };
        auto first = std::partition_point(segments.begin(), segments.end(), ends_before);
        for (auto it = first; it != segments.end() && it->lo < j1; ++it) {
            const segment& s = *it;
            const i64 lo = std::max(s.lo, j0), hi = std::min(s.hi, j1);
            T* to = o + (lo - j0);
            switch (s.kind) {
                case segment::copy: std::copy(src + s.src + (lo - s.lo), src + s.src + (hi - s.lo), to); break;
                case segment::splat: splat_run(to, hi - lo, src[s.src]); break;
                case segment::fill: splat_run(to, hi - lo, fill); break;
                case segment::gather:
                    if constexpr (sizeof(T) == 4)
                        gather_u32(src, last, windows, to, lo, hi);
                    else
                        gather_u16(src, last, windows, to, lo, hi);
                    break;
            }
        }
    }

    /// A cursor over the flat output from element e (stream_flat): next(o, count) makes the next `count` elements,
    /// crossing rows, its outer index advanced one step a row.
    auto cursor_at(i64 e) const {
        const std::size_t outer = out.size() - 1;
        const i64 inner = out[outer];
        std::vector<i64> index(outer, 0);
        i64 rest = e / inner;
        for (std::size_t d = outer; d-- > 0;) {
            index[d] = rest % out[d];
            rest /= out[d];
        }
        const T* src = source(index);
        return [this, index = std::move(index), j = e % inner, inner, src](T* o, i64 count) mutable {
            while (count > 0) {
                const i64 k = std::min(count, inner - j);
                make(src, o, j, j + k);
                o += k;
                count -= k;
                if ((j += k) < inner) break;
                j = 0;
                for (std::size_t d = index.size(); d-- > 0;) {
                    if (++index[d] < out[d]) break;
                    index[d] = 0;
                }
                src = source(index);
            }
        };
    }
};

/// The index gather into y. Past the last-level cache, where at least half of a row is read from the source (copies
/// and gathers), the whole output is made in L1 blocks and streamed with its lines whole (stream_flat), unless most
/// of the row is gathers of 2-byte elements or scalar ones (no AVX-512F), which ran slower through the buffer than
/// straight (bf16 nearest 512 -> 768 with AVX-512BW's word permute: 26.5-27.9 ms streamed, 13.9-20.0 straight).
/// Otherwise row by row in pieces (for_each_piece), straight into y: rows mostly splats or fills (expand's broadcast
/// innermost dimension) ran 1.5x slower streamed on the Zen 4 VM (docs/performance.md).
template <class T>
void index_gather(const T* x, T* y, const dims& out, const std::vector<std::vector<i64>>& table,
                  const std::vector<segment>& segments, T fill) {
    const std::size_t outer = out.size() - 1;
    const i64 inner = out[outer];
    i64 n = 1;
    for (const i64 v : out) n *= v;
    const window_blocks windows = make_window_blocks({table.back().data()}, inner);
    const gather_plan<T> plan{x, out, table, segments, windows, fill};
    i64 gathered = 0, read = 0;  // a row's elements gathered one by one; read from the source (copies and gathers)
    for (const segment& s : segments) {
        gathered += s.kind == segment::gather ? s.hi - s.lo : 0;
        read += s.kind == segment::gather || s.kind == segment::copy ? s.hi - s.lo : 0;
    }
    const bool scalar_gathers = sizeof(T) != 4 || !window_gather_vectorised();
    const bool flat = 2 * read >= inner && !(scalar_gathers && 2 * gathered > inner);
    if (flat && stream_output(n * static_cast<i64>(sizeof(T)))) {
        stream_flat(y, n, [&plan](i64 e) { return plan.cursor_at(e); });
        return;
    }
    for_each_piece(out, loop_piece, [&](const std::vector<i64>& index, i64 j0, i64 j1) {
        i64 row_index = 0;
        for (std::size_t d = 0; d < outer; ++d) row_index = row_index * out[d] + index[d];
        plan.make(plan.source(index), y + row_index * inner + j0, j0, j1);
    });
}

/// Bilinear resampling of `planes` planes ih x iw to oh x ow with PyTorch's tables. Each output row is h0 * A + h1 * B,
/// A and B its two source rows resampled along the width (w0 * a[c0] + w1 * a[c1]): the direct formula's arithmetic
/// in its order, so the same values. A resampled source row is kept while the next output rows read it (upsampling
/// reads each two or three times), and the blend is a contiguous run the compiler vectorises. Items of 32 output
/// rows of a plane split over the OpenMP threads.
template <class T>
void bilinear(const T* x, T* y, i64 planes, i64 ih, i64 iw, const core::resample_axis& rows,
              const core::resample_axis& cols) {
    constexpr i64 block = 32;
    const auto oh = static_cast<i64>(rows.index0.size()), ow = static_cast<i64>(cols.index0.size());
    const i64 blocks = (oh + block - 1) / block;
    const i64 *c0 = cols.index0.data(), *c1 = cols.index1.data();
    const float* w1 = cols.lambda.data();
    const bool stream = stream_output(planes * oh * ow * static_cast<i64>(sizeof(T)));
    const window_blocks windows = make_window_blocks({c0, c1}, ow);
#pragma omp parallel
    {
        std::vector<float> ra(static_cast<std::size_t>(ow)), rb(static_cast<std::size_t>(ow));
        i64 ka = -1, kb = -1;  // the source rows (plane * ih + row) that ra and rb hold
        auto resample = [&](i64 k, std::vector<float>& dst) {
            lerp_gather(x + k * iw, c0, c1, w1, windows, dst.data(), 0, ow);
        };
#pragma omp for schedule(static)
        for (i64 item = 0; item < planes * blocks; ++item) {
            const i64 p = item / blocks, r0 = item % blocks * block, r1 = std::min(oh, r0 + block);
            for (i64 r = r0; r < r1; ++r) {
                const auto ri = static_cast<std::size_t>(r);
                const i64 a = p * ih + rows.index0[ri], b = p * ih + rows.index1[ri];
                if (ka != a && kb == a) {
                    std::swap(ra, rb);
                    std::swap(ka, kb);
                }
                if (ka != a) resample(ka = a, ra);
                if (kb != b && b == a) std::copy(ra.begin(), ra.end(), rb.begin());
                if (kb != b && b != a) resample(b, rb);
                kb = b;
                const float h1 = rows.lambda[ri], h0 = 1 - h1;
                const float *pa = ra.data(), *pb = rb.data();
                T* out = y + (p * oh + r) * ow;
                if constexpr (std::is_same_v<T, float>) {
                    if (blend_rows(pa, pb, h0, h1, out, ow, stream)) continue;
                } else {
                    if (blend_rows_bf16(pa, pb, h0, h1, out, ow, stream)) continue;
                }
                write_run(out, 0, ow, stream, [&](T* o, i64 lo, i64 hi) {
#pragma omp simd
                    for (i64 c = lo; c < hi; ++c) store(o, c - lo, h0 * pa[c] + h1 * pb[c]);
                });
            }
        }
        stream_fence();
    }
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
    const std::vector<segment> segments = segments_of(table.back());
    const std::size_t es = memory::data_type_size(md.data_type());
    if (es == 4) {
        const std::uint32_t f = *static_cast<const std::uint32_t*>(fill_dt.get_data_handle());
        steps_.push_back({{}, {}, [x, y, out, table, segments, f] {
                              index_gather(static_cast<const std::uint32_t*>(x.get_data_handle()),
                                           static_cast<std::uint32_t*>(y.get_data_handle()), out, table, segments, f);
                          }});
    } else if (es == 2) {
        const std::uint16_t f = *static_cast<const std::uint16_t*>(fill_dt.get_data_handle());
        steps_.push_back({{}, {}, [x, y, out, table, segments, f] {
                              index_gather(static_cast<const std::uint16_t*>(x.get_data_handle()),
                                           static_cast<std::uint16_t*>(y.get_data_handle()), out, table, segments, f);
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
    // bilinear: float32 and bf16 (each source row widened to float32, each output value rounded once), other data
    // types converted by reorders around the float32 loop
    const dims out = to_dims(la.output_shape);
    const i64 planes = x[0] * x[1], ih = x[2], iw = x[3];
    notes_.emplace_back("ridgeline bilinear loop");
    if (to_dnnl(dt_) == memory::data_type::bf16) {
        const memory src = to_layout(la.layer.inputs[0], plain_md(to_dims(x), memory::data_type::bf16));
        memory y(plain_md(out, memory::data_type::bf16), engine_);
        steps_.push_back({{}, {}, [src, y, rows, cols, planes, ih, iw] {
                              bilinear(static_cast<const std::uint16_t*>(src.get_data_handle()),
                                       static_cast<std::uint16_t*>(y.get_data_handle()), planes, ih, iw, rows, cols);
                          }});
        set_output(la.layer.name, y);
        return;
    }
    const memory src = to_layout(la.layer.inputs[0], plain_md(to_dims(x), memory::data_type::f32));
    memory y32(plain_md(out, memory::data_type::f32), engine_);
    steps_.push_back({{}, {}, [src, y32, rows, cols, planes, ih, iw] {
                          bilinear(static_cast<const float*>(src.get_data_handle()),
                                   static_cast<float*>(y32.get_data_handle()), planes, ih, iw, rows, cols);
                      }});
    set_output_from_f32(la.layer.name, y32);
}

}  // namespace ridgeline::cpu::dnnl_detail
