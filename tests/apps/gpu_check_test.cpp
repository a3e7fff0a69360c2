// scripts/gpu-check.sh --dry-run (issue "CUDA backend ... a GPU check that fits its time"): on a machine without a
// GPU, every step's host-side logic runs (the deadline, each step's timeout from the time left, the priority
// order, SKIPPED with the reason, summary.json), each step charged the least time it needs, and its command is
// written to its log instead of run. A script bug is found here, not in the 15 minutes of a borrowed GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../support/scratch.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct dry_run {
    int exit_code = -1;
    std::string output;
    fs::path out;
};

dry_run run_dry(const std::string& name, const std::string& deadline) {
    dry_run r;
    r.out = ridgeline::test::fresh_scratch_dir(name);
    const fs::path log = r.out / "stdout.txt";
    const std::string cmd = "bash '" RIDGELINE_SOURCE_DIR "/scripts/gpu-check.sh' --dry-run --out '" +
                            (r.out / "out").string() + "' --deadline '" + deadline + "' > '" + log.string() +
                            "' 2>&1";
    const int status = std::system(cmd.c_str());
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    r.output = ss.str();
    return r;
}

json summary(const dry_run& r) {
    std::ifstream in(r.out / "out" / "summary.json");
    EXPECT_TRUE(in.good()) << r.output;
    return json::parse(in);
}

}  // namespace

TEST(GpuCheck, TheDefaultDeadlineFitsEveryStepInPriorityOrder) {
    const dry_run r = run_dry("gpu_check_default", "480");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json s = summary(r);
    EXPECT_EQ(s["schema"], "ridgeline.gpu_check/1");
    EXPECT_EQ(s["dry_run"], true);
    // the roofs first, then scale_shift against the copy, one whole model, then the rest
    const std::vector<std::string> order{"configure", "build ridgeline", "device-free CUDA tests", "ceilings",
                                         "scale_shift", "profile resnet50 batch 1 bf16", "gpu tests",
                                         "profile resnet50 batch 32 bf16", "profile resnet50 batch 1 fp32",
                                         "profile resnet50 batch 32 fp32", "ridgeline-differential"};
    ASSERT_EQ(s["steps"].size(), order.size()) << s.dump(2);
    for (std::size_t i = 0; i < order.size(); ++i) {
        const std::string name = s["steps"][i]["name"];
        EXPECT_EQ(name.rfind(order[i], 0), 0u) << i << ": " << name;
        EXPECT_EQ(s["steps"][i]["status"], "DRY") << name;
    }
    // each step charged its least time: 30 + 60 + 10 + 60 + 20 + 45 + 60 + 60 + 45 + 60 + 30 = 480, the deadline
    EXPECT_EQ(s["elapsed_s"], 480);
    // the ceilings step's timeout is what was left, capped at its own 180 s: 480 - 100 = 380 -> 180
    std::ifstream cmd(r.out / "out" / "ceilings.log");
    std::string line;
    std::getline(cmd, line);
    EXPECT_EQ(line.rfind("timeout 180 ", 0), 0u) << line;
    EXPECT_NE(line.find("ceilings --device cuda --format json --output"), std::string::npos) << line;
}

TEST(GpuCheck, ATightDeadlineSkipsTheLaterStepsAndSaysWhy) {
    // 200 s: configure 30, build 60, CUDA tests 10, ceilings 60, scale_shift 20 leave 20 s, less than the 45 s the
    // resnet50 profile needs; every later step is skipped with that reason, and skipping is not failing (exit 0)
    const dry_run r = run_dry("gpu_check_tight", "200");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json s = summary(r);
    ASSERT_EQ(s["steps"].size(), 11u) << s.dump(2);
    for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(s["steps"][i]["status"], "DRY") << i;
    for (std::size_t i = 5; i < 11; ++i) EXPECT_EQ(s["steps"][i]["status"], "SKIPPED") << i;
    EXPECT_EQ(s["steps"][5]["note"], "the deadline leaves 20 s, the step needs at least 45 s");
    EXPECT_NE(r.output.find("SKIPPED  profile resnet50 batch 1 bf16 --quick"), std::string::npos) << r.output;
}

TEST(GpuCheck, ADeadlineThatIsNotASecondCountIsRefused) {
    for (const std::string bad : {"0", "-5", "ten", "1.5"}) {
        const dry_run r = run_dry("gpu_check_bad", bad);
        EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
        EXPECT_NE(r.output.find("--deadline must be a whole number of seconds >= 1, got \"" + bad + "\""),
                  std::string::npos)
            << r.output;
    }
}
