// Roll-ups of a profile: groups, orders and the top N (rollup.hpp).
#include "ridgeline/report/rollup.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/format.hpp"
#include "ridgeline/core/suggest.hpp"
#include "ridgeline/report/format.hpp"
#include "ridgeline/report/profile.hpp"

namespace ridgeline::report {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

std::vector<std::string> split_dots(const std::string& name) {
    std::vector<std::string> parts;
    for (const std::string_view part : core::split(name, '.')) parts.emplace_back(part);
    return parts;
}

bool numbered(const std::string& part) {
    return !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string join(const std::vector<std::string>& parts, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n && i < parts.size(); ++i) out += (i ? "." : "") + parts[i];
    return out;
}

/// The part of a name before its numbered part (`through`: up to and including it); the name less its last part
/// where it has no numbered part; a one-part name itself.
std::string up_to_number(const std::vector<std::string>& parts, bool through) {
    for (std::size_t i = 1; i < parts.size(); ++i)
        if (numbered(parts[i])) return join(parts, through ? i + 1 : i);
    return parts.size() > 1 ? join(parts, parts.size() - 1) : parts[0];
}

[[noreturn]] void unknown(const std::string& what, const std::string& text, const std::vector<std::string>& known,
                          const std::string& field) {
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw core::request_error(what + " \"" + core::printable(text) + "\" is not one of " + list +
                                  core::did_you_mean(text, known),
                              {field});
}

double median_of(const profiler::layer_profile& p) { return p.has_time() ? p.time->stats.median : 0.0; }

std::string bound_of(const profiler::layer_profile& p) {
    if (p.roofline) return std::string(core::to_string(p.roofline->bound));
    if (p.has_time() && p.time->disturbed) return std::string(core::to_string(core::bound_class::disturbed));
    return "-";
}

/// A group's sums as its layers are added, and the row they make.
struct group_sums {
    group_row row;
    double rated_ms = 0, rated_flops = 0, rated_bytes = 0;  // the layers whose rates are shown
    double roof_ms = 0, roof_weighted = 0;                  // the layers with a %roof
    std::map<std::string, double> by_bound;

    void add(const profiler::layer_profile& p) {
        ++row.layers;
        const auto& c = p.analysis.cost;
        row.flops += static_cast<double>(c.flops);
        row.executed_flops += static_cast<double>(c.executed_flops());
        row.bytes += static_cast<double>(c.bytes);
        if (!p.has_time()) return;
        const double t = p.time->stats.median;
        ++row.timed;
        row.time_ms += t;
        if (p.time->disturbed) row.disturbed_ms += t;
        const layer_rates shown = shown_rates(p);
        if (!shown.hidden) {
            rated_ms += t;
            rated_flops += static_cast<double>(c.executed_flops());
            rated_bytes += static_cast<double>(c.bytes);
        }
        if (std::isfinite(shown.roof_fraction)) {
            roof_ms += t;
            roof_weighted += shown.roof_fraction * t;
        }
        if (p.roofline || p.time->disturbed) by_bound[bound_of(p)] += t;
    }

    group_row done(double sum_ms) const {
        group_row g = row;
        g.time_share = sum_ms > 0 ? g.time_ms / sum_ms : 0.0;
        g.gflops = rated_ms > 0 ? rated_flops / (rated_ms * 1e6) : nan;
        g.gbs = rated_ms > 0 ? rated_bytes / (rated_ms * 1e6) : nan;
        g.roof_fraction = roof_ms > 0 ? roof_weighted / roof_ms : nan;
        for (const auto& [b, ms] : by_bound)
            if (ms > g.bound_share * g.time_ms || g.bound.empty()) {
                g.bound = b;
                g.bound_share = g.time_ms > 0 ? ms / g.time_ms : 0.0;
            }
        return g;
    }
};

std::string key_of(const profiler::layer_profile& p, const view_options& v) {
    switch (v.group) {
        case group_key::op: return std::string(core::kind_of(p.analysis.layer.op));
        case group_key::bound: return bound_of(p);
        default: return module_of(p.analysis.layer.name, v);
    }
}

/// Rows sorted by `s`: longest first; lowest %roof first, rows without one last; by name. Stable: ties keep the
/// model's order.
template <class T, class Time, class Roof, class Name>
void sort_rows(std::vector<T>& rows, sort_key s, Time time, Roof roof, Name name) {
    if (s == sort_key::time)
        std::stable_sort(rows.begin(), rows.end(), [&](const T& a, const T& b) { return time(a) > time(b); });
    else if (s == sort_key::roof)
        std::stable_sort(rows.begin(), rows.end(), [&](const T& a, const T& b) {
            const double ra = roof(a), rb = roof(b);
            if (std::isfinite(ra) != std::isfinite(rb)) return std::isfinite(ra);
            return std::isfinite(ra) && ra < rb;
        });
    else if (s == sort_key::name)
        std::stable_sort(rows.begin(), rows.end(), [&](const T& a, const T& b) { return name(a) < name(b); });
}

}  // namespace

std::string_view to_string(group_key g) {
    switch (g) {
        case group_key::none: return "none";
        case group_key::op: return "op";
        case group_key::module: return "module";
        case group_key::prefix: return "module:N";
        case group_key::block: return "block";
        case group_key::bound: return "bound";
    }
    return "?";
}

std::string_view to_string(sort_key s) {
    switch (s) {
        case sort_key::model: return "model";
        case sort_key::time: return "time";
        case sort_key::roof: return "roof";
        case sort_key::name: return "name";
    }
    return "?";
}

