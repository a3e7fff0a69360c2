// `--device cuda` and `--device auto` as a user runs them. On a machine without a usable CUDA device (or a
// build without the CUDA backend): cuda is one error line and exit 1, auto is the CPU with a one-line notice.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "process.hpp"

using ridgeline::test::run_ridgeline;

namespace {

const std::vector<std::string> tiny = {"profile", "--layer", "relu", "--input", "4x4", "--quick", "--format", "json"};

std::vector<std::string> with(std::vector<std::string> base, std::initializer_list<std::string> more) {
    base.insert(base.end(), more);
    return base;
}

std::vector<std::string> lines_of(const std::string& s) {
    std::vector<std::string> lines;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
}

}  // namespace

TEST(CliCuda, DeviceCudaWithoutADeviceIsOneErrorLine) {
    for (const char* device : {"cuda", "cuda:0", "cuda:3"}) {
        const auto r = run_ridgeline(with(tiny, {"--device", device}));
        if (r.exit_code == 0) GTEST_SKIP() << "a CUDA device is present";
        EXPECT_EQ(r.exit_code, 1) << r.err;
        const auto lines = lines_of(r.err);
        ASSERT_EQ(lines.size(), 1u) << r.err;
        // "ridgeline: error: no CUDA device: CUDA driver version is insufficient for CUDA runtime version"
        const std::string prefix = "ridgeline: error: no CUDA device";
        EXPECT_EQ(lines[0].rfind(prefix, 0), 0u) << lines[0];
        EXPECT_GT(lines[0].size(), prefix.size() + 4) << "the reason is missing: " << lines[0];
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
}

TEST(CliCuda, DeviceCudaWithABadOrdinalIsAnError) {
    const auto r = run_ridgeline(with(tiny, {"--device", "cuda:x"}));
    EXPECT_EQ(r.exit_code, 2) << r.err;  // a misspelt device is a command-line mistake (README: exit codes)
    EXPECT_NE(r.err.find("cuda:x"), std::string::npos) << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
}

TEST(CliCuda, DeviceAutoWithoutADeviceUsesTheCpuWithANotice) {
    const auto r = run_ridgeline(with(tiny, {"--device", "auto"}));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (r.out.find("\"backend\": \"cuda:0\"") != std::string::npos) GTEST_SKIP() << "a CUDA device is present";
    const auto lines = lines_of(r.err);
    const auto notices = std::count_if(lines.begin(), lines.end(),
                                       [](const std::string& l) { return l.find("device auto:") != std::string::npos; });
    EXPECT_EQ(notices, 1) << r.err;
    // a machine without an NVIDIA driver is told just that (not the runtime's "driver version is insufficient",
    // which asks a laptop user to update a driver that does not exist); a GPU the runtime cannot use keeps
    // the driver's words
    const bool driver = std::ifstream("/proc/driver/nvidia/version").good();
    if (!driver)
        EXPECT_NE(r.err.find("device auto: no NVIDIA GPU found; using cpu"), std::string::npos) << r.err;
    else
        EXPECT_NE(r.err.find("device auto: no CUDA device: "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("insufficient"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("; using cpu"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("\"kind\": \"cpu\""), std::string::npos) << r.out;
}

TEST(CliCuda, GraphReplayIsReportedWhereTheBackendHasNone) {
    // --graph on the CPU: the end-to-end pass is measured, the replay is "unsupported" with the reason
    const auto r = run_ridgeline({"profile", "--layer", "relu", "--input", "4x4", "--quick", "--quiet", "--device", "cpu",
                                  "--graph", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\"graph_replay\": {"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the cpu backend has no graph capture"), std::string::npos) << r.out;
    const auto t = run_ridgeline({"profile", "--layer", "relu", "--input", "4x4", "--quick", "--quiet", "--device", "cpu",
                                  "--graph"});
    ASSERT_EQ(t.exit_code, 0) << t.err;
    EXPECT_NE(t.out.find("graph replay: unsupported (the cpu backend has no graph capture)"), std::string::npos) << t.out;
}
