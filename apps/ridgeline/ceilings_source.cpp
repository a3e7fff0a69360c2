#include "ceilings_source.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

#include "ridgeline/report/ceilings.hpp"

namespace ridgeline::app {

backends::ceilings obtain_ceilings(backends::backend& b, bool recalibrate, bool quick, bool quiet,
                                   const std::atomic<bool>* stop) {
    const backends::device_info dev = b.device();
    const std::string fp = backends::device_fingerprint(dev);
    if (!recalibrate)
        if (auto cached = report::load_cached_ceilings(fp)) return *cached;
    if (!quiet)
        spdlog::info("measuring the ceilings of {} once{} (cached in {}; --recalibrate measures again)", b.name(),
                     quick ? " (quick)" : "", report::ceilings_cache_path(fp));
    const auto t0 = std::chrono::steady_clock::now();
    backends::ceilings c = b.measure_ceilings(backends::ceilings_options{quick, stop});
    c.fingerprint = fp;
    c.device_name = dev.name;
    if (quick) c.method["quick"] = "measured with --quick (smaller problems, fewer samples)";
    try {
        report::save_cached_ceilings(c);
    } catch (const std::exception& e) {
        if (!quiet) spdlog::warn("could not cache the ceilings: {}", e.what());
    }
    if (!quiet)
        spdlog::info("ceilings measured in {:.1f} s",
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    c.source = "measured";
    return c;
}

}  // namespace ridgeline::app
