// ONNX import: tensors and constants (initializers, external data, Constant nodes), attributes, and emitting
// layers into the core model.
#include "onnx_importer.hpp"

namespace ridgeline::io::onnx_detail {

std::string importer::unique(const std::string& base) {
    std::string name = base.empty() ? std::string("tensor") : base;
    for (int k = 2; built_.used.count(name); ++k) name = base + "#" + std::to_string(k);
    built_.used.insert(name);
    return name;
}

std::vector<char> importer::external_bytes(const onnx::TensorProto& t, std::size_t need) const {
    const std::string where = "initializer \"" + t.name() + "\"";
    std::string location;
    std::int64_t offset = 0, length = -1;
    // offset and length are decimal text (onnx.proto, "external_data"): anything else is a broken file
    auto number = [&](const std::string& key, const std::string& text) {
        std::int64_t v = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || ptr != text.data() + text.size() || v < 0)
            fail(where + ": external data " + key + " \"" + text +
                 "\" is not a byte count (a non-negative integer "
                 "that fits in int64); the file is corrupted");
        return v;
    };
    for (const auto& kv : t.external_data()) {
        if (kv.key() == "location") location = kv.value();
        if (kv.key() == "offset") offset = number("offset", kv.value());
        if (kv.key() == "length") length = number("length", kv.value());
    }
    if (location.empty()) fail(where + " is stored as external data without a location");
    if (location.find('\0') != std::string::npos)
        fail(where + " is stored in \"" + core::printable(location.substr(0, location.find('\0'))) +
             "\" followed by a NUL character: not a file name (the file is corrupted)");
    // ONNX external data lives in the model's folder (or below it); a location that leaves it (absolute, or
    // with "..") would let a model file make ridgeline read any file
    const fs::path rel(location);
    if (rel.is_absolute() || rel.has_root_name() ||
        std::any_of(rel.begin(), rel.end(), [](const fs::path& part) { return part == ".."; }))
        fail(where + " is stored in \"" + location +
             "\", outside the model's folder; external data must be a "
             "relative path inside the folder of the .onnx file");
    const fs::path p = dir_ / rel;
    std::error_code ec;
    if (!fs::exists(p, ec)) {
        const std::error_code why = ec;  // set when the path cannot be followed (a loop of links), not when absent
        const bool link = fs::is_symlink(p, ec);
        if (!why && !link && options_.shapes_only) return {};
        if (why)
            fail(where + " is stored in the external file \"" + location + "\" (" + p.string() +
                 "), which cannot be reached: " + why.message());
        if (link)
            fail(where + " is stored in the external file \"" + location + "\" (" + p.string() +
                 "), a symbolic link to " + fs::read_symlink(p, ec).string() + ", which does not exist");
        // what to do: import by shape only (the graph without its weights); the CLI names the flag
        throw core::request_error(label_ + ": " + where + " is stored in the external file \"" + location +
                                      "\" (looked for " + p.string() +
                                      "), which does not exist: an import by shape only reads the graph without its "
                                      "weights",
                                  {"shapes-only"});
    }
    // the location may still leave the folder through a symbolic link (the file itself, or a folder on the way):
    // compare real paths, links resolved, so a link inside the folder cannot make ridgeline read a file elsewhere
    const fs::path real_dir = fs::canonical(dir_.empty() ? fs::path(".") : dir_, ec);
    const fs::path real = ec ? fs::path() : fs::canonical(p, ec);
    if (ec) fail(where + ": cannot resolve the real path of \"" + p.string() + "\": " + ec.message());
    const auto [dir_end, real_it] = std::mismatch(real_dir.begin(), real_dir.end(), real.begin(), real.end());
    if (dir_end != real_dir.end())
        fail(where + " is stored in \"" + location + "\", which leads through a symbolic link to " + real.string() +
             ", outside the model's folder " + real_dir.string() +
             "; external data must be a file inside the folder of the .onnx file");
    if (!fs::is_regular_file(p, ec))
        fail(where + " is stored in the external file \"" + location + "\" (" + p.string() + "), which is not a file");
    const auto file_size = static_cast<std::int64_t>(fs::file_size(p, ec));
    if (ec) fail(where + ": cannot read the size of \"" + p.string() + "\": " + ec.message());
    if (length < 0) length = static_cast<std::int64_t>(need);
    if (length != static_cast<std::int64_t>(need) || offset > file_size || length > file_size - offset)
        fail(where + " needs " + std::to_string(need) + " bytes at offset " + std::to_string(offset) + " of \"" +
             location + "\", which has " + std::to_string(file_size) + " bytes" +
             (length != static_cast<std::int64_t>(need) ? " (the file says its length is " + std::to_string(length) + ")"
                                                         : std::string()) +
             "; the external data file is truncated or does not belong to this model");
    std::ifstream f(p, std::ios::binary);
    std::vector<char> buf(need);
    f.seekg(offset);
    f.read(buf.data(), static_cast<std::streamsize>(need));
    if (!f) fail(where + ": cannot read " + std::to_string(need) + " bytes from \"" + p.string() + "\"");
    return buf;
}

