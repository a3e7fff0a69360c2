// ONNX import, before any layer is made: the nodes in a topological order (stable: a sorted file keeps its
// order), then constant folding. Every node whose inputs are all known when the file is read (initializers,
// Constant nodes, shapes that shape inference or the given input shapes fix) is evaluated here, wherever it
// sits in the node list, so the pattern matchers (GELU's erf form, MatMul + bias Add) and the layers that need
// a constant (Reshape's target, Conv's weight) see the value whatever the exporter's node order. PyTorch puts
// each Constant node just before its first reader, after the node a pattern starts at; before this pass, the
// GELU of every PyTorch export was refused (`Erf: ridgeline has no layer for Erf`).
//
// Each op's rule is in onnx_fold_rules.cpp (its table, fold_rules(), is the list of what folds). What folds: Constant, Identity, Dropout, Shape, Size, Cast, Gather, Unsqueeze, Squeeze, Concat, Reshape,
// Flatten, Slice, Range, ConstantOfShape, Expand, Transpose, Where, Add, Sub, Mul, Div, Pow, Max, Min, Equal,
// Less, Greater, Not, Neg, Abs, Sqrt, Exp, Erf, Cos, Sin, Floor, Ceil, Reciprocal; each with ONNX's semantics (numpy
// broadcasting, C integer division, Cast to an integer truncates). A folded node is listed in
// onnx_model::folded, never skipped; a node that cannot fold (an input computed at run time, an output of more
// than max_folded_elements) is imported as usual.
#include "onnx_importer.hpp"

#include <functional>
#include <queue>

