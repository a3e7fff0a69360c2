// ONNX import: reading the file, the inputs' shapes, ONNX's shape inference (in a child process), the graph index.
#include "onnx_importer.hpp"

namespace ridgeline::io::onnx_detail {

void importer::load() {
    std::string bytes;
    try {
        bytes = core::read_regular_file(file_, "");
    } catch (const core::error& e) {
        fail(std::string(e.what()).substr(2));  // the reason without read_regular_file's ": "
    }
    if (bytes.empty()) fail("the file is empty, not an ONNX model");
    // a JSON text given as ONNX (a ridgeline model file, a config.json): say what it is and how to read it
    if (const auto first = bytes.find_first_not_of(" \t\r\n"); first != std::string::npos && bytes[first] == '{')
        throw core::request_error(label_ + ": a JSON text, not an ONNX model (a ridgeline model file or a Hugging Face "
                                           "config.json is read as such)",
                                  {"model-file", "hf-config"});
    if (!graph_.proto.ParseFromString(bytes))
        fail(
            "not a valid ONNX model: the protobuf data does not parse (the file is truncated or corrupted, or "
            "not an ONNX file)");
    if (!graph_.proto.has_graph() || graph_.proto.graph().node_size() == 0)
        fail(
            "not a valid ONNX model: it has no graph nodes (the file is truncated or corrupted, or not an ONNX "
            "file)");
    if (graph_.proto.ir_version() <= 0) fail("not a valid ONNX model: it has no ir_version (corrupted, or not an ONNX file)");
    for (const auto& o : graph_.proto.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") graph_.opset = o.version();
    dir_ = file_.parent_path();
    // ridgeline's names never hold control characters (a model file refuses them): the graph's, its nodes' and
    // its tensors' names are renamed alike, each control character to its code point ("a\nb" -> "a[U+000A]b"),
    // so the graph stays connected and every report, export and error prints them on one line
    auto clean = [](std::string* s) {
        if (std::string p = core::printable(*s); p != *s) *s = std::move(p);
    };
    auto* g = graph_.proto.mutable_graph();
    clean(g->mutable_name());
    for (auto& n : *g->mutable_node()) {
        clean(n.mutable_name());
        for (auto& s : *n.mutable_input()) clean(&s);
        for (auto& s : *n.mutable_output()) clean(&s);
    }
    for (auto* list : {g->mutable_input(), g->mutable_output(), g->mutable_value_info()})
        for (auto& v : *list) clean(v.mutable_name());
    for (auto& t : *g->mutable_initializer()) clean(t.mutable_name());
}

void importer::set_input_shapes() {
    auto* g = graph_.proto.mutable_graph();
    std::set<std::string> init_names;
    for (const auto& t : g->initializer()) init_names.insert(t.name());
    std::vector<onnx::ValueInfoProto*> real;
    for (auto& in : *g->mutable_input())
        if (!init_names.count(in.name())) real.push_back(&in);
    if (real.empty()) fail("the graph has no inputs (every input is an initializer)");
    if (!options_.inputs.empty() && options_.inputs.size() != real.size())
        fail("the model has " + std::to_string(real.size()) + " input(s) but " +
             std::to_string(options_.inputs.size()) + " input shape(s) were given");
    bool resized = false;  // an input given a shape other than the file's concrete one
    for (std::size_t i = 0; i < real.size(); ++i) {
        auto& in = *real[i];
        const std::string where = "input \"" + in.name() + "\"";
        if (!in.type().has_tensor_type()) fail(where + " is not a tensor");
        const int et = in.type().tensor_type().elem_type();
        if (!is_float_type(et) && et != onnx::TensorProto::INT64 && et != onnx::TensorProto::INT32)
            fail(where + " has element type " + type_name(et) +
                 "; ridgeline reads float inputs and int64 token ids");
        const bool has_shape = in.type().tensor_type().has_shape();
        const auto& file_dims = in.type().tensor_type().shape().dim();
        std::vector<std::int64_t> dims;
        if (!options_.inputs.empty()) {
            dims = options_.inputs[i].dims();
            if (has_shape && file_dims.size() != static_cast<int>(dims.size()))
                fail("the input shape " + options_.inputs[i].to_string() + " has rank " + std::to_string(dims.size()) +
                     " but " + where + " has rank " + std::to_string(file_dims.size()));
            if (options_.batch && dims[0] != *options_.batch)
                fail("batch " + std::to_string(*options_.batch) + " disagrees with the input shape " +
                     options_.inputs[i].to_string());
        } else {
            if (!has_shape) fail(where + " has no shape in the file; give its full shape");
            for (int d = 0; d < file_dims.size(); ++d) {
                const auto& dim = file_dims[d];
                if (d == 0 && (options_.batch || !dim.has_dim_value())) {
                    dims.push_back(options_.batch.value_or(1));
                } else if (dim.has_dim_value() && dim.dim_value() > 0) {
                    dims.push_back(dim.dim_value());
                } else {
                    const std::string sym = dim.has_dim_param() ? " (\"" + dim.dim_param() + "\")" : std::string();
                    fail(where + " has symbolic dimension " + std::to_string(d) + sym +
                         "; give the input's full shape (e.g. " + example_shape(file_dims) + ")");
                }
            }
        }
        if (has_shape)
            for (int d = 0; d < file_dims.size() && d < static_cast<int>(dims.size()); ++d)
                resized = resized || (file_dims[d].has_dim_value() && file_dims[d].dim_value() != dims[d]);
        auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
        shape->clear_dim();
        for (auto v : dims) shape->add_dim()->set_dim_value(v);
        graph_.inputs.push_back({in.name(), core::shape(dims), !is_float_type(et)});
    }
    built_.resized_inputs = resized;
    if (resized) {
        // an export with a fixed batch declares its outputs (and value_info) for that batch; with --batch or
        // --input they would contradict ONNX's shape inference ("Inferred shape and existing shape differ"):
        // keep their element types, drop their shapes, and let inference find them from the shapes used
        for (auto& o : *g->mutable_output())
            if (o.type().has_tensor_type()) o.mutable_type()->mutable_tensor_type()->clear_shape();
        g->clear_value_info();
    }
}

std::string importer::example_shape(const google::protobuf::RepeatedPtrField<onnx::TensorShapeProto_Dimension>& dims) {
    std::string s;
    for (int d = 0; d < dims.size(); ++d)
        s += (d ? "x" : "") + std::to_string(dims[d].has_dim_value() && dims[d].dim_value() > 0 ? dims[d].dim_value()
                                                                                                : (d == 0 ? 1 : 128));
    return s;
}

void importer::infer_shapes() {
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
#if !RIDGELINE_UNDER_ASAN
        // a malformed graph can make ONNX's inference allocate without end (a Slice with INT64_MIN steps grew
        // by 250 MB/s): the child may use at most shape_inference_memory_bytes of address space (not under
        // AddressSanitizer, whose shadow memory is terabytes of address space)
        const rlimit cap{shape_inference_memory_bytes, shape_inference_memory_bytes};
        ::setrlimit(RLIMIT_AS, &cap);
#endif
        std::string message;
        try {
            onnx::ShapeInferenceOptions o(false, 0, true);
            onnx::shape_inference::InferShapes(graph_.proto, registry, o);
            onnx::GraphProto inferred;
            *inferred.mutable_value_info() = graph_.proto.graph().value_info();
            *inferred.mutable_output() = graph_.proto.graph().output();
            message = "O" + inferred.SerializeAsString();
        } catch (const std::bad_alloc&) {
            message = "Eit needed more than " + std::to_string(shape_inference_memory_bytes >> 30) +
                      " GiB of memory (the graph's shapes are absurd or the file is corrupted)";
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
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
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
             (WIFSIGNALED(status) ? std::string(strsignal(WTERMSIG(status)))
                                  : "exit status " + std::to_string(WEXITSTATUS(status))) +
             "): the graph is malformed, e.g. an input with fewer dimensions than a Conv or pool over it needs");
    if (message[0] == 'E') {
        std::string what = message.substr(1);
        if (auto p = what.find('\n'); p != std::string::npos) what = what.substr(0, p);
        fail("ONNX shape inference failed: " + what);
    }
    onnx::GraphProto inferred;
    if (message[0] != 'O' || !inferred.ParseFromArray(message.data() + 1, static_cast<int>(message.size() - 1)))
        fail("ONNX shape inference returned nothing readable");
    graph_.proto.mutable_graph()->mutable_value_info()->Swap(inferred.mutable_value_info());
    graph_.proto.mutable_graph()->mutable_output()->Swap(inferred.mutable_output());
    auto record = [&](const onnx::ValueInfoProto& v) {
        if (!v.type().has_tensor_type()) return;
        const auto& tt = v.type().tensor_type();
        graph_.types[v.name()] = tt.elem_type();
        if (!tt.has_shape()) return;
        std::vector<std::int64_t> dims;
        for (const auto& d : tt.shape().dim()) {
            if (!d.has_dim_value()) return;
            dims.push_back(d.dim_value());
        }
        graph_.dims[v.name()] = dims;
    };
    for (const auto& v : graph_.proto.graph().value_info()) record(v);
    for (const auto& v : graph_.proto.graph().output()) record(v);
}

void importer::index_graph() {
    const auto& g = graph_.proto.graph();
    for (const auto& t : g.initializer()) graph_.initializer.emplace(t.name(), &t);
    for (int i = 0; i < g.node_size(); ++i)
        for (const auto& t : g.node(i).input())
            if (!t.empty()) graph_.readers[t].push_back(i);
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
                     "\", which " +
                     (it->second < 0 ? std::string("is a graph input")
                                     : "node \"" + node_name(g.node(it->second)) + "\" writes already") +
                     " (ONNX graphs assign each tensor once)");
        }
    for (const auto& [t, i] : writer)
        if (i >= 0) graph_.producer[t] = i;
    for (const auto& o : g.output()) graph_.outputs.insert(o.name());
    for (const auto& in : graph_.inputs) {
        const std::string name = unique(in.name);
        built_.model.add_input({name, in.dims, in.indices});
        built_.act[in.name] = name;
        built_.shapes[name] = in.dims;
    }
    std::string model_name = g.name().empty() ? file_.stem().string() : g.name();
    if (model_name == "main_graph" || model_name == "torch_jit" || model_name == "torch-jit-export")
        model_name = file_.stem().string();
    built_.model.set_name(model_name);
}

}  // namespace ridgeline::io::onnx_detail
