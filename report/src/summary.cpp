#include "ridgeline/report/summary.hpp"

#include "ridgeline/core/memory.hpp"

#include <sstream>

#include "ridgeline/core/fusion.hpp"
#include "ridgeline/config.hpp"
#include "ridgeline/report/format.hpp"

namespace ridgeline::report {

namespace {
nlohmann::json shape_json(const core::shape& s) { return s.dims(); }
nlohmann::json intensity_json(const core::cost& c) {
    auto ai = c.arithmetic_intensity();
    return ai ? nlohmann::json(*ai) : nlohmann::json(nullptr);
}
}  // namespace

nlohmann::json conventions_json(core::dtype dt) {
    return {
        {"bytes_per_element", core::size_bytes(dt)},
        {"params", "trainable parameter elements (weights, biases, norm gamma/beta), as torchvision counts; a "
                   "tied tensor counts once in totals"},
        {"buffers", "non-trainable state elements (BatchNorm running mean and variance, held tensors that are not parameters)"},
        {"macs", "multiply-accumulates of linear, conv2d and matmul, padding taps included (torchvision, fvcore, "
                 "thop report this number)"},
        {"executed_macs", "macs without the work a kernel skips: conv2d taps that fall in the padding (benchdnn "
                          "counts the same), attention's query-key pairs the causal mask or window removes; the "
                          "roofline's compute floor counts these"},
        {"flops", "2*macs + one add per output element for a bias + elementwise work per op (docs/conventions.md); "
                  "PyTorch's FlopCounterMode reports 2*macs (attention: 2*macs, every query-key pair)"},
        {"executed_flops", "flops without the 2 FLOP of each skipped MAC (padding taps, masked attention pairs)"},
        {"bytes", "minimal compulsory traffic: every input, parameter and buffer element read once, every output "
                  "element written once; views move 0 bytes"},
        {"arithmetic_intensity", "flops / bytes"},
    };
}

nlohmann::json totals_json(const core::cost& c) {
    return {{"params", c.params},
            {"buffers", c.buffers},
            {"macs", c.macs},
            {"executed_macs", c.executed_macs()},
            {"flops", c.flops},
            {"executed_flops", c.executed_flops()},
            {"bytes", c.bytes},
            {"arithmetic_intensity", intensity_json(c)}};
}

nlohmann::json layer_json(const core::layer_analysis& l) {
    nlohmann::json in_shapes = nlohmann::json::array();
    for (const auto& s : l.input_shapes) in_shapes.push_back(shape_json(s));
    nlohmann::json j = {
        {"name", l.layer.name},
        {"op", std::string(core::kind_of(l.layer.op))},
        {"layer", core::to_string(l.layer.op)},
        {"inputs", l.layer.inputs},
        {"input_shapes", in_shapes},
        {"output_shape", shape_json(l.output_shape)},
        {"params", l.cost.params},
        {"buffers", l.cost.buffers},
        {"macs", l.cost.macs},
        {"executed_macs", l.cost.executed_macs()},
        {"flops", l.cost.flops},
        {"executed_flops", l.cost.executed_flops()},
        {"bytes", l.cost.bytes},
        {"arithmetic_intensity", intensity_json(l.cost)},
    };
    if (!l.layer.tied.empty()) j["tied"] = l.layer.tied;
    if (!l.fused.empty()) {
        nlohmann::json members = nlohmann::json::array();
        for (std::size_t k = 0; k < l.fused.size(); ++k) {
            const core::layer_analysis& m = l.fused[k];
            members.push_back({{"name", m.layer.name},
                               {"op", std::string(core::kind_of(m.layer.op))},
                               {"layer", core::to_string(m.layer.op)},
                               {"rule", k == 0 ? std::string("producer") : std::string(core::to_string(core::rule_of(l, k)))},
                               {"macs", m.cost.macs},
                               {"flops", m.cost.flops},
                               {"bytes", m.cost.bytes}});
        }
        j["label"] = core::group_label(l);
        j["fused"] = members;
    }
    return j;
}

nlohmann::json summary_json(const core::model_analysis& a, const run_info& info) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& in : a.inputs)
        inputs.push_back({{"name", in.name}, {"shape", shape_json(in.dims)}, {"dtype", in.indices ? "int64" : std::string(core::to_string(a.data_type))}});
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : a.layers) layers.push_back(layer_json(l));
    nlohmann::json j = {
        {"schema", "ridgeline.summary/1"},
        {"ridgeline_version", RIDGELINE_VERSION},
        {"model", a.model_name},
        {"pass", pass_json(a)},
        {"source", info.source},
        {"command_line", info.command_line},
        {"batch", a.batch},
        {"dtype", std::string(core::to_string(a.data_type))},
        {"inputs", inputs},
        {"outputs", a.outputs},
        {"conventions", conventions_json(a.data_type)},
        {"totals", totals_json(a.totals)},
        {"layers", layers},
        {"skipped_nodes", skipped_nodes_json(info.skipped_nodes)},
        {"folded_nodes", skipped_nodes_json(info.folded_nodes)},
        {"warnings", info.warnings},
    };
    if (const std::string f = core::describe_fusion(a); !f.empty()) j["fusion"] = f;
    return j;
}