namespace {

/// Bytes per element of an ONNX element type ridgeline reads; 0 for another.
std::size_t element_size(int dt) {
    using tp = onnx::TensorProto;
    switch (dt) {
        case tp::FLOAT:
        case tp::INT32:
        case tp::UINT32:
            return 4;
        case tp::DOUBLE:
        case tp::INT64:
        case tp::UINT64:
            return 8;
        case tp::FLOAT16:
        case tp::BFLOAT16:
        case tp::INT16:
        case tp::UINT16:
            return 2;
        case tp::INT8:
        case tp::UINT8:
        case tp::BOOL:
            return 1;
        default:
            return 0;
    }
}

/// The tensor's `count` values into c (floats as float32, integers as int64), from its raw bytes or its typed field;
/// `check_count` fails when a typed field holds another number of values.
void fill_values(const onnx::TensorProto& t, const std::vector<char>& raw, bool have_raw, std::size_t count, constant& c,
                 const std::function<void(int)>& check_count) {
    using tp = onnx::TensorProto;
    const int dt = t.data_type();
    auto get = [&](std::size_t i, auto zero) {
        decltype(zero) v{};
        std::memcpy(&v, raw.data() + i * sizeof v, sizeof v);
        return v;
    };
    c.integer = !is_float_type(dt);
    if (c.integer)
        c.ints.resize(count);
    else
        c.values.resize(count);
    switch (dt) {
        case tp::FLOAT:
            if (!have_raw) {
                check_count(t.float_data_size());
                for (std::size_t i = 0; i < count; ++i) c.values[i] = t.float_data(static_cast<int>(i));
            } else
                for (std::size_t i = 0; i < count; ++i) c.values[i] = get(i, float{});
            break;
        case tp::DOUBLE:
            if (!have_raw) {
                check_count(t.double_data_size());
                for (std::size_t i = 0; i < count; ++i)
                    c.values[i] = static_cast<float>(t.double_data(static_cast<int>(i)));
            } else
                for (std::size_t i = 0; i < count; ++i) c.values[i] = static_cast<float>(get(i, double{}));
            break;
        case tp::FLOAT16:
        case tp::BFLOAT16: {
            for (std::size_t i = 0; i < count; ++i) {
                std::uint16_t bits = 0;
                if (have_raw)
                    bits = get(i, std::uint16_t{});
                else {
                    check_count(t.int32_data_size());
                    bits = static_cast<std::uint16_t>(t.int32_data(static_cast<int>(i)));
                }
                c.values[i] = dt == tp::FLOAT16 ? half_to_float(bits)
                                                 : std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
            }
            break;
        }
        case tp::INT64:
            if (!have_raw) {
                check_count(t.int64_data_size());
                for (std::size_t i = 0; i < count; ++i) c.ints[i] = t.int64_data(static_cast<int>(i));
            } else
                for (std::size_t i = 0; i < count; ++i) c.ints[i] = get(i, std::int64_t{});
            break;
        case tp::UINT64:
        case tp::UINT32:
            if (!have_raw) {
                check_count(t.uint64_data_size());
                for (std::size_t i = 0; i < count; ++i)
                    c.ints[i] = static_cast<std::int64_t>(t.uint64_data(static_cast<int>(i)));
            } else if (dt == tp::UINT64)
                for (std::size_t i = 0; i < count; ++i) c.ints[i] = static_cast<std::int64_t>(get(i, std::uint64_t{}));
            else
                for (std::size_t i = 0; i < count; ++i) c.ints[i] = get(i, std::uint32_t{});
            break;
        default:  // INT32, INT16, INT8, UINT16, UINT8, BOOL: int32_data when not raw
            if (!have_raw) {
                check_count(t.int32_data_size());
                for (std::size_t i = 0; i < count; ++i) c.ints[i] = t.int32_data(static_cast<int>(i));
            } else
                for (std::size_t i = 0; i < count; ++i) {
                    switch (dt) {
                        case tp::INT32:
                            c.ints[i] = get(i, std::int32_t{});
                            break;
                        case tp::INT16:
                            c.ints[i] = get(i, std::int16_t{});
                            break;
                        case tp::UINT16:
                            c.ints[i] = get(i, std::uint16_t{});
                            break;
                        case tp::INT8:
                            c.ints[i] = get(i, std::int8_t{});
                            break;
                        default:
                            c.ints[i] = get(i, std::uint8_t{});
                            break;
                    }
                }
    }
}

}  // namespace

