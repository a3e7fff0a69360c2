// The oneDNN lowering (dnnl_graph.hpp): mean, sum and amax. oneDNN 2.6's reduction runs a jit kernel over the
// innermost dimensions, and its scalar reference (ref:any) for a reduction over an outer dimension (mean over dim 0 of
// 16384x8192: 1.5-2.3 s, 0.2-0.4 GB/s on a 2-core Zen 4 VM, against 17-21 GB/s for its jit kernel over dim -1). Where
// oneDNN would run its reference, float32 and bf16 run ridgeline's own loop ("ridgeline reduce loop"): the input's
// dimensions merged into alternating groups of kept and reduced ones (size-1 dimensions dropped), the innermost group
// a contiguous run, either reduced in 32 partial accumulators (a row reduction) or accumulated elementwise into a run
// of outputs, four input rows a pass (a column reduction), both loops the compiler vectorises; the outermost group
// split over the OpenMP threads (disjoint outputs where it is kept, partial results per thread combined after where it
// is reduced). Accumulation in float32 (as oneDNN's), the mean divided once at the end. Elsewhere oneDNN's reduction
// runs (its jit amax over the innermost dimension read 21.5 GB/s where this loop's NaN-propagating max, two compares
// and a select per element in 16-byte vectors, read 15.5).
#include <limits>
#include <string>

#include "dnnl_graph.hpp"
#include "dnnl_loops.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::cpu::dnnl_detail {
namespace {

using i64 = std::int64_t;

enum class reduce_kind { sum, mean, max };

/// The input's dimensions as alternating groups, outermost first: sizes, whether reduced, and element strides in the
/// input and in the output (0 for a reduced group).
struct reduce_plan {
    dims n, in_stride, out_stride;
    std::vector<bool> reduced;
    i64 outputs = 1, count = 1;  // output elements; input elements per output (the mean's divisor)
};

reduce_plan plan_of(const dims& d, const std::vector<bool>& r) {
    reduce_plan p;
    for (std::size_t k = 0; k < d.size(); ++k) {
        if (d[k] == 1) continue;
        if (!p.n.empty() && p.reduced.back() == r[k]) {
            p.n.back() *= d[k];
        } else {
            p.n.push_back(d[k]);
            p.reduced.push_back(r[k]);
        }
        (r[k] ? p.count : p.outputs) *= d[k];
    }
    p.in_stride.assign(p.n.size(), 1);
    p.out_stride.assign(p.n.size(), 0);
    i64 in = 1, out = 1;
    for (std::size_t g = p.n.size(); g-- > 0;) {
        p.in_stride[g] = in;
        in *= p.n[g];
        if (!p.reduced[g]) {
            p.out_stride[g] = out;
            out *= p.n[g];
        }
    }
    return p;
}

template <reduce_kind K>
constexpr float identity() {
    return K == reduce_kind::max ? -std::numeric_limits<float>::infinity() : 0.0f;
}

/// acc op v: a sum, or a max that keeps a NaN once met (torch.amax propagates NaN).
template <reduce_kind K, class V>
RIDGELINE_LOOP_INLINE V combine(V acc, V v) {
    if constexpr (K == reduce_kind::max)
        return v > acc || v != v ? v : acc;
    else
        return acc + v;
}

/// Group g of the plan over its indices [lo, hi), its input at x, its outputs' accumulators at acc (compiled for the
/// widest vectors the CPU has: RIDGELINE_LOOP_CLONES).
template <reduce_kind K, class T>
RIDGELINE_LOOP_CLONES void reduce_group(const reduce_plan& p, std::size_t g, const T* x, float* acc, i64 lo, i64 hi) {
    if (g + 1 == p.n.size()) {
        if (p.reduced[g]) {
            const float run = fold_run(
                x + lo, hi - lo, identity<K>(), [](auto v) RIDGELINE_LAMBDA_INLINE { return v; },
                [](auto a, auto v) RIDGELINE_LAMBDA_INLINE { return combine<K>(a, v); });
            acc[0] = combine<K>(acc[0], run);
            return;
        }
#pragma omp simd
        for (i64 j = lo; j < hi; ++j) acc[j] = combine<K>(acc[j], load(x, j));
        return;
    }
    if (p.reduced[g] && g + 2 == p.n.size()) {  // a column reduction: four rows a pass over the accumulators
        const i64 m = p.n[g + 1], s = p.in_stride[g];
        for (; lo + 4 <= hi; lo += 4) {
            const T* r = x + lo * s;
#pragma omp simd
            for (i64 j = 0; j < m; ++j)
                acc[j] = combine<K>(acc[j], combine<K>(combine<K>(load(r, j), load(r + s, j)),
                                                       combine<K>(load(r + 2 * s, j), load(r + 3 * s, j))));
        }
    }
    for (i64 i = lo; i < hi; ++i)
        reduce_group<K>(p, g + 1, x + i * p.in_stride[g], acc + i * p.out_stride[g], 0, p.n[g + 1]);
}

/// The reduction of x into y (p.outputs elements), in float32 accumulators: y itself for float32, else a buffer.
template <reduce_kind K, class T>
void reduce_loop(const reduce_plan& p, const T* x, T* y) {
    std::vector<float> buffer(std::is_same_v<T, float> ? 0 : static_cast<std::size_t>(p.outputs));
    float* acc = std::is_same_v<T, float> ? reinterpret_cast<float*>(y) : buffer.data();
    std::vector<std::vector<float>> partial;  // per thread, where the outermost group is reduced
#pragma omp parallel
    {
        const i64 t = omp_get_thread_num(), threads = omp_get_num_threads();
        const i64 lo = p.n[0] * t / threads, hi = p.n[0] * (t + 1) / threads;
#pragma omp single
        partial.assign(p.reduced[0] ? static_cast<std::size_t>(threads) : 0, {});
        if (!p.reduced[0]) {  // disjoint outputs: accumulate in place
            std::fill(acc + lo * p.out_stride[0], acc + hi * p.out_stride[0], identity<K>());
            reduce_group<K>(p, 0, x, acc, lo, hi);
        } else {
            std::vector<float>& mine = partial[static_cast<std::size_t>(t)];
            mine.assign(static_cast<std::size_t>(p.outputs), identity<K>());
            reduce_group<K>(p, 0, x, mine.data(), lo, hi);
#pragma omp barrier
#pragma omp for schedule(static)
            for (i64 j = 0; j < p.outputs; ++j) {
                float v = identity<K>();
                for (const auto& q : partial) v = combine<K>(v, q[static_cast<std::size_t>(j)]);
                acc[j] = v;
            }
        }
    }
    if (std::is_same_v<T, float> && K != reduce_kind::mean) return;  // y holds the result
    const float count = static_cast<float>(p.count);
#pragma omp parallel for schedule(static)
    for (i64 j = 0; j < p.outputs; ++j) store(y, j, K == reduce_kind::mean ? acc[j] / count : acc[j]);
}

template <class T>
void reduce_as(reduce_kind k, const reduce_plan& p, const void* x, void* y) {
    const auto* xp = static_cast<const T*>(x);
    auto* yp = static_cast<T*>(y);
    if (k == reduce_kind::sum) reduce_loop<reduce_kind::sum>(p, xp, yp);
    if (k == reduce_kind::mean) reduce_loop<reduce_kind::mean>(p, xp, yp);
    if (k == reduce_kind::max) reduce_loop<reduce_kind::max>(p, xp, yp);
}

}  // namespace

