// scripts/gpu-check.sh --dry-run (issue "CUDA backend ... a GPU check that fits its time"): on a machine without a
// GPU, every step's host-side logic runs (the deadline, each step's timeout from the time left, the priority
// order, SKIPPED with the reason, summary.json), each step charged the least time it needs, and its command is
// written to its log instead of run. A script bug is found here, not in the 15 minutes of a borrowed GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../support/scratch.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct dry_run {
    int exit_code = -1;
    std::string output;
    fs::path out;
};

/// scripts/gpu-check.sh with `args`, `env` ("VAR=value ...", may be empty) before it; its stdout in dir/stdout.txt.
dry_run run_check(const fs::path& dir, const std::string& env, const std::string& args) {
    dry_run r;
    r.out = dir;
    const fs::path log = r.out / "stdout.txt";
    const std::string cmd = env + " bash '" RIDGELINE_SOURCE_DIR "/scripts/gpu-check.sh' " + args + " > '" +
                            log.string() + "' 2>&1";
    const int status = std::system(cmd.c_str());
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.output = read_text(log);
    return r;
}

dry_run run_dry(const std::string& name, const std::string& deadline) {
    const fs::path dir = ridgeline::test::fresh_scratch_dir(name);
    return run_check(dir, "", "--dry-run --out '" + (dir / "out").string() + "' --deadline '" + deadline + "'");
}

json summary(const dry_run& r) {
    std::ifstream in(r.out / "out" / "summary.json");
    EXPECT_TRUE(in.good()) << r.output;
    return json::parse(in);
}

}  // namespace

TEST(GpuCheck, ADeadlineOfEveryStepsLeastTimeFitsThemAllInPriorityOrder) {
    const dry_run r = run_dry("gpu_check_all", "640");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json s = summary(r);
    EXPECT_EQ(s["schema"], "ridgeline.gpu_check/1");
    EXPECT_EQ(s["dry_run"], true);
    // the roofs first, then scale_shift against the copy, one whole model, then the rest
    const std::vector<std::string> order{"configure", "build ridgeline", "device-free CUDA tests", "ceilings",
                                         "PyTorch anchors", "scale_shift", "relu", "add",
                                         "profile resnet50 batch 1 bf16", "gpu tests",
                                         "profile resnet50 batch 32 bf16", "profile tinyllama-1.1b decode",
                                         "predict resnet50", "compare the prediction",
                                         "profile resnet50 batch 32 bf16 --fuse", "profile resnet50 batch 1 fp32", "profile resnet50 batch 32 fp32",
                                         "ridgeline-differential"};
    ASSERT_EQ(s["steps"].size(), order.size()) << s.dump(2);
    for (std::size_t i = 0; i < order.size(); ++i) {
        const std::string name = s["steps"][i]["name"];
        EXPECT_EQ(name.rfind(order[i], 0), 0u) << i << ": " << name;
        EXPECT_EQ(s["steps"][i]["status"], "DRY") << name;
    }
    // each step charged its least time: 30 + 60 + 10 + 60 + 20 + 20 + 15 + 15 + 45 + 60 + 60 + 45 + 10 + 10 + 45 + 45
    // + 60 + 30 = 640, the deadline
    EXPECT_EQ(s["elapsed_s"], 640);
    // the ceilings step's timeout is what was left, capped at its own 180 s: 640 - 100 = 540 -> 180
    std::ifstream cmd(r.out / "out" / "ceilings.log");
    std::string line;
    std::getline(cmd, line);
    EXPECT_EQ(line.rfind("timeout 180 ", 0), 0u) << line;
    EXPECT_NE(line.find("ceilings --device cuda --format json --output"), std::string::npos) << line;
}

