// Copies that change a tensor's extent: pad (torch.nn.functional.pad), expand (Tensor.expand made contiguous) and
// interpolate (torch.nn.functional.interpolate, nearest and bilinear).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "op_helpers.hpp"
#include "ridgeline/core/format.hpp"

namespace ridgeline::core {

using detail::fail;

namespace {
/// "2x-1x4": a size list as written (shape's to_string rejects -1)
std::string shape_text(const std::vector<std::int64_t>& v) {
    std::string t;
    for (std::size_t i = 0; i < v.size(); ++i) t += (i ? "x" : "") + std::to_string(v[i]);
    return t;
}
std::string number_text(double v) { return significant(v, 6); }
}  // namespace

// ------------------------------------------------------------------ pad
pad pad::read(attribute_reader& r) {
    pad p;
    p.amounts = r.get_int_list("pad");
    if (p.amounts.empty() || p.amounts.size() % 2 != 0)
        r.fail("pad", "needs (before, after) pairs from the last dimension backwards, got " +
                          std::to_string(p.amounts.size()) + " value(s)");
    for (const auto a : p.amounts)
        if (a < 0)
            r.fail("pad", "has " + std::to_string(a) + ": every amount must be >= 0 (a negative pad crops; use slice)");
    const std::string m = r.get_word("mode", {"constant", "reflect", "replicate"}, "constant");
    p.mode = m == "reflect" ? mode_t::reflect : m == "replicate" ? mode_t::replicate : mode_t::constant;
    p.value = r.get_float("value", 0.0);
    if (!std::isfinite(p.value)) r.fail("value", "must be finite");
    if (p.value != 0.0 && p.mode != mode_t::constant) r.fail("value", "is only used by mode=constant");
    return p;
}

void pad::write(attribute_writer& w) const {
    w.add("pad", amounts);
    if (mode == mode_t::reflect) w.add_word("mode", "reflect");
    if (mode == mode_t::replicate) w.add_word("mode", "replicate");
    if (value != 0.0) w.add("value", value);
}

std::pair<std::int64_t, std::int64_t> pad::of_dim(std::size_t d, std::size_t rank) const {
    const std::size_t from_last = rank - 1 - d;  // pair index: 0 is the last dimension
    if (2 * from_last + 1 >= amounts.size()) return {0, 0};
    return {amounts[2 * from_last], amounts[2 * from_last + 1]};
}

std::vector<std::int64_t> pad::source_indices(std::size_t d, const shape& in) const {
    const auto [before, after] = of_dim(d, in.rank());
    const std::int64_t size = in[d];
    std::vector<std::int64_t> t;
    t.reserve(static_cast<std::size_t>(size + before + after));
    for (std::int64_t o = 0; o < size + before + after; ++o) {
        std::int64_t s = o - before;
        if (s < 0 || s >= size) {
            if (mode == mode_t::constant) s = -1;
            else if (mode == mode_t::replicate) s = s < 0 ? 0 : size - 1;
            else s = s < 0 ? -s : 2 * (size - 1) - s;  // reflect: x[1] mirrors x[-1] (amounts < size)
        }
        t.push_back(s);
    }
    return t;
}

shape pad::infer(const shapes& in, const std::string& where) const {
    shape out = in.at(0);
    const std::size_t rank = out.rank();
    if (amounts.size() > 2 * rank)
        fail(where, "pad has " + std::to_string(amounts.size() / 2) + " (before, after) pairs but the input " +
                        detail::describe(out) + " has only " + std::to_string(rank) + " dimensions");
    for (std::size_t d = 0; d < rank; ++d) {
        const auto [before, after] = of_dim(d, rank);
        if (mode == mode_t::reflect && (before >= out[d] || after >= out[d]))
            fail(where, "reflect padding " + std::to_string(before) + ", " + std::to_string(after) + " of dimension " +
                            std::to_string(d) + " must be less than its size " + std::to_string(out[d]));
        out[d] = checked::add(out[d], checked::add(before, after, "pad"), "pad output dimension");
    }
    (void)out.numel();  // throws overflow_error when the padded tensor's element count does not fit
    return out;
}

cost pad::work(const shapes& in, const shape& out, dtype dt) const {
    // the largest finite value of each type (fp16 65504; bf16 (2 - 2^-7) * 2^127; fp32 and tf32 FLT_MAX): a fill
    // beyond it would be an infinity in the tensor
    const double max_finite = dt == dtype::fp16 ? 65504.0 : dt == dtype::bf16 ? 3.3895313892515355e38 : 3.4028234663852886e38;
    if (std::fabs(value) > max_finite)
        throw invalid_layer("value " + number_text(value) + " is not finite in " + std::string(to_string(dt)) +
                            " (its largest value is " + number_text(max_finite) + ")");
    return detail::copy_work(in, out, dt);
}

// ------------------------------------------------------------------ expand
expand expand::read(attribute_reader& r) {
    expand e;
    e.size = r.get_int_list("size");
    if (e.size.empty()) r.fail("size", "is empty");
    for (const auto d : e.size)
        if (d < 1 && d != -1)
            r.fail("size", "has " + std::to_string(d) + ": every size must be >= 1, or -1 to keep the dimension");
    return e;
}

void expand::write(attribute_writer& w) const { w.add("size", size); }

shape expand::infer(const shapes& in, const std::string& where) const {
    const shape& x = in.at(0);
    if (size.size() < x.rank())
        fail(where, "size " + shape_text(size) + " has fewer dimensions than the input " + detail::describe(x));
    const std::size_t lead = size.size() - x.rank();
    std::vector<std::int64_t> out(size);
    for (std::size_t i = 0; i < size.size(); ++i) {
        if (i < lead) {
            if (size[i] == -1) fail(where, "size -1 at new leading dimension " + std::to_string(i) + " keeps nothing");
            continue;
        }
        const std::int64_t d = x[i - lead];
        if (size[i] == -1) out[i] = d;
        else if (d != 1 && d != size[i])
            fail(where, "cannot expand " + x.to_string() + " to " + shape_text(size) + " (dimension " +
                            std::to_string(i) + ": " + std::to_string(d) + " is not 1)");
    }
    shape o(out);
    (void)o.numel();
    return o;
}

std::vector<std::vector<std::int64_t>> expand::source_indices(const shape& in, const shape& out) const {
    const std::size_t lead = out.rank() - in.rank();
    std::vector<std::vector<std::int64_t>> t(out.rank());
    for (std::size_t d = 0; d < out.rank(); ++d) {
        const bool repeated = d < lead || in[d - lead] == 1;
        for (std::int64_t o = 0; o < out[d]; ++o) t[d].push_back(repeated ? 0 : o);
    }
    return t;
}

cost expand::work(const shapes& in, const shape& out, dtype dt) const { return detail::copy_work(in, out, dt); }

// ------------------------------------------------------------------ interpolate
interpolate interpolate::read(attribute_reader& r) {
    interpolate p;
    p.size = r.get_pair("size");
    detail::require_at_least(r, "size", p.size, 1);
    p.mode = r.get_word("mode", {"nearest", "bilinear"}, "nearest") == "bilinear" ? mode_t::bilinear : mode_t::nearest;
    p.align_corners = r.get_bool("align_corners", false);
    if (p.align_corners && p.mode == mode_t::nearest)
        r.fail("align_corners", "can only be set with mode=bilinear (as in PyTorch)");
    return p;
}

void interpolate::write(attribute_writer& w) const {
    w.add("size", size);
    if (mode == mode_t::bilinear) w.add_word("mode", "bilinear");
    if (align_corners) w.add("align_corners", true);
}

shape interpolate::infer(const shapes& in, const std::string& where) const {
    const shape& x = in.at(0);
    detail::expect_rank(x, 4, where, "NCHW");
    shape out{x[0], x[1], size.h, size.w};
    (void)out.numel();
    return out;
}

cost interpolate::work(const shapes& in, const shape& out, dtype dt) const {
    cost c = detail::copy_work(in, out, dt);
    if (mode == mode_t::bilinear) c.flops = checked::mul(out.numel(), 9, "interpolate flops");
    return c;
}

resample_axis resample_coordinates(const interpolate& op, std::int64_t in, std::int64_t out) {
    // ATen's UpSample.h: area_pixel_compute_scale / area_pixel_compute_source_index / nearest_idx, in float as
    // ATen computes them for float tensors (a size, not a scale_factor, was given)
    resample_axis a;
    const auto n = static_cast<std::size_t>(out);
    a.index0.resize(n);
    if (op.mode == interpolate::mode_t::nearest) {
        const float scale = static_cast<float>(in) / static_cast<float>(out);
        for (std::size_t o = 0; o < n; ++o) {
            const auto i = static_cast<std::int64_t>(std::floor(static_cast<float>(o) * scale));
            a.index0[o] = std::min(i, in - 1);
        }
        return a;
    }
    a.index1.resize(n);
    a.lambda.resize(n);
    const float scale = op.align_corners ? (out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f)
                                         : static_cast<float>(in) / static_cast<float>(out);
    for (std::size_t o = 0; o < n; ++o) {
        float src = op.align_corners ? scale * static_cast<float>(o) : scale * (static_cast<float>(o) + 0.5f) - 0.5f;
        if (src < 0) src = 0;
        const auto i0 = std::min(static_cast<std::int64_t>(src), in - 1);
        a.index0[o] = i0;
        a.index1[o] = i0 < in - 1 ? i0 + 1 : i0;
        a.lambda[o] = src - static_cast<float>(i0);
    }
    return a;
}

}  // namespace ridgeline::core