constant_ptr importer::decode(const onnx::TensorProto& t, const std::string& origin) const {
    using tp = onnx::TensorProto;
    auto c = std::make_shared<constant>();
    c->origin = origin;
    // an initializer's own data (not a Constant node's attribute): a parameter when read as a tensor
    c->initializer = graph().initializer.count(origin) > 0 && graph().initializer.at(origin) == &t;
    const std::string where = "tensor \"" + t.name() + "\"";
    std::int64_t n = 1;
    for (auto d : t.dims()) {
        if (d < 0) fail(where + " has a negative dimension");
        c->dims.push_back(d);
        n = core::checked::mul(n, d, where + " elements");
    }
    const int dt = t.data_type();
    const std::size_t elem = element_size(dt);
    if (elem == 0) fail(where + " has data type " + type_name(dt) + ", which ridgeline cannot read");
    const auto count = static_cast<std::size_t>(n);
    // bytes the data must have; checked, so dims whose product fits but whose bytes do not cannot wrap to a
    // small number that a short file then matches
    const auto bytes =
        static_cast<std::size_t>(core::checked::mul(n, static_cast<std::int64_t>(elem), where + " bytes"));
    std::vector<char> raw;
    bool have_raw = false;
    if (t.data_location() == tp::EXTERNAL) {
        raw = external_bytes(t, bytes);
        have_raw = true;
        if (raw.empty() && bytes > 0) {  // shapes_only and the data file is absent
            if (!is_float_type(dt))
                fail(where + " (" + type_name(dt) + ") is in external data that is absent; an import by shape only "
                     "takes float weights by their shape, but integer tensors (shapes, indices) must be readable");
            if (count > (std::size_t{1} << 30))
                fail(where + " has " + std::to_string(count) +
                     " elements in external data that is absent; an import by shape only stands in zeros for it, "
                     "at most 2^30 elements per tensor");
            if (std::find(consts_.absent.begin(), consts_.absent.end(), t.name()) == consts_.absent.end()) consts_.absent.push_back(t.name());
            c->absent = true;
            c->values.assign(count, 0.0f);
            return c;
        }
    } else if (t.has_raw_data()) {
        raw.assign(t.raw_data().begin(), t.raw_data().end());
        have_raw = true;
        if (raw.size() != bytes)
            fail(where + " has " + std::to_string(raw.size()) + " bytes of data for shape " + dims_text(c->dims) +
                 " (" + std::to_string(bytes) + " expected); the file is truncated or corrupted");
    }
    auto check_count = [&](int have) {
        if (static_cast<std::size_t>(have) != count)
            fail(where + " has " + std::to_string(have) + " values for shape " + dims_text(c->dims) +
                 "; the file is truncated or corrupted");
    };
    if (!have_raw) {  // typed fields: the count is checked before the values are allocated
        switch (dt) {
            case tp::FLOAT:
                check_count(t.float_data_size());
                break;
            case tp::DOUBLE:
                check_count(t.double_data_size());
                break;
            case tp::INT64:
                check_count(t.int64_data_size());
                break;
            case tp::UINT64:
            case tp::UINT32:
                check_count(t.uint64_data_size());
                break;
            default:
                check_count(t.int32_data_size());
                break;
        }
    }
    fill_values(t, raw, have_raw, count, *c, check_count);
    return c;
}

importer::value importer::resolve(const onnx::NodeProto& n, const std::string& t) {
    if (auto it = built_.act.find(t); it != built_.act.end()) return {source::activation, it->second, nullptr, {}, true};
    if (auto it = consts_.values.find(t); it != consts_.values.end()) return {source::constant, {}, it->second, {}, true};
    if (auto it = graph().initializer.find(t); it != graph().initializer.end()) {
        auto c = decode(*it->second, t);
        consts_.values[t] = c;
        return {source::constant, {}, c, {}, true};
    }
    if (auto it = consts_.missing.find(t); it != consts_.missing.end())
        return {source::unavailable, {}, nullptr, it->second.reason, it->second.producer_listed};
    fail("node \"" + node_name(n) + "\" (" + n.op_type() + ") reads \"" + t +
         "\", which no node, input or initializer produces, or only a node on a cycle (the file is corrupted)");
}

