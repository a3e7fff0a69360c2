// ridgeline._ridgeline: the command line run in the Python process (apps/ridgeline/cli.hpp). The Python side
// (python/ridgeline/__init__.py) turns keyword arguments into options and the JSON report into Python objects.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "cli.hpp"
#include "ridgeline/config.hpp"

namespace py = pybind11;

namespace {

/// (exit code, what the command wrote as its report, its one-line error or "") for `ridgeline ARGS...`.
std::tuple<int, py::bytes, std::string> run(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"ridgeline"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string report, error;
    int rc = 1;
    {
        py::gil_scoped_release no_gil;  // a profile takes seconds; other Python threads go on
        // run_cli is one run at a time per process (its sinks and settings are the process's): a second thread's
        // call waits for the first to end
        static std::mutex one_at_a_time;
        const std::lock_guard<std::mutex> lock(one_at_a_time);
        rc = ridgeline::app::run_cli(
            argv, [&](std::string_view text) { report.append(text); },
            [&](const std::string& message) { error = message; });
    }
    return {rc, py::bytes(report), error};
}

}  // namespace

PYBIND11_MODULE(_ridgeline, m) {
    m.doc() = "ridgeline's command line in this process: run(args) -> (exit code, report bytes, error line)";
    m.def("run", &run, py::arg("args"),
          "Runs `ridgeline ARGS...` here: returns (exit code, the report as bytes, the one-line error or '')");
    m.def("options", &ridgeline::app::long_options, py::arg("command"),
          "The long options of COMMAND as (name, is_flag) pairs ((\"--quick\", True)); empty for an unknown command");
    m.attr("version") = RIDGELINE_VERSION;
}