nlohmann::json skipped_nodes_json(const std::vector<skipped_node>& skipped) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& s : skipped) j.push_back({{"name", s.name}, {"op_type", s.op_type}, {"reason", s.reason}});
    return j;
}

std::string skipped_nodes_footer(const std::vector<skipped_node>& skipped) {
    if (skipped.empty()) return {};
    std::string s = "skipped " + std::to_string(skipped.size()) + " ONNX node(s) that are not layers:";
    for (std::size_t i = 0; i < skipped.size(); ++i)
        s += (i ? "; " : " ") + skipped[i].op_type + " \"" + skipped[i].name + "\" (" + skipped[i].reason + ")";
    return s + "\n";
}

std::string folded_nodes_footer(const std::vector<skipped_node>& folded) {
    if (folded.empty()) return {};
    std::vector<std::pair<std::string, int>> by_op;  // in order of first appearance
    for (const auto& f : folded) {
        auto it = std::find_if(by_op.begin(), by_op.end(), [&](const auto& p) { return p.first == f.op_type; });
        if (it == by_op.end())
            by_op.emplace_back(f.op_type, 1);
        else
            ++it->second;
    }
    std::string s = "folded " + std::to_string(folded.size()) + " ONNX node(s) into constants when the file was read (";
    for (std::size_t i = 0; i < by_op.size(); ++i)
        s += (i ? ", " : "") + by_op[i].first + " " + std::to_string(by_op[i].second);
    return s + "; JSON lists them as folded_nodes)\n";
}

std::string model_heading(const core::model_analysis& a) {
    std::string s = "model " + a.model_name;
    if (a.run) s += " (" + core::describe(*a.run) + ")";
    return s;
}

std::string fusion_line(const core::model_analysis& a) {
    const std::string f = core::describe_fusion(a);
    return f.empty() ? std::string() : "fused as a deployment runs it: " + f + "\n";
}

nlohmann::json pass_json(const core::model_analysis& a) {
    if (!a.run) return nullptr;
    return {{"phase", std::string(core::to_string(a.run->phase))},
            {"batch", a.run->batch},
            {"seq", a.run->seq},
            {"kv_len", a.run->kv_len},
            {"kv_cache_bytes", core::memory_of(a).kv_cache_bytes}};
}

std::string inputs_text(const std::vector<core::model_input>& inputs) {
    if (inputs.size() == 1) return "input " + inputs[0].dims.to_string();
    std::string out = "inputs ";
    for (std::size_t i = 0; i < inputs.size(); ++i) out += (i ? ", " : "") + inputs[i].name + " " + inputs[i].dims.to_string();
    return out;
}

std::string shapes_text(const core::shapes& s) {
    std::string out;
    for (const auto& x : s) out += (out.empty() ? "" : ";") + x.to_string();
    return out;
}