view_options parse_group_by(const std::string& text, view_options v) {
    const std::vector<std::string> known = {"op", "module", "module:N", "block", "bound"};
    if (text == "op") v.group = group_key::op;
    else if (text == "module") v.group = group_key::module;
    else if (text == "block") v.group = group_key::block;
    else if (text == "bound") v.group = group_key::bound;
    else if (text.rfind("module:", 0) == 0) {
        const std::string n = text.substr(7);
        if (n.empty() || n.size() > 3 || !numbered(n) || std::stoi(n) < 1)
            throw core::request_error("group by \"" + core::printable(text) +
                                          "\": module:N takes the number of the name's dotted parts, 1 to 999",
                                      {"group-by"});
        v.group = group_key::prefix;
        v.prefix_parts = std::stoi(n);
    } else {
        unknown("group by", text, known, "group-by");
    }
    return v;
}

sort_key parse_sort(const std::string& text) {
    if (text == "model") return sort_key::model;
    if (text == "time") return sort_key::time;
    if (text == "roof") return sort_key::roof;
    if (text == "name") return sort_key::name;
    unknown("sort by", text, {"model", "time", "roof", "name"}, "sort");
}

std::string module_of(const std::string& name, const view_options& v) {
    const std::vector<std::string> parts = split_dots(name);
    std::string m;
    switch (v.group) {
        case group_key::prefix: m = join(parts, static_cast<std::size_t>(std::max(1, v.prefix_parts))); break;
        case group_key::block: m = up_to_number(parts, true); break;
        default: m = up_to_number(parts, false);
    }
    // a name that begins with a dot, or has two in a row, has empty parts: its group is never blank
    while (!m.empty() && m.back() == '.') m.pop_back();
    return m.empty() ? name : m;
}

double time_share(const profiler::profile_result& r, const profiler::layer_profile& p) {
    return p.has_time() && r.sum_of_layers_ms > 0 ? p.time->stats.median / r.sum_of_layers_ms : nan;
}

std::vector<group_row> rollup(const profiler::profile_result& r, const view_options& v) {
    if (v.group == group_key::none) throw std::invalid_argument("rollup: no grouping asked for");
    std::vector<group_sums> sums;
    std::map<std::string, std::size_t> at;
    for (const auto& p : r.layers) {
        const std::string key = key_of(p, v);
        auto [it, fresh] = at.emplace(key, sums.size());
        if (fresh) {
            sums.emplace_back();
            sums.back().row.key = key;
        }
        sums[it->second].add(p);
    }
    std::vector<group_row> rows;
    rows.reserve(sums.size());
    for (const auto& s : sums) rows.push_back(s.done(r.sum_of_layers_ms));
    sort_rows(rows, v.sort, [](const group_row& g) { return g.time_ms; },
              [](const group_row& g) { return g.roof_fraction; }, [](const group_row& g) { return g.key; });
    return rows;
}

std::vector<std::size_t> layer_order(const profiler::profile_result& r, sort_key s) {
    std::vector<std::size_t> order(r.layers.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    const auto& layers = r.layers;
    sort_rows(order, s, [&](std::size_t i) { return median_of(layers[i]); },
              [&](std::size_t i) { return layers[i].has_time() ? shown_rates(layers[i]).roof_fraction : nan; },
              [&](std::size_t i) { return layers[i].analysis.layer.name; });
    return order;
}

std::string top_footer(std::size_t shown, std::size_t all, double rest_ms, double sum_ms, const std::string& what,
                       sort_key s) {
    if (shown >= all) return "";
    return "showing " + std::to_string(shown) + " of " + std::to_string(all) + " " + what +
           (s == sort_key::model ? std::string(", in the model's order") : ", by " + std::string(to_string(s))) +
           "; the other " + std::to_string(all - shown) + (all - shown == 1 ? " takes " : " take ") + time_ms(rest_ms) +
           (sum_ms > 0 ? " (" + fixed(100.0 * rest_ms / sum_ms, 1) + "% of the sum of layers)" : std::string()) + "\n";
}

nlohmann::json groups_json(const std::vector<group_row>& groups) {
    auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
    nlohmann::json out = nlohmann::json::array();
    for (const auto& g : groups)
        out.push_back({{"key", g.key},
                       {"layers", g.layers},
                       {"timed", g.timed},
                       {"time_ms", g.time_ms},
                       {"time_share", g.time_share},
                       {"disturbed_ms", g.disturbed_ms},
                       {"flops", static_cast<std::int64_t>(g.flops)},  // counts, written as the layers' are
                       {"executed_flops", static_cast<std::int64_t>(g.executed_flops)},
                       {"bytes", static_cast<std::int64_t>(g.bytes)},
                       {"achieved_gflops", num(g.gflops)},
                       {"achieved_gbs", num(g.gbs)},
                       {"roof_fraction", num(g.roof_fraction)},
                       {"bound", g.bound.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.bound)},
                       {"bound_share", g.bound.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.bound_share)}});
    return out;
}

nlohmann::json view_json(const view_options& v) {
    std::string group(to_string(v.group));
    if (v.group == group_key::prefix) group = "module:" + std::to_string(v.prefix_parts);
    return {{"group_by", group},
            {"sort", std::string(to_string(v.sort))},
            {"top", v.top ? nlohmann::json(*v.top) : nlohmann::json(nullptr)}};
}

}  // namespace ridgeline::report
