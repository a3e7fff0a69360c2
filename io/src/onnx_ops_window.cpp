// ONNX import, window ops: Conv, MaxPool/AveragePool (auto_pad, ceil_mode), GlobalAveragePool, BatchNormalization, Pad,
// Resize and Upsample.
#include <cmath>

#include "onnx_importer.hpp"

namespace ridgeline::io::onnx_detail {

std::array<std::int64_t, 4> importer::pads_of(const onnx::NodeProto& n, const core::shape& x,
                                              std::array<std::int64_t, 2> k, std::array<std::int64_t, 2> s,
                                              std::array<std::int64_t, 2> d) const {
    const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
    if (auto_pad == "VALID") return {0, 0, 0, 0};
    for (std::size_t i = 0; i < 2; ++i)
        if (k[i] < 1 || s[i] < 1 || d[i] < 1)
            throw unsupported{"kernel " + pair_text(k) + ", strides " + pair_text(s) + " and dilations " +
                              pair_text(d) + " must all be >= 1"};
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        std::array<std::int64_t, 4> p{};
        for (int i = 0; i < 2; ++i) {
            const auto a = static_cast<std::size_t>(i);
            const std::int64_t in = x[2 + a];
            const std::int64_t out = in / s[a] + (in % s[a] != 0);  // ceil(in / stride)
            // (out - 1) * stride + (k - 1) * dilation + 1 - in, checked: the attributes come from the file
            std::int64_t stride_span = 0, kernel_span = 0, need = 0;
            if (__builtin_mul_overflow(out - 1, s[a], &stride_span) ||
                __builtin_mul_overflow(k[a] - 1, d[a], &kernel_span) ||
                __builtin_add_overflow(stride_span, kernel_span, &need))
                throw unsupported{"auto_pad " + auto_pad + " needs more padding than fits in int64"};
            const std::int64_t total = std::max<std::int64_t>(0, need - (in - 1));
            const std::int64_t small = total / 2, large = total - total / 2;
            p[static_cast<std::size_t>(i)] = auto_pad == "SAME_UPPER" ? small : large;
            p[static_cast<std::size_t>(i) + 2] = auto_pad == "SAME_UPPER" ? large : small;
        }
        return p;
    }
    if (auto_pad != "NOTSET") throw unsupported{"auto_pad \"" + auto_pad + "\" is not supported"};
    const auto pads = attr_ints(n, "pads", {0, 0, 0, 0});
    if (pads.size() != 4) throw unsupported{"pads has " + std::to_string(pads.size()) + " values, expected 4 (2-D)"};
    return {pads[0], pads[1], pads[2], pads[3]};
}

std::array<std::int64_t, 2> importer::pair_attr(const onnx::NodeProto& n, const std::string& name,
                                                std::int64_t fallback) {
    const auto v = attr_ints(n, name, {fallback, fallback});
    if (v.size() != 2)
        throw unsupported{name + " has " + std::to_string(v.size()) + " values; only 2-D (two values) is supported"};
    return {v[0], v[1]};
}

std::int64_t importer::checked_or_unsupported(std::int64_t a, std::int64_t b, const std::string& what) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) throw unsupported{what + " does not fit in int64"};
    return r;
}

void importer::conv(const onnx::NodeProto& n) {
    const std::string x = activation(n, 0);
    const auto w = constant_input(n, 1);
    const core::shape& xs = shape_of(x);
    if (xs.rank() != 4)
        throw unsupported{"only 2-D convolutions (NCHW input) are supported; the input has rank " +
                          std::to_string(xs.rank())};
    if (w->dims.size() != 4 || w->integer)
        throw unsupported{"weight of shape " + w->shape_text() + " is not a 2-D convolution kernel"};
    const std::int64_t groups = attr_int(n, "group", 1);
    const std::array<std::int64_t, 2> k{w->dims[2], w->dims[3]};
    if (attr(n, "kernel_shape") && pair_attr(n, "kernel_shape", 0) != k)
        throw unsupported{"kernel_shape disagrees with the weight's shape " + w->shape_text()};
    const auto s = pair_attr(n, "strides", 1);
    const auto d = pair_attr(n, "dilations", 1);
    const auto p = pads_of(n, xs, k, s, d);
    const bool bias = has_input(n, 2);
    std::vector<std::pair<std::string, constant_ptr>> params{{"weight", w}};
    if (bias) params.emplace_back("bias", constant_input(n, 2));
    const core::op o =
        make("conv2d",
             {{"in_channels",
               std::to_string(checked_or_unsupported(w->dims[1], groups, "in_channels (weight dimension 1 x group)"))},
              {"out_channels", std::to_string(w->dims[0])},
              {"kernel_size", pair_text(k)},
              {"stride", pair_text(s)},
              {"padding", join_ints({p[0], p[1], p[2], p[3]})},
              {"dilation", pair_text(d)},
              {"groups", std::to_string(groups)},
              {"bias", bias ? "true" : "false"}},
             node_name(n));
    map_output(n.output(0), emit(n, o, {x}, params));
}