importer::value importer::input(const onnx::NodeProto& n, int i) {
    if (!has_input(n, i)) throw unsupported{"input " + std::to_string(i) + " is missing"};
    return resolve(n, n.input(i));
}

std::string importer::activation(const onnx::NodeProto& n, int i) {
    value v = input(n, i);
    if (v.k == source::unavailable) throw unsupported{"reads \"" + n.input(i) + "\", " + v.why, !v.producer_listed};
    if (v.k == source::constant)
        throw unsupported{"input " + std::to_string(i) + " (\"" + n.input(i) + "\") is a constant of shape " +
                          v.c->shape_text() + "; ridgeline needs an activation there"};
    return v.tensor;
}

std::string importer::operand(const onnx::NodeProto& n, int i) {
    value v = input(n, i);
    if (v.k != source::constant) return activation(n, i);
    if (v.c->integer)
        throw unsupported{"input " + std::to_string(i) + " (\"" + n.input(i) + "\") is a constant of integers (" +
                          v.c->shape_text() + "); ridgeline needs a float tensor there"};
    return held(n.input(i), v.c);
}

std::string importer::held(const std::string& key, const constant_ptr& c, const std::vector<std::int64_t>& expand) {
    if (auto h = built_.held.find(key); h != built_.held.end()) return h->second;
    // a scalar is held as one value of shape [1]: it broadcasts against any activation alike
    const std::vector<std::int64_t> dims = c->dims.empty() ? std::vector<std::int64_t>{1} : c->dims;
    std::vector<core::attribute> attrs{{"shape", join_ints(dims)}};
    if (!expand.empty()) attrs.push_back({"expand", join_ints(expand)});
    if (!c->initializer) attrs.push_back({"trainable", "false"});  // PyTorch's parameters are initializers
    onnx::NodeProto named;
    named.set_name(c->origin.empty() ? key : c->origin);
    auto data = c;
    if (c->dims.empty()) {
        auto one = std::make_shared<constant>(*c);
        one->dims = dims;
        data = one;
    }
    const std::string l = emit(named, make("parameter", attrs, named.name()), {}, {{"value", data}});
    built_.held[key] = l;
    built_.held_now.push_back(key);
    return l;
}

bool importer::broadcast_by_readers(const onnx::NodeProto& n, const std::vector<std::int64_t>& x,
                                    const std::vector<std::int64_t>& expanded) {
    // PyTorch's x.expand(...) read by an elementwise op is a view that op broadcasts: the Expand is folded into its
    // readers when every one is Add, Sub, Mul, Div or Where and gives the same output shape from x as from the
    // expanded tensor (the other operands' shapes known: converted, constant, or from ONNX shape inference)
    const std::string& e = n.output(0);
    if (graph().outputs.count(e)) return false;
    const auto r = graph().readers.find(e);
    if (r == graph().readers.end() || r->second.empty()) return false;
    auto broadcast = [](std::vector<std::int64_t> a, const std::vector<std::int64_t>& b) -> std::vector<std::int64_t> {
        if (a.size() < b.size()) a.insert(a.begin(), b.size() - a.size(), 1);
        for (std::size_t i = 0; i < b.size(); ++i) {
            std::int64_t& d = a[a.size() - b.size() + i];
            if (d == 1) d = b[i];
            else if (b[i] != 1 && b[i] != d) return {};
        }
        return a;
    };
    auto dims_of = [&](const std::string& t) -> std::vector<std::int64_t> {
        if (auto a = built_.act.find(t); a != built_.act.end()) return shape_of(a->second).dims();
        if (consts_.values.count(t) || graph().initializer.count(t)) return resolve(n, t).c->dims;
        if (auto s = graph().dims.find(t); s != graph().dims.end()) return s->second;
        return {0};  // unknown
    };
    static const std::set<std::string> broadcasting = {"Add", "Sub", "Mul", "Div", "Where"};
    for (const int k : r->second) {
        const onnx::NodeProto& reader = graph().proto.graph().node(k);
        if (!reader.domain().empty() || !broadcasting.count(reader.op_type())) return false;
        std::vector<std::int64_t> with_x, with_e;
        for (int i = 0; i < reader.input_size(); ++i) {
            const bool is_e = reader.input(i) == e;
            const std::vector<std::int64_t> d = is_e ? x : dims_of(reader.input(i));
            if (std::any_of(d.begin(), d.end(), [](std::int64_t v) { return v < 1; })) return false;
            with_x = broadcast(with_x, d);
            with_e = broadcast(with_e, is_e ? expanded : d);
            if (with_x.empty() || with_e.empty()) return false;
        }
        if (with_x != with_e) return false;
    }
    return true;
}

