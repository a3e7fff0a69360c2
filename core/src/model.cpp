#include "ridgeline/core/model.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "ridgeline/core/checked.hpp"
#include "ridgeline/core/error.hpp"

namespace ridgeline::core {

std::string_view to_string(transformer_phase p) { return p == transformer_phase::decode ? "decode" : "prefill"; }

std::string describe(const transformer_run& r) {
    if (r.phase == transformer_phase::decode)
        return "decode step over a KV cache of " + std::to_string(r.kv_len) + " tokens";
    return "prefill of " + std::to_string(r.seq) + " tokens";
}

std::string model_builder::input(const std::string& name, shape dims, bool indices) {
    model_.add_input({name, std::move(dims), indices});
    current_ = name;
    return name;
}

std::string model_builder::add(const std::string& name, op o, std::vector<std::string> inputs) {
    model_.add_layer(layer{name, std::move(o), std::move(inputs), {}});
    current_ = name;
    return name;
}

std::string model_builder::then(const std::string& name, op o) { return add(name, std::move(o), {current_}); }

void model_builder::tie_last(const std::string& param, const std::string& shared) {
    if (model_.layers().empty()) throw invalid_layer("model \"" + model_.name() + "\": tie before any layer");
    model_.layers().back().tied[param] = shared;
}

namespace {

/// Kahn's algorithm over layers; keeps the given order where it is already topological.
std::vector<std::size_t> topological_order(const model& m) {
    const auto& ls = m.layers();
    std::unordered_map<std::string, std::size_t> producer;
    for (std::size_t i = 0; i < ls.size(); ++i) producer.emplace(ls[i].name, i);
    std::vector<std::vector<std::size_t>> readers(ls.size());
    std::vector<std::size_t> pending(ls.size(), 0);
    for (std::size_t i = 0; i < ls.size(); ++i)
        for (const auto& t : ls[i].inputs)
            if (auto it = producer.find(t); it != producer.end()) {
                readers[it->second].push_back(i);
                ++pending[i];
            }
    std::set<std::size_t> ready;
    for (std::size_t i = 0; i < ls.size(); ++i)
        if (pending[i] == 0) ready.insert(i);
    std::vector<std::size_t> order;
    while (!ready.empty()) {
        const std::size_t i = *ready.begin();
        ready.erase(ready.begin());
        order.push_back(i);
        for (std::size_t r : readers[i])
            if (--pending[r] == 0) ready.insert(r);
    }
    if (order.size() != ls.size()) {
        std::string names;
        int shown = 0;
        for (std::size_t i = 0; i < ls.size(); ++i)
            if (pending[i] > 0 && shown < 5) {
                names += (names.empty() ? "\"" : ", \"") + ls[i].name + "\"";
                ++shown;
            }
        throw invalid_layer("model \"" + m.name() + "\": the layers form a cycle (involving " + names + ")");
    }
    return order;
}

/// Where a tensor's elements live: `elements` names the tensor whose element set it is (flatten, reshape and transpose
/// keep the set, so they resolve to their input; a slice is a set of its own), `storage` the buffer behind it (every
/// view resolved, slices too) with its element count.
struct residence {
    std::string elements;
    std::string storage;
    std::int64_t storage_size = 0;
};

/// Elements a layer's inputs read more than once (docs/conventions.md, "A tensor read twice"): inputs with the same
/// element set count once (add(x, x), matmul(x, transpose(x)), add(s, s) for a slice s); different element sets of
/// one storage (slices of x) count their own elements, at most the storage's size (an upper bound on their union).
std::int64_t repeated_reads(const layer& l, const shapes& in, const std::map<std::string, residence>& where_is) {
    if (l.inputs.size() < 2) return 0;
    std::int64_t repeated = 0;
    std::set<std::string> sets;
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> per_storage;  // storage -> (elements read, its size)
    for (std::size_t i = 0; i < l.inputs.size(); ++i) {
        const residence& r = where_is.at(l.inputs[i]);
        if (!sets.insert(r.elements).second) {
            repeated = checked::add(repeated, in[i].numel(), "bytes");
            continue;
        }
        auto& entry = per_storage[r.storage];
        entry.first = checked::add(entry.first, in[i].numel(), "bytes");
        entry.second = r.storage_size;
    }
    for (const auto& [storage, entry] : per_storage)
        if (entry.first > entry.second) repeated = checked::add(repeated, entry.first - entry.second, "bytes");
    return repeated;
}

}  // namespace

model single_layer_model(const op& o, const std::vector<shape>& inputs, const std::string& layer_name,
                         const std::string& model_name) {
    model_builder b(model_name);
    std::vector<std::string> names;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        names.push_back(inputs.size() == 1 ? "input" : "input" + std::to_string(i));
        b.input(names.back(), inputs[i], std::holds_alternative<embedding>(o));
    }
    b.add(layer_name.empty() ? std::string(kind_of(o)) : layer_name, o, names);
    return b.build();
}

