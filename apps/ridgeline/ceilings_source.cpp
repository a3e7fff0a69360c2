#include "ceilings_source.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "ridgeline/report/format.hpp"

namespace ridgeline::app {

namespace {

/// The ceilings measurement's progress on stderr: one line redrawn in place on a terminal, a log line every few
/// seconds otherwise (the kernel measured now and the time left).
class ceilings_progress_printer {
public:
    ceilings_progress_printer() : tty_(::isatty(2) == 1) {}
    ~ceilings_progress_printer() { clear(); }
    /// Clears a drawn line (before another line is written).
    void clear() {
        if (drawn_) std::fprintf(stderr, "\r\033[K");
        drawn_ = false;
    }
    ceilings_progress_printer(const ceilings_progress_printer&) = delete;
    ceilings_progress_printer& operator=(const ceilings_progress_printer&) = delete;

    void operator()(const backend_api::ceilings_progress& p) {
        const std::string left = p.left_s >= 0 ? ", about " + report::fixed(p.left_s + 0.5, 0) + " s left" : "";
        const std::string line = "measuring the ceilings [" + std::to_string(p.index + 1) + "/" + std::to_string(p.total) +
                                 "] " + p.step + left;
        if (tty_) {
            std::fprintf(stderr, "\r\033[K%s", line.c_str());
            std::fflush(stderr);
            drawn_ = true;
            return;
        }
        const auto now = std::chrono::steady_clock::now();
        if (p.index == 0 || now - last_ >= std::chrono::seconds(3)) {
            spdlog::info("{}", line);
            last_ = now;
        }
    }

private:
    bool tty_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point last_{};
};

}  // namespace

profiler::obtained_ceilings obtain_ceilings(backend_api::backend& b, bool recalibrate, bool quick, bool quiet,
                                          const std::atomic<bool>* stop) {
    profiler::ceilings_request request;
    request.recalibrate = recalibrate;
    request.quick = quick;
    request.stop = stop;
    // a warning reaches stderr under --quiet too: quiet hides progress and notices, never what makes a number
    // untrustworthy (a disturbed measurement passed in silence with -q)
    auto printer = std::make_shared<ceilings_progress_printer>();
    request.on_warning = [printer](const std::string& line) {
        printer->clear();
        spdlog::warn("{}", line);
    };
    if (!quiet) {
        request.on_info = [printer](const std::string& line) {
            printer->clear();
            spdlog::info("{}", line);
        };
        request.on_progress = [printer](const backend_api::ceilings_progress& p) { (*printer)(p); };
    }
    return profiler::obtain_ceilings(b, request);
}

}  // namespace ridgeline::app