void importer::expand_node(const onnx::NodeProto& n) {
    value x = input(n, 0);
    if (x.k != source::constant) {
        // of an activation: an expand layer (a copy, as ONNX Expand materialises it) to the broadcast of both shapes
        const std::string t = activation(n, 0);  // says why when x is unavailable
        const auto s = constant_input(n, 1);
        if (!s->integer) throw unsupported{"Expand's shape is not integers"};
        const core::shape& xs = shape_of(t);
        const std::size_t rank = std::max(xs.rank(), s->ints.size());
        std::vector<std::int64_t> out(rank, 1);
        for (std::size_t i = 0; i < rank; ++i) {
            const std::int64_t a = i < rank - xs.rank() ? 1 : xs[i - (rank - xs.rank())];
            const std::int64_t b = i < rank - s->ints.size() ? 1 : s->ints[i - (rank - s->ints.size())];
            if ((a != b && a != 1 && b != 1) || b < 1)
                throw unsupported{"cannot expand " + xs.to_string() + " to " + dims_text(s->ints) + " (dimension " +
                                  std::to_string(i) + ": " + std::to_string(a) + " vs " + std::to_string(b) + ")"};
            out[i] = std::max(a, b);
        }
        if (out == xs.dims()) {
            map_output(n.output(0), t);  // expands nothing
            return;
        }
        if (broadcast_by_readers(n, xs.dims(), out)) {
            built_.broadcast_views.insert(n.output(0));  // every reader broadcasts x to the same result: a view
            map_output(n.output(0), t);
            return;
        }
        map_output(n.output(0), emit(n, make("expand", {{"size", join_ints(out)}}, node_name(n)), {t}));
        return;
    }
    if (x.c->integer) throw unsupported{"Expand of a constant of integers (" + x.c->shape_text() + ")"};
    const auto s = constant_input(n, 1);
    if (!s->integer) throw unsupported{"Expand's shape is not integers"};
    // ONNX Expand broadcasts both ways (numpy): the output is the broadcast of the two shapes
    const std::size_t rank = std::max(x.c->dims.size(), s->ints.size());
    std::vector<std::int64_t> out(rank, 1);
    for (std::size_t i = 0; i < rank; ++i) {
        const std::int64_t a = i < rank - x.c->dims.size() ? 1 : x.c->dims[i - (rank - x.c->dims.size())];
        const std::int64_t b = i < rank - s->ints.size() ? 1 : s->ints[i - (rank - s->ints.size())];
        if (a != b && a != 1 && b != 1)
            throw unsupported{"cannot expand " + x.c->shape_text() + " to " + dims_text(s->ints) + " (dimension " +
                              std::to_string(i) + ": " + std::to_string(a) + " vs " + std::to_string(b) + ")"};
        if (a < 1 || b < 1)
            throw unsupported{"Expand to " + dims_text(s->ints) + ": every dimension must be >= 1"};
        out[i] = std::max(a, b);
    }
    if (out.empty()) throw unsupported{"Expand of a scalar to a scalar; ridgeline holds tensors of rank >= 1"};
    map_output(n.output(0), held(n.input(0) + "\x01expand " + join_ints(out), x.c, out));
}

constant_ptr importer::constant_input(const onnx::NodeProto& n, int i) {
    value v = input(n, i);
    if (v.k == source::unavailable) {
        throw unsupported{"input " + std::to_string(i) + " (\"" + n.input(i) + "\") is " + v.why +
                              "; ridgeline needs a constant there",
                          !v.producer_listed};
    }
    if (v.k == source::activation)
        throw unsupported{"input " + std::to_string(i) + " (\"" + n.input(i) +
                          "\") is computed at run time; ridgeline needs a constant (an initializer) there"};
    return v.c;
}

std::vector<std::int64_t> importer::attr_or_input_ints(const onnx::NodeProto& n, const std::string& name, int input,
                                                      const std::string& what) {
    if (!has_input(n, input)) return attr_ints(n, name, {});
    const auto c = constant_input(n, input);
    if (!c->integer) throw unsupported{what + " are not integers"};
    return c->ints;
}