std::vector<const layer_analysis*> work_layers(const layer_analysis& la) {
    if (la.fused.empty()) return {&la};
    std::vector<const layer_analysis*> members;
    for (const auto& m : la.fused) members.push_back(&m);
    return members;
}

std::string layer_signature(const layer_analysis& l, dtype dt) {
    std::string s = to_string(l.layer.op);
    for (std::size_t i = 1; i < l.fused.size(); ++i) s += "+" + to_string(l.fused[i].layer.op);
    for (const shape& in : l.input_shapes) s += "|" + in.to_string();
    return s + "|" + std::string(to_string(dt));
}

model_analysis analyze(const model& m, dtype dt) {
    model_analysis a;
    a.model_name = m.name();
    a.data_type = dt;
    a.inputs = m.inputs();
    a.run = m.run();
    const std::string model_where = "model \"" + m.name() + "\"";
    if (m.inputs().empty()) throw invalid_layer(model_where + ": has no inputs");
    if (m.layers().empty()) throw invalid_layer(model_where + ": has no layers");
    a.batch = m.inputs().front().dims.rank() > 0 ? m.inputs().front().dims[0] : 1;

    std::map<std::string, shape> tensors;
    std::set<std::string> index_tensors;
    for (const auto& in : m.inputs()) {
        if (in.name.empty()) throw invalid_layer(model_where + ": an input has an empty name");
        if (in.dims.rank() == 0) throw invalid_layer(model_where + ": input \"" + in.name + "\" has no shape");
        if (in.dims.rank() > max_rank)
            throw invalid_layer(model_where + ": input \"" + in.name + "\" has " + std::to_string(in.dims.rank()) +
                                " dimensions, more than ridgeline's limit of " + std::to_string(max_rank));
        for (std::size_t i = 0; i < in.dims.rank(); ++i)
            if (in.dims[i] < 1)
                throw invalid_layer(model_where + ": input \"" + in.name + "\" has dimension " + std::to_string(i) +
                                    " = " + std::to_string(in.dims[i]) + ", every dimension must be >= 1");
        (void)in.dims.numel();
        if (!tensors.emplace(in.name, in.dims).second)
            throw invalid_layer(model_where + ": duplicate tensor name \"" + in.name + "\"");
        if (in.indices) index_tensors.insert(in.name);
    }
    std::set<std::string> layer_names;
    for (const auto& l : m.layers()) {
        if (l.name.empty()) throw invalid_layer(model_where + ": a " + std::string(kind_of(l.op)) + " layer has an empty name");
        if (tensors.count(l.name) || !layer_names.insert(l.name).second)
            throw invalid_layer(model_where + ": duplicate tensor name \"" + l.name + "\"");
    }
    for (const auto& l : m.layers())
        for (const auto& t : l.inputs)
            if (!tensors.count(t) && !layer_names.count(t))
                throw invalid_layer(where(l) + ": reads unknown tensor \"" + t + "\"");

    std::set<std::string> read;
    std::map<std::string, residence> where_is;  // every tensor's element set and storage
    for (const auto& in : m.inputs()) where_is[in.name] = {in.name, in.name, in.dims.numel()};
    // distinct parameter tensors: name -> element count
    std::map<std::string, std::pair<std::int64_t, bool>> distinct;
    for (std::size_t i : topological_order(m)) {
        const layer& l = m.layers()[i];
        shapes in;
        const bool is_embedding = std::holds_alternative<embedding>(l.op);
        for (const auto& t : l.inputs) {
            in.push_back(tensors.at(t));
            read.insert(t);
            const bool idx = index_tensors.count(t) > 0;
            if (is_embedding && !idx)
                throw invalid_layer(where(l) + ": reads \"" + t + "\", which is not a token-id input (embedding layers read int64 ids)");
            if (!is_embedding && idx)
                throw invalid_layer(where(l) + ": reads token ids \"" + t + "\"; only embedding layers read ids");
        }
        shape out;
        cost c;
        try {
            out = infer_shape(l, in);
            if (out.rank() > max_rank)
                throw invalid_layer(where(l) + ": output " + out.to_string() + " has more than " + std::to_string(max_rank) +
                                    " dimensions");
            c = cost_of(l, in, out, dt);
        } catch (const overflow_error& e) {
            // the arithmetic names the count ("conv2d macs: ..."); the user needs the layer too
            const std::string msg = e.what();
            if (msg.rfind(where(l), 0) == 0) throw;
            throw overflow_error(where(l) + ": " + msg);
        }
        c.bytes -= checked::mul(repeated_reads(l, in, where_is), size_bytes(dt), "bytes");  // <= the inputs counted
        if (!is_view(l.op) || l.inputs.empty()) {  // a parameter is its own storage
            where_is[l.name] = {l.name, l.name, out.numel()};
        } else {
            residence r = where_is.at(l.inputs.at(0));
            if (std::holds_alternative<slice>(l.op)) r.elements = l.name;  // a subset: its own element set
            where_is[l.name] = r;
        }
        for (const auto& p : parameters_of(l.op)) {
            auto tie = l.tied.find(p.name);
            const std::string full = tie != l.tied.end() ? tie->second : l.name + "." + p.name;
            const std::int64_t n = p.dims.numel();
            auto [it, inserted] = distinct.emplace(full, std::make_pair(n, p.trainable));
            if (!inserted && it->second.first != n)
                throw invalid_layer(where(l) + ": tied tensor \"" + full + "\" has " + std::to_string(n) +
                                    " elements here but " + std::to_string(it->second.first) + " elsewhere");
        }
        for (const auto& tied_entry : l.tied) {
            const std::string& param = tied_entry.first;  // not a structured binding: clang 14 cannot capture one
            const auto ps = parameters_of(l.op);
            if (std::none_of(ps.begin(), ps.end(), [&](const param_spec& p) { return p.name == param; }))
                throw invalid_layer(where(l) + ": ties parameter \"" + param + "\", which this op does not have");
        }
        tensors.emplace(l.name, out);
        a.totals += c;
        a.layers.push_back({l, std::move(in), std::move(out), c, {}});
    }
    a.totals.params = 0;
    a.totals.buffers = 0;
    for (const auto& [name, info] : distinct) {
        if (info.second)
            a.totals.params = checked::add(a.totals.params, info.first, "total params");
        else
            a.totals.buffers = checked::add(a.totals.buffers, info.first, "total buffers");
    }
    std::set<std::string> declared;
    for (const auto& o : m.outputs()) {
        if (!tensors.count(o) || std::any_of(m.inputs().begin(), m.inputs().end(),
                                             [&](const model_input& i) { return i.name == o; }))
            throw invalid_layer(model_where + ": output \"" + o + "\" names no layer (an output is a layer's tensor)");
        declared.insert(o);
    }
    for (const auto& la : a.layers)
        if (!read.count(la.layer.name) || declared.count(la.layer.name)) a.outputs.push_back(la.layer.name);
    return a;
}

}  // namespace ridgeline::core
