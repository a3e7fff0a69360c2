// ONNX import (RIDGELINE_HAVE_ONNX == 1). The only file that includes ONNX and protobuf headers.
#include "ridgeline/io/onnx_import.hpp"

#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "ridgeline/core/file.hpp"
#include "ridgeline/core/checked.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::io {

bool have_onnx() { return true; }

namespace {

/// Longest ONNX shape inference may take (resnet50 needs well under a second).
constexpr int shape_inference_timeout_s = 120;

namespace fs = std::filesystem;

/// A tensor whose value is known when the file is read: an initializer or a Constant node's output.
struct constant {
    std::vector<std::int64_t> dims;
    std::vector<float> values;       // floating-point tensors
    std::vector<std::int64_t> ints;  // integer tensors
    bool integer = false;
    std::string origin;              // what it is made of: "<initializer name>" plus any transform

    [[nodiscard]] std::size_t size() const { return integer ? ints.size() : values.size(); }
    [[nodiscard]] std::string shape_text() const {
        return dims.empty() ? std::string("scalar") : core::shape(dims).to_string();
    }
};
using constant_ptr = std::shared_ptr<const constant>;

/// Why a node cannot be imported. `listed`: the node itself is at fault (it goes into the error), as
/// opposed to a node that only reads the output of one that is.
struct unsupported {
    std::string reason;
    bool listed = true;
};

struct issue {
    skipped_node node;
    bool listed = true;
};

struct unavailable {
    std::string reason;
    bool producer_listed = true;
};

/// A parameter slot of an emitted layer and the data that fills it.
struct param_use {
    std::size_t layer = 0;
    std::string param;
    std::vector<float> data;
    std::string origin;
};

float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = (h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t man = h & 0x3ffu;
    if (exp == 0) {  // zero or subnormal: man * 2^-24
        const float v = std::ldexp(static_cast<float>(man), -24);
        return sign ? -v : v;
    }
    if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
    return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
}

/// A float32 from the file as the double of its shortest decimal form (1e-6f -> 1e-06, not 9.99999997e-07),
/// so eps and scale factors print as they were written before export.
double tidy(float f) {
    char buf[32];
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, f);
    if (ec != std::errc()) return static_cast<double>(f);
    *ptr = '\0';
    return std::strtod(buf, nullptr);
}

std::string dims_text(const std::vector<std::int64_t>& d) { return d.empty() ? "scalar" : core::shape(d).to_string(); }

std::string join_ints(const std::vector<std::int64_t>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "x" : "") + std::to_string(v[i]);
    return s;
}

std::string number_text(double v) {
    std::ostringstream o;
    o.precision(9);
    o << v;
    return o.str();
}

bool is_float_type(int t) {
    using tp = onnx::TensorProto;
    return t == tp::FLOAT || t == tp::FLOAT16 || t == tp::DOUBLE || t == tp::BFLOAT16;
}
bool is_int_type(int t) {
    using tp = onnx::TensorProto;
    return t == tp::INT64 || t == tp::INT32 || t == tp::INT16 || t == tp::INT8 || t == tp::UINT8 ||
           t == tp::UINT16 || t == tp::UINT32 || t == tp::UINT64 || t == tp::BOOL;
}

class importer {
public:
    importer(const fs::path& file, const onnx_options& options) : file_(file), options_(options), label_(file.string()) {}

    onnx_model run() {
        load();
        set_input_shapes();
        infer_shapes();
        index_graph();
        const auto& g = proto_.graph();
        for (int i = 0; i < g.node_size(); ++i) {
            if (fused_.count(i)) continue;
            convert(g.node(i), i);
        }
        return finish();
    }

private:
    // ------------------------------------------------------------------ loading
    [[noreturn]] void fail(const std::string& message) const { throw core::error(label_ + ": " + message); }

    void load() {
        std::string bytes;
        try {
            bytes = core::read_regular_file(file_, "");
        } catch (const core::error& e) {
            fail(std::string(e.what()).substr(2));  // the reason without read_regular_file's ": "
        }
        if (bytes.empty()) fail("the file is empty, not an ONNX model");
        if (!proto_.ParseFromString(bytes))
            fail("not a valid ONNX model: the protobuf data does not parse (the file is truncated or corrupted, or "
                 "not an ONNX file)");
        if (!proto_.has_graph() || proto_.graph().node_size() == 0)
            fail("not a valid ONNX model: it has no graph nodes (the file is truncated or corrupted, or not an ONNX "
                 "file)");
        if (proto_.ir_version() <= 0) fail("not a valid ONNX model: it has no ir_version (corrupted, or not an ONNX file)");
        for (const auto& o : proto_.opset_import())
            if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
        dir_ = file_.parent_path();
    }

    /// Real inputs (graph inputs that are not initializers) with concrete shapes written into the proto, so
    /// ONNX's shape inference sees them.
    void set_input_shapes() {
        auto* g = proto_.mutable_graph();
        std::set<std::string> init_names;
        for (const auto& t : g->initializer()) init_names.insert(t.name());
        std::vector<onnx::ValueInfoProto*> real;
        for (auto& in : *g->mutable_input())
            if (!init_names.count(in.name())) real.push_back(&in);
        if (real.empty()) fail("the graph has no inputs (every input is an initializer)");
        if (!options_.inputs.empty() && options_.inputs.size() != real.size())
            fail("the model has " + std::to_string(real.size()) + " input(s) but " + std::to_string(options_.inputs.size()) +
                 " --input shape(s) were given");
        for (std::size_t i = 0; i < real.size(); ++i) {
            auto& in = *real[i];
            const std::string where = "input \"" + in.name() + "\"";
            if (!in.type().has_tensor_type()) fail(where + " is not a tensor");
            const int et = in.type().tensor_type().elem_type();
            if (!is_float_type(et) && et != onnx::TensorProto::INT64 && et != onnx::TensorProto::INT32)
                fail(where + " has element type " + onnx::TensorProto::DataType_Name(et) +
                     "; ridgeline reads float inputs and int64 token ids");
            const bool has_shape = in.type().tensor_type().has_shape();
            const auto& file_dims = in.type().tensor_type().shape().dim();
            std::vector<std::int64_t> dims;
            if (!options_.inputs.empty()) {
                dims = options_.inputs[i].dims();
                if (has_shape && file_dims.size() != static_cast<int>(dims.size()))
                    fail("--input " + options_.inputs[i].to_string() + " has rank " + std::to_string(dims.size()) +
                         " but " + where + " has rank " + std::to_string(file_dims.size()));
                if (options_.batch && dims[0] != *options_.batch)
                    fail("--batch " + std::to_string(*options_.batch) + " disagrees with --input " + options_.inputs[i].to_string());
            } else {
                if (!has_shape) fail(where + " has no shape in the file; give its full shape with --input");
                for (int d = 0; d < file_dims.size(); ++d) {
                    const auto& dim = file_dims[d];
                    if (d == 0 && (options_.batch || !dim.has_dim_value())) {
                        dims.push_back(options_.batch.value_or(1));
                    } else if (dim.has_dim_value() && dim.dim_value() > 0) {
                        dims.push_back(dim.dim_value());
                    } else {
                        const std::string sym = dim.has_dim_param() ? " (\"" + dim.dim_param() + "\")" : std::string();
                        fail(where + " has symbolic dimension " + std::to_string(d) + sym +
                             "; give the input's full shape with --input (e.g. --input " + example_shape(file_dims) + ")");
                    }
                }
            }
            auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
            shape->clear_dim();
            for (auto v : dims) shape->add_dim()->set_dim_value(v);
            inputs_.push_back({in.name(), core::shape(dims), !is_float_type(et)});
        }
    }

    static std::string example_shape(const google::protobuf::RepeatedPtrField<onnx::TensorShapeProto_Dimension>& dims) {
        std::string s;
        for (int d = 0; d < dims.size(); ++d)
            s += (d ? "x" : "") + std::to_string(dims[d].has_dim_value() && dims[d].dim_value() > 0 ? dims[d].dim_value()
                                                                                                    : (d == 0 ? 1 : 128));
        return s;
    }

