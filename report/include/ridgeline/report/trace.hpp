#pragma once
// `profile --trace FILE.json[.gz]`: the end-to-end pass as Chrome trace events, which Perfetto (ui.perfetto.dev) and
// chrome://tracing open. The format: the Trace Event Format's JSON object form ("traceEvents", "displayTimeUnit",
// "otherData"; Google, "Trace Event Format", docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU):
// complete events (ph "X", ts and dur in microseconds), counter events (ph "C"), metadata events (ph "M") naming the
// process and threads.
//
// What it holds: the passes profiler::profile_options::trace_passes ran after the end-to-end timing, each with a
// mark as every layer's work ended (backend_api::prepared::run_marked). Per pass, one slice "pass N" on the thread
// "passes" (tid 1) and one slice per layer with work on the thread "layers" (tid 2), from the end of the layer
// before it to its own end: so a slice holds the layer's work and the host's time between the two marks (on a GPU
// the wait for the device). A layer's args: its op, FLOPs (PyTorch's count), executed FLOPs, bytes, the bound,
// rule and %roof of its own measurement, its median from that measurement, and this pass's GFLOP/s and GB/s. The
// counter tracks "GFLOP/s" and "GB/s" (pid 1) step with each slice (executed FLOPs and bytes over its duration) and
// fall to 0 at each pass's end.

#include <string>

#include <nlohmann/json.hpp>

#include "ridgeline/profiler/profiler.hpp"

namespace ridgeline::report {

/// The trace of `r` (its `trace` passes); with none, an empty "traceEvents" and the reason in
/// otherData.note (r.trace_note, or why the end-to-end pass did not run).
nlohmann::json chrome_trace(const profiler::profile_result& r);

/// Writes `trace` to `path` atomically (core::write_file_atomic), gzip-compressed (RFC 1952, by zlib) when the path
/// ends in ".gz". Throws core::error when the file cannot be written or compressed.
void write_trace(const std::string& path, const nlohmann::json& trace);

}  // namespace ridgeline::report
