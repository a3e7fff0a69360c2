// Other work on the machine (issue "Truthful numbers"; docs/timing.md): a competing busy process started a couple
// of seconds into `profile --model resnet18 --threads 2` must not slow any layer into a verdict. Every layer whose
// median is 3x or more its undisturbed median is re-measured clean or marked `disturbed`; without the busy
// process no layer is disturbed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "../support/scratch.hpp"
#include "process.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using ridgeline::test::run_ridgeline;

namespace {

json profile_resnet18() {
    // the roofline tests' ceilings cache (two threads, quick: the quick ceilings answer a quick request)
    const fs::path cache = fs::path(RIDGELINE_BINARY).parent_path() / "test-cache";
    fs::create_directories(cache);
    ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    auto r = run_ridgeline({"profile", "--model", "resnet18", "--device", "cpu", "--threads", "2", "--quick", "--quiet",
                            "--format", "json"},
                           600);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
}

/// layer name -> the layer's JSON, for the layers with a time
std::map<std::string, json> timed(const json& report) {
    std::map<std::string, json> m;
    for (const auto& l : report["layers"])
        if (l["time"].is_object()) m[l["name"].get<std::string>()] = l;
    return m;
}

}  // namespace

TEST(Disturbance, ABusyProcessNeverSlowsALayerIntoAVerdict) {
    if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one CPU: --threads 2 would share it with itself";
    // undisturbed first (with the two-thread ceilings measured, or read from the cache)
    const json quiet = profile_resnet18();
    const auto q = timed(quiet);
    std::size_t quiet_disturbed = 0;
    for (const auto& [name, l] : q) quiet_disturbed += l["time"]["disturbed"].get<bool>();
    // without other work on the machine, no layer is disturbed
    EXPECT_EQ(quiet_disturbed, 0u) << quiet["warnings"].dump();

    // then a process that stays runnable starts two seconds into the run, for the rest of it
    const pid_t spinner = ::fork();
    if (spinner == 0) {
        std::this_thread::sleep_for(std::chrono::seconds(2));
        for (;;) asm volatile("" ::: "memory");  // never returns: killed below
    }
    ASSERT_GT(spinner, 0);
    const json busy = profile_resnet18();
    ::kill(spinner, SIGKILL);
    ::waitpid(spinner, nullptr, 0);
    const auto b = timed(busy);

    std::size_t slowed = 0, slowed_flagged = 0, verdicts = 0, disturbed_samples = 0;
    for (const auto& [name, l] : b) {
        ASSERT_TRUE(q.count(name)) << name;
        const double ratio = l["time"]["median_ms"].get<double>() / q.at(name)["time"]["median_ms"].get<double>();
        const bool disturbed = l["time"]["disturbed"].get<bool>();
        disturbed_samples += l["time"]["disturbed_samples"].get<std::size_t>();
        if (disturbed) {
            EXPECT_EQ(l["bound"], "disturbed") << name;
        }
        if (!disturbed && l["bound"].is_string() && l["bound"] != "none") ++verdicts;
        if (ratio >= 3.0) {
            ++slowed;
            slowed_flagged += disturbed;
            // a layer 3x or more slower than undisturbed was either measured clean again (then it would not be
            // 3x slower) or is disturbed: never a compute/memory/overhead verdict on a slowed time
            EXPECT_TRUE(disturbed) << name << " took " << ratio << "x its undisturbed median and got the verdict "
                                   << l["bound"] << " (" << l["time"]["disturbed_samples"] << " disturbed samples)";
        }
    }
    // the accounting saw the busy process (else this test proves nothing)...
    EXPECT_GT(disturbed_samples, 0u);
    // ...and calling everything disturbed is no answer: most layers still get verdicts from clean samples
    EXPECT_GT(verdicts, b.size() / 2) << verdicts << " of " << b.size();
    std::printf("busy run: %zu layers timed, %zu with a verdict, %zu disturbed samples, %zu layers >= 3x slower "
                "(%zu of them marked disturbed)\n",
                b.size(), verdicts, disturbed_samples, slowed, slowed_flagged);
}
