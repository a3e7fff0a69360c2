#pragma once
// Runs the ridgeline binary as a user would and captures what it printed.
#include <string>
#include <vector>

namespace ridgeline::test {

struct process_result {
    int exit_code = -1;
    std::string out;
    std::string err;
};

/// Runs RIDGELINE_BINARY with `args` (no shell), waits, and returns exit code, stdout and stderr.
/// `timeout_s` kills a run that hangs (exit_code is then -9).
process_result run_ridgeline(const std::vector<std::string>& args, int timeout_s = 300);

/// Like run_ridgeline, but sends `signal` to the process `after_s` seconds after it started.
process_result run_ridgeline_signalled(const std::vector<std::string>& args, int signal, double after_s,
                                       int timeout_s = 300);

/// Like run_ridgeline, but sends `signal` once stderr contains `trigger` (e.g. the third progress line),
/// so the signal lands at a known point of the run however fast or slow the machine (or sanitizer) is.
process_result run_ridgeline_signalled_at(const std::vector<std::string>& args, int signal, const std::string& trigger,
                                          int timeout_s = 300);

}  // namespace ridgeline::test