const onnx::AttributeProto* importer::attr(const onnx::NodeProto& n, const std::string& name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

std::int64_t importer::attr_int(const onnx::NodeProto& n, const std::string& name, std::int64_t fallback) {
    const auto* a = attr(n, name);
    return a ? a->i() : fallback;
}

double importer::attr_float(const onnx::NodeProto& n, const std::string& name, double fallback) {
    const auto* a = attr(n, name);
    return a ? tidy(a->f()) : fallback;
}

std::string importer::attr_string(const onnx::NodeProto& n, const std::string& name, const std::string& fallback) {
    const auto* a = attr(n, name);
    return a ? a->s() : fallback;
}

std::vector<std::int64_t> importer::attr_ints(const onnx::NodeProto& n, const std::string& name,
                                              std::vector<std::int64_t> fallback) {
    const auto* a = attr(n, name);
    if (!a) return fallback;
    return {a->ints().begin(), a->ints().end()};
}

std::string importer::node_name(const onnx::NodeProto& n) const {
    return n.name().empty() ? n.op_type() + "_" + std::to_string(built_.current_index) : n.name();
}

core::op importer::make(const std::string& kind, const std::vector<core::attribute>& attrs, const std::string& name) {
    try {
        return core::make_op(kind, attrs, name);
    } catch (const core::error& e) {
        throw unsupported{e.what()};
    }
}

std::string importer::emit(const onnx::NodeProto& n, core::op o, std::vector<std::string> inputs,
                           std::vector<std::pair<std::string, constant_ptr>> params) {
    core::layer l{unique(node_name(n)), std::move(o), std::move(inputs), {}};
    core::shapes in;
    for (const auto& t : l.inputs) in.push_back(shape_of(t));
    core::shape out;
    try {
        out = core::infer_shape(l, in);
    } catch (const core::error& e) {
        throw unsupported{e.what()};
    }
    const auto specs = core::parameters_of(l.op);
    for (auto& use : params) {
        const std::string& param = use.first;  // not a structured binding: clang 14 cannot capture one
        const constant_ptr& c = use.second;
        auto spec =
            std::find_if(specs.begin(), specs.end(), [&](const core::param_spec& s) { return s.name == param; });
        if (spec == specs.end() || static_cast<std::int64_t>(c->values.size()) != spec->dims.numel() || c->integer)
            throw unsupported{param + " \"" + c->origin + "\" has shape " + c->shape_text() + ", " +
                              std::string(core::kind_of(l.op)) + " needs " +
                              (spec == specs.end() ? std::string("none") : spec->dims.to_string())};
        built_.uses.push_back({built_.model.layers().size(), param, c->absent ? std::vector<float>{} : c->values, c->origin,
                         c->absent});
    }
    built_.shapes[l.name] = out;
    const std::string name = l.name;
    built_.model.add_layer(std::move(l));
    return name;
}

void importer::fuse(int node) {
    built_.fused.insert(node);
    built_.fused_now.push_back(node);
}

void importer::map_output(const std::string& onnx_tensor, const std::string& core_tensor) {
    built_.act[onnx_tensor] = core_tensor;
    built_.mapped_now.push_back(onnx_tensor);
}

void importer::only_first_output(const onnx::NodeProto& n) const {
    for (int i = 1; i < n.output_size(); ++i)
        if (!n.output(i).empty() && (graph().readers.count(n.output(i)) || graph().outputs.count(n.output(i))))
            throw unsupported{"output " + std::to_string(i) + " (\"" + n.output(i) +
                              "\") is used; ridgeline maps only the first"};
}

std::shared_ptr<constant> importer::derived(const constant& c, const std::string& tag) {
    auto d = std::make_shared<constant>(c);
    d->origin = c.origin + tag;
    return d;
}

std::shared_ptr<constant> importer::transposed2d(const constant& c) {
    auto d = derived(c, "^T");
    const auto r = static_cast<std::size_t>(c.dims[0]), k = static_cast<std::size_t>(c.dims[1]);
    for (std::size_t i = 0; i < r; ++i)
        for (std::size_t j = 0; j < k; ++j) d->values[j * r + i] = c.values[i * k + j];
    d->dims = {c.dims[1], c.dims[0]};
    return d;
}

// ------------------------------------------------------------------ the ONNX op types converted here

void importer::add_values_converters(converter_map& table) {
    add_converter(table, "Expand", [](importer& i, const onnx::NodeProto& n, int) { i.expand_node(n); });
}

}  // namespace ridgeline::io::onnx_detail