void importer::pool(const onnx::NodeProto& n, bool max) {
    only_first_output(n);
    const std::string x = activation(n, 0);
    const core::shape& xs = shape_of(x);
    if (xs.rank() != 4)
        throw unsupported{"only 2-D pooling (NCHW input) is supported; the input has rank " +
                          std::to_string(xs.rank())};
    if (!attr(n, "kernel_shape")) throw unsupported{"kernel_shape is missing"};
    const auto k = pair_attr(n, "kernel_shape", 0);
    const auto s = pair_attr(n, "strides", 1);
    const auto d = pair_attr(n, "dilations", 1);
    if (!max && d != std::array<std::int64_t, 2>{1, 1}) throw unsupported{"dilated average pooling is not supported"};
    const auto p = pads_of(n, xs, k, s, d);
    if (p[0] != p[2] || p[1] != p[3])
        throw unsupported{"asymmetric pads " + join_ints({p[0], p[1], p[2], p[3]}) +
                          " (top x left x bottom x right); ridgeline's pools pad symmetrically"};
    std::vector<core::attribute> a{
        {"kernel_size", pair_text(k)}, {"stride", pair_text(s)}, {"padding", pair_text({p[0], p[1]})}};
    if (max) a.push_back({"dilation", pair_text(d)});
    a.push_back({"ceil_mode", attr_int(n, "ceil_mode", 0) ? "true" : "false"});
    if (!max) a.push_back({"count_include_pad", attr_int(n, "count_include_pad", 0) ? "true" : "false"});
    map_output(n.output(0), emit(n, make(max ? "max_pool2d" : "avg_pool2d", a, node_name(n)), {x}));
}

void importer::global_avg_pool(const onnx::NodeProto& n) {
    const std::string x = activation(n, 0);
    if (shape_of(x).rank() != 4)
        throw unsupported{"only NCHW inputs are supported; the input has rank " + std::to_string(shape_of(x).rank())};
    map_output(n.output(0), emit(n, make("adaptive_avg_pool2d", {{"output_size", "1"}}, node_name(n)), {x}));
}

void importer::batch_norm(const onnx::NodeProto& n) {
    only_first_output(n);
    if (attr_int(n, "training_mode", 0)) throw unsupported{"training_mode=1; ridgeline models inference"};
    const std::string x = activation(n, 0);
    if (shape_of(x).rank() != 4)
        throw unsupported{"only NCHW inputs (BatchNorm2d) are supported; the input has rank " +
                          std::to_string(shape_of(x).rank())};
    const std::int64_t c = shape_of(x)[1];
    std::vector<std::pair<std::string, constant_ptr>> params{{"weight", constant_input(n, 1)},
                                                             {"bias", constant_input(n, 2)},
                                                             {"running_mean", constant_input(n, 3)},
                                                             {"running_var", constant_input(n, 4)}};
    const core::op o =
        make("batch_norm2d",
             {{"num_features", std::to_string(c)}, {"eps", number_text(attr_float(n, "epsilon", 1e-5))}}, node_name(n));
    map_output(n.output(0), emit(n, o, {x}, params));
}

}  // namespace ridgeline::io::onnx_detail

