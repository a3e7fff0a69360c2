// The constant-folding rules of the ONNX importer, one member function per op or family, and their table
// (fold_rules(): the op types that fold, each rule's input count and whether it runs before its inputs are known).
// Each has ONNX's semantics (numpy broadcasting, C integer division, a Cast to an integer truncates); a rule
// returns false, or throws not_foldable, when the node is no constant. The driver is onnx_fold.cpp.
#include "onnx_importer.hpp"

#include <functional>

namespace ridgeline::io::onnx_detail {

namespace {

/// Largest constant one node may fold into (16 Mi elements, 64 MiB as float), and the most all folded nodes
/// of a file may make together (64 Mi): an Expand or ConstantOfShape beyond them is left to the importer,
/// which says what it cannot map. Shape arithmetic is a few elements; a file that asks for more is hostile.
constexpr std::int64_t max_folded_elements = std::int64_t{1} << 24;
constexpr std::int64_t max_float_expand = std::int64_t{1} << 20;  // a float Expand of computed data, materialised

std::int64_t numel(const std::vector<std::int64_t>& dims) {
    std::int64_t n = 1;
    for (auto d : dims) {
        if (d < 0 || (d > 0 && n > max_folded_elements / d)) throw not_foldable{};
        n *= d;
    }
    if (n > max_folded_elements) throw not_foldable{};
    return n;
}

double at(const constant& c, std::size_t i) {
    return c.integer ? static_cast<double>(c.ints[i]) : static_cast<double>(c.values[i]);
}

std::shared_ptr<constant> make_like(bool integer, std::vector<std::int64_t> dims, const std::string& origin) {
    auto c = std::make_shared<constant>();
    c->integer = integer;
    c->dims = std::move(dims);
    c->origin = origin;
    const auto n = static_cast<std::size_t>(numel(c->dims));
    if (integer)
        c->ints.resize(n);
    else
        c->values.resize(n);
    return c;
}

void put(constant& c, std::size_t i, double v) {
    if (c.integer) {
        if (!std::isfinite(v) || std::fabs(v) > 9.2e18) throw not_foldable{};
        c.ints[i] = static_cast<std::int64_t>(v);
    } else
        c.values[i] = static_cast<float>(v);
}

/// Element j of x into element i of c; integers copied exactly (INT64_MAX, PyTorch's "to the end" in Slice,
/// does not survive a double).
void copy_elem(constant& c, std::size_t i, const constant& x, std::size_t j) {
    if (c.integer && x.integer)
        c.ints[i] = x.ints[j];
    else
        put(c, i, at(x, j));
}

/// numpy broadcasting of several shapes (ONNX "Broadcasting in ONNX", multidirectional).
std::vector<std::int64_t> broadcast(const std::vector<const std::vector<std::int64_t>*>& shapes) {
    std::size_t rank = 0;
    for (const auto* s : shapes) rank = std::max(rank, s->size());
    std::vector<std::int64_t> out(rank, 1);
    for (const auto* s : shapes)
        for (std::size_t i = 0; i < s->size(); ++i) {
            std::int64_t& o = out[rank - s->size() + i];
            const std::int64_t d = (*s)[i];
            if (d == o || d == 1) continue;
            if (o != 1) throw not_foldable{};
            o = d;
        }
    return out;
}

/// For every element of `out` (row-major), the index into a tensor of shape `in` broadcast to it.
std::vector<std::size_t> broadcast_index(const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out) {
    const std::size_t rank = out.size(), n = static_cast<std::size_t>(numel(out));
    if (in == out) {  // no broadcast: element k is element k
        std::vector<std::size_t> idx(n);
        for (std::size_t k = 0; k < n; ++k) idx[k] = k;
        return idx;
    }
    std::vector<std::int64_t> stride(rank, 0);
    std::int64_t s = 1;
    for (std::size_t i = in.size(); i-- > 0;) {
        const std::size_t o = rank - in.size() + i;
        stride[o] = in[i] == 1 ? 0 : s;
        s *= in[i];
    }
    std::vector<std::size_t> idx(n);
    std::vector<std::int64_t> pos(rank, 0);
    std::int64_t src = 0;
    for (std::size_t k = 0; k < n; ++k) {
        idx[k] = static_cast<std::size_t>(src);
        for (std::size_t i = rank; i-- > 0;) {
            src += stride[i];
            if (++pos[i] < out[i]) break;
            src -= stride[i] * pos[i];
            pos[i] = 0;
        }
    }
    return idx;
}

std::int64_t normalise_axis(std::int64_t axis, std::size_t rank) {
    const auto r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r) throw not_foldable{};
    return axis < 0 ? axis + r : axis;
}

}  // namespace