TEST(GpuCheck, ATightDeadlineSkipsTheLaterStepsAndSaysWhy) {
    // 250 s: configure 30, build 60, CUDA tests 10, ceilings 60, PyTorch 20, scale_shift 20, relu 15, add 15 leave
    // 20 s, less than the 45 s the resnet50 profile needs; the gpu tests (60) and every later step but the two of 10 s
    // are skipped with that reason; the predict and compare steps (10 s each) fit the 20 s; skipping is not failing
    const dry_run r = run_dry("gpu_check_tight", "250");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const json s = summary(r);
    ASSERT_EQ(s["steps"].size(), 18u) << s.dump(2);
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(s["steps"][i]["status"], "DRY") << i;
    for (std::size_t i : {8, 9, 10, 11, 14, 15, 16, 17}) EXPECT_EQ(s["steps"][i]["status"], "SKIPPED") << i;
    for (std::size_t i : {12, 13}) EXPECT_EQ(s["steps"][i]["status"], "DRY") << i;
    EXPECT_EQ(s["steps"][8]["note"], "the deadline leaves 20 s, the step needs at least 45 s");
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

// The device tool returns only what lies under $OUT: at most 8 files, no more than 2 folders down, named in letters,
// digits, '.', '_' and '-'. With $OUT set, the output folder is packed there after every step (a run killed at its
// limit keeps what it finished) and the summary, text and JSON, lies beside the archive.
TEST(GpuCheck, WithOutSetEverythingComesBackPackedInAtMostEightFilesTwoDeep) {
    const fs::path dir = ridgeline::test::fresh_scratch_dir("gpu_check_out");
    const dry_run r = run_check(dir, "OUT='" + (dir / "back").string() + "'",
                                "--dry-run --out '" + (dir / "work").string() + "' --deadline 640");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::vector<std::string> back;
    for (const auto& e : fs::recursive_directory_iterator(dir / "back")) {
        if (!e.is_regular_file()) continue;
        const fs::path rel = fs::relative(e.path(), dir / "back");
        EXPECT_LE(std::distance(rel.begin(), rel.end()), 3) << rel;  // 2 folders, then the file
        for (const char c : rel.filename().string())
            EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') << rel;
        back.push_back(rel.string());
    }
    std::sort(back.begin(), back.end());
    EXPECT_EQ(back, (std::vector<std::string>{"gpu-check.tar.gz", "summary.json", "summary.txt"}));
    EXPECT_LE(back.size(), 8u);
    // the summary beside the archive is the finished one
    const json s = json::parse(read_text(dir / "back" / "summary.json"));
    EXPECT_EQ(s["exit_code"], 0);
    EXPECT_EQ(s["steps"].size(), 18u);
    // the archive holds every step's log
    const fs::path list = dir / "list.txt";
    ASSERT_EQ(std::system(("tar -tzf '" + (dir / "back" / "gpu-check.tar.gz").string() + "' > '" + list.string() + "'")
                              .c_str()),
              0);
    const std::string listed = read_text(list);
    for (const char* f : {"work/ceilings.log", "work/gpu-tests.log", "work/summary.json", "work/summary.txt"})
        EXPECT_NE(listed.find(f), std::string::npos) << f << " not in:\n" << listed;
    // the configure a build would run has neither oneDNN nor ONNX (a GPU machine has no -dev packages)
    const std::string configure = read_text(dir / "work" / "configure.log");
    EXPECT_NE(configure.find("-DRIDGELINE_DNNL=OFF -DRIDGELINE_ONNX=OFF"), std::string::npos) << configure;
}

#ifdef RIDGELINE_TEST_CUDNN_LIBRARY
namespace {

/// A cuDNN laid out as PyTorch's pip wheel (nvidia-cudnn-cu13) lays it out: site/nvidia/cudnn/lib/libcudnn.so.9 (no
/// unversioned name) and site/nvidia/cudnn/include/, links to this build's own cuDNN files. Returns `site`.
fs::path fake_cudnn_wheel(const fs::path& dir) {
    const fs::path site = dir / "site", wheel = site / "nvidia" / "cudnn";
    fs::create_directories(wheel / "lib");
    fs::create_directories(wheel / "include");
    const fs::path lib = fs::path(RIDGELINE_TEST_CUDNN_LIBRARY).parent_path() / "libcudnn.so.9";
    fs::create_symlink(fs::canonical(lib), wheel / "lib" / "libcudnn.so.9");
    for (const auto& e : fs::directory_iterator(RIDGELINE_TEST_CUDNN_INCLUDE))
        if (e.path().filename().string().rfind("cudnn", 0) == 0)
            fs::create_symlink(fs::canonical(e.path()), wheel / "include" / e.path().filename());
    return site;
}

}  // namespace

// cmake/FindCUDNN.cmake finds the wheel's cuDNN through python3 (`import nvidia.cudnn`), before the toolkit's.
TEST(GpuMachine, FindCudnnFindsTheWheelsVersionedLibraryAndHeaders) {
    const fs::path dir = ridgeline::test::fresh_scratch_dir("gpu_machine_find");
    const fs::path site = fake_cudnn_wheel(dir);
    fs::create_directories(dir / "project");
    std::ofstream(dir / "project" / "CMakeLists.txt")
        << "cmake_minimum_required(VERSION 3.25)\nproject(find_cudnn NONE)\n"
           "list(APPEND CMAKE_MODULE_PATH \"" RIDGELINE_SOURCE_DIR "/cmake\")\nfind_package(CUDNN REQUIRED)\n"
           "file(WRITE \"${CMAKE_BINARY_DIR}/found.txt\" \"${CUDNN_LIBRARY}\\n${CUDNN_INCLUDE_DIR}\\n${CUDNN_VERSION}\\n\")\n";
    const std::string cmd = "PYTHONPATH='" + site.string() + "' cmake -S '" + (dir / "project").string() + "' -B '" +
                            (dir / "build").string() + "' > '" + (dir / "cmake.log").string() + "' 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << read_text(dir / "cmake.log");
    const std::string found = read_text(dir / "build" / "found.txt");
    const fs::path wheel = site / "nvidia" / "cudnn";
    EXPECT_EQ(found.substr(0, found.find('\n')), (wheel / "lib" / "libcudnn.so.9").string()) << found;
    EXPECT_NE(found.find((wheel / "include").string() + "\n9."), std::string::npos) << found;
    EXPECT_NE(read_text(dir / "cmake.log").find("cuDNN 9."), std::string::npos) << read_text(dir / "cmake.log");
}

// A carried binary on the GPU machine: gpu-check.sh puts the wheel's lib/ on LD_LIBRARY_PATH before the binary's
// `--version` check, so the binary is reused, not rebuilt; libcudnn.so.9 resolves into the wheel (ldd.txt); the gtest
// binaries run directly; everything comes back under $OUT.
TEST(GpuMachine, ACarriedBinaryRunsWithTheWheelsCudnnAndIsNotRebuilt) {
    const fs::path dir = ridgeline::test::fresh_scratch_dir("gpu_machine_carried");
    const fs::path site = fake_cudnn_wheel(dir);
    const dry_run r = run_check(dir, "PYTHONPATH='" + site.string() + "' OUT='" + (dir / "back").string() + "'",
                                "--build '" RIDGELINE_TEST_BINARY_DIR "' --no-build --out '" +
                                    (dir / "work").string() + "' --deadline 300");
    ASSERT_EQ(r.exit_code, 0) << r.output << read_text(dir / "work" / "cuda-tests.log");
    EXPECT_NE(r.output.find("PASS     build (0 s): reused"), std::string::npos) << r.output;
    const std::string ldd = read_text(dir / "work" / "ldd.txt");
    EXPECT_NE(ldd.find("libcudnn.so.9 => " + (site / "nvidia" / "cudnn" / "lib" / "libcudnn.so.9").string()),
              std::string::npos)
        << ldd;
    EXPECT_EQ(ldd.find("not found"), std::string::npos) << ldd;
    EXPECT_TRUE(fs::exists(dir / "work" / "xml" / "cuda_tests.xml")) << r.output;
    EXPECT_TRUE(fs::exists(dir / "work" / "xml" / "cuda_index_math_tests.xml")) << r.output;
    EXPECT_TRUE(fs::exists(dir / "back" / "gpu-check.tar.gz")) << r.output;
}
#endif
