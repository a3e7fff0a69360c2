#include "ridgeline/report/ceilings.hpp"

#include <chrono>
#include <climits>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "ridgeline/backends/disturbance.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/config.hpp"
#include "ridgeline/core/datasheet.hpp"
#include "ridgeline/core/file.hpp"
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
    nlohmann::json compute_tolerance = nlohmann::json::object();
    for (const auto& [dt, g] : c.peak_gflops) compute_tolerance[dt] = c.compute_tolerance(dt);
    return {{"schema", std::string(ceilings_schema)},
            {"backend", c.backend},
            {"device_name", c.device_name},
            {"datasheet", sheet},
            {"fingerprint", c.fingerprint},
            {"peak_gflops", c.peak_gflops},
            {"gemm_gflops", c.gemm_gflops},
            {"fma_peak_gflops", c.fma_peak_gflops},
            {"fma_peak_by_isa_gflops", c.fma_peak_by_isa_gflops},
            {"bandwidth_gbs", c.bandwidth_gbs},
            {"copy_gbs", c.copy_gbs},
            {"triad_gbs", c.triad_gbs},
            {"device_copy_gbs", c.device_copy_gbs},
            {"read_gbs", c.read_gbs},
            {"working_set_gbs", sweep},
            {"ridge_point", ridge},
            {"dispatch_overhead_ms", c.dispatch_overhead_ms},
            {"cold_dispatch_overhead_ms", c.cold_dispatch_overhead_ms},
            {"cold_bandwidth_gbs", c.cold_bandwidth_gbs},
            {"launch_overhead_ms", c.launch_overhead_ms},
            {"last_level_cache_bytes", c.last_level_cache_bytes},
            {"cache_level_bytes", c.cache_level_bytes},
            {"dram_level_bytes", c.dram_level_bytes()},
            {"spread", c.spread},
            {"tolerance", {{"compute", compute_tolerance}, {"bandwidth", c.bandwidth_tolerance()}}},
            {"measured_under",
             {{"quick", c.quick},
              {"disturbed", c.disturbed},
              {"disturbed_ceilings", c.disturbed_ceilings},
              {"stolen_fraction", c.stolen_fraction},
              {"load_average", c.load_average >= 0 ? nlohmann::json(c.load_average) : nlohmann::json(nullptr)}}},
            {"measured_at", c.measured_at},
            {"ridgeline_version", c.ridgeline_version},
            {"source", std::string(backends::to_string(c.source))},
            {"method", c.method}};
}

