#include "ridgeline/report/ceilings.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ridgeline/config.hpp"
#include "ridgeline/core/datasheet.hpp"
#include "ridgeline/report/format.hpp"

namespace ridgeline::report {

nlohmann::json ceilings_json(const backends::ceilings& c) {
    nlohmann::json ridge = nlohmann::json::object();
    for (const auto& [dt, g] : c.peak_gflops)
        if (c.bandwidth_gbs > 0) ridge[dt] = g / c.bandwidth_gbs;
    nlohmann::json sweep = nlohmann::json::array();
    for (const auto& [bytes, gbs] : c.working_set_gbs) sweep.push_back({bytes, gbs});
    nlohmann::json sheet = nullptr;
    if (auto e = core::find_datasheet(c.device_name)) {
        sheet = {{"device", std::string(e->device)},
                 {"fp32_tflops", e->fp32_tflops},
                 {"tf32_tflops", e->tf32_tflops},
                 {"fp16_tflops", e->fp16_tflops},
                 {"bf16_tflops", e->bf16_tflops},
                 {"memory_bandwidth_gbs", e->memory_bandwidth_gbs},
                 {"source", std::string(e->source)}};
    }
    return {{"backend", c.backend},
            {"device_name", c.device_name},
            {"datasheet", sheet},
            {"fingerprint", c.fingerprint},
            {"peak_gflops", c.peak_gflops},
            {"fma_peak_gflops", c.fma_peak_gflops},
            {"fma_peak_by_isa_gflops", c.fma_peak_by_isa_gflops},
            {"bandwidth_gbs", c.bandwidth_gbs},
            {"copy_gbs", c.copy_gbs},
            {"triad_gbs", c.triad_gbs},
            {"working_set_gbs", sweep},
            {"ridge_point", ridge},
            {"dispatch_overhead_ms", c.dispatch_overhead_ms},
            {"launch_overhead_ms", c.launch_overhead_ms},
            {"last_level_cache_bytes", c.last_level_cache_bytes},
            {"measured_at", c.measured_at},
            {"ridgeline_version", c.ridgeline_version},
            {"source", c.source},
            {"method", c.method}};
}

backends::ceilings ceilings_from_json(const nlohmann::json& j) {
    backends::ceilings c;
    auto need = [&](const char* key) -> const nlohmann::json& {
        if (!j.contains(key)) throw std::runtime_error(std::string("ceilings: missing field \"") + key + "\"");
        return j.at(key);
    };
    try {
        c.backend = need("backend").get<std::string>();
        c.fingerprint = need("fingerprint").get<std::string>();
        c.device_name = j.value("device_name", std::string());
        c.peak_gflops = need("peak_gflops").get<std::map<std::string, double>>();
        c.fma_peak_gflops = j.value("fma_peak_gflops", std::map<std::string, double>{});
        c.fma_peak_by_isa_gflops = j.value("fma_peak_by_isa_gflops", std::map<std::string, double>{});
        c.bandwidth_gbs = need("bandwidth_gbs").get<double>();
        c.copy_gbs = j.value("copy_gbs", 0.0);
        c.triad_gbs = j.value("triad_gbs", 0.0);
        for (const auto& p : j.value("working_set_gbs", nlohmann::json::array()))
            c.working_set_gbs.emplace_back(p.at(0).get<std::int64_t>(), p.at(1).get<double>());
        c.dispatch_overhead_ms = need("dispatch_overhead_ms").get<double>();
        c.launch_overhead_ms = j.value("launch_overhead_ms", 0.0);
        c.last_level_cache_bytes = j.value("last_level_cache_bytes", std::int64_t{0});
        c.measured_at = j.value("measured_at", std::string());
        c.ridgeline_version = j.value("ridgeline_version", std::string());
        c.source = j.value("source", std::string("measured"));
        c.method = j.value("method", std::map<std::string, std::string>{});
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(std::string("ceilings: a field has the wrong type: ") + e.what());
    }
    return c;
}

std::string ceilings_table(const backends::ceilings& c) {
    std::ostringstream out;
    out << "ceilings of " << c.backend << " (" << c.fingerprint << ")\n";
    out << c.source << (c.source == "cache" ? " (measured " : " ") << c.measured_at << (c.source == "cache" ? ")" : "")
        << " by ridgeline " << c.ridgeline_version << "\n\n";
    text_table t;
    t.add_column("ceiling", text_table::align::left);
    t.add_column("value", text_table::align::right);
    t.add_column("method", text_table::align::left);
    for (const auto& [dt, g] : c.peak_gflops) {
        auto m = c.method.find("peak_gflops." + dt);
        t.add_row({"compute roof " + dt, fixed(g, 1) + " GFLOP/s", m != c.method.end() ? m->second : ""});
    }
    for (const auto& [isa, g] : c.fma_peak_by_isa_gflops) t.add_row({"FMA peak " + isa, fixed(g, 1) + " GFLOP/s", ""});
    t.add_row({"bandwidth (roof)", fixed(c.bandwidth_gbs, 1) + " GB/s",
               c.method.count("bandwidth_gbs") ? c.method.at("bandwidth_gbs") : ""});
    if (c.copy_gbs > 0) t.add_row({"copy", fixed(c.copy_gbs, 1) + " GB/s", ""});
    if (c.triad_gbs > 0) t.add_row({"triad", fixed(c.triad_gbs, 1) + " GB/s", ""});
    for (const auto& [dt, g] : c.peak_gflops)
        if (c.bandwidth_gbs > 0) t.add_row({"ridge point " + dt, fixed(g / c.bandwidth_gbs, 2) + " FLOP/B", ""});
    t.add_row({"dispatch overhead", time_ms(c.dispatch_overhead_ms),
               c.method.count("dispatch_overhead_ms") ? c.method.at("dispatch_overhead_ms") : ""});
    if (c.launch_overhead_ms > 0) t.add_row({"kernel launch", time_ms(c.launch_overhead_ms), ""});
    if (c.last_level_cache_bytes > 0) t.add_row({"last-level cache", si(static_cast<double>(c.last_level_cache_bytes), "B"), ""});
    out << t.render();
    if (auto e = core::find_datasheet(c.device_name)) {
        out << "\ndatasheet (" << e->device << "): " << core::describe_peaks(*e) << "\n";
        for (core::dtype dt : core::all_dtypes()) {
            auto peak = e->peak_tflops(dt);
            auto it = c.peak_gflops.find(std::string(core::to_string(dt)));
            if (peak && it != c.peak_gflops.end())
                out << "  measured " << core::to_string(dt) << " roof = " << fixed(100.0 * it->second / (*peak * 1e3), 0)
                    << "% of the datasheet peak\n";
        }
        if (e->memory_bandwidth_gbs > 0 && c.bandwidth_gbs > 0)
            out << "  measured bandwidth = " << fixed(100.0 * c.bandwidth_gbs / e->memory_bandwidth_gbs, 0)
                << "% of the datasheet's\n";
        out << "  source: " << e->source << "\n";
    } else if (!c.device_name.empty()) {
        out << "\ndatasheet: \"" << c.device_name << "\" is not in ridgeline's table (core/src/datasheet.cpp)\n";
    }
    if (!c.working_set_gbs.empty()) {
        out << "\nworking-set sweep (triad):\n";
        text_table s;
        s.add_column("working set", text_table::align::right);
        s.add_column("GB/s", text_table::align::right);
        for (const auto& [bytes, gbs] : c.working_set_gbs) s.add_row({si(static_cast<double>(bytes), "B"), fixed(gbs, 1)});
        out << s.render();
    }
    return out.str();
}

namespace {
std::filesystem::path cache_dir() {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "ridgeline" / "ceilings";
    if (const char* h = std::getenv("HOME"); h && *h) return std::filesystem::path(h) / ".cache" / "ridgeline" / "ceilings";
    return std::filesystem::temp_directory_path() / "ridgeline" / "ceilings";
}
}  // namespace

std::string ceilings_cache_path(const std::string& fingerprint) {
    // FNV-1a of the fingerprint keeps the file name short and free of odd characters
    std::uint64_t h = 1469598103934665603ULL;
    for (unsigned char ch : fingerprint) h = (h ^ ch) * 1099511628211ULL;
    char name[64];
    std::snprintf(name, sizeof name, "%016llx.json", static_cast<unsigned long long>(h));
    return (cache_dir() / name).string();
}

std::optional<backends::ceilings> load_cached_ceilings(const std::string& fingerprint) {
    std::ifstream f(ceilings_cache_path(fingerprint));
    if (!f) return std::nullopt;
    try {
        const nlohmann::json j = nlohmann::json::parse(f);
        backends::ceilings c = ceilings_from_json(j);
        if (c.fingerprint != fingerprint || c.ridgeline_version != RIDGELINE_VERSION) return std::nullopt;
        c.source = "cache";
        return c;
    } catch (const std::exception&) {
        return std::nullopt;  // a damaged cache file is measured again
    }
}

std::string save_cached_ceilings(const backends::ceilings& c) {
    const std::string path = ceilings_cache_path(c.fingerprint);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    nlohmann::json j = ceilings_json(c);
    j["source"] = "measured";
    write_file_atomic(path, j.dump(2) + "\n");
    return path;
}

}  // namespace ridgeline::report