namespace ridgeline::io::onnx_detail {

void importer::order_nodes() {
    // Kahn's algorithm, always taking the ready node that comes first in the file: a sorted file keeps its
    // order, an unsorted one is sorted (in the proto itself, before ONNX's shape inference, which needs it;
    // an unnamed node is then named after its sorted index). Nodes on a cycle, or reading a tensor nothing
    // produces, go last in file order (resolve() then names the tensor no earlier node produces).
    auto& g = *graph_.proto.mutable_graph();
    std::map<std::string, int> writer;
    for (int i = 0; i < g.node_size(); ++i)
        for (const auto& t : g.node(i).output())
            if (!t.empty()) writer.emplace(t, i);
    std::vector<int> waiting(static_cast<std::size_t>(g.node_size()), 0);
    std::vector<std::vector<int>> after(static_cast<std::size_t>(g.node_size()));
    for (int i = 0; i < g.node_size(); ++i)
        for (const auto& t : g.node(i).input()) {
            auto w = writer.find(t);
            if (t.empty() || w == writer.end() || w->second == i) continue;
            ++waiting[static_cast<std::size_t>(i)];
            after[static_cast<std::size_t>(w->second)].push_back(i);
        }
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (int i = 0; i < g.node_size(); ++i)
        if (waiting[static_cast<std::size_t>(i)] == 0) ready.push(i);
    std::vector<bool> placed(static_cast<std::size_t>(g.node_size()), false);
    std::vector<int> order;
    while (!ready.empty()) {
        const int i = ready.top();
        ready.pop();
        order.push_back(i);
        placed[static_cast<std::size_t>(i)] = true;
        for (int j : after[static_cast<std::size_t>(i)])
            if (--waiting[static_cast<std::size_t>(j)] == 0) ready.push(j);
    }
    for (int i = 0; i < g.node_size(); ++i)
        if (!placed[static_cast<std::size_t>(i)]) order.push_back(i);
    google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
    for (int i : order) sorted.Add()->Swap(g.mutable_node(i));
    g.mutable_node()->Swap(&sorted);
}

void importer::fold_constants() {
    const auto& g = graph_.proto.graph();
    for (int i = 0; i < g.node_size(); ++i) (void)try_fold(i);
}

bool importer::try_fold(int i) {
    const auto& n = graph_.proto.graph().node(i);
    // Does folding a node make new data, counted against the file's cap? A Constant, Identity or Dropout does not
    // (its data is in the file already), nor a Transpose of an initializer that only it reads (a weight the
    // export transposes before its MatMul: at most the file's own initializers once). Neither depends on the node
    // order, so the folded nodes do not either (ViT-B exported without constant folding transposes 86 M weights).
    auto makes_data = [&](const onnx::NodeProto& m) {
        if (m.op_type() == "Constant" || m.op_type() == "Identity" || m.op_type() == "Dropout") return false;
        if (m.op_type() == "Transpose" && m.input_size() == 1 && graph_.initializer.count(m.input(0))) {
            auto r = graph_.readers.find(m.input(0));
            return r == graph_.readers.end() || r->second.size() != 1;
        }
        return true;
    };
    built_.current_index = i;
    bool done = false;
    try {
        done = fold(n);
        // past the file's cap only small results fold (shape arithmetic; ViT-B's export without constant
        // folding transposes 86 M weights before its attention's slice bounds)
        std::int64_t made = 0;
        if (done && makes_data(n))
            for (const auto& o : n.output())
                if (auto it = consts_.values.find(o); it != consts_.values.end()) made += static_cast<std::int64_t>(it->second->size());
        if (made > max_small_fold && consts_.folded_total + made > max_folded_total) done = false;
    } catch (const not_foldable&) {
        done = false;
    } catch (const unsupported&) {
        done = false;  // converting the node says why, in its turn
    } catch (const std::bad_alloc&) {
        done = false;
    }
    if (!done) {
        for (const auto& o : n.output()) consts_.values.erase(o);
        return false;
    }
    consts_.folded.insert(i);
    // a view of an initializer's data (a weight reshaped or transposed by the export) is still a parameter
    static const std::set<std::string> view_ops = {"Identity", "Dropout", "Transpose", "Reshape",
                                                   "Flatten",  "Unsqueeze", "Squeeze"};
    if (view_ops.count(n.op_type()) && n.input_size() >= 1 && consts_.values.count(n.input(0)) &&
        consts_.values.at(n.input(0))->initializer)
        for (const auto& o : n.output())
            if (auto it = consts_.values.find(o); it != consts_.values.end() && !it->second->initializer) {
                auto marked = std::make_shared<constant>(*it->second);
                marked->initializer = true;
                it->second = marked;
            }
    bool absent = false;  // made from absent data (shapes_only): so is the result
    for (const auto& t : n.input())
        if (!t.empty() && consts_.values.count(t)) absent = absent || consts_.values.at(t)->absent;
    if (absent)
        for (const auto& o : n.output())
            if (auto it = consts_.values.find(o); it != consts_.values.end() && !it->second->absent) {
                auto marked = std::make_shared<constant>(*it->second);
                marked->absent = true;
                it->second = marked;
            }
    const auto& c = *consts_.values.at(n.output(0));
    if (makes_data(n)) consts_.folded_total += static_cast<std::int64_t>(c.size());
    consts_.folded_nodes.push_back({node_name(n), op_type(n),
                             "folded into a constant" +
                                 (c.dims.empty() ? std::string(" scalar") : " of shape " + c.shape_text())});
    return true;
}

bool importer::known(const std::string& t) const {
    return t.empty() || consts_.values.count(t) || graph_.initializer.count(t);
}

std::vector<std::int64_t> importer::static_dims(const std::string& t) const {
    if (consts_.values.count(t)) return consts_.values.at(t)->dims;
    if (auto i = graph_.initializer.find(t); i != graph_.initializer.end())
        return {i->second->dims().begin(), i->second->dims().end()};
    if (auto a = built_.act.find(t); a != built_.act.end()) return shape_of(a->second).dims();  // a graph input
    if (auto s = graph_.dims.find(t); s != graph_.dims.end()) return s->second;
    throw not_foldable{};
}

bool importer::fold(const onnx::NodeProto& n) {
    if (!(n.domain().empty() || n.domain() == "ai.onnx") || n.output_size() < 1) return false;
    const auto rule = fold_rules().find(n.op_type());
    if (rule == fold_rules().end()) return false;
    const std::function<constant_ptr(int)> in = [&](int k) -> constant_ptr {
        return has_input(n, k) ? resolve(n, n.input(k)).c : nullptr;
    };
    const fold_args args{n, in};
    if (rule->second.before_inputs_known) return (this->*rule->second.fold)(args);
    for (const auto& t : n.input())
        if (!known(t)) return false;
    for (int k = 1; k < n.output_size(); ++k)
        if (!n.output(k).empty() && (graph_.readers.count(n.output(k)) || graph_.outputs.count(n.output(k)))) return false;
    // the inputs the rule reads without asking; a node that lacks one is no constant (its converter then says
    // what is missing), never a null read
    for (int k = 0; k < rule->second.inputs; ++k)
        if (!has_input(n, k)) return false;
    // --shapes-only: data that is absent (zeros here) moves through views and a Gather's rows (Swin's relative
    // position table: the indices are never absent, only float data is), but is never computed with (a Cast
    // of absent floats to a Reshape target would be a silent [0, 0])
    static const std::set<std::string> views = {"Identity", "Dropout", "Transpose", "Reshape",
                                                "Flatten",  "Unsqueeze", "Squeeze"};
    const std::string& op = n.op_type();
    for (int k = 0; k < n.input_size(); ++k)
        if (has_input(n, k) && in(k)->absent && !views.count(op) && !(op == "Gather" && k == 0)) return false;
    return (this->*rule->second.fold)(args);
}

}  // namespace ridgeline::io::onnx_detail