backends::ceilings ceilings_from_json(const nlohmann::json& j) {
    backends::ceilings c;
    if (!j.is_object()) throw core::error(std::string("ceilings: expected a JSON object, got ") + j.type_name());
    // each field read on its own, so that a wrong type names the field and what it holds
    auto wrong = [](const std::string& path, const nlohmann::json& v) {
        std::string shown = v.dump();
        if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
        return core::error("ceilings: field \"" + path + "\" has the wrong type (" + v.type_name() +
                                  (shown == v.type_name() ? "" : " " + shown) + ")");
    };
    // a map of numbers, or an array of integers: the entry at fault is named ("peak_gflops.fp32", "cache_level_bytes[1]")
    auto numbers = [&](const std::string& key, bool required = false) {
        std::map<std::string, double> m;
        if (!j.contains(key)) {
            if (required) throw core::error("ceilings: missing field \"" + key + "\"");
            return m;
        }
        const nlohmann::json& v = j.at(key);
        if (!v.is_object()) throw wrong(key, v);
        for (const auto& [k, x] : v.items()) {
            if (!x.is_number()) throw wrong(key + "." + k, x);
            m[k] = x.get<double>();
        }
        return m;
    };
    auto integer = [&](const std::string& path, const nlohmann::json& v) {
        if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX))
            throw core::error("ceilings: field \"" + path + "\" must be an integer of int64 (got " + v.dump() + ")");
        return v.get<std::int64_t>();
    };
    auto get = [&](const std::string& key, auto fallback, bool required = false) {
        using T = decltype(fallback);
        if (!j.contains(key)) {
            if (required) throw core::error("ceilings: missing field \"" + key + "\"");
            return fallback;
        }
        try {
            return j.at(key).get<T>();
        } catch (const nlohmann::json::exception&) {
            throw wrong(key, j.at(key));
        }
    };
    c.backend = get("backend", std::string(), true);
    c.fingerprint = get("fingerprint", std::string(), true);
    c.device_name = get("device_name", std::string());
    c.peak_gflops = numbers("peak_gflops", true);
    c.gemm_gflops = numbers("gemm_gflops");
    c.fma_peak_gflops = numbers("fma_peak_gflops");
    c.fma_peak_by_isa_gflops = numbers("fma_peak_by_isa_gflops");
    c.bandwidth_gbs = get("bandwidth_gbs", 0.0, true);
    c.copy_gbs = get("copy_gbs", 0.0);
    c.triad_gbs = get("triad_gbs", 0.0);
    c.device_copy_gbs = get("device_copy_gbs", 0.0);
    c.read_gbs = get("read_gbs", 0.0);
    const nlohmann::json sweep = get("working_set_gbs", nlohmann::json::array());
    if (!sweep.is_array()) throw wrong("working_set_gbs", sweep);
    for (std::size_t i = 0; i < sweep.size(); ++i) {
        const nlohmann::json& p = sweep[i];
        if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number())
            throw core::error("ceilings: field \"working_set_gbs[" + std::to_string(i) +
                                     "]\" must be [bytes, GB/s], an integer and a number (got " + p.dump() + ")");
        c.working_set_gbs.emplace_back(integer("working_set_gbs[" + std::to_string(i) + "][0]", p[0]), p[1].get<double>());
    }
    c.dispatch_overhead_ms = get("dispatch_overhead_ms", 0.0, true);
    c.launch_overhead_ms = get("launch_overhead_ms", 0.0);
    c.cold_dispatch_overhead_ms = get("cold_dispatch_overhead_ms", 0.0);
    c.cold_bandwidth_gbs = get("cold_bandwidth_gbs", 0.0);
    if (j.contains("last_level_cache_bytes")) c.last_level_cache_bytes = integer("last_level_cache_bytes", j.at("last_level_cache_bytes"));
    if (j.contains("cache_level_bytes")) {
        const nlohmann::json& levels = j.at("cache_level_bytes");
        if (!levels.is_array()) throw wrong("cache_level_bytes", levels);
        for (std::size_t i = 0; i < levels.size(); ++i)
            c.cache_level_bytes.push_back(integer("cache_level_bytes[" + std::to_string(i) + "]", levels[i]));
    }
    c.measured_at = get("measured_at", std::string());
    c.ridgeline_version = get("ridgeline_version", std::string());
    {
        const auto source_text = get("source", std::string("measured"));
        const auto source = backends::parse_ceilings_source(source_text);
        if (!source) throw wrong("source", j.at("source"));
        c.source = *source;
    }
    c.method = get("method", std::map<std::string, std::string>{});
    c.spread = numbers("spread");
    if (j.contains("measured_under") && j.at("measured_under").is_object()) {
        const auto& m = j.at("measured_under");
        try {
            c.quick = m.value("quick", false);
            c.disturbed = m.value("disturbed", false);
            c.disturbed_ceilings = m.value("disturbed_ceilings", std::vector<std::string>{});
            c.stolen_fraction = m.value("stolen_fraction", 0.0);
        } catch (const nlohmann::json::exception&) {
            throw wrong("measured_under", m);
        }
        c.load_average = m.contains("load_average") && m.at("load_average").is_number() ? m.at("load_average").get<double>() : -1.0;
    }
    return c;
}