bool importer::fold_constant(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    constant_node(n);
    return true;
}

bool importer::fold_shape(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    const std::string& op = args.n.op_type();
    if (n.input_size() < 1 || n.input(0).empty()) return false;
    const auto dims = static_dims(n.input(0));
    if (op == "Size") {
        auto c = make_like(true, {}, n.output(0));
        std::int64_t count = 1;  // the input's size, not an output: no folding cap
        for (auto d : dims)
            if (d < 0 || __builtin_mul_overflow(count, d, &count)) return false;
        c->ints[0] = count;
        consts_.values[n.output(0)] = c;
        return true;
    }
    const auto r = static_cast<std::int64_t>(dims.size());
    std::int64_t start = attr_int(n, "start", 0), end = attr_int(n, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<std::int64_t>(start, 0, r);
    end = std::clamp<std::int64_t>(end, start, r);
    auto c = make_like(true, {end - start}, n.output(0));
    std::copy(dims.begin() + start, dims.begin() + end, c->ints.begin());
    consts_.values[n.output(0)] = c;
    return true;
}

bool importer::fold_identity(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    pass_through(n);
    return true;
}

bool importer::fold_transpose(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    transpose(n);
    return true;
}

bool importer::fold_cast(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    const std::string& out = args.n.output(0);
    const auto& in = args.in;
    const auto x = in(0);
    const int to = static_cast<int>(attr_int(n, "to", 0));
    if (!is_float_type(to) && !is_int_type(to)) return false;
    auto c = make_like(!is_float_type(to), x->dims, out);
    for (std::size_t k = 0; k < x->size(); ++k) {
        const double v = at(*x, k);
        if (to == onnx::TensorProto::BOOL)
            c->ints[k] = v != 0;
        else if (c->integer) {
            std::int64_t i = 0;
            if (x->integer)
                i = x->ints[k];  // exact
            else if (!std::isfinite(v) || std::fabs(v) > 9.2e18)
                return false;
            else
                i = static_cast<std::int64_t>(std::trunc(v));
            // to a narrower integer: wraps, as a C cast (ONNX Cast); int64 -> uint8 of -1 is 255
            using tp = onnx::TensorProto;
            switch (to) {
                case tp::INT8: i = static_cast<std::int8_t>(i); break;
                case tp::UINT8: i = static_cast<std::uint8_t>(i); break;
                case tp::INT16: i = static_cast<std::int16_t>(i); break;
                case tp::UINT16: i = static_cast<std::uint16_t>(i); break;
                case tp::INT32: i = static_cast<std::int32_t>(i); break;
                case tp::UINT32: i = static_cast<std::uint32_t>(i); break;
                default: break;  // INT64; UINT64 beyond INT64_MAX is not a shape
            }
            c->ints[k] = i;
        } else
            c->values[k] = static_cast<float>(v);
    }
    consts_.values[out] = c;
    return true;
}

bool importer::fold_gather(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    const std::string& out = args.n.output(0);
    const auto& in = args.in;
    const auto data = in(0), idx = in(1);
    if (!idx->integer || data->dims.empty()) return false;
    // rows of a float parameter [num, dim] by an index map: an embedding holding its ids (importer::gather), so
    // that the table counts as the parameter it is, not its gathered copy as a buffer
    if (data->initializer && !data->integer && data->dims.size() == 2 && !idx->dims.empty() &&
        normalise_axis(attr_int(n, "axis", 0), 2) == 0)
        return false;
    const std::size_t axis = static_cast<std::size_t>(normalise_axis(attr_int(n, "axis", 0), data->dims.size()));
    std::vector<std::int64_t> dims(data->dims.begin(), data->dims.begin() + static_cast<std::ptrdiff_t>(axis));
    dims.insert(dims.end(), idx->dims.begin(), idx->dims.end());
    dims.insert(dims.end(), data->dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, data->dims.end());
    std::int64_t outer = 1, inner = 1;
    for (std::size_t k = 0; k < axis; ++k) outer *= data->dims[k];
    for (std::size_t k = axis + 1; k < data->dims.size(); ++k) inner *= data->dims[k];
    const std::int64_t extent = data->dims[axis];
    auto c = make_like(data->integer, dims, out);
    std::size_t o = 0;
    for (std::int64_t a = 0; a < outer; ++a)
        for (auto j : idx->ints) {
            if (j < -extent || j >= extent) return false;
            if (j < 0) j += extent;
            for (std::int64_t b = 0; b < inner; ++b)
                copy_elem(*c, o++, *data, static_cast<std::size_t>((a * extent + j) * inner + b));
        }
    consts_.values[out] = c;
    return true;
}

bool importer::fold_squeeze(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    const std::string& op = args.n.op_type();
    const std::string& out = args.n.output(0);
    const auto& in = args.in;
    const auto x = in(0);
    std::vector<std::int64_t> axes = attr_ints(n, "axes", {});
    if (has_input(n, 1)) {
        if (!in(1)->integer) return false;
        axes = in(1)->ints;
    }
    std::vector<std::int64_t> dims = x->dims;
    if (op == "Unsqueeze") {
        const std::size_t rank = dims.size() + axes.size();
        for (auto& a : axes) a = normalise_axis(a, rank);
        std::sort(axes.begin(), axes.end());
        if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return false;
        for (auto a : axes) dims.insert(dims.begin() + a, 1);
    } else {
        std::vector<bool> drop(dims.size(), axes.empty());
        for (auto a : axes) {
            const auto k = static_cast<std::size_t>(normalise_axis(a, dims.size()));
            if (dims[k] != 1) return false;
            drop[k] = true;
        }
        std::vector<std::int64_t> kept;
        for (std::size_t k = 0; k < dims.size(); ++k)
            if (!drop[k] || dims[k] != 1) kept.push_back(dims[k]);
        dims = kept;
    }
    auto c = derived(*x, "");
    c->dims = dims;
    c->origin = out;
    consts_.values[out] = c;
    return true;
}

bool importer::fold_reshape(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    const std::string& op = args.n.op_type();
    const std::string& out = args.n.output(0);
    const auto& in = args.in;
    const auto x = in(0);
    const std::int64_t total = numel(x->dims);
    std::vector<std::int64_t> dims;
    if (op == "Flatten") {
        const auto axis = attr_int(n, "axis", 1);
        const auto r = static_cast<std::int64_t>(x->dims.size());
        const std::int64_t a = axis < 0 ? axis + r : axis;
        if (a < 0 || a > r) return false;
        std::int64_t rows = 1;
        for (std::int64_t k = 0; k < a; ++k) rows *= x->dims[static_cast<std::size_t>(k)];
        dims = {rows, rows == 0 ? 0 : total / rows};
    } else {
        const auto s = in(1);
        if (!s->integer) return false;
        dims = s->ints;
        const bool allowzero = attr_int(n, "allowzero", 0) != 0;
        std::int64_t known_product = 1;
        int infer = -1;
        for (std::size_t k = 0; k < dims.size(); ++k) {
            if (dims[k] == 0 && !allowzero) {
                if (k >= x->dims.size()) return false;
                dims[k] = x->dims[k];
            }
            if (dims[k] == -1) {
                if (infer >= 0) return false;
                infer = static_cast<int>(k);
            } else if (dims[k] < 0)
                return false;
            else
                known_product = checked_or_unsupported(known_product, dims[k], "reshape");
        }
        if (infer >= 0) {
            if (known_product == 0 || total % known_product) return false;
            dims[static_cast<std::size_t>(infer)] = total / known_product;
        }
    }
    if (numel(dims) != total) return false;
    auto c = derived(*x, "");
    c->dims = dims;
    c->origin = out;
    consts_.values[out] = c;
    return true;
}

bool importer::fold_concat(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    const std::string& out = args.n.output(0);
    const auto& in = args.in;
    if (!attr(n, "axis") || n.input_size() < 1) return false;
    std::vector<constant_ptr> xs;
    for (int k = 0; k < n.input_size(); ++k) xs.push_back(in(k));
    const bool integer = xs[0]->integer;
    const std::size_t rank = xs[0]->dims.size();
    const auto axis = static_cast<std::size_t>(normalise_axis(attr_int(n, "axis", 0), rank));
    std::vector<std::int64_t> dims = xs[0]->dims;
    dims[axis] = 0;
    for (const auto& x : xs) {
        if (x->integer != integer || x->dims.size() != rank) return false;
        for (std::size_t k = 0; k < rank; ++k)
            if (k != axis && x->dims[k] != dims[k]) return false;
        dims[axis] += x->dims[axis];
    }
    std::int64_t outer = 1, inner = 1;
    for (std::size_t k = 0; k < axis; ++k) outer *= dims[k];
    for (std::size_t k = axis + 1; k < rank; ++k) inner *= dims[k];
    auto c = make_like(integer, dims, out);
    std::size_t o = 0;
    for (std::int64_t a = 0; a < outer; ++a)
        for (const auto& x : xs) {
            const std::int64_t run = x->dims[axis] * inner;
            for (std::int64_t b = 0; b < run; ++b) copy_elem(*c, o++, *x, static_cast<std::size_t>(a * run + b));
        }
    consts_.values[out] = c;
    return true;
}

bool importer::fold_slice(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    const std::string& out = args.n.output(0);
    const auto& in = args.in;
    const auto x = in(0);
    const std::size_t rank = x->dims.size();
    const auto [starts, ends, axes, steps] = slice_args(n);
    std::vector<std::int64_t> begin(rank, 0), step(rank, 1), dims = x->dims;
    for (std::size_t k = 0; k < starts.size(); ++k) {
        const auto a = static_cast<std::size_t>(normalise_axis(axes[k], rank));
        const std::int64_t d = x->dims[a], s = steps[k];
        if (s == 0 || s == std::numeric_limits<std::int64_t>::min()) return false;
        // ONNX Slice: negative starts/ends count from the end, then clamp to [0, d] (step > 0) or
        // [-1, d - 1] (step < 0)
        std::int64_t b = starts[k] < 0 ? std::max<std::int64_t>(starts[k], -d) + d : starts[k];
        std::int64_t e = ends[k] < 0 ? std::max<std::int64_t>(ends[k], -d - 1) + d : ends[k];
        if (s > 0) {
            b = std::clamp<std::int64_t>(b, 0, d);
            e = std::clamp<std::int64_t>(e, 0, d);
            dims[a] = e > b ? (e - b - 1) / s + 1 : 0;
        } else {
            b = std::clamp<std::int64_t>(b, -1, d - 1);
            e = std::clamp<std::int64_t>(e, -1, d - 1);
            dims[a] = b > e ? (b - e - 1) / -s + 1 : 0;
        }
        begin[a] = b;
        step[a] = s;
    }
    std::vector<std::int64_t> stride(rank, 1);
    for (std::size_t k = rank; k-- > 1;) stride[k - 1] = stride[k] * x->dims[k];
    auto c = make_like(x->integer, dims, out);
    std::vector<std::int64_t> pos(rank, 0);
    for (std::size_t o = 0; o < c->size(); ++o) {
        std::int64_t src = 0;
        for (std::size_t k = 0; k < rank; ++k) src += (begin[k] + pos[k] * step[k]) * stride[k];
        copy_elem(*c, o, *x, static_cast<std::size_t>(src));
        for (std::size_t k = rank; k-- > 0;) {
            if (++pos[k] < dims[k]) break;
            pos[k] = 0;
        }
    }
    consts_.values[out] = c;
    return true;
}

bool importer::fold_range(const fold_args& args) {
    const std::string& out = args.n.output(0);
    const auto& in = args.in;
    const auto s = in(0), l = in(1), d = in(2);
    if (s->size() != 1 || l->size() != 1 || d->size() != 1 || s->integer != l->integer) return false;
    const double start = at(*s, 0), limit = at(*l, 0), delta = at(*d, 0);
    if (delta == 0) return false;
    const double count = std::max(0.0, std::ceil((limit - start) / delta));
    if (count > static_cast<double>(max_folded_elements)) return false;
    auto c = make_like(s->integer, {static_cast<std::int64_t>(count)}, out);
    for (std::size_t k = 0; k < c->size(); ++k) put(*c, k, start + static_cast<double>(k) * delta);
    consts_.values[out] = c;
    return true;
}

bool importer::fold_constant_of_shape(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    const std::string& op = args.n.op_type();
    const std::string& out = args.n.output(0);
    const auto& in = args.in;
    const auto s = in(op == "Expand" ? 1 : 0);
    if (!s->integer) return false;
    // Expand of a parameter (ViT's class token to the batch) is not materialised: the importer holds the
    // tensor and broadcasts it, so it counts its own size. Integer Expands are shape arithmetic
    // (torch.expand), and a float one of data computed in the graph folds too (Swin's shifted-window mask
    // fills slices of a zeros tensor with an expanded constant, then ScatterND)
    if (op == "Expand" && !in(0)->integer && in(0)->initializer) return false;
    constant_ptr fill;
    if (op == "Expand")
        fill = in(0);
    else if (const auto* v = attr(n, "value"))
        fill = decode(v->t(), out);
    else {
        auto zero = make_like(false, {1}, out);
        fill = zero;
    }
    if (fill->size() < 1) return false;
    std::vector<std::int64_t> dims = s->ints;
    if (op == "Expand") dims = broadcast({&fill->dims, &s->ints});
    // sized before it is made: past the file's cap nothing large is computed only to be thrown away (40
    // Expands of 16 Mi elements once took 18 s), and a float Expand of computed data folds up to 1 Mi
    // elements (Swin's mask slices have 3,136 at 224x224); larger ones are held and broadcast
    const std::int64_t made = numel(dims);
    if (made > max_small_fold && consts_.folded_total + made > max_folded_total) return false;
    if (op == "Expand" && !fill->integer && made > max_float_expand) return false;
    auto c = make_like(fill->integer, dims, out);
    const auto idx = op == "Expand" ? broadcast_index(fill->dims, dims) : std::vector<std::size_t>(c->size(), 0);
    for (std::size_t k = 0; k < c->size(); ++k) copy_elem(*c, k, *fill, idx[k]);
    consts_.values[out] = c;
    return true;
}

bool importer::fold_scatter_nd(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    const std::string& out = args.n.output(0);
    const auto& in = args.in;
    // data with slices replaced: updates[i, ...] goes to data[indices[i, 0..k), ...] (no reduction: opset 16's
    // `reduction` other than none is no constant here). Swin's shifted-window mask is built this way.
    if (attr_string(n, "reduction", "none") != "none") return false;
    const auto data = in(0), indices = in(1), updates = in(2);
    if (!indices->integer || data->integer != updates->integer || indices->dims.empty()) return false;
    const std::size_t r = data->dims.size();
    const auto k = static_cast<std::size_t>(indices->dims.back());
    if (k < 1 || k > r) return false;
    std::vector<std::int64_t> want(indices->dims.begin(), indices->dims.end() - 1);
    want.insert(want.end(), data->dims.begin() + static_cast<std::ptrdiff_t>(k), data->dims.end());
    if (updates->dims != want) return false;
    std::int64_t slice = 1;
    for (std::size_t d = k; d < r; ++d) slice *= data->dims[d];
    std::vector<std::int64_t> stride(k, slice);
    for (std::size_t d = k - 1; d-- > 0;) stride[d] = stride[d + 1] * data->dims[d + 1];
    auto c = make_like(data->integer, data->dims, out);
    for (std::size_t e = 0; e < c->size(); ++e) copy_elem(*c, e, *data, e);
    const std::size_t tuples = indices->size() / k;
    for (std::size_t t = 0; t < tuples; ++t) {
        std::int64_t offset = 0;
        for (std::size_t d = 0; d < k; ++d) {
            std::int64_t i = indices->ints[t * k + d];
            if (i < 0) i += data->dims[d];
            if (i < 0 || i >= data->dims[d]) return false;  // out of bounds: the file is wrong, not a constant
            offset += i * stride[d];
        }
        for (std::int64_t e = 0; e < slice; ++e)
            copy_elem(*c, static_cast<std::size_t>(offset + e), *updates, t * static_cast<std::size_t>(slice) + static_cast<std::size_t>(e));
    }
    consts_.values[out] = c;
    return true;
}

bool importer::fold_where(const fold_args& args) {
    const std::string& out = args.n.output(0);
    const auto& in = args.in;
    const auto cond = in(0), x = in(1), y = in(2);
    if (x->integer != y->integer) return false;
    const auto dims = broadcast({&cond->dims, &x->dims, &y->dims});
    const auto ic = broadcast_index(cond->dims, dims), ix = broadcast_index(x->dims, dims),
               iy = broadcast_index(y->dims, dims);
    auto c = make_like(x->integer, dims, out);
    for (std::size_t k = 0; k < c->size(); ++k)
        if (at(*cond, ic[k]) != 0)
            copy_elem(*c, k, *x, ix[k]);
        else
            copy_elem(*c, k, *y, iy[k]);
    consts_.values[out] = c;
    return true;
}

bool importer::fold_unary(const fold_args& args) {
    const std::string& op = args.n.op_type();
    const std::string& out = args.n.output(0);
    const auto& in = args.in;
    const auto x = in(0);
    const bool integer = x->integer && (op == "Not" || op == "Neg" || op == "Abs");
    auto c = make_like(integer, x->dims, out);
    for (std::size_t k = 0; k < x->size(); ++k) {
        if (integer) {  // exact int64: no detour through double
            const std::int64_t v = x->ints[k];
            if (op != "Not" && v == std::numeric_limits<std::int64_t>::min()) return false;
            c->ints[k] = op == "Not" ? v == 0 : op == "Neg" ? -v : (v < 0 ? -v : v);
            continue;
        }
        const double v = at(*x, k);
        double r = 0;
        if (op == "Not") r = v == 0;
        else if (op == "Neg") r = -v;
        else if (op == "Abs") r = std::fabs(v);
        else if (op == "Sqrt") r = std::sqrt(v);
        else if (op == "Exp") r = std::exp(v);
        else if (op == "Erf") r = std::erf(v);
        else if (op == "Cos") r = std::cos(v);  // rotary tables computed in the graph from constant positions
        else if (op == "Sin") r = std::sin(v);
        else if (op == "Floor") r = std::floor(v);
        else if (op == "Ceil") r = std::ceil(v);
        else r = 1.0 / v;
        put(*c, k, r);
    }
    consts_.values[out] = c;
    return true;
}

bool importer::fold_binary(const fold_args& args) {
    const onnx::NodeProto& n = args.n;
    const std::string& op = args.n.op_type();
    const std::string& out = args.n.output(0);
    const auto& in = args.in;
    // numpy broadcasting
    if (n.input_size() != 2) return false;
    const auto a = in(0), b = in(1);
    // Mod: fmod = 0 is the integer remainder with the divisor's sign (Python's %), which the spec allows for
    // integers only; fmod = 1 is C's fmod, the dividend's sign (Swin's pad_r = (w - W % w) % w exports the first)
    const bool fmod = attr_int(n, "fmod", 0) != 0;
    if (op == "Mod" && !fmod && !(a->integer && b->integer)) return false;
    const bool compare = op == "Equal" || op == "Less" || op == "Greater";
    const bool integer = compare || (a->integer && b->integer);
    const auto dims = broadcast({&a->dims, &b->dims});
    const auto ia = broadcast_index(a->dims, dims), ib = broadcast_index(b->dims, dims);
    auto c = make_like(integer, dims, out);
    for (std::size_t k = 0; k < c->size(); ++k) {
        if (compare && a->integer && b->integer) {  // exact: 2^53 + 1 is not 2^53
            const std::int64_t x = a->ints[ia[k]], y = b->ints[ib[k]];
            c->ints[k] = op == "Equal" ? x == y : op == "Less" ? x < y : x > y;
            continue;
        }
        if (integer && !compare) {  // exact int64 arithmetic, overflow is no constant
            const std::int64_t x = a->ints[ia[k]], y = b->ints[ib[k]];
            std::int64_t r = 0;
            bool overflow = false;
            if (op == "Add") overflow = __builtin_add_overflow(x, y, &r);
            else if (op == "Sub") overflow = __builtin_sub_overflow(x, y, &r);
            else if (op == "Mul") overflow = __builtin_mul_overflow(x, y, &r);
            else if (op == "Div") {
                if (y == 0 || (y == -1 && x == std::numeric_limits<std::int64_t>::min())) return false;
                r = x / y;  // C integer division, truncating toward zero
            } else if (op == "Mod") {
                if (y == 0 || (y == -1 && x == std::numeric_limits<std::int64_t>::min())) return false;
                r = x % y;  // C: the dividend's sign
                if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;  // Python: the divisor's sign
            } else if (op == "Max") r = std::max(x, y);
            else if (op == "Min") r = std::min(x, y);
            else {  // Pow: exact below 2^53, no constant above
                const double p = std::pow(static_cast<double>(x), static_cast<double>(y));
                if (!std::isfinite(p) || std::fabs(p) > 9007199254740992.0) return false;
                r = static_cast<std::int64_t>(p);
            }
            if (overflow) return false;
            c->ints[k] = r;
            continue;
        }
        const double x = at(*a, ia[k]), y = at(*b, ib[k]);
        double r = 0;
        if (op == "Add") r = x + y;
        else if (op == "Sub") r = x - y;
        else if (op == "Mul") r = x * y;
        else if (op == "Div") r = x / y;
        else if (op == "Pow") r = std::pow(x, y);
        else if (op == "Mod") r = std::fmod(x, y);  // fmod = 1 (checked above)
        else if (op == "Max") r = std::max(x, y);
        else if (op == "Min") r = std::min(x, y);
        else if (op == "Equal") r = x == y;
        else if (op == "Less") r = x < y;
        else r = x > y;
        put(*c, k, r);
    }
    consts_.values[out] = c;
    return true;
}

const std::map<std::string, importer::fold_rule, std::less<>>& importer::fold_rules() {
    // op type -> {rule, inputs it reads without asking, whether it runs before its inputs are known}
    static const std::map<std::string, fold_rule, std::less<>> rules = {
        {"Constant", {&importer::fold_constant, 0, true}},
        {"Shape", {&importer::fold_shape, 0, true}},
        {"Size", {&importer::fold_shape, 0, true}},
        {"Identity", {&importer::fold_identity, 1, false}},
        {"Dropout", {&importer::fold_identity, 1, false}},
        {"Transpose", {&importer::fold_transpose, 1, false}},
        {"Cast", {&importer::fold_cast, 1, false}},
        {"Gather", {&importer::fold_gather, 2, false}},
        {"Unsqueeze", {&importer::fold_squeeze, 1, false}},
        {"Squeeze", {&importer::fold_squeeze, 1, false}},
        {"Reshape", {&importer::fold_reshape, 2, false}},
        {"Flatten", {&importer::fold_reshape, 1, false}},
        {"Concat", {&importer::fold_concat, 1, false}},
        {"Slice", {&importer::fold_slice, 1, false}},
        {"Range", {&importer::fold_range, 3, false}},
        {"ConstantOfShape", {&importer::fold_constant_of_shape, 1, false}},
        {"Expand", {&importer::fold_constant_of_shape, 2, false}},
        {"ScatterND", {&importer::fold_scatter_nd, 3, false}},
        {"Where", {&importer::fold_where, 3, false}},
        {"Not", {&importer::fold_unary, 1, false}},
        {"Neg", {&importer::fold_unary, 1, false}},
        {"Abs", {&importer::fold_unary, 1, false}},
        {"Sqrt", {&importer::fold_unary, 1, false}},
        {"Exp", {&importer::fold_unary, 1, false}},
        {"Erf", {&importer::fold_unary, 1, false}},
        {"Cos", {&importer::fold_unary, 1, false}},
        {"Sin", {&importer::fold_unary, 1, false}},
        {"Floor", {&importer::fold_unary, 1, false}},
        {"Ceil", {&importer::fold_unary, 1, false}},
        {"Reciprocal", {&importer::fold_unary, 1, false}},
        {"Add", {&importer::fold_binary, 2, false}},
        {"Sub", {&importer::fold_binary, 2, false}},
        {"Mul", {&importer::fold_binary, 2, false}},
        {"Div", {&importer::fold_binary, 2, false}},
        {"Pow", {&importer::fold_binary, 2, false}},
        {"Max", {&importer::fold_binary, 2, false}},
        {"Min", {&importer::fold_binary, 2, false}},
        {"Equal", {&importer::fold_binary, 2, false}},
        {"Less", {&importer::fold_binary, 2, false}},
        {"Greater", {&importer::fold_binary, 2, false}},
        {"Mod", {&importer::fold_binary, 2, false}},
    };
    return rules;
}

}  // namespace ridgeline::io::onnx_detail