void dnnl_graph::reduce(const core::layer_analysis& la, dnnl::algorithm alg, const std::vector<std::int64_t>& dim) {
    const memory src = dense(la.layer.inputs[0]);
    const dims in = src.get_desc().dims();
    dims kd = in;  // the output with keepdim: oneDNN's reduction keeps the rank
    const auto r = core::reduced_dims(dim, kd.size(), core::where(la.layer));
    for (std::size_t k = 0; k < kd.size(); ++k)
        if (r[k]) kd[k] = 1;
    const auto dt = src.get_desc().data_type();
    if (kd == in) {
        // only dimensions of size 1 reduced: each output is its one input (oneDNN refuses such a reduction)
        set_output(la.layer.name, memory(plain_md(to_dims(la.output_shape), dt), engine_, src.get_data_handle()), false,
                   true);
        notes_.emplace_back("view (reduces dimensions of size 1)");
        return;
    }
    memory dst(plain_md(kd, dt), engine_);
    const dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(alg, src.get_desc(), dst.get_desc(), 0.0f, 0.0f),
                                             attr(), engine_);
    const bool own = (dt == memory::data_type::f32 || dt == memory::data_type::bf16) &&
                     std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
    if (own) {  // oneDNN has no jit kernel for this reduction
        const reduce_plan p = plan_of(in, r);
        const reduce_kind k = alg == dnnl::algorithm::reduction_max    ? reduce_kind::max
                              : alg == dnnl::algorithm::reduction_mean ? reduce_kind::mean
                                                                       : reduce_kind::sum;
        steps_.push_back({{}, {}, [src, dst, p, k, dt] {
                              if (dt == memory::data_type::f32)
                                  reduce_as<float>(k, p, src.get_data_handle(), dst.get_data_handle());
                              else
                                  reduce_as<std::uint16_t>(k, p, src.get_data_handle(), dst.get_data_handle());
                          }});
        notes_.emplace_back("ridgeline reduce loop");
    } else {
        record(pd);
        steps_.push_back({dnnl::reduction(pd),
                          {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad(pd)}},
                          {}});
    }
    keep_.push_back(dst);
    // without keepdim the 1s go: the same elements in the same order
    set_output(la.layer.name, memory(plain_md(to_dims(la.output_shape), dt), engine_, dst.get_data_handle()));
}

void dnnl_graph::add(const core::layer_analysis& la, const core::mean_op& op) {
    reduce(la, dnnl::algorithm::reduction_mean, op.dim);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::sum_op& op) {
    reduce(la, dnnl::algorithm::reduction_sum, op.dim);
}

void dnnl_graph::add(const core::layer_analysis& la, const core::amax& op) {
    reduce(la, dnnl::algorithm::reduction_max, op.dim);
}

}  // namespace ridgeline::cpu::dnnl_detail