std::string ceilings_table(const backends::ceilings& c) {
    std::ostringstream out;
    out << "ceilings of " << c.backend << " (" << c.fingerprint << ")\n";
    const bool cached = c.source == backends::ceilings_source::cache;
    out << backends::to_string(c.source) << (cached ? " (measured " : " ") << c.measured_at << (cached ? ")" : "")
        << " by ridgeline " << c.ridgeline_version << "\n\n";
    text_table t;
    t.add_column("ceiling", text_table::align::left);
    t.add_column("value", text_table::align::right);
    t.add_column("method", text_table::align::left);
    auto method = [&](const std::string& k) { return c.method.count(k) ? c.method.at(k) : std::string(); };
    auto spread = [&](const std::string& k) {
        return c.spread.count(k) ? "spread " + fixed(100.0 * c.spread.at(k), 1) + "%" : std::string();
    };
    for (const auto& [dt, g] : c.peak_gflops)
        t.add_row({"compute roof " + dt, fixed(g, 1) + " GFLOP/s", method("peak_gflops." + dt)});
    for (const auto& [dt, g] : c.gemm_gflops) t.add_row({"GEMM " + dt + " (lower ceiling)", fixed(g, 1) + " GFLOP/s", method("gemm." + dt)});
    for (const auto& [isa, g] : c.fma_peak_by_isa_gflops)
        t.add_row({"FMA peak " + isa, fixed(g, 1) + " GFLOP/s", spread("fma_peak." + isa)});
    t.add_row({"bandwidth (DRAM roof)", fixed(c.bandwidth_gbs, 1) + " GB/s", method("bandwidth_gbs")});
    if (c.copy_gbs > 0) t.add_row({"copy", fixed(c.copy_gbs, 1) + " GB/s", spread("copy")});
    if (c.triad_gbs > 0) t.add_row({"triad", fixed(c.triad_gbs, 1) + " GB/s", spread("triad")});
    if (c.device_copy_gbs > 0)
        t.add_row({"device copy", fixed(c.device_copy_gbs, 1) + " GB/s", spread("device_copy")});
    if (c.read_gbs > 0) t.add_row({"read", fixed(c.read_gbs, 1) + " GB/s", spread("read")});
    if (c.spread.count("dram_level"))
        t.add_row({"DRAM level's spread", fixed(100.0 * c.spread.at("dram_level"), 1) + "%",
                   "the highest best over the lowest median of its kernels and points: how far a spot check may read "
                   "below the DRAM roof without a warning"});
    for (const auto& [dt, g] : c.peak_gflops)
        if (c.bandwidth_gbs > 0) t.add_row({"ridge point " + dt, fixed(g / c.bandwidth_gbs, 2) + " FLOP/B", ""});
    t.add_row({"dispatch overhead", time_ms(c.dispatch_overhead_ms),
               c.method.count("dispatch_overhead_ms") ? c.method.at("dispatch_overhead_ms") : ""});
    if (c.cold_bandwidth_gbs > 0)
        t.add_row({"bandwidth, one run after a flush", fixed(c.cold_bandwidth_gbs, 1) + " GB/s",
                   c.method.count("cold_bandwidth_gbs") ? c.method.at("cold_bandwidth_gbs") : ""});
    if (c.cold_dispatch_overhead_ms > 0)
        t.add_row({"dispatch overhead, cold cache", time_ms(c.cold_dispatch_overhead_ms),
                   c.method.count("cold_dispatch_overhead_ms") ? c.method.at("cold_dispatch_overhead_ms") : ""});
    if (c.launch_overhead_ms > 0) t.add_row({"kernel launch", time_ms(c.launch_overhead_ms), ""});
    if (c.last_level_cache_bytes > 0) t.add_row({"last-level cache", si(static_cast<double>(c.last_level_cache_bytes), "B"), ""});
    out << t.render();
    std::string tolerances;
    for (const auto& [dt, g] : c.peak_gflops)
        tolerances += (tolerances.empty() ? "" : ", ") + dt + " " + fixed(100.0 * c.compute_tolerance(dt), 1) + "%";
    out << "tolerances of the roofs (2% plus the ceiling's spread, at most 10%): compute " << tolerances << "; bandwidth "
        << fixed(100.0 * c.bandwidth_tolerance(), 1) << "%\n";
    out << "measured " << (c.quick ? "with --quick (smaller problems)" : "in full") << ", load average "
        << (c.load_average >= 0 ? fixed(c.load_average, 2) : std::string("unknown")) << ", stolen "
        << fixed(100.0 * c.stolen_fraction, 2) << "% of the kept samples' time";
    if (c.disturbed) {
        std::string which;
        for (const auto& k : c.disturbed_ceilings) which += (which.empty() ? "" : ", ") + k;
        out << "; DISTURBED by other work (" << which << "): not cached";
    }
    out << "\n";
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
        out << "\nworking-set sweep (the highest of STREAM triad, read and a streaming-store copy):\n";
        text_table s;
        s.add_column("working set", text_table::align::right);
        s.add_column("GB/s", text_table::align::right);
        s.add_column("level", text_table::align::right);
        s.add_column("roof (GB/s)", text_table::align::right);
        for (const auto& [bytes, gbs] : c.working_set_gbs) {
            using level_kind = backends::ceilings::memory_level;
            const level_kind where = c.level_of(bytes);
            std::string level = c.cache_level_bytes.empty() ? "?" : where == level_kind::transition ? "transition" : "DRAM";
            if (where == level_kind::cache)
                for (std::size_t i = 0; i < c.cache_level_bytes.size(); ++i)
                    if (bytes <= c.cache_level_bytes[i]) {
                        level = "L" + std::to_string(i + 1) + " " + si(static_cast<double>(c.cache_level_bytes[i]), "B");
                        break;
                    }
            s.add_row({si(static_cast<double>(bytes), "B"), fixed(gbs, 1), level, fixed(c.bandwidth_for_working_set_gbs(bytes), 1)});
        }
        out << s.render();
        out << "(level: the cache level the working set fits and its capacity as the threads fill it; transition: past the "
               "last level and short of the DRAM level (" + si(static_cast<double>(c.dram_level_bytes()), "B") +
               ", 4x the sum of the caches), a roof derived from the levels' and DRAM's; \"?\" where the file predates "
               "the levels; roof: what a layer of that working set is judged against)\n";
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

std::string ceilings_cache_path(const std::string& fingerprint, bool quick) {
    // FNV-1a of the fingerprint keeps the file name short and free of odd characters
    std::uint64_t h = 1469598103934665603ULL;
    for (unsigned char ch : fingerprint) h = (h ^ ch) * 1099511628211ULL;
    char name[64];
    std::snprintf(name, sizeof name, "%016llx%s.json", static_cast<unsigned long long>(h), quick ? "-quick" : "");
    return (cache_dir() / name).string();
}

namespace {
/// Whether `schema` is a ceilings schema of a higher version than ceilings_schema ("ridgeline.ceilings/9").
bool schema_is_newer(const std::string& schema) {
    const std::string prefix = "ridgeline.ceilings/", mine = ceilings_schema;
    if (schema.rfind(prefix, 0) != 0) return false;
    const std::string v = schema.substr(prefix.size()), own = mine.substr(prefix.size());
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) return false;
    return std::stol(v) > std::stol(own);
}

/// The cache file of `fingerprint` when it answers; `why` says why an existing file does not (empty when there
/// is no file, or the file answers).
std::optional<backends::ceilings> load_one(const std::string& fingerprint, bool quick, std::string& why) {
    const std::string path = ceilings_cache_path(fingerprint, quick);
    why.clear();
    if (!std::filesystem::exists(path)) return std::nullopt;
    try {
        // read_regular_file: a FIFO or device at the cache's path would block or never end
        const std::string text = core::read_regular_file(path, path);
        core::check_json_text(text, path);
        const nlohmann::json j = nlohmann::json::parse(text);
        backends::ceilings c = ceilings_from_json(j);
        const std::string schema = j.contains("schema") && j.at("schema").is_string() ? j.at("schema").get<std::string>() : "";
        if (c.fingerprint != fingerprint) why = "it is of another device";
        else if (schema != ceilings_schema)
            why = schema_is_newer(schema)
                      ? "a newer ridgeline wrote it (" + schema + "; this one writes " + std::string(ceilings_schema) + ")"
                      : "it was measured by an older method (" + (schema.empty() ? std::string("no schema") : schema) +
                            "; " + std::string(ceilings_schema) + " has the DRAM level at 4x the sum of the caches)";
        else if (c.ridgeline_version != RIDGELINE_VERSION) why = "ridgeline " + c.ridgeline_version + " wrote it";
        else if (c.quick != quick) why = "its quick flag does not match its name";
        else if (c.disturbed) why = "it says it was disturbed";
        else if (c.backend == "cpu" && c.cache_level_bytes.empty())
            why = "it has no cache levels (measured where the OS gave no cache topology, before ridgeline read them "
                  "from CPUID and its own sweep), so its DRAM roof may be a cache's";
        else why = backends::implausible_ceilings(c);  // damaged or edited: measured again
        if (!why.empty()) return std::nullopt;
        c.source = backends::ceilings_source::cache;
        return c;
    } catch (const std::exception& e) {
        why = e.what();  // a damaged cache file is measured again
        return std::nullopt;
    }
}
}  // namespace