namespace ridgeline::io::onnx_detail {

namespace {
/// The attribute `name` of n, emptied (added when missing).
onnx::AttributeProto* fresh_attribute(onnx::NodeProto& n, const std::string& name) {
    for (int i = 0; i < n.attribute_size(); ++i)
        if (n.attribute(i).name() == name) {
            n.mutable_attribute()->DeleteSubrange(i, 1);
            break;
        }
    auto* a = n.add_attribute();
    a->set_name(name);
    return a;
}
void set_ints(onnx::NodeProto& n, const std::string& name, const std::vector<std::int64_t>& v) {
    auto* a = fresh_attribute(n, name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
}
void set_int(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
    auto* a = fresh_attribute(n, name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}
}  // namespace

void importer::pad(const onnx::NodeProto& n) {
    const std::string x = activation(n, 0);
    const core::shape& xs = shape_of(x);
    const std::string mode = attr_string(n, "mode", "constant");
    std::vector<std::int64_t> pads;
    double fill = 0;
    if (graph().opset < 11) {
        pads = attr_ints(n, "pads", {});
        fill = attr_float(n, "value", 0.0);
    } else {
        const auto p = constant_input(n, 1);
        if (!p->integer) throw unsupported{"pads are not integers"};
        pads = p->ints;
        if (has_input(n, 2)) fill = scalar_of(*constant_input(n, 2));
        if (has_input(n, 3)) {
            // opset 18: pads for the listed axes only (begins, then ends, in the order of `axes`)
            const auto a = constant_input(n, 3);
            if (!a->integer || pads.size() != 2 * a->ints.size())
                throw unsupported{"Pad axes " + a->shape_text() + " do not match pads " + join_ints(pads)};
            std::vector<std::int64_t> full(2 * xs.rank(), 0);
            const auto r = static_cast<std::int64_t>(xs.rank());
            for (std::size_t k = 0; k < a->ints.size(); ++k) {
                const std::int64_t axis = a->ints[k] < 0 ? a->ints[k] + r : a->ints[k];
                if (axis < 0 || axis >= r)
                    throw unsupported{"Pad axis " + std::to_string(a->ints[k]) + " is outside rank " + std::to_string(r)};
                if (std::count(a->ints.begin(), a->ints.end(), a->ints[k]) > 1 ||
                    std::count(a->ints.begin(), a->ints.end(), a->ints[k] < 0 ? a->ints[k] + r : a->ints[k] - r) > 0)
                    throw unsupported{"Pad axes " + join_ints(a->ints) + " name axis " + std::to_string(axis) + " twice"};
                full[static_cast<std::size_t>(axis)] = pads[k];
                full[static_cast<std::size_t>(axis + r)] = pads[k + a->ints.size()];
            }
            pads = full;
        }
    }
    if (pads.size() != 2 * xs.rank())
        throw unsupported{"pads " + join_ints(pads) + " do not have 2 x rank (" + std::to_string(2 * xs.rank()) +
                          ") entries"};
    if (std::all_of(pads.begin(), pads.end(), [](std::int64_t v) { return v == 0; })) {
        map_output(n.output(0), x);  // a Pad of nothing (PyTorch writes one before every AvgPool2d) is the input
        return;
    }
    if (mode != "constant" && mode != "reflect" && mode != "edge")
        throw unsupported{"Pad mode \"" + mode + "\"; ridgeline maps constant, reflect and edge"};
    if (std::any_of(pads.begin(), pads.end(), [](std::int64_t v) { return v < 0; }))
        throw unsupported{"Pad " + join_ints(pads) + " crops (a negative amount); ridgeline maps pads >= 0"};
    const bool spatial_zeros = mode == "constant" && fill == 0 && xs.rank() == 4 && pads[0] == 0 && pads[1] == 0 &&
                               pads[4] == 0 && pads[5] == 0;
    if (spatial_zeros) {
        // zeros around H and W read by one Conv or AveragePool without pads of its own: that op's padding
        // (AveragePool then counts the zeros, count_include_pad=1, as the Pad made them real elements)
        for (const char* op : {"Conv", "AveragePool"}) {
            const int j = only_reader(n.output(0), op);
            if (j < 0) continue;
            onnx::NodeProto r = graph().proto.graph().node(j);
            const auto own = attr_ints(r, "pads", {});
            const std::string auto_pad = attr_string(r, "auto_pad", "NOTSET");
            if (r.input(0) != n.output(0) || (auto_pad != "NOTSET" && auto_pad != "VALID") ||
                std::any_of(own.begin(), own.end(), [](std::int64_t v) { return v != 0; }))
                continue;
            r.set_input(0, n.input(0));
            auto* auto_pad_attr = fresh_attribute(r, "auto_pad");  // VALID would discard the pads below
            auto_pad_attr->set_type(onnx::AttributeProto::STRING);
            auto_pad_attr->set_s("NOTSET");
            set_ints(r, "pads", {pads[2], pads[3], pads[6], pads[7]});
            set_int(r, "count_include_pad", 1);
            if (std::string(op) == "Conv")
                conv(r);
            else
                pool(r, false);
            fuse(j);
            return;
        }
    }
    // a pad layer: ONNX lists all begins then all ends in axis order, PyTorch (before, after) pairs from the last
    // axis backwards; leading axes without padding are left out
    const std::size_t rank = xs.rank();
    std::size_t pairs = rank;
    while (pairs > 1 && pads[rank - pairs] == 0 && pads[2 * rank - pairs] == 0) --pairs;
    std::string amounts;
    for (std::size_t k = 0; k < pairs; ++k) {
        const std::size_t axis = rank - 1 - k;
        amounts += (k ? "x" : "") + std::to_string(pads[axis]) + "x" + std::to_string(pads[rank + axis]);
    }
    std::vector<core::attribute> attrs{{"pad", amounts}};
    if (mode != "constant") attrs.push_back({"mode", mode == "edge" ? "replicate" : "reflect"});
    if (fill != 0) attrs.push_back({"value", number_text(fill)});
    map_output(n.output(0), emit(n, make("pad", attrs, node_name(n)), {x}));
}

void importer::resize(const onnx::NodeProto& n) {
    // PyTorch's F.interpolate / nn.Upsample of an NCHW activation: nearest is exported as Resize with asymmetric
    // coordinates and floor rounding (Upsample before opset 10), bilinear as linear with pytorch_half_pixel or
    // half_pixel (align_corners=False) or align_corners; those are the interpolate layer's rules
    const std::string op = n.op_type();
    const std::string x = activation(n, 0);
    const core::shape& xs = shape_of(x);
    if (xs.rank() != 4) throw unsupported{op + " of a rank-" + std::to_string(xs.rank()) + " tensor; ridgeline maps NCHW"};
    const std::string mode = attr_string(n, "mode", "nearest");
    const bool upsample = op == "Upsample";
    const std::string coords = upsample || graph().opset < 11 ? std::string("asymmetric")
                                                       : attr_string(n, "coordinate_transformation_mode", "half_pixel");
    const std::string rounding = upsample || graph().opset < 11 ? std::string("floor")
                                                         : attr_string(n, "nearest_mode", "round_prefer_floor");
    if (attr_int(n, "antialias", 0) != 0) throw unsupported{op + " with antialias"};
    if (!attr_ints(n, "axes", {}).empty()) throw unsupported{op + " with axes (opset 18)"};
    if (const std::string policy = attr_string(n, "keep_aspect_ratio_policy", "stretch"); policy != "stretch")
        throw unsupported{op + " with keep_aspect_ratio_policy " + policy + " (opset 18); ridgeline maps stretch"};
    std::string kind;
    bool corners = false;
    if (mode == "nearest" && coords == "asymmetric" && rounding == "floor") {
        kind = "nearest";
    } else if (mode == "linear" && !upsample &&
               (coords == "pytorch_half_pixel" || coords == "half_pixel" || coords == "align_corners")) {
        kind = "bilinear";
        corners = coords == "align_corners";
    } else {
        throw unsupported{op + " mode " + mode + (upsample ? std::string() : " with " + coords + " coordinates") +
                          (mode == "nearest" ? ", rounding " + rounding : std::string()) +
                          "; ridgeline maps PyTorch's nearest (asymmetric, floor) and bilinear (half_pixel, "
                          "pytorch_half_pixel, align_corners)"};
    }
    // the output size: `sizes`, or floor(in * scale) from `scales` (an input from opset 9, an attribute before)
    std::vector<double> scales;
    std::vector<std::int64_t> sizes;
    const int scales_at = upsample || graph().opset < 11 ? 1 : 2;
    if (!upsample && graph().opset >= 11 && has_input(n, 3)) {
        const auto c = constant_input(n, 3);
        if (!c->integer) throw unsupported{op + " sizes are not integers"};
        if (c->absent) throw unsupported{op + " sizes are needed, but their external data is absent (imported by shape only)"};
        sizes = c->ints;
    }
    if (!sizes.empty() && has_input(n, scales_at) && constant_input(n, scales_at)->size() != 0)
        throw unsupported{op + " with both scales and sizes (ONNX allows one)"};
    if (sizes.empty() && has_input(n, scales_at)) {
        const auto c = constant_input(n, scales_at);
        if (c->absent) throw unsupported{op + " scales are needed, but their external data is absent (imported by shape only)"};
        for (std::size_t k = 0; k < c->size(); ++k)
            scales.push_back(c->integer ? static_cast<double>(c->ints[k]) : static_cast<double>(c->values[k]));
    }
    if (sizes.empty() && scales.empty())
        if (const auto* a = attr(n, "scales")) scales.assign(a->floats().begin(), a->floats().end());
    if (sizes.empty() && scales.empty()) throw unsupported{op + " without scales or sizes"};
    if (sizes.empty()) {
        if (scales.size() != 4) throw unsupported{op + " with " + std::to_string(scales.size()) + " scales for rank 4"};
        for (std::size_t k = 0; k < 4; ++k) {
            const double out = std::floor(static_cast<double>(xs[k]) * scales[k]);
            if (!(scales[k] > 0) || out < 1 || out > 1e15)
                throw unsupported{op + " scale " + number_text(scales[k]) + " of axis " + std::to_string(k) + " (size " +
                                  std::to_string(xs[k]) + ") gives an output size of " + number_text(out) +
                                  "; it must be 1 to 10^15"};
            // ONNX maps output o back through the given scale, interpolate through in / out: the same only when
            // in * scale is a whole number
            if (out != static_cast<double>(xs[k]) * scales[k])
                throw unsupported{op + " scale " + number_text(scales[k]) + " of axis " + std::to_string(k) + " (size " +
                                  std::to_string(xs[k]) + ") gives no whole output size; ridgeline's interpolate "
                                  "maps a size"};
            sizes.push_back(static_cast<std::int64_t>(out));
        }
    }
    if (sizes.size() != 4) throw unsupported{op + " sizes " + join_ints(sizes) + " are not 4 values"};
    if (sizes[0] != xs[0] || sizes[1] != xs[1])
        throw unsupported{op + " to " + dims_text(sizes) + " resizes N or C; ridgeline maps H and W"};
    if (kind == "bilinear" && coords == "pytorch_half_pixel" && (sizes[2] == 1 || sizes[3] == 1))
        throw unsupported{op + " to " + dims_text(sizes) + " with pytorch_half_pixel: an output size of 1 reads "
                          "coordinate 0 there, not PyTorch's centre"};
    std::vector<core::attribute> attrs{{"size", std::to_string(sizes[2]) + "x" + std::to_string(sizes[3])}};
    if (kind == "bilinear") attrs.push_back({"mode", "bilinear"});
    if (corners) attrs.push_back({"align_corners", "true"});
    map_output(n.output(0), emit(n, make("interpolate", attrs, node_name(n)), {x}));
}

void importer::reduce_mean(const onnx::NodeProto& n) {
    const std::string x = activation(n, 0);
    const core::shape& xs = shape_of(x);
    std::vector<std::int64_t> axes = attr_or_input_ints(n, "axes", 1, "axes");
    const auto r = static_cast<std::int64_t>(xs.rank());
    for (auto& a : axes) a = a < 0 ? a + r : a;
    std::sort(axes.begin(), axes.end());
    const bool keepdims = attr_int(n, "keepdims", 1) != 0;
    bool trailing = !axes.empty();
    for (std::size_t k = 0; k < axes.size(); ++k) trailing = trailing && axes[k] == r - static_cast<std::int64_t>(axes.size()) + static_cast<std::int64_t>(k);
    if (trailing && layer_norm_pattern(n, axes)) return;
    if (r != 4 || axes != std::vector<std::int64_t>{2, 3}) return reduce_node(n, "mean");
    const std::string pooled = emit(n, make("adaptive_avg_pool2d", {{"output_size", "1"}}, node_name(n)), {x});
    if (keepdims) {
        map_output(n.output(0), pooled);
        return;
    }
    map_output(n.output(0), emit(n, make("flatten", {{"start_dim", "1"}}, node_name(n)), {pooled}));
}

void importer::reduce_node(const onnx::NodeProto& n, const std::string& kind) {
    const std::string x = activation(n, 0);
    const std::vector<std::int64_t> axes = attr_or_input_ints(n, "axes", 1, "axes");
    if (axes.empty() && attr_int(n, "noop_with_empty_axes", 0) != 0) {  // ONNX: the input itself
        map_output(n.output(0), x);
        return;
    }
    std::vector<core::attribute> a;
    if (!axes.empty()) a.push_back({"dim", join_ints(axes)});  // none: every axis, as ONNX
    if (attr_int(n, "keepdims", 1) != 0) a.push_back({"keepdim", "true"});
    map_output(n.output(0), emit(n, make(kind, a, node_name(n)), {x}));
}

importer::slice_arguments importer::slice_args(const onnx::NodeProto& n) {
    slice_arguments s;
    if (graph().opset < 10) {
        s.starts = attr_ints(n, "starts", {});
        s.ends = attr_ints(n, "ends", {});
        s.axes = attr_ints(n, "axes", {});
    } else {
        auto ints_of = [&](int i) {
            const auto c = constant_input(n, i);
            if (!c->integer) throw unsupported{"input " + std::to_string(i) + " of Slice is not integer"};
            return c->ints;
        };
        s.starts = ints_of(1);
        s.ends = ints_of(2);
        if (has_input(n, 3)) s.axes = ints_of(3);
        if (has_input(n, 4)) s.steps = ints_of(4);
    }
    if (s.axes.empty())
        for (std::size_t k = 0; k < s.starts.size(); ++k) s.axes.push_back(static_cast<std::int64_t>(k));
    if (s.steps.empty()) s.steps.assign(s.starts.size(), 1);
    if (s.ends.size() != s.starts.size() || s.axes.size() != s.starts.size() || s.steps.size() != s.starts.size())
        throw unsupported{"starts, ends, axes and steps differ in length"};
    std::vector<std::int64_t> sorted = s.axes;  // as given: -1 and rank-1 are caught where the rank is known
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
        throw unsupported{"axes " + join_ints(s.axes) + " name an axis twice"};
    return s;
}

void importer::slice_node(const onnx::NodeProto& n) {
    std::string x = activation(n, 0);
    const core::shape xs = shape_of(x);
    const auto [starts, ends, axes, steps] = slice_args(n);
    const auto r = static_cast<std::int64_t>(xs.rank());
    bool any = false;
    std::set<std::int64_t> seen;
    for (std::size_t k = 0; k < starts.size(); ++k) {
        const std::int64_t a = axes[k] < 0 ? axes[k] + r : axes[k];
        if (!seen.insert(a).second) throw unsupported{"axes " + join_ints(axes) + " name an axis twice"};
        if (a < 0 || a >= r) throw unsupported{"axis " + std::to_string(axes[k]) + " is out of range"};
        if (steps[k] < 1) throw unsupported{"step " + std::to_string(steps[k]) + "; ridgeline's slice steps forward"};
        const std::int64_t d = xs[static_cast<std::size_t>(a)];
        // a whole axis (0 to the end, step 1) is no layer
        if ((starts[k] == 0 || starts[k] <= -d) && ends[k] >= d && steps[k] == 1) continue;
        std::vector<core::attribute> at{{"dim", std::to_string(a)}, {"start", std::to_string(starts[k])}};
        if (ends[k] < d) at.push_back({"end", std::to_string(ends[k])});
        if (steps[k] != 1) at.push_back({"step", std::to_string(steps[k])});
        x = emit(n, make("slice", at, node_name(n)), {x});
        any = true;
    }
    map_output(n.output(0), x);
    (void)any;
}

// ------------------------------------------------------------------ the ONNX op types converted here

void importer::add_window_converters(converter_map& table) {
    add_converter(table, "Conv", [](importer& i, const onnx::NodeProto& n, int) { i.conv(n); });
    add_converter(table, "BatchNormalization", [](importer& i, const onnx::NodeProto& n, int) { i.batch_norm(n); });
    add_converter(table, "MaxPool", [](importer& i, const onnx::NodeProto& n, int) { i.pool(n, true); });
    add_converter(table, "AveragePool", [](importer& i, const onnx::NodeProto& n, int) { i.pool(n, false); });
    add_converter(table, "GlobalAveragePool", [](importer& i, const onnx::NodeProto& n, int) { i.global_avg_pool(n); });
    add_converter(table, "Pad", [](importer& i, const onnx::NodeProto& n, int) { i.pad(n); });
    add_converter(table, "Resize", [](importer& i, const onnx::NodeProto& n, int) { i.resize(n); });
    add_converter(table, "Upsample", [](importer& i, const onnx::NodeProto& n, int) { i.resize(n); });
    add_converter(table, "ReduceMean", [](importer& i, const onnx::NodeProto& n, int) { i.reduce_mean(n); });
    add_converter(table, "ReduceSum", [](importer& i, const onnx::NodeProto& n, int) { i.reduce_node(n, "sum"); });
    add_converter(table, "ReduceMax", [](importer& i, const onnx::NodeProto& n, int) { i.reduce_node(n, "amax"); });
    add_converter(table, "Slice", [](importer& i, const onnx::NodeProto& n, int) { i.slice_node(n); });
}

}  // namespace ridgeline::io::onnx_detail