    /// ONNX's shape inference, in a child process. ONNX 1.12 (Debian 12) crashes on some malformed graphs
    /// (fuzz_onnx found a Conv whose input has fewer dimensions than its weight: a SEGV inside
    /// onnx::convPoolShapeInference), and no check before it could know every intermediate rank. The child
    /// runs it on its copy of the model and sends back the inferred value_info and outputs; a crash, a hang
    /// (shape_inference_timeout_s) or ONNX's own exception becomes one error line here.
    void infer_shapes() {
        const onnx::ISchemaRegistry* registry = onnx::OpSchemaRegistry::Instance();  // built before fork()
        int fds[2];
        if (::pipe(fds) != 0) fail(std::string("cannot start ONNX shape inference: ") + std::strerror(errno));
        std::fflush(nullptr);
        const pid_t pid = ::fork();
        if (pid < 0) {
            ::close(fds[0]);
            ::close(fds[1]);
            fail(std::string("cannot start ONNX shape inference: ") + std::strerror(errno));
        }
        if (pid == 0) {  // child: no sanitizer or fuzzer crash handler, no output, only the pipe
            for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
            if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) {
                ::dup2(null, 1);
                ::dup2(null, 2);
            }
            ::close(fds[0]);
            std::string message;
            try {
                onnx::ShapeInferenceOptions o(false, 0, true);
                onnx::shape_inference::InferShapes(proto_, registry, o);
                onnx::GraphProto inferred;
                *inferred.mutable_value_info() = proto_.graph().value_info();
                *inferred.mutable_output() = proto_.graph().output();
                message = "O" + inferred.SerializeAsString();
            } catch (const std::exception& e) {
                message = std::string("E") + e.what();
            } catch (...) {
                message = "Ean exception that is not a std::exception";
            }
            for (std::size_t done = 0; done < message.size();) {
                const ssize_t n = ::write(fds[1], message.data() + done, message.size() - done);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) ::_exit(3);
                done += static_cast<std::size_t>(n);
            }
            ::_exit(0);
        }
        ::close(fds[1]);
        std::string message;
        bool timed_out = false;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(shape_inference_timeout_s);
        for (char buf[65536];;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                timed_out = true;
                ::kill(pid, SIGKILL);
                break;
            }
            pollfd p{fds[0], POLLIN, 0};
            const int ready = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
            if (ready < 0 && errno != EINTR) break;
            if (ready <= 0) continue;
            const ssize_t n = ::read(fds[0], buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            message.append(buf, static_cast<std::size_t>(n));
        }
        ::close(fds[0]);
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (timed_out)
            fail("ONNX shape inference did not finish in " + std::to_string(shape_inference_timeout_s) +
                 " s (the graph is malformed or far too large)");
        if (WIFSIGNALED(status) || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || message.empty())
            fail("ONNX shape inference crashed on this file (" +
                 (WIFSIGNALED(status) ? std::string(strsignal(WTERMSIG(status))) : "exit status " + std::to_string(WEXITSTATUS(status))) +
                 "): the graph is malformed, e.g. an input with fewer dimensions than a Conv or pool over it needs");
        if (message[0] == 'E') {
            std::string what = message.substr(1);
            if (auto p = what.find('\n'); p != std::string::npos) what = what.substr(0, p);
            fail("ONNX shape inference failed: " + what);
        }
        onnx::GraphProto inferred;
        if (message[0] != 'O' || !inferred.ParseFromArray(message.data() + 1, static_cast<int>(message.size() - 1)))
            fail("ONNX shape inference returned nothing readable");
        proto_.mutable_graph()->mutable_value_info()->Swap(inferred.mutable_value_info());
        proto_.mutable_graph()->mutable_output()->Swap(inferred.mutable_output());
        auto record = [&](const onnx::ValueInfoProto& v) {
            if (!v.type().has_tensor_type()) return;
            const auto& tt = v.type().tensor_type();
            onnx_type_[v.name()] = tt.elem_type();
            if (!tt.has_shape()) return;
            std::vector<std::int64_t> dims;
            for (const auto& d : tt.shape().dim()) {
                if (!d.has_dim_value()) return;
                dims.push_back(d.dim_value());
            }
            onnx_shape_[v.name()] = dims;
        };
        for (const auto& v : proto_.graph().value_info()) record(v);
        for (const auto& v : proto_.graph().output()) record(v);
    }

    void index_graph() {
        const auto& g = proto_.graph();
        for (const auto& t : g.initializer()) initializer_.emplace(t.name(), &t);
        for (int i = 0; i < g.node_size(); ++i)
            for (const auto& t : g.node(i).input())
                if (!t.empty()) readers_[t].push_back(i);
        // ONNX graphs are in single static assignment form: each tensor has one writer (ONNX IR spec, "Names
        // Within a Graph"); a second writer would make every reader ambiguous
        std::map<std::string, int> writer;
        for (const auto& in : g.input()) writer.emplace(in.name(), -1);
        for (int i = 0; i < g.node_size(); ++i)
            for (const auto& t : g.node(i).output()) {
                if (t.empty()) continue;
                auto [it, fresh] = writer.emplace(t, i);
                if (!fresh)
                    fail("node \"" + node_name(g.node(i)) + "\" (" + g.node(i).op_type() + ") writes tensor \"" + t +
                         "\", which " + (it->second < 0 ? std::string("is a graph input")
                                                         : "node \"" + node_name(g.node(it->second)) + "\" writes already") +
                         " (ONNX graphs assign each tensor once)");
            }
        for (const auto& o : g.output()) graph_outputs_.insert(o.name());
        for (const auto& in : inputs_) {
            const std::string name = unique(in.name);
            model_.add_input({name, in.dims, in.indices});
            act_[in.name] = name;
            shape_[name] = in.dims;
        }
        std::string model_name = g.name().empty() ? file_.stem().string() : g.name();
        if (model_name == "main_graph" || model_name == "torch_jit" || model_name == "torch-jit-export")
            model_name = file_.stem().string();
        model_.set_name(model_name);
    }

    // ------------------------------------------------------------------ tensors and constants
    std::string unique(const std::string& base) {
        std::string name = base.empty() ? std::string("tensor") : base;
        for (int k = 2; used_.count(name); ++k) name = base + "#" + std::to_string(k);
        used_.insert(name);
        return name;
    }

    std::vector<char> external_bytes(const onnx::TensorProto& t, std::size_t need) const {
        const std::string where = "initializer \"" + t.name() + "\"";
        std::string location;
        std::int64_t offset = 0, length = -1;
        // offset and length are decimal text (onnx.proto, "external_data"): anything else is a broken file
        auto number = [&](const std::string& key, const std::string& text) {
            std::int64_t v = 0;
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec != std::errc() || ptr != text.data() + text.size() || v < 0)
                fail(where + ": external data " + key + " \"" + text + "\" is not a byte count (a non-negative integer "
                     "that fits in int64); the file is corrupted");
            return v;
        };
        for (const auto& kv : t.external_data()) {
            if (kv.key() == "location") location = kv.value();
            if (kv.key() == "offset") offset = number("offset", kv.value());
            if (kv.key() == "length") length = number("length", kv.value());
        }
        if (location.empty()) fail(where + " is stored as external data without a location");
        // ONNX external data lives in the model's folder (or below it); a location that leaves it (absolute, or
        // with "..") would let a model file make ridgeline read any file
        const fs::path rel(location);
        if (rel.is_absolute() || rel.has_root_name() ||
            std::any_of(rel.begin(), rel.end(), [](const fs::path& part) { return part == ".."; }))
            fail(where + " is stored in \"" + location + "\", outside the model's folder; external data must be a "
                 "relative path inside the folder of the .onnx file");
        const fs::path p = dir_ / rel;
        std::error_code ec;
        if (!fs::exists(p, ec))
            fail(where + " is stored in the external file \"" + location + "\" (looked for " + p.string() +
                 "), which does not exist");
        if (!fs::is_regular_file(p, ec))
            fail(where + " is stored in the external file \"" + location + "\" (" + p.string() + "), which is not a file");
        const auto file_size = static_cast<std::int64_t>(fs::file_size(p, ec));
        if (ec) fail(where + ": cannot read the size of \"" + p.string() + "\": " + ec.message());
        if (length < 0) length = static_cast<std::int64_t>(need);
        if (length != static_cast<std::int64_t>(need) || offset > file_size || length > file_size - offset)
            fail(where + " needs " + std::to_string(need) + " bytes at offset " + std::to_string(offset) + " of \"" +
                 location + "\" (" + std::to_string(file_size) + " bytes, length " + std::to_string(length) +
                 "); the external data file is truncated or does not belong to this model");
        std::ifstream f(p, std::ios::binary);
        std::vector<char> buf(need);
        f.seekg(offset);
        f.read(buf.data(), static_cast<std::streamsize>(need));
        if (!f) fail(where + ": cannot read " + std::to_string(need) + " bytes from \"" + p.string() + "\"");
        return buf;
    }

    constant_ptr decode(const onnx::TensorProto& t, const std::string& origin) const {
        using tp = onnx::TensorProto;
        auto c = std::make_shared<constant>();
        c->origin = origin;
        const std::string where = "tensor \"" + t.name() + "\"";
        std::int64_t n = 1;
        for (auto d : t.dims()) {
            if (d < 0) fail(where + " has a negative dimension");
            c->dims.push_back(d);
            n = core::checked::mul(n, d, where + " elements");
        }
        const int dt = t.data_type();
        std::size_t elem = 0;
        switch (dt) {
            case tp::FLOAT: case tp::INT32: case tp::UINT32: elem = 4; break;
            case tp::DOUBLE: case tp::INT64: case tp::UINT64: elem = 8; break;
            case tp::FLOAT16: case tp::BFLOAT16: case tp::INT16: case tp::UINT16: elem = 2; break;
            case tp::INT8: case tp::UINT8: case tp::BOOL: elem = 1; break;
            default:
                fail(where + " has data type " + tp::DataType_Name(dt) + ", which ridgeline cannot read");
        }
        const auto count = static_cast<std::size_t>(n);
        // bytes the data must have; checked, so dims whose product fits but whose bytes do not cannot wrap to a
        // small number that a short file then matches
        const auto bytes = static_cast<std::size_t>(
            core::checked::mul(n, static_cast<std::int64_t>(elem), where + " bytes"));
        std::vector<char> raw;
        bool have_raw = false;
        if (t.data_location() == tp::EXTERNAL) {
            raw = external_bytes(t, bytes);
            have_raw = true;
        } else if (t.has_raw_data()) {
            raw.assign(t.raw_data().begin(), t.raw_data().end());
            have_raw = true;
            if (raw.size() != bytes)
                fail(where + " has " + std::to_string(raw.size()) + " bytes of data for shape " + dims_text(c->dims) +
                     " (" + std::to_string(bytes) + " expected); the file is truncated or corrupted");
        }
        auto get = [&](std::size_t i, auto zero) {
            decltype(zero) v{};
            std::memcpy(&v, raw.data() + i * sizeof v, sizeof v);
            return v;
        };
        auto check_count = [&](int have) {
            if (static_cast<std::size_t>(have) != count)
                fail(where + " has " + std::to_string(have) + " values for shape " + dims_text(c->dims) +
                     "; the file is truncated or corrupted");
        };
        if (!have_raw) {  // typed fields: the count is checked before the values are allocated
            switch (dt) {
                case tp::FLOAT: check_count(t.float_data_size()); break;
                case tp::DOUBLE: check_count(t.double_data_size()); break;
                case tp::INT64: check_count(t.int64_data_size()); break;
                case tp::UINT64: case tp::UINT32: check_count(t.uint64_data_size()); break;
                default: check_count(t.int32_data_size()); break;
            }
        }
        c->integer = !is_float_type(dt);
        if (c->integer) c->ints.resize(count); else c->values.resize(count);
        switch (dt) {
            case tp::FLOAT:
                if (!have_raw) { check_count(t.float_data_size()); for (std::size_t i = 0; i < count; ++i) c->values[i] = t.float_data(static_cast<int>(i)); }
                else for (std::size_t i = 0; i < count; ++i) c->values[i] = get(i, float{});
                break;
            case tp::DOUBLE:
                if (!have_raw) { check_count(t.double_data_size()); for (std::size_t i = 0; i < count; ++i) c->values[i] = static_cast<float>(t.double_data(static_cast<int>(i))); }
                else for (std::size_t i = 0; i < count; ++i) c->values[i] = static_cast<float>(get(i, double{}));
                break;
            case tp::FLOAT16: case tp::BFLOAT16: {
                for (std::size_t i = 0; i < count; ++i) {
                    std::uint16_t bits = 0;
                    if (have_raw) bits = get(i, std::uint16_t{});
                    else { check_count(t.int32_data_size()); bits = static_cast<std::uint16_t>(t.int32_data(static_cast<int>(i))); }
                    c->values[i] = dt == tp::FLOAT16 ? half_to_float(bits) : std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
                }
                break;
            }
            case tp::INT64:
                if (!have_raw) { check_count(t.int64_data_size()); for (std::size_t i = 0; i < count; ++i) c->ints[i] = t.int64_data(static_cast<int>(i)); }
                else for (std::size_t i = 0; i < count; ++i) c->ints[i] = get(i, std::int64_t{});
                break;
            case tp::UINT64: case tp::UINT32:
                if (!have_raw) { check_count(t.uint64_data_size()); for (std::size_t i = 0; i < count; ++i) c->ints[i] = static_cast<std::int64_t>(t.uint64_data(static_cast<int>(i))); }
                else if (dt == tp::UINT64) for (std::size_t i = 0; i < count; ++i) c->ints[i] = static_cast<std::int64_t>(get(i, std::uint64_t{}));
                else for (std::size_t i = 0; i < count; ++i) c->ints[i] = get(i, std::uint32_t{});
                break;
            default:  // INT32, INT16, INT8, UINT16, UINT8, BOOL: int32_data when not raw
                if (!have_raw) { check_count(t.int32_data_size()); for (std::size_t i = 0; i < count; ++i) c->ints[i] = t.int32_data(static_cast<int>(i)); }
                else for (std::size_t i = 0; i < count; ++i) {
                    switch (dt) {
                        case tp::INT32: c->ints[i] = get(i, std::int32_t{}); break;
                        case tp::INT16: c->ints[i] = get(i, std::int16_t{}); break;
                        case tp::UINT16: c->ints[i] = get(i, std::uint16_t{}); break;
                        case tp::INT8: c->ints[i] = get(i, std::int8_t{}); break;
                        default: c->ints[i] = get(i, std::uint8_t{}); break;
                    }
                }
        }
        return c;
    }

    enum class source { activation, constant, unavailable };
    struct value {
        source k = source::activation;
        std::string tensor;  // core tensor (activation)
        constant_ptr c;
        std::string why;
        bool producer_listed = true;
    };

    value resolve(const onnx::NodeProto& n, const std::string& t) {
        if (auto it = act_.find(t); it != act_.end()) return {source::activation, it->second, nullptr, {}, true};
        if (auto it = const_.find(t); it != const_.end()) return {source::constant, {}, it->second, {}, true};
        if (auto it = initializer_.find(t); it != initializer_.end()) {
            auto c = decode(*it->second, t);
            const_[t] = c;
            return {source::constant, {}, c, {}, true};
        }
        if (auto it = unavailable_.find(t); it != unavailable_.end())
            return {source::unavailable, {}, nullptr, it->second.reason, it->second.producer_listed};
        fail("node \"" + node_name(n) + "\" (" + n.op_type() + ") reads \"" + t +
             "\", which no earlier node, input or initializer produces (the graph is not topologically sorted, or "
             "the file is corrupted)");
    }

    bool has_input(const onnx::NodeProto& n, int i) const { return i < n.input_size() && !n.input(i).empty(); }

    value input(const onnx::NodeProto& n, int i) {
        if (!has_input(n, i)) throw unsupported{"input " + std::to_string(i) + " is missing"};
        return resolve(n, n.input(i));
    }

    std::string activation(const onnx::NodeProto& n, int i) {
        value v = input(n, i);
        if (v.k == source::unavailable) throw unsupported{"reads \"" + n.input(i) + "\", " + v.why, !v.producer_listed};
        if (v.k == source::constant)
            throw unsupported{"input " + std::to_string(i) + " (\"" + n.input(i) + "\") is a constant of shape " +
                              v.c->shape_text() + "; ridgeline needs an activation there"};
        return v.tensor;
    }

    constant_ptr constant_input(const onnx::NodeProto& n, int i) {
        value v = input(n, i);
        if (v.k == source::unavailable) {
            throw unsupported{"input " + std::to_string(i) + " (\"" + n.input(i) + "\") is " + v.why +
                              "; ridgeline needs a constant there", !v.producer_listed};
        }
        if (v.k == source::activation)
            throw unsupported{"input " + std::to_string(i) + " (\"" + n.input(i) +
                              "\") is computed at run time; ridgeline needs a constant (an initializer) there"};
        return v.c;
    }

    const core::shape& shape_of(const std::string& tensor) const { return shape_.at(tensor); }

    // ------------------------------------------------------------------ attributes
    static const onnx::AttributeProto* attr(const onnx::NodeProto& n, const std::string& name) {
        for (const auto& a : n.attribute())
            if (a.name() == name) return &a;
        return nullptr;
    }
    static std::int64_t attr_int(const onnx::NodeProto& n, const std::string& name, std::int64_t fallback) {
        const auto* a = attr(n, name);
        return a ? a->i() : fallback;
    }
    static double attr_float(const onnx::NodeProto& n, const std::string& name, double fallback) {
        const auto* a = attr(n, name);
        return a ? tidy(a->f()) : fallback;
    }
    static std::string attr_string(const onnx::NodeProto& n, const std::string& name, const std::string& fallback) {
        const auto* a = attr(n, name);
        return a ? a->s() : fallback;
    }
    static std::vector<std::int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name,
                                               std::vector<std::int64_t> fallback) {
        const auto* a = attr(n, name);
        if (!a) return fallback;
        return {a->ints().begin(), a->ints().end()};
    }

    // ------------------------------------------------------------------ emitting layers
    std::string node_name(const onnx::NodeProto& n) const {
        return n.name().empty() ? n.op_type() + "_" + std::to_string(current_index_) : n.name();
    }

    core::op make(const std::string& kind, const std::vector<core::attribute>& attrs, const std::string& name) {
        try {
            return core::make_op(kind, attrs, name);
        } catch (const core::error& e) {
            throw unsupported{e.what()};
        }
    }

    /// Appends a layer named after the node, infers its shape, and records its parameters' data.
    std::string emit(const onnx::NodeProto& n, core::op o, std::vector<std::string> inputs,
                     std::vector<std::pair<std::string, constant_ptr>> params = {}) {
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
            auto spec = std::find_if(specs.begin(), specs.end(), [&](const core::param_spec& s) { return s.name == param; });
            if (spec == specs.end() || static_cast<std::int64_t>(c->values.size()) != spec->dims.numel() || c->integer)
                throw unsupported{param + " \"" + c->origin + "\" has shape " + c->shape_text() + ", " +
                                  std::string(core::kind_of(l.op)) + " needs " +
                                  (spec == specs.end() ? std::string("none") : spec->dims.to_string())};
            uses_.push_back({model_.layers().size(), param, c->values, c->origin});
        }
        shape_[l.name] = out;
        const std::string name = l.name;
        model_.add_layer(std::move(l));
        return name;
    }

    void fuse(int node) {
        fused_.insert(node);
        fused_now_.push_back(node);
    }

    void map_output(const std::string& onnx_tensor, const std::string& core_tensor) {
        act_[onnx_tensor] = core_tensor;
        mapped_now_.push_back(onnx_tensor);
    }

    /// Outputs other than the first must not be read (Dropout's mask, MaxPool's indices, ...).
    void only_first_output(const onnx::NodeProto& n) const {
        for (int i = 1; i < n.output_size(); ++i)
            if (!n.output(i).empty() && (readers_.count(n.output(i)) || graph_outputs_.count(n.output(i))))
                throw unsupported{"output " + std::to_string(i) + " (\"" + n.output(i) + "\") is used; ridgeline maps only the first"};
    }

    static std::shared_ptr<constant> derived(const constant& c, const std::string& tag) {
        auto d = std::make_shared<constant>(c);
        d->origin = c.origin + tag;
        return d;
    }

    /// Row-major [r, k] -> [k, r].
    static std::shared_ptr<constant> transposed2d(const constant& c) {
        auto d = derived(c, "^T");
        const auto r = static_cast<std::size_t>(c.dims[0]), k = static_cast<std::size_t>(c.dims[1]);
        for (std::size_t i = 0; i < r; ++i)
            for (std::size_t j = 0; j < k; ++j) d->values[j * r + i] = c.values[i * k + j];
        d->dims = {c.dims[1], c.dims[0]};
        return d;
    }

    static double scalar_of(const constant& c) { return c.integer ? static_cast<double>(c.ints.at(0)) : tidy(c.values.at(0)); }

    // ------------------------------------------------------------------ conversion
    void convert(const onnx::NodeProto& n, int index) {
        current_index_ = index;
        const std::size_t layers_before = model_.layers().size(), uses_before = uses_.size();
        mapped_now_.clear();
        fused_now_.clear();
        try {
            handle(n, index);
            cross_check(n);
        } catch (const unsupported& u) {
            model_.layers().resize(layers_before);
            uses_.resize(uses_before);
            for (const auto& t : mapped_now_) act_.erase(t);
            for (int k : fused_now_) fused_.erase(k);
            skip(n, u);
        }
    }

    void skip(const onnx::NodeProto& n, const unsupported& u) {
        // a node that computes only on integers (Shape, Gather of a shape, ...) is shape arithmetic: it is not
        // listed; a layer that needs its value says so
        bool integer_only = n.output_size() > 0;
        for (const auto& o : n.output()) {
            auto t = onnx_type_.find(o);
            integer_only = integer_only && t != onnx_type_.end() && is_int_type(t->second);
        }
        const bool listed = u.listed && !integer_only;
        std::string reason = u.reason;
        if (integer_only) reason = "computes on integers (shape arithmetic) only; " + reason;
        issues_.push_back({{node_name(n), op_type(n), reason}, listed});
        for (const auto& o : n.output()) {
            if (o.empty()) continue;
            auto s = onnx_shape_.find(o);
            auto t = onnx_type_.find(o);
            const bool usable = options_.skip_unsupported && s != onnx_shape_.end() && !s->second.empty() &&
                                t != onnx_type_.end() && is_float_type(t->second) &&
                                std::all_of(s->second.begin(), s->second.end(), [](std::int64_t d) { return d >= 1; });
            if (usable) {
                const std::string name = unique(o);
                model_.add_input({name, core::shape(s->second), false});
                act_[o] = name;
                shape_[name] = core::shape(s->second);
            } else {
                unavailable_[o] = {"the output of node \"" + node_name(n) + "\" (" + op_type(n) + "), which was not imported",
                                   listed};
            }
        }
    }

    static std::string op_type(const onnx::NodeProto& n) {
        return n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "." + n.op_type();
    }

    void cross_check(const onnx::NodeProto& n) {
        for (const auto& t : mapped_now_) {
            auto s = onnx_shape_.find(t);
            if (s == onnx_shape_.end()) continue;
            const core::shape& ours = shape_of(act_.at(t));
            if (ours.dims() != s->second)
                throw unsupported{"ridgeline infers " + ours.to_string() + " for \"" + t + "\" but ONNX shape inference " +
                                  dims_text(s->second) + " (node \"" + node_name(n) + "\")"};
        }
    }

    void handle(const onnx::NodeProto& n, int index) {
        const std::string domain = n.domain();
        const std::string& op = n.op_type();
        if (!(domain.empty() || domain == "ai.onnx") && !(domain == "com.microsoft" && op == "Gelu"))
            throw unsupported{"ops of domain \"" + domain + "\" are not supported"};
        if (op == "Conv") return conv(n);
        if (op == "Gemm") return gemm(n);
        if (op == "MatMul") return matmul(n, index);
        if (op == "BatchNormalization") return batch_norm(n);
        if (op == "Relu") return unary(n, "relu");
        if (op == "Sigmoid") return unary(n, "sigmoid");
        if (op == "Tanh") return unary(n, "tanh");
        if (op == "Clip") return clip(n);
        if (op == "Gelu") return gelu_node(n);
        if (op == "MaxPool" || op == "AveragePool") return pool(n, op == "MaxPool");
        if (op == "GlobalAveragePool") return global_avg_pool(n);
        if (op == "Add" || op == "Mul" || op == "Div") return binary(n, index);
        if (op == "Concat") return concat(n);
        if (op == "Flatten") return flatten(n);
        if (op == "Reshape") return reshape(n);
        if (op == "Transpose") return transpose(n);
        if (op == "Softmax") return softmax(n);
        if (op == "LayerNormalization") return layer_norm(n);
        if (op == "Identity" || op == "Dropout") return pass_through(n);
        if (op == "Constant") return constant_node(n);
        if (op == "Gather") return gather(n);
        throw unsupported{"ridgeline has no layer for " + op};
    }

    void unary(const onnx::NodeProto& n, const std::string& kind) {
        const std::string x = activation(n, 0);
        map_output(n.output(0), emit(n, make(kind, {}, node_name(n)), {x}));
    }

    void pass_through(const onnx::NodeProto& n) {
        only_first_output(n);
        if (n.op_type() == "Dropout" && has_input(n, 2)) {
            value tm = input(n, 2);
            if (tm.k != source::constant || scalar_of(*tm.c) != 0)
                throw unsupported{"training_mode is not a constant false; ridgeline models inference"};
        }
        value v = input(n, 0);
        if (v.k == source::activation) map_output(n.output(0), v.tensor);
        else if (v.k == source::constant) const_[n.output(0)] = v.c;
        else throw unsupported{"reads \"" + n.input(0) + "\", " + v.why, !v.producer_listed};
    }

    void constant_node(const onnx::NodeProto& n) {
        auto c = std::make_shared<constant>();
        c->origin = n.output(0);
        if (const auto* a = attr(n, "value")) {
            const_[n.output(0)] = decode(a->t(), n.output(0));
            return;
        }
        if (const auto* a = attr(n, "value_float")) c->values = {a->f()};
        else if (const auto* b = attr(n, "value_floats")) { c->values.assign(b->floats().begin(), b->floats().end()); c->dims = {static_cast<std::int64_t>(c->values.size())}; }
        else if (const auto* d = attr(n, "value_int")) { c->integer = true; c->ints = {d->i()}; }
        else if (const auto* e = attr(n, "value_ints")) { c->integer = true; c->ints.assign(e->ints().begin(), e->ints().end()); c->dims = {static_cast<std::int64_t>(c->ints.size())}; }
        else throw unsupported{"a Constant without a numeric value (sparse or string constants are not supported)"};
        const_[n.output(0)] = c;
    }

    /// (top, left, bottom, right) pads of a 2-D window op, auto_pad resolved against the input size.
    std::array<std::int64_t, 4> pads_of(const onnx::NodeProto& n, const core::shape& x, std::array<std::int64_t, 2> k,
                                        std::array<std::int64_t, 2> s, std::array<std::int64_t, 2> d) const {
        const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
        if (auto_pad == "VALID") return {0, 0, 0, 0};
        for (std::size_t i = 0; i < 2; ++i)
            if (k[i] < 1 || s[i] < 1 || d[i] < 1)
                throw unsupported{"kernel " + pair_text(k) + ", strides " + pair_text(s) + " and dilations " + pair_text(d) +
                                  " must all be >= 1"};
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

    static std::array<std::int64_t, 2> pair_attr(const onnx::NodeProto& n, const std::string& name, std::int64_t fallback) {
        const auto v = attr_ints(n, name, {fallback, fallback});
        if (v.size() != 2) throw unsupported{name + " has " + std::to_string(v.size()) + " values; only 2-D (two values) is supported"};
        return {v[0], v[1]};
    }

    /// a * b, or the node is unsupported (its attributes are out of any sensible range).
    static std::int64_t checked_or_unsupported(std::int64_t a, std::int64_t b, const std::string& what) {
        std::int64_t r = 0;
        if (__builtin_mul_overflow(a, b, &r)) throw unsupported{what + " does not fit in int64"};
        return r;
    }

    static std::string pair_text(std::array<std::int64_t, 2> p) { return std::to_string(p[0]) + "x" + std::to_string(p[1]); }

    void conv(const onnx::NodeProto& n) {
        const std::string x = activation(n, 0);
        const auto w = constant_input(n, 1);
        const core::shape& xs = shape_of(x);
        if (xs.rank() != 4) throw unsupported{"only 2-D convolutions (NCHW input) are supported; the input has rank " + std::to_string(xs.rank())};
        if (w->dims.size() != 4 || w->integer) throw unsupported{"weight of shape " + w->shape_text() + " is not a 2-D convolution kernel"};
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
        const core::op o = make("conv2d",
                                {{"in_channels", std::to_string(checked_or_unsupported(w->dims[1], groups, "in_channels (weight dimension 1 x group)"))},
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

    void pool(const onnx::NodeProto& n, bool max) {
        only_first_output(n);
        const std::string x = activation(n, 0);
        const core::shape& xs = shape_of(x);
        if (xs.rank() != 4) throw unsupported{"only 2-D pooling (NCHW input) is supported; the input has rank " + std::to_string(xs.rank())};
        if (!attr(n, "kernel_shape")) throw unsupported{"kernel_shape is missing"};
        const auto k = pair_attr(n, "kernel_shape", 0);
        const auto s = pair_attr(n, "strides", 1);
        const auto d = pair_attr(n, "dilations", 1);
        if (!max && d != std::array<std::int64_t, 2>{1, 1}) throw unsupported{"dilated average pooling is not supported"};
        const auto p = pads_of(n, xs, k, s, d);
        if (p[0] != p[2] || p[1] != p[3])
            throw unsupported{"asymmetric pads " + join_ints({p[0], p[1], p[2], p[3]}) + " (top x left x bottom x right); ridgeline's pools pad symmetrically"};
        std::vector<core::attribute> a{{"kernel_size", pair_text(k)}, {"stride", pair_text(s)}, {"padding", pair_text({p[0], p[1]})}};
        if (max) a.push_back({"dilation", pair_text(d)});
        a.push_back({"ceil_mode", attr_int(n, "ceil_mode", 0) ? "true" : "false"});
        if (!max) a.push_back({"count_include_pad", attr_int(n, "count_include_pad", 0) ? "true" : "false"});
        map_output(n.output(0), emit(n, make(max ? "max_pool2d" : "avg_pool2d", a, node_name(n)), {x}));
    }

    void global_avg_pool(const onnx::NodeProto& n) {
        const std::string x = activation(n, 0);
        if (shape_of(x).rank() != 4) throw unsupported{"only NCHW inputs are supported; the input has rank " + std::to_string(shape_of(x).rank())};
        map_output(n.output(0), emit(n, make("adaptive_avg_pool2d", {{"output_size", "1"}}, node_name(n)), {x}));
    }

    /// A chain of transpose layers that applies `perm` (output dim i = input dim perm[i]); returns the last
    /// tensor (x itself for the identity permutation).
    std::string permute(const onnx::NodeProto& n, std::string x, const std::vector<std::int64_t>& perm) {
        std::vector<std::int64_t> cur(perm.size());
        for (std::size_t i = 0; i < cur.size(); ++i) cur[i] = static_cast<std::int64_t>(i);
        for (std::size_t i = 0; i < perm.size(); ++i) {
            if (cur[i] == perm[i]) continue;
            const auto j = static_cast<std::size_t>(std::find(cur.begin(), cur.end(), perm[i]) - cur.begin());
            std::swap(cur[i], cur[j]);
            x = emit(n, make("transpose", {{"dim0", std::to_string(i)}, {"dim1", std::to_string(j)}}, node_name(n)), {x});
        }
        return x;
    }

    void gemm(const onnx::NodeProto& n) {
        const std::string a = activation(n, 0);
        if (shape_of(a).rank() != 2) throw unsupported{"input A has rank " + std::to_string(shape_of(a).rank()) + ", Gemm needs 2"};
        const bool trans_a = attr_int(n, "transA", 0) != 0, trans_b = attr_int(n, "transB", 0) != 0;
        const double alpha = attr_float(n, "alpha", 1.0), beta = attr_float(n, "beta", 1.0);
        if (!std::isfinite(alpha) || !std::isfinite(beta))
            throw unsupported{"alpha " + number_text(alpha) + " and beta " + number_text(beta) + " must be finite numbers"};
        value b = input(n, 1);
        if (b.k == source::unavailable) throw unsupported{"reads \"" + n.input(1) + "\", " + b.why, !b.producer_listed};
        if (b.k == source::constant) {
            if (b.c->dims.size() != 2 || b.c->integer) throw unsupported{"B has shape " + b.c->shape_text() + ", expected a matrix"};
            // linear's weight is [out, in]: B as stored when transB=1, B transposed when transB=0
            std::shared_ptr<constant> w = trans_b ? derived(*b.c, "") : transposed2d(*b.c);
            if (alpha != 1.0) {
                w->origin += "*alpha";
                for (auto& v : w->values) v = static_cast<float>(v * alpha);
            }
            const std::int64_t out = w->dims[0], in = w->dims[1];
            std::vector<std::pair<std::string, constant_ptr>> params{{"weight", w}};
            // beta = 0: C is multiplied by zero, so it is neither added nor stored (no bias parameter, no bias FLOPs)
            if (has_input(n, 2) && beta != 0.0) {
                const auto c = constant_input(n, 2);
                const bool vector_like = c->size() == 1 || (static_cast<std::int64_t>(c->size()) == out && !c->dims.empty() && c->dims.back() == out);
                if (!vector_like || c->integer)
                    throw unsupported{"bias C has shape " + c->shape_text() + "; ridgeline's linear adds a vector of out_features"};
                auto bias = derived(*c, "");
                if (c->size() == 1) {
                    bias->values.assign(static_cast<std::size_t>(out), c->values[0]);
                    bias->origin += "^broadcast";
                }
                bias->dims = {out};
                if (beta != 1.0) {
                    bias->origin += "*beta";
                    for (auto& v : bias->values) v = static_cast<float>(v * beta);
                }
                params.emplace_back("bias", bias);
            }
            std::string x = trans_a ? permute(n, a, {1, 0}) : a;
            const core::op o = make("linear", {{"in_features", std::to_string(in)}, {"out_features", std::to_string(out)},
                                               {"bias", params.size() > 1 ? "true" : "false"}}, node_name(n));
            map_output(n.output(0), emit(n, o, {x}, params));
            return;
        }
        if (has_input(n, 2) && beta != 0.0) throw unsupported{"Gemm of two activations with a bias C is not supported"};
        if (alpha != 1.0) throw unsupported{"Gemm of two activations with alpha != 1 is not supported"};
        std::string x = trans_a ? permute(n, a, {1, 0}) : a;
        std::string y = trans_b ? permute(n, b.tensor, {1, 0}) : b.tensor;
        map_output(n.output(0), emit(n, make("matmul", {}, node_name(n)), {x, y}));
    }

    /// The Add that follows a MatMul with a constant B and adds a constant vector of out_features (how
    /// PyTorch exports nn.Linear on inputs of rank > 2): its index, or -1.
    int bias_add_after(const onnx::NodeProto& n, std::int64_t out) {
        const std::string& y = n.output(0);
        if (graph_outputs_.count(y)) return -1;
        auto r = readers_.find(y);
        if (r == readers_.end() || r->second.size() != 1) return -1;
        const int j = r->second[0];
        const auto& add = proto_.graph().node(j);
        if (add.op_type() != "Add" || add.input_size() != 2) return -1;
        const std::string& other = add.input(0) == y ? add.input(1) : add.input(0);
        if (other == y) return -1;
        if (!const_.count(other) && !initializer_.count(other)) return -1;
        value c = resolve(add, other);
        if (c.c->integer || static_cast<std::int64_t>(c.c->size()) != out || c.c->dims.empty() || c.c->dims.back() != out) return -1;
        return j;
    }

    void matmul(const onnx::NodeProto& n, int index) {
        (void)index;
        value a = input(n, 0);
        if (a.k == source::unavailable) throw unsupported{"reads \"" + n.input(0) + "\", " + a.why, !a.producer_listed};
        if (a.k == source::constant) throw unsupported{"input A is a constant of shape " + a.c->shape_text() + "; ridgeline's matmul reads two activations"};
        value b = input(n, 1);
        if (b.k == source::unavailable) throw unsupported{"reads \"" + n.input(1) + "\", " + b.why, !b.producer_listed};
        if (b.k == source::activation) {
            map_output(n.output(0), emit(n, make("matmul", {}, node_name(n)), {a.tensor, b.tensor}));
            return;
        }
        if (b.c->dims.size() != 2 || b.c->integer)
            throw unsupported{"MatMul by a constant of shape " + b.c->shape_text() + "; ridgeline maps only a constant matrix (to linear)"};
        auto w = transposed2d(*b.c);  // [K, N] -> linear's [N, K]
        const std::int64_t in = b.c->dims[0], out = b.c->dims[1];
        std::vector<std::pair<std::string, constant_ptr>> params{{"weight", w}};
        const int add = bias_add_after(n, out);
        if (add >= 0) {
            const auto& an = proto_.graph().node(add);
            const std::string& other = an.input(0) == n.output(0) ? an.input(1) : an.input(0);
            auto bias = derived(*resolve(an, other).c, "");
            bias->dims = {out};
            params.emplace_back("bias", bias);
        }
        const core::op o = make("linear", {{"in_features", std::to_string(in)}, {"out_features", std::to_string(out)},
                                           {"bias", add >= 0 ? "true" : "false"}}, node_name(n));
        const std::string l = emit(n, o, {a.tensor}, params);
        if (add >= 0) {
            map_output(proto_.graph().node(add).output(0), l);
            fuse(add);
        } else {
            map_output(n.output(0), l);
        }
    }

    void batch_norm(const onnx::NodeProto& n) {
        only_first_output(n);
        if (attr_int(n, "training_mode", 0)) throw unsupported{"training_mode=1; ridgeline models inference"};
        const std::string x = activation(n, 0);
        if (shape_of(x).rank() != 4) throw unsupported{"only NCHW inputs (BatchNorm2d) are supported; the input has rank " + std::to_string(shape_of(x).rank())};
        const std::int64_t c = shape_of(x)[1];
        std::vector<std::pair<std::string, constant_ptr>> params{
            {"weight", constant_input(n, 1)}, {"bias", constant_input(n, 2)},
            {"running_mean", constant_input(n, 3)}, {"running_var", constant_input(n, 4)}};
        const core::op o = make("batch_norm2d", {{"num_features", std::to_string(c)}, {"eps", number_text(attr_float(n, "epsilon", 1e-5))}},
                                node_name(n));
        map_output(n.output(0), emit(n, o, {x}, params));
    }

    void clip(const onnx::NodeProto& n) {
        const std::string x = activation(n, 0);
        double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
        if (opset_ < 11) {
            lo = attr_float(n, "min", lo);
            hi = attr_float(n, "max", hi);
        } else {
            if (has_input(n, 1)) lo = scalar_of(*constant_input(n, 1));
            if (has_input(n, 2)) hi = scalar_of(*constant_input(n, 2));
        }
        const bool no_max = hi >= static_cast<double>(std::numeric_limits<float>::max());
        std::string kind;
        if (lo == 0 && hi == 6) kind = "relu6";
        else if (lo == 0 && no_max) kind = "relu";
        else throw unsupported{"Clip to [" + number_text(lo) + ", " + number_text(hi) + "]; ridgeline maps Clip [0, 6] to relu6 and Clip [0, inf) to relu, nothing else"};
        map_output(n.output(0), emit(n, make(kind, {}, node_name(n)), {x}));
    }

    void gelu_node(const onnx::NodeProto& n) {
        const std::string approximate = attr_string(n, "approximate", "none");
        if (approximate != "none" && approximate != "tanh") throw unsupported{"approximate \"" + approximate + "\" is not supported"};
        const std::string x = activation(n, 0);
        std::vector<core::attribute> a;
        if (approximate == "tanh") a.push_back({"approximate", "tanh"});
        map_output(n.output(0), emit(n, make("gelu", a, node_name(n)), {x}));
    }

    /// The single reader of `t` when it is a node of type `op` and `t` is not a graph output; else -1.
    int only_reader(const std::string& t, const std::string& op) const {
        if (graph_outputs_.count(t)) return -1;
        auto r = readers_.find(t);
        if (r == readers_.end() || r->second.size() != 1) return -1;
        return proto_.graph().node(r->second[0]).op_type() == op ? r->second[0] : -1;
    }

    /// Is `t` a scalar constant close to `v`?
    bool scalar_near(const onnx::NodeProto& n, const std::string& t, double v) {
        if (!const_.count(t) && !initializer_.count(t)) return false;
        const auto c = resolve(n, t).c;
        return c->size() == 1 && std::fabs(scalar_of(*c) - v) <= 1e-4 * std::max(1.0, std::fabs(v));
    }

    /// PyTorch's export of GELU (erf form): y = Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5), operands of
    /// the commutative ops in either order, every intermediate read once. Returns the node indices
    /// (Erf, Add, Mul, Mul) after the Div, or an empty vector.
    std::vector<int> gelu_pattern(const onnx::NodeProto& div) {
        const auto& g = proto_.graph();
        if (div.input_size() != 2 || !scalar_near(div, div.input(1), std::sqrt(2.0))) return {};
        const std::string& x = div.input(0);
        const int erf = only_reader(div.output(0), "Erf");
        if (erf < 0) return {};
        const int add = only_reader(g.node(erf).output(0), "Add");
        if (add < 0) return {};
        const auto& an = g.node(add);
        const std::string& one = an.input(0) == g.node(erf).output(0) ? an.input(1) : an.input(0);
        if (!scalar_near(an, one, 1.0)) return {};
        const int mul1 = only_reader(an.output(0), "Mul");
        if (mul1 < 0) return {};
        const auto& m1 = g.node(mul1);
        const std::string& m1_other = m1.input(0) == an.output(0) ? m1.input(1) : m1.input(0);
        if (m1_other != x) return {};
        const int mul2 = only_reader(m1.output(0), "Mul");
        if (mul2 < 0) return {};
        const auto& m2 = g.node(mul2);
        const std::string& half = m2.input(0) == m1.output(0) ? m2.input(1) : m2.input(0);
        if (!scalar_near(m2, half, 0.5)) return {};
        return {erf, add, mul1, mul2};
    }

    void binary(const onnx::NodeProto& n, int index) {
        (void)index;
        const std::string& op = n.op_type();
        if (n.input_size() != 2) throw unsupported{op + " with " + std::to_string(n.input_size()) + " inputs"};
        if (op == "Div") {
            if (auto nodes = gelu_pattern(n); !nodes.empty()) {
                const std::string x = activation(n, 0);
                // name it after the scope the five nodes share ("/mlp/act/Div" -> "/mlp/act/Gelu")
                std::string name = node_name(n);
                const auto slash = name.rfind('/');
                name = slash == std::string::npos ? "Gelu_" + std::to_string(current_index_) : name.substr(0, slash + 1) + "Gelu";
                onnx::NodeProto named = n;
                named.set_name(name);
                const std::string l = emit(named, make("gelu", {}, name), {x});
                map_output(proto_.graph().node(nodes.back()).output(0), l);
                for (int k : nodes) fuse(k);
                return;
            }
        }
        value a = input(n, 0), b = input(n, 1);
        for (const auto* v : {&a, &b})
            if (v->k == source::unavailable) throw unsupported{"reads " + v->why, !v->producer_listed};
        if (a.k == source::activation && b.k == source::activation) {
            if (op == "Div") throw unsupported{"Div of two activations: ridgeline has no division layer"};
            map_output(n.output(0), emit(n, make(op == "Add" ? "add" : "mul", {}, node_name(n)), {a.tensor, b.tensor}));
            return;
        }
        if (a.k == source::constant && b.k == source::constant) throw unsupported{op + " of two constants (fold it before export)"};
        const value& act = a.k == source::activation ? a : b;
        const value& con = a.k == source::activation ? b : a;
        if (op != "Add" && con.c->size() == 1 && !(op == "Div" && a.k == source::constant)) {
            const double c = scalar_of(*con.c);
            if (op == "Div" && c == 0) throw unsupported{"Div by the constant 0"};
            const double factor = op == "Div" ? 1.0 / c : c;
            map_output(n.output(0), emit(n, make("scale", {{"factor", number_text(factor)}}, node_name(n)), {act.tensor}));
            return;
        }
        throw unsupported{op + " with a constant of shape " + con.c->shape_text() + "; ridgeline maps " +
                          (op == "Add" ? "Add of two activations (or a bias after MatMul)"
                                       : op + " of two activations or by a scalar constant (to scale)")};
    }

    void concat(const onnx::NodeProto& n) {
        std::vector<std::string> xs;
        for (int i = 0; i < n.input_size(); ++i) xs.push_back(activation(n, i));
        if (!attr(n, "axis")) throw unsupported{"axis is missing"};
        map_output(n.output(0), emit(n, make("concat", {{"dim", std::to_string(attr_int(n, "axis", 1))}}, node_name(n)), xs));
    }

    void flatten(const onnx::NodeProto& n) {
        const std::string x = activation(n, 0);
        const auto& s = shape_of(x);
        const auto r = static_cast<std::int64_t>(s.rank());
        std::int64_t axis = attr_int(n, "axis", 1);
        if (axis < 0) axis += r;
        if (axis < 0 || axis > r) throw unsupported{"axis " + std::to_string(attr_int(n, "axis", 1)) + " is out of range for rank " + std::to_string(r)};
        if (axis == 1 && r >= 2) {
            map_output(n.output(0), emit(n, make("flatten", {{"start_dim", "1"}}, node_name(n)), {x}));
            return;
        }
        // ONNX Flatten is always 2-D: [prod(dims before axis), prod(dims from axis)]
        std::int64_t rows = 1;
        for (std::int64_t i = 0; i < axis; ++i) rows *= s[static_cast<std::size_t>(i)];
        map_output(n.output(0), emit(n, make("reshape", {{"shape", std::to_string(rows) + "x-1"}}, node_name(n)), {x}));
    }

    void reshape(const onnx::NodeProto& n) {
        const std::string x = activation(n, 0);
        std::vector<std::int64_t> target;
        value sv = input(n, 1);
        if (sv.k == source::constant && sv.c->integer) {
            target = sv.c->ints;
            if (attr_int(n, "allowzero", 0) && std::find(target.begin(), target.end(), 0) != target.end())
                throw unsupported{"allowzero=1 with a 0 in the shape (a dimension of size 0)"};
        } else if (auto s = onnx_shape_.find(n.output(0)); s != onnx_shape_.end()) {
            target = s->second;  // the shape is computed at run time, but shape inference knows the result
        } else {
            throw unsupported{"the target shape \"" + n.input(1) + "\" is computed at run time and ONNX shape inference could not resolve it"};
        }
        if (target.empty()) throw unsupported{"reshape to a scalar"};
        map_output(n.output(0), emit(n, make("reshape", {{"shape", join_ints(target)}}, node_name(n)), {x}));
    }

    void transpose(const onnx::NodeProto& n) {
        value v = input(n, 0);
        if (v.k == source::unavailable) throw unsupported{"reads \"" + n.input(0) + "\", " + v.why, !v.producer_listed};
        const std::size_t rank = v.k == source::constant ? v.c->dims.size() : shape_of(v.tensor).rank();
        std::vector<std::int64_t> perm = attr_ints(n, "perm", {});
        if (perm.empty())
            for (std::size_t i = 0; i < rank; ++i) perm.push_back(static_cast<std::int64_t>(rank - 1 - i));
        std::vector<std::int64_t> sorted = perm;
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t i = 0; i < sorted.size(); ++i)
            if (sorted.size() != rank || sorted[i] != static_cast<std::int64_t>(i))
                throw unsupported{"perm " + join_ints(perm) + " is not a permutation of " + std::to_string(rank) + " dimensions"};
        if (v.k == source::constant) {  // fold: a constant transposed at load time
            if (v.c->integer) throw unsupported{"Transpose of an integer constant"};
            auto c = derived(*v.c, "^T" + join_ints(perm));
            std::vector<std::int64_t> in_strides(rank, 1), out_dims(rank);
            for (std::size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * v.c->dims[i];
            for (std::size_t i = 0; i < rank; ++i) out_dims[i] = v.c->dims[static_cast<std::size_t>(perm[i])];
            std::vector<std::int64_t> idx(rank, 0);
            for (std::size_t o = 0; o < c->values.size(); ++o) {
                std::int64_t src = 0;
                for (std::size_t i = 0; i < rank; ++i) src += idx[i] * in_strides[static_cast<std::size_t>(perm[i])];
                c->values[o] = v.c->values[static_cast<std::size_t>(src)];
                for (std::size_t i = rank; i-- > 0;) {
                    if (++idx[i] < out_dims[i]) break;
                    idx[i] = 0;
                }
            }
            c->dims = out_dims;
            const_[n.output(0)] = c;
            return;
        }
        map_output(n.output(0), permute(n, v.tensor, perm));
    }

    void softmax(const onnx::NodeProto& n) {
        const std::string x = activation(n, 0);
        const auto r = static_cast<std::int64_t>(shape_of(x).rank());
        std::int64_t axis = attr_int(n, "axis", opset_ >= 13 ? -1 : 1);
        if (axis < 0) axis += r;
        if (opset_ < 13 && axis != r - 1)
            throw unsupported{"Softmax before opset 13 normalises over all dimensions from axis " + std::to_string(axis) +
                              " on; ridgeline's softmax normalises over one dimension"};
        map_output(n.output(0), emit(n, make("softmax", {{"dim", std::to_string(axis)}}, node_name(n)), {x}));
    }

    void layer_norm(const onnx::NodeProto& n) {
        only_first_output(n);
        const std::string x = activation(n, 0);
        const auto& s = shape_of(x);
        const auto r = static_cast<std::int64_t>(s.rank());
        std::int64_t axis = attr_int(n, "axis", -1);
        if (axis < 0) axis += r;
        if (axis < 0 || axis >= r) throw unsupported{"axis " + std::to_string(attr_int(n, "axis", -1)) + " is out of range"};
        std::vector<std::int64_t> normalized(s.dims().begin() + axis, s.dims().end());
        const auto scale = constant_input(n, 1);
        constant_ptr bias;
        if (has_input(n, 2)) {
            bias = constant_input(n, 2);
        } else {  // ridgeline's layer_norm has weight and bias; a missing B is a zero bias
            auto zero = std::make_shared<constant>();
            zero->dims = normalized;
            zero->values.assign(scale->values.size(), 0.0f);
            zero->origin = n.output(0) + ":zero_bias";
            bias = zero;
        }
        const core::op o = make("layer_norm", {{"normalized_shape", join_ints(normalized)}, {"eps", number_text(attr_float(n, "epsilon", 1e-5))}},
                                node_name(n));
        map_output(n.output(0), emit(n, o, {x}, {{"weight", scale}, {"bias", bias}}));
    }

    void gather(const onnx::NodeProto& n) {
        value data = input(n, 0);
        if (data.k != source::constant || data.c->dims.size() != 2 || data.c->integer)
            throw unsupported{"ridgeline maps Gather only as an embedding: a constant float table [num_embeddings, embedding_dim] indexed by int64 token ids"};
        if (attr_int(n, "axis", 0) != 0) throw unsupported{"Gather along axis " + std::to_string(attr_int(n, "axis", 0)) + " of a table"};
        const std::string ids = activation(n, 1);
        const core::op o = make("embedding", {{"num_embeddings", std::to_string(data.c->dims[0])}, {"embedding_dim", std::to_string(data.c->dims[1])}},
                                node_name(n));
        map_output(n.output(0), emit(n, o, {ids}, {{"weight", data.c}}));
    }

    // ------------------------------------------------------------------ result
    onnx_model finish() {
        std::vector<const issue*> listed;
        for (const auto& i : issues_)
            if (i.listed) listed.push_back(&i);
        if (!listed.empty() && !options_.skip_unsupported) {
            // one group per (op type, reason): `Erf "/l0/Erf" (+11 more): ridgeline has no layer for Erf`
            std::vector<std::pair<std::string, std::vector<const issue*>>> groups;
            for (const auto* i : listed) {
                const std::string key = i->node.op_type + "\n" + i->node.reason;
                auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == key; });
                if (g == groups.end()) groups.push_back({key, {i}});
                else g->second.push_back(i);
            }
            std::string text;
            for (const auto& [key, items] : groups) {
                text += (text.empty() ? "" : "; ") + items[0]->node.op_type + " \"" + items[0]->node.name + "\"";
                if (items.size() > 1) text += " (+" + std::to_string(items.size() - 1) + " more)";
                text += ": " + items[0]->node.reason;
            }
            fail(std::to_string(listed.size()) + " node(s) cannot be imported: " + text +
                 " (--skip-unsupported imports the rest)");
        }
        if (model_.layers().empty()) fail("no node could be imported as a layer");

        // unread inputs (a skipped node's only reader) are dropped
        std::set<std::string> read;
        for (const auto& l : model_.layers()) read.insert(l.inputs.begin(), l.inputs.end());
        auto& ins = model_.inputs();
        ins.erase(std::remove_if(ins.begin(), ins.end(), [&](const core::model_input& i) { return !read.count(i.name); }), ins.end());
        if (ins.empty()) fail("no layer reads a model input");

        // weights: an origin used by several layers is tied under its ONNX name (counted once)
        onnx_model out;
        out.weights = std::make_shared<backends::graph_data>();
        std::map<std::string, int> uses_of;
        for (const auto& u : uses_) ++uses_of[u.origin];
        std::set<std::string> own_keys;
        for (const auto& u : uses_)
            if (uses_of[u.origin] == 1) own_keys.insert(model_.layers()[u.layer].name + "." + u.param);
        std::map<std::string, std::string> tie_name;
        for (const auto& [origin, count] : uses_of)
            if (count > 1) {
                std::string name = origin;
                while (own_keys.count(name)) name += "#shared";
                tie_name[origin] = name;
            }
        for (const auto& u : uses_) {
            auto& l = model_.layers()[u.layer];
            if (auto t = tie_name.find(u.origin); t != tie_name.end()) l.tied[u.param] = t->second;
            const std::string key = backends::param_key(l, u.param);
            const auto specs = core::parameters_of(l.op);
            const auto spec = std::find_if(specs.begin(), specs.end(), [&](const core::param_spec& s) { return s.name == u.param; });
            out.weights->tensors.emplace(key, backends::host_tensor{spec->dims, u.data});
        }
        for (const auto& i : issues_) out.skipped.push_back(i.node);

        try {
            (void)core::analyze(model_, core::dtype::fp32);
        } catch (const core::error& e) {
            fail(e.what());
        }
        out.model = std::move(model_);
        return out;
    }

    struct input_info {
        std::string name;
        core::shape dims;
        bool indices = false;
    };

    fs::path file_;
    const onnx_options& options_;
    std::string label_;
    fs::path dir_;
    onnx::ModelProto proto_;
    std::int64_t opset_ = 13;
    int current_index_ = 0;
    std::vector<input_info> inputs_;
    std::map<std::string, const onnx::TensorProto*> initializer_;
    std::map<std::string, std::vector<int>> readers_;
    std::set<std::string> graph_outputs_;
    std::map<std::string, std::vector<std::int64_t>> onnx_shape_;
    std::map<std::string, int> onnx_type_;
    std::map<std::string, std::string> act_;         // ONNX tensor -> core tensor (input or layer name)
    std::map<std::string, core::shape> shape_;       // core tensor -> shape
    std::map<std::string, constant_ptr> const_;      // ONNX tensor -> constant value
    std::map<std::string, unavailable> unavailable_; // ONNX tensor -> why it has no value
    std::set<int> fused_;                            // nodes folded into an earlier node's layer
    std::set<std::string> used_;                     // core tensor names taken
    std::vector<std::string> mapped_now_;
    std::vector<int> fused_now_;
    std::vector<param_use> uses_;
    std::vector<issue> issues_;
    core::model model_;
};

}  // namespace

onnx_model import_onnx(const std::filesystem::path& file, const onnx_options& options) {
    importer im(file, options);
    try {
        return im.run();
    } catch (const core::error& e) {
        // errors of core (an overflow in a tensor's size, a shape rule) name the tensor or layer but not the file
        const std::string label = file.string() + ": ";
        if (std::string(e.what()).rfind(label, 0) == 0) throw;
        throw core::error(label + e.what());
    }
}

}  // namespace ridgeline::io