std::optional<backends::ceilings> load_cached_ceilings(const std::string& fingerprint, bool quick, std::string* refused) {
    std::string why_full, why_fast;
    auto full = load_one(fingerprint, false, why_full);
    std::optional<backends::ceilings> fast;
    if (quick) fast = load_one(fingerprint, true, why_fast);
    if (refused) {
        const std::string& why = !why_full.empty() ? why_full : why_fast;
        *refused = why.empty() ? std::string()
                               : ceilings_cache_path(fingerprint, !why_full.empty() ? false : true) + " is not used: " + why;
    }
    if (!quick) return full;
    // a quick request: the newer of the two (a quick measurement that a spot check sent back was merged with
    // the full one it checked, so it is at least as high; answering with the full one again would send it back
    // again on every run)
    if (full && fast) return fast->measured_at > full->measured_at ? fast : full;
    return full ? full : fast;
}

std::string save_cached_ceilings(const backends::ceilings& c) {
    if (c.disturbed) throw std::logic_error("disturbed ceilings are never cached");
    const std::string path = ceilings_cache_path(c.fingerprint, c.quick);
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    // the cache is ridgeline's own file: a FIFO or device in its place is not written into (that would block
    // or leak the ceilings elsewhere) and not replaced either (someone put it there)
    std::error_code ec;
    if (const auto st = std::filesystem::status(path, ec); std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
        throw core::error("\"" + path + "\" is not a regular file; it was left as it is");
    nlohmann::json j = ceilings_json(c);
    j["source"] = "measured";
    write_file_atomic(path, j.dump(2) + "\n");
    return path;
}

namespace {

/// One obtain_ceilings: the request, what it found, and the lines it says.
struct ceilings_obtainer {
    backends::backend& b;
    const ceilings_request& request;
    obtained_ceilings out;
    std::string why_measure = "once";
    std::string refused;                        // why an existing cache file was not used (damaged or edited)
    std::optional<backends::ceilings> earlier;  // cached ceilings that a disagreeing spot check sends back

    void info(const std::string& line) const {
        if (request.on_info) request.on_info(line);
    }
    void warn(std::string line) {
        if (request.on_warning) request.on_warning(line);
        out.warnings.push_back(std::move(line));
    }
    /// The cached ceilings, spot-checked: true when they answer (in out), false when they must be measured again
    /// (a check that found more: earlier and why_measure say so).
    bool answer_from_cache(std::optional<backends::ceilings> cached);
    /// Measured now, merged with `earlier` when a spot check sent them back, cached unless disturbed.
    void measure(const backends::device_info& dev, const std::string& fp);
};

bool ceilings_obtainer::answer_from_cache(std::optional<backends::ceilings> cached) {
    std::optional<backends::ceilings_spot_check> check;
    if (request.spot_check) {
        check = b.spot_check_ceilings(*cached, backends::ceilings_options{true, request.stop, {}});
        if (check && !check->clean) check = b.spot_check_ceilings(*cached, backends::ceilings_options{true, request.stop, {}});
    }
    if (!check) {
        out.ceilings = *cached;
        return true;
    }
    const double fma_cached = cached->fma_peak_by_isa_gflops.count(check->fma_isa)
                                  ? cached->fma_peak_by_isa_gflops.at(check->fma_isa)
                                  : 0.0;
    const double fma_ratio = fma_cached > 0 && check->fma_gflops > 0 ? check->fma_gflops / fma_cached : 1.0;
    // a sweep point: the spot check's reading against the cached one at the same size
    auto at = [&](std::int64_t size) {
        for (const auto& [bytes, gbs] : cached->working_set_gbs)
            if (bytes == size) return gbs;
        return 0.0;
    };
    const double cache_cached = at(check->cache_working_set_bytes), dram_cached = at(check->dram_working_set_bytes);
    const double cache_ratio = cache_cached > 0 && check->cache_gbs > 0 ? check->cache_gbs / cache_cached : 1.0;
    const double dram_ratio = dram_cached > 0 && check->dram_gbs > 0 ? check->dram_gbs / dram_cached : 1.0;
    std::string found = "spot check in " + fixed(check->seconds, 2) + " s: FMA " + check->fma_isa + " " +
                        (check->fma_gflops > 0 ? fixed(check->fma_gflops, 1) + " GFLOP/s" : std::string("disturbed")) +
                        " (cached " + fixed(fma_cached, 1) + ")";
    for (const auto& [bytes, now, then] : {std::tuple{check->cache_working_set_bytes, check->cache_gbs, cache_cached},
                                           std::tuple{check->dram_working_set_bytes, check->dram_gbs, dram_cached}})
        if (now > 0)
            found += ", " + si(static_cast<double>(bytes), "B") + " working set " + fixed(now, 1) + " GB/s (cached " +
                     fixed(then, 1) + ")";
    if (!check->clean) {
        warn("the spot check of the cached ceilings was disturbed by other work twice, so it proves nothing: the "
             "cached ceilings are used unchecked (" + found + ")");
        out.ceilings = *cached;
        out.spot_check = found + ", disturbed";
        return true;
    }
    // The dispatch cost is a floor: a clean check below the cached value lowers it (and the cache keeps it), as a
    // higher roof raises the roofs below. A VM's dispatch cost has two modes minutes apart, and a cache that
    // kept the slow one called a 512 kB relu at 5.6 us overhead-bound.
    std::string lowered;
    if (check->dispatch_ms > 0 && check->dispatch_ms < cached->dispatch_overhead_ms * (1 - dispatch_floor_margin)) {
        lowered = "; dispatch cost lowered to " + time_ms(check->dispatch_ms) + " (cached " +
                  time_ms(cached->dispatch_overhead_ms) + ")";
        cached->dispatch_overhead_ms = check->dispatch_ms;
        cached->method["dispatch_overhead_ms"] = "oneDNN eltwise relu of 1 element, median; lowered to " +
                                                 time_ms(check->dispatch_ms) + " by a spot check (a floor)";
        try {
            backends::ceilings keep = *cached;
            keep.source = backends::ceilings_source::measured;
            save_cached_ceilings(keep);
        } catch (const std::exception& e) {
            warn(std::string("could not cache the lowered dispatch cost: ") + e.what());
        }
    }
    found += (check->dispatch_ms > 0 ? ", dispatch " + time_ms(check->dispatch_ms) : std::string()) + lowered;
    // Above the cache by more than the tolerance: the cached roofs understate the machine and would make layers
    // that reach the real ones look impossible: measure again, keeping the higher of each (merge_ceilings).
    // Below: the machine does less now than it did (a clock, or neighbours on a shared host that the accounting
    // cannot see); measuring again would not lower a roof, so this is said, not acted on, and only beyond the
    // ceiling's own measured spread: a short check reads anywhere between the ceiling's best sample and its
    // median, and a VM's DRAM point spreads by 30-80% (a check 40% below such a roof says nothing).
    auto spread_of = [&](const std::string& key) {
        const auto it = cached->spread.find(key);
        return it != cached->spread.end() && it->second > 0 ? it->second : 0.0;
    };
    auto point_spread = [&](std::int64_t bytes) {
        const double s = spread_of("working_set." + std::to_string(bytes));
        return s > 0 ? s : spread_of("working_set");
    };
    const double fma_spread = spread_of("fma_peak." + check->fma_isa);
    const double cache_spread = point_spread(check->cache_working_set_bytes);
    const double dram_spread = std::max(point_spread(check->dram_working_set_bytes), spread_of("dram_level"));
    // above: 10% plus the spread, at most 20% in all; below: under the ceiling's median (best / (1 + spread))
    // by more than 10%
    auto above = [](double ratio, double spread) {
        return ratio - 1 > spot_check_tolerance + std::min(spot_check_tolerance, spread);
    };
    auto below = [](double ratio, double spread) { return ratio * (1 + spread) < 1 - spot_check_tolerance; };
    const bool any_above = above(fma_ratio, fma_spread) || above(cache_ratio, cache_spread) || above(dram_ratio, dram_spread);
    const bool any_below = below(fma_ratio, fma_spread) || below(cache_ratio, cache_spread) || below(dram_ratio, dram_spread);
    const double lowest = std::min({fma_ratio, dram_ratio, cache_ratio});
    const double highest = std::max({fma_ratio, dram_ratio, cache_ratio});
    if (!any_above) {
        out.ceilings = *cached;
        out.spot_check = found + ": agrees within 10% plus each ceiling's spread";
        if (!any_below) info("cached ceilings checked: " + out.spot_check);
        if (any_below) {
            warn("the machine does less now than its cached ceilings (" + found + ", " +
                 fixed(100 * (1 - lowest), 0) + "% below, more than 10% under the ceiling's median): something the "
                 "per-thread accounting cannot see (a clock, neighbours on a shared host) slows it, and %roof will "
                 "read low; --recalibrate measures afresh");
            out.spot_check = found + ": " + fixed(100 * (1 - lowest), 0) + "% below";
        }
        return true;
    }
    warn("the machine does more than its cached ceilings (" + found + ", " + fixed(100 * (highest - 1), 0) +
         "% above, more than 10% plus the ceiling's spread): measuring them again, keeping the higher of each");
    out.spot_check = found + ": " + fixed(100 * (highest - 1), 0) + "% above";
    why_measure = "again (the spot check found more)";
    earlier = *cached;
    return false;
}

void ceilings_obtainer::measure(const backends::device_info& dev, const std::string& fp) {
    if (!refused.empty() && why_measure == "once") why_measure = "again (" + refused + ")";
    info("measuring the ceilings of " + b.name() + (request.quick ? " (quick) " : " ") + why_measure + " (cached in " +
         ceilings_cache_path(fp, request.quick) + (request.recalibrate ? "" : "; --recalibrate measures again") + ")");
    const auto t0 = std::chrono::steady_clock::now();
    backends::ceilings c = b.measure_ceilings(backends::ceilings_options{request.quick, request.stop, request.on_progress});
    c.fingerprint = fp;
    c.device_name = dev.name;
    c.quick = request.quick;
    if (request.quick) c.method["quick"] = "measured with --quick (smaller problems, fewer samples)";
    if (earlier && !c.disturbed) backends::merge_ceilings(c, *earlier);
    if (earlier && c.disturbed) {
        // measured again because a spot check found more, but the new measurement met other work: the cached
        // ceilings (clean when measured) still judge the layers, and stay cached
        std::string which;
        for (const auto& k : c.disturbed_ceilings) which += (which.empty() ? "" : ", ") + k;
        warn("the ceilings measured again were disturbed by other work (" + which +
             "): the cached ones are used, and kept");
        info("ceilings measured in " + fixed(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1) + " s");
        out.ceilings = *earlier;
        return;
    }
    if (c.disturbed) {
        std::string which;
        for (const auto& k : c.disturbed_ceilings) which += (which.empty() ? "" : ", ") + k;
        if (backends::disturbance_accounting_off())
            warn("the ceilings were measured with the accounting of other work off (RIDGELINE_DISTURBANCE): they "
                 "cannot be called clean, so they are not cached and no roofline verdict is drawn from them");
        else
            warn("the ceilings measurement was disturbed by other work (" + which +
                 "): not cached, and no roofline verdict is drawn from them; a quieter machine or a rerun helps");
    } else {
        try {
            save_cached_ceilings(c);
        } catch (const std::exception& e) {
            warn(std::string("could not cache the ceilings: ") + e.what());
        }
    }
    info("ceilings measured in " + fixed(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1) + " s");
    c.source = backends::ceilings_source::measured;
    out.ceilings = std::move(c);
    out.measured = true;
    return;
}

}  // namespace

obtained_ceilings obtain_ceilings(backends::backend& b, const ceilings_request& request) {
    const backends::device_info dev = b.device();
    // said before any line about measuring or caching (cpu-ref: the reference loops have no ceilings to measure)
    if (!b.measures_ceilings()) throw backends::unsupported("the " + b.name() + " backend does not measure ceilings");
    const std::string fp = backends::device_fingerprint(dev);
    ceilings_obtainer o{b, request, {}, "once", {}, std::nullopt};
    if (request.recalibrate) {
        o.why_measure = "again (--recalibrate)";
    } else if (auto cached = load_cached_ceilings(fp, request.quick, &o.refused)) {
        if (o.answer_from_cache(std::move(cached))) return std::move(o.out);
    }
    o.measure(dev, fp);
    return std::move(o.out);
}

}  // namespace ridgeline::report
