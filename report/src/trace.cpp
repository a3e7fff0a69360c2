// Chrome trace events of the end-to-end pass (trace.hpp).
#include "ridgeline/report/trace.hpp"

#ifdef RIDGELINE_HAVE_ZLIB
#include <zlib.h>
#endif

#include <cmath>

#include "ridgeline/config.hpp"
#include "ridgeline/core/error.hpp"
#include "ridgeline/core/file.hpp"
#include "ridgeline/core/fusion.hpp"
#include "ridgeline/report/profile.hpp"

namespace ridgeline::report {

namespace {

constexpr int pid = 1;
constexpr int passes_tid = 1, layers_tid = 2;

nlohmann::json metadata(const char* what, int tid, const std::string& name) {
    nlohmann::json e = {{"ph", "M"}, {"pid", pid}, {"name", what}, {"args", {{"name", name}}}};
    if (tid > 0) e["tid"] = tid;
    return e;
}

nlohmann::json counter(const char* name, double ts_us, double value) {
    return {{"ph", "C"}, {"pid", pid}, {"name", name}, {"ts", ts_us}, {"args", {{name, value}}}};
}

/// What a layer's slice carries beside its time: its counts and what its own measurement found.
nlohmann::json layer_args(const profiler::layer_profile& p, double dur_us) {
    const auto& c = p.analysis.cost;
    const double executed = static_cast<double>(c.executed_flops()), bytes = static_cast<double>(c.bytes);
    nlohmann::json a = {{"op", std::string(core::kind_of(p.analysis.layer.op))},
                        {"flops", c.flops},
                        {"executed_flops", c.executed_flops()},
                        {"bytes", c.bytes},
                        {"gflops", dur_us > 0 ? executed / (dur_us * 1e3) : 0.0},
                        {"gbs", dur_us > 0 ? bytes / (dur_us * 1e3) : 0.0}};
    if (p.has_time()) a["median_ms"] = p.time->stats.median;
    if (p.roofline) {
        a["bound"] = std::string(core::to_string(p.roofline->bound));
        a["rule"] = rule_text(*p.roofline);
    }
    if (const double f = shown_rates(p).roof_fraction; std::isfinite(f)) a["roof_fraction"] = f;
    return a;
}

/// The slices and counters of one traced pass.
void add_pass(nlohmann::json& events, const profiler::profile_result& r, const profiler::traced_pass& pass,
              std::size_t index) {
    const double start_us = pass.start_ns / 1e3, end_us = pass.end_ns / 1e3;
    events.push_back({{"ph", "X"},
                      {"pid", pid},
                      {"tid", passes_tid},
                      {"name", "pass " + std::to_string(index + 1)},
                      {"cat", "pass"},
                      {"ts", start_us},
                      {"dur", end_us - start_us},
                      {"args", {{"layers", pass.layer_end_ns.size()}}}});
    double from_us = start_us;
    for (const auto& [layer, end_ns] : pass.layer_end_ns) {
        const double to_us = end_ns / 1e3, dur_us = std::max(0.0, to_us - from_us);
        const profiler::layer_profile& p = r.layers.at(layer);
        nlohmann::json args = layer_args(p, dur_us);
        events.push_back({{"ph", "X"},
                          {"pid", pid},
                          {"tid", layers_tid},
                          {"name", core::group_label(p.analysis)},
                          {"cat", args["op"]},
                          {"ts", from_us},
                          {"dur", dur_us},
                          {"args", args}});
        events.push_back(counter("GFLOP/s", from_us, args["gflops"].get<double>()));
        events.push_back(counter("GB/s", from_us, args["gbs"].get<double>()));
        from_us = to_us;
    }
    events.push_back(counter("GFLOP/s", end_us, 0.0));
    events.push_back(counter("GB/s", end_us, 0.0));
}

std::string gzip(const std::string& text, const std::string& path) {
#ifndef RIDGELINE_HAVE_ZLIB
    (void)text;
    throw core::error("cannot write \"" + path + "\": this ridgeline was built without zlib (Debian's zlib1g-dev); "
                      "write the trace without .gz");
#else
    z_stream z{};
    // windowBits 15 + 16: a gzip header and trailer (zlib's manual, deflateInit2)
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw core::error("cannot write \"" + path + "\": zlib would not start compressing");
    std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) throw core::error("cannot write \"" + path + "\": zlib could not compress the trace");
    return out;
#endif
}

}  // namespace

nlohmann::json chrome_trace(const profiler::profile_result& r) {
    nlohmann::json events = nlohmann::json::array();
    events.push_back(metadata("process_name", 0,
                              "ridgeline: " + r.analysis.model_name + " on " + r.device.backend + " (" + r.device.name + ")"));
    events.push_back(metadata("thread_name", passes_tid, "passes"));
    events.push_back(metadata("thread_name", layers_tid, "layers"));
    for (std::size_t i = 0; i < r.trace.size(); ++i) add_pass(events, r, r.trace[i], i);
    std::string note = r.trace_note;
    if (r.trace.empty() && note.empty())
        note = "no end-to-end pass to trace (" + std::string(profiler::to_string(r.end_to_end_state)) +
               (r.end_to_end_reason.empty() ? "" : ": " + r.end_to_end_reason) + ")";
    nlohmann::json other = {{"ridgeline_version", RIDGELINE_VERSION},
                            {"model", r.analysis.model_name},
                            {"dtype", std::string(core::to_string(r.analysis.data_type))},
                            {"device", r.device.name},
                            {"backend", r.device.backend},
                            {"passes", r.trace.size()},
                            {"how", "passes run after the end-to-end timing, each layer's end marked after waiting for "
                                    "the device (ridgeline's profile --trace); a layer's slice runs from the mark "
                                    "before it to its own"}};
    if (!note.empty()) other["note"] = note;
    return {{"traceEvents", events}, {"displayTimeUnit", "ns"}, {"otherData", other}};
}

void write_trace(const std::string& path, const nlohmann::json& trace) {
    const std::string text = trace.dump();
    const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    core::write_file_atomic(path, gz ? gzip(text, path) : text);
}

}  // namespace ridgeline::report
