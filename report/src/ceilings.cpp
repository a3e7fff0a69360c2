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

#include "ridgeline/backend_api/disturbance.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/config.hpp"
#include "ridgeline/core/datasheet.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/report/format.hpp"

namespace ridgeline::report {

std::string ceilings_table(const backend_api::ceilings& c) {
    std::ostringstream out;
    out << "ceilings of " << c.backend << " (" << c.fingerprint << ")\n";
    const bool cached = c.source == backend_api::ceilings_source::cache;
    out << backend_api::to_string(c.source) << (cached ? " (measured " : " ") << c.measured_at << (cached ? ")" : "")
        << " by ridgeline " << c.ridgeline_version << "\n\n";
    text_table t;
    t.add_column("ceiling", text_table::align::left);
    t.add_column("value", text_table::align::right);
    t.add_column("method", text_table::align::left, {0, false, true});
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
    if (const std::string by_size = dram_roof_by_size(c); !by_size.empty())
        t.add_row({"DRAM roof by working set", by_size,
                   "each reading of the DRAM level (its sweep points, STREAM copy at 2/3 of the kernels' size, triad and "
                   "read at it) a roof for every smaller working set: a larger one is no faster; log-linear between"});
    if (c.spread.count("dram_level"))
        t.add_row({"DRAM level's spread", fixed(100.0 * c.spread.at("dram_level"), 1) + "%",
                   "the highest best over the lowest median of its kernels and points, less 1: a spot check warns "
                   "below the roof / (1 + spread) less 10% (here " +
                       fixed(c.dram_roof_gbs() / (1 + c.spread.at("dram_level")) * 0.9, 1) + " GB/s)"});
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
            using level_kind = backend_api::ceilings::memory_level;
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
    return wrap_lines(out.str());
}

std::string dram_roof_by_size(const backend_api::ceilings& c) {
    const auto knots = c.dram_roof_knots();
    if (knots.size() < 2) return "";
    std::string out;
    for (std::size_t i = 0; i < knots.size(); ++i) {
        const std::string where = i == 0 ? " up to " : i + 1 == knots.size() ? " from " : " at ";
        out += (i ? ", " : "") + fixed(knots[i].second, 1) + " GB/s" + where +
               si(static_cast<double>(knots[i].first), "B");
    }
    return out;
}

}  // namespace ridgeline::report