std::string summary_table(const core::model_analysis& a, const std::vector<skipped_node>& skipped,
                          const std::vector<skipped_node>& folded) {
    using al = text_table::align;
    text_table t;
    t.add_column("layer", al::left, {0, true, false});  // a long name gives up its middle first
    t.add_column("op", al::left);
    t.add_column("output", al::left);
    t.add_column("params", al::right);
    t.add_column("MACs", al::right);
    t.add_column("FLOPs", al::right);
    t.add_column("bytes", al::right);
    t.add_column("FLOP/B", al::right);
    auto intensity = [](const core::cost& c) {
        auto ai = c.arithmetic_intensity();
        return ai ? fixed(*ai, 2) : std::string("-");
    };
    std::vector<std::string> tied;  // layers whose parameters another layer holds too (counted once in the total)
    for (const auto& l : a.layers) {
        if (!l.layer.tied.empty()) tied.push_back(l.layer.name);
        t.add_row({core::group_label(l), std::string(core::kind_of(l.layer.op)), l.output_shape.to_string(),
                   with_commas(l.cost.params) + (l.layer.tied.empty() ? "" : "^"), si(static_cast<double>(l.cost.macs)),
                   si(static_cast<double>(l.cost.flops)), si(static_cast<double>(l.cost.bytes), "B"),
                   intensity(l.cost)});
    }
    t.add_rule();
    t.add_row({"total (" + counted(static_cast<std::int64_t>(a.layers.size()), "layer") + ")", "", "", with_commas(a.totals.params),
               si(static_cast<double>(a.totals.macs)), si(static_cast<double>(a.totals.flops)),
               si(static_cast<double>(a.totals.bytes), "B"), intensity(a.totals)});
    std::ostringstream out;
    out << model_heading(a) << "  " << inputs_text(a.inputs) << "  dtype " << core::to_string(a.data_type) << "\n"
        << fusion_line(a) << "\n";
    out << t.render();
    out << "\nparams " << with_commas(a.totals.params) << "  buffers " << with_commas(a.totals.buffers) << "  MACs "
        << with_commas(a.totals.macs) << "  FLOPs " << with_commas(a.totals.flops) << "  bytes "
        << with_commas(a.totals.bytes) << "\n";
    if (!tied.empty())
        out << "^ " << counted(static_cast<std::int64_t>(tied.size()), "layer") << " (" << tied.front()
            << (tied.size() > 1 ? ", ..." : "")
            << (tied.size() == 1 ? ") uses" : ") use")
            << " a parameter tensor another layer uses too (tied or shared): shown on each, counted once in the total\n";
    if (const std::int64_t kv = core::memory_of(a).kv_cache_bytes; kv > 0)
        out << "KV cache " << si(static_cast<double>(kv), "B") << " (" << with_commas(kv)
            << " bytes: keys and values of every layer, " << a.run->kv_len + 1 << (a.run->kv_len == 0 ? " position" : " positions") << " per sequence, batch "
            << a.run->batch << ")\n";
    out << skipped_nodes_footer(skipped) << folded_nodes_footer(folded);
    return wrap_lines(out.str());
}

std::string summary_csv(const core::model_analysis& a) {
    std::ostringstream out;
    out << "name,op,layer,inputs,input_shapes,output_shape,params,buffers,macs,flops,bytes,arithmetic_intensity,"
           "executed_macs,executed_flops\n";
    for (const auto& l : a.layers) {
        const std::string inputs = core::input_labels(a, l);  // named as the rows are: a group by its label
        auto ai = l.cost.arithmetic_intensity();
        out << csv_field(core::group_label(l)) << ',' << core::kind_of(l.layer.op) << ',' << csv_field(core::to_string(l.layer.op))
            << ',' << csv_field(inputs) << ',' << shapes_text(l.input_shapes) << ',' << l.output_shape.to_string() << ','
            << l.cost.params << ',' << l.cost.buffers << ',' << l.cost.macs << ',' << l.cost.flops << ','
            << l.cost.bytes << ',' << (ai ? shortest(*ai) : std::string()) << ',' << l.cost.executed_macs() << ','
            << l.cost.executed_flops() << '\n';
    }
    return out.str();
}

}  // namespace ridgeline::report
