// ONNX import (RIDGELINE_HAVE_ONNX == 1): the importer's driver (load, convert every node in order through
// the op dispatch, finish) and import_onnx. The importer is declared in onnx_importer.hpp; its members are
// defined by what they do: onnx_load.cpp (reading and shape inference), onnx_values.cpp (tensors, constants,
// attributes, emitting layers) and one file per op family (onnx_ops_*.cpp).
#include "onnx_importer.hpp"

namespace ridgeline::io {

bool have_onnx() { return true; }

}  // namespace ridgeline::io

namespace ridgeline::io::onnx_detail {

onnx_model importer::run() {
    load();
    set_input_shapes();
    order_nodes();
    infer_shapes();
    index_graph();
    fold_constants();
    find_tanh_gelus();
    find_rotaries();
    const auto& g = graph().proto.graph();
    for (int i = 0; i < g.node_size(); ++i) {
        if (built_.fused.count(i) || consts_.folded.count(i)) continue;
        // folded now if it can be: the Shape of an activation that only this pass gave a shape (Swin's Pad,
        // whose pads are themselves folded, feeds the window partition's Reshape), and what reads it
        if (try_fold(i)) continue;
        convert(g.node(i), i);
    }
    return finish();
}

void importer::convert(const onnx::NodeProto& n, int index) {
    built_.current_index = index;
    const std::size_t layers_before = built_.model.layers().size(), uses_before = built_.uses.size();
    built_.mapped_now.clear();
    built_.fused_now.clear();
    built_.held_now.clear();
    built_.orphans_now.clear();
    try {
        handle(n, index);
        cross_check(n);
    } catch (const unsupported& u) {
        built_.model.layers().resize(layers_before);
        built_.uses.resize(uses_before);
        for (const auto& t : built_.mapped_now) built_.act.erase(t);
        for (int k : built_.fused_now) built_.fused.erase(k);
        for (const auto& t : built_.held_now) built_.held.erase(t);
        for (const auto& t : built_.orphans_now) built_.orphans.erase(t);
        // a pattern found before conversion that could not be made: its fused output has no value either
        if (auto m = built_.found_at.find(index); m != built_.found_at.end())
            consts_.missing[m->second.output] = {"the output of the " + m->second.what + " around node \"" +
                                                  m->second.scope_of + "\", which was not imported",
                                              u.listed};
        skip(n, u);
    }
}

void importer::skip(const onnx::NodeProto& n, const unsupported& u) {
    // a node that computes only on integers (Shape, Gather of a shape, ...) is shape arithmetic: it is not
    // listed; a layer that needs its value says so
    bool integer_only = n.output_size() > 0;
    for (const auto& o : n.output()) {
        auto t = graph().types.find(o);
        integer_only = integer_only && t != graph().types.end() && is_int_type(t->second);
    }
    const bool listed = u.listed && !integer_only;
    std::string reason = u.what();
    if (integer_only) reason = "computes on integers (shape arithmetic) only; " + reason;
    built_.issues.push_back({{node_name(n), op_type(n), reason}, listed});
    for (const auto& o : n.output()) {
        if (o.empty()) continue;
        auto s = graph().dims.find(o);
        auto t = graph().types.find(o);
        const bool usable = options_.skip_unsupported && s != graph().dims.end() && !s->second.empty() &&
                            t != graph().types.end() && is_float_type(t->second) &&
                            std::all_of(s->second.begin(), s->second.end(), [](std::int64_t d) { return d >= 1; });
        if (usable) {
            const std::string name = unique(o);
            built_.model.add_input({name, core::shape(s->second), false});
            built_.act[o] = name;
            built_.shapes[name] = core::shape(s->second);
        } else {
            // its readers are listed only when nothing upstream is: a node that failed because it read such an
            // output (u.listed false) passes on that its root was listed; shape arithmetic (not listed) does not
            consts_.missing[o] = {
                "the output of node \"" + node_name(n) + "\" (" + op_type(n) + "), which was not imported",
                u.listed ? listed : true};
        }
    }
}

std::string importer::op_type(const onnx::NodeProto& n) {
    return n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "." + n.op_type();
}

void importer::cross_check(const onnx::NodeProto& n) {
    for (const auto& t : built_.mapped_now) {
        if (built_.broadcast_views.count(t)) continue;  // an Expand folded into its readers keeps the unexpanded shape
        auto s = graph().dims.find(t);
        if (s == graph().dims.end()) continue;
        const core::shape& ours = shape_of(built_.act.at(t));
        if (ours.dims() != s->second)
            throw unsupported{"ridgeline infers " + ours.to_string() + " for \"" + t + "\" but ONNX shape inference " +
                              dims_text(s->second) + " (node \"" + node_name(n) + "\")"};
    }
}

void importer::handle(const onnx::NodeProto& n, int index) {
    if (auto m = built_.found_at.find(index); m != built_.found_at.end()) return emit_found(n, m->second);
    const std::string domain = n.domain();
    const std::string& op = n.op_type();
    if (!(domain.empty() || domain == "ai.onnx") && !(domain == "com.microsoft" && op == "Gelu"))
        throw unsupported{"ops of domain \"" + domain + "\" are not supported"};
    if (auto c = converters().find(op); c != converters().end()) return c->second(*this, n, index);
    // a node reading the output of one that was not imported is not listed (the producer is): in a graph that
    // failed upstream, a Sub of a LayerNorm that would otherwise fuse is no news
    for (int i = 0; i < n.input_size(); ++i)
        if (!n.input(i).empty())
            if (auto u = consts_.missing.find(n.input(i)); u != consts_.missing.end())
                throw unsupported{"reads \"" + n.input(i) + "\", " + u->second.reason, !u->second.producer_listed};
    throw unsupported{"ridgeline has no layer for " + op};
}

void importer::add_converter(converter_map& table, std::string_view op_type, converter c) {
    if (!table.emplace(std::string(op_type), c).second)
        throw std::logic_error("ONNX op type " + std::string(op_type) + " has two converters");
}

const importer::converter_map& importer::converters() {
    static const converter_map table = [] {
        converter_map t;
        add_window_converters(t);
        add_dense_converters(t);
        add_elementwise_converters(t);
        add_shape_converters(t);
        add_values_converters(t);
        return t;
    }();
    return table;
}

onnx_model importer::finish() {
    std::vector<const issue*> listed;
    for (const auto& i : built_.issues)
        if (i.listed) listed.push_back(&i);
    if (built_.resized_inputs && !options_.skip_unsupported)
        for (const auto* i : listed)
            if (i->node.op_type == "Reshape" && i->node.reason.find("cannot reshape") != std::string::npos)
                // an export traced at one batch bakes it into its Reshape targets: every later node fails with it
                fail("the export fixes its shapes at the file's input shape, and the batch or input shape given changed it: " +
                     i->node.op_type + " \"" + i->node.name + "\": " + i->node.reason +
                     " (export with a dynamic batch axis, torch.onnx.export(..., dynamic_axes=...), or keep the "
                     "file's input shape)");
    if (!listed.empty() && !options_.skip_unsupported) {
        // one group per (op type, reason): `Erf "/l0/Erf" (+11 more): ridgeline has no layer for Erf`
        std::vector<std::pair<std::string, std::vector<const issue*>>> groups;
        for (const auto* i : listed) {
            const std::string key = i->node.op_type + "\n" + i->node.reason;
            auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == key; });
            if (g == groups.end())
                groups.push_back({key, {i}});
            else
                g->second.push_back(i);
        }
        std::string text;
        for (const auto& [key, items] : groups) {
            text += (text.empty() ? "" : "; ") + items[0]->node.op_type + " \"" + items[0]->node.name + "\"";
            if (items.size() > 1) text += " (+" + std::to_string(items.size() - 1) + " more)";
            text += ": " + items[0]->node.reason;
        }
        fail(std::to_string(listed.size()) + " node(s) cannot be imported: " + text +
             " (skipping the unsupported nodes imports the rest)");
    }
    if (built_.model.layers().empty()) fail("no node could be imported as a layer");

    drop_orphans();
    // the graph's outputs that a later node reads too stay outputs (a tensor no layer reads is one anyway): kept
    // whole, never fused into their readers, verified with the rest
    {
        std::set<std::string> layer_names, read_by_layers;
        for (const auto& l : built_.model.layers()) {
            layer_names.insert(l.name);
            read_by_layers.insert(l.inputs.begin(), l.inputs.end());
        }
        std::set<std::string> added;
        for (const auto& o : graph().proto.graph().output())
            if (const auto t = built_.act.find(o.name()); t != built_.act.end() && layer_names.count(t->second) &&
                                                          read_by_layers.count(t->second) && added.insert(t->second).second)
                built_.model.add_output(t->second);
    }
    // unread inputs (a skipped node's only reader) are dropped
    std::set<std::string> read;
    for (const auto& l : built_.model.layers()) read.insert(l.inputs.begin(), l.inputs.end());
    auto& ins = built_.model.inputs();
    ins.erase(std::remove_if(ins.begin(), ins.end(), [&](const core::model_input& i) { return !read.count(i.name); }),
              ins.end());
    if (ins.empty()) fail("no layer reads a model input");

    // weights: an origin used by several layers is tied under its ONNX name (counted once)
    onnx_model out;
    out.weights = std::make_shared<backend_api::graph_data>();
    std::map<std::string, int> uses_of;
    for (const auto& u : built_.uses) ++uses_of[u.origin];
    std::set<std::string> own_keys;
    for (const auto& u : built_.uses)
        if (uses_of[u.origin] == 1) own_keys.insert(built_.model.layers()[u.layer].name + "." + u.param);
    std::map<std::string, std::string> tie_name;
    for (const auto& [origin, count] : uses_of)
        if (count > 1) {
            std::string name = origin;
            while (own_keys.count(name)) name += "#shared";
            tie_name[origin] = name;
        }
    for (const auto& u : built_.uses) {
        auto& l = built_.model.layers()[u.layer];
        if (auto t = tie_name.find(u.origin); t != tie_name.end()) l.tied[u.param] = t->second;
        if (u.absent) continue;  // shapes_only: backends fill it with seeded random values
        const std::string key = backend_api::param_key(l, u.param);
        const auto specs = core::parameters_of(l.op);
        const auto spec =
            std::find_if(specs.begin(), specs.end(), [&](const core::param_spec& s) { return s.name == u.param; });
        out.weights->tensors.emplace(key, backend_api::host_tensor{spec->dims, u.data});
    }
    for (const auto& i : built_.issues) out.skipped.push_back(i.node);
    out.folded = consts_.folded_nodes;
    out.absent_initializers = consts_.absent;

    try {
        (void)core::analyze(built_.model, core::dtype::fp32);
    } catch (const core::error& e) {
        fail(e.what());
    }
    out.model = std::move(built_.model);
    return out;
}

}  // namespace ridgeline::io::onnx_detail

namespace ridgeline::io {

onnx_model import_onnx(const std::filesystem::path& file, const onnx_options& options) {
    onnx_detail::importer im(file, options);
    try {
        return im.run();
    } catch (const std::bad_alloc&) {
        throw core::error(file.string() + ": out of memory while importing (a tensor or a folded constant is too "
                                          "large for this machine)");
    } catch (const core::error& e) {
        // errors of core (an overflow in a tensor's size, a shape rule) name the tensor or layer but not the file
        const std::string label = file.string() + ": ";
        if (std::string(e.what()).rfind(label, 0) == 0) throw;
        throw core::error(label + e.what());
    }
}

}  // namespace ridgeline::io
