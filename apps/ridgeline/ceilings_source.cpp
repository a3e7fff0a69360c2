#include "ceilings_source.hpp"

#include <spdlog/spdlog.h>

namespace ridgeline::app {

report::obtained_ceilings obtain_ceilings(backends::backend& b, bool recalibrate, bool quick, bool quiet,
                                          const std::atomic<bool>* stop) {
    report::ceilings_request request;
    request.recalibrate = recalibrate;
    request.quick = quick;
    request.stop = stop;
    if (!quiet) {
        request.on_info = [](const std::string& line) { spdlog::info("{}", line); };
        request.on_warning = [](const std::string& line) { spdlog::warn("{}", line); };
    }
    return report::obtain_ceilings(b, request);
}

}  // namespace ridgeline::app
