// Other work on the machine (issue "Truthful numbers"; docs/timing.md): a competing busy process started a fifth
// of a second into `profile --model resnet18 --threads 2` must not slow any layer into a verdict. Every layer whose
// median is 3x or more its undisturbed median is re-measured clean or marked `disturbed`; without the busy
// process no layer is disturbed (which is also what keeps a detector that calls every sample disturbed from
// passing). Whether clean samples exist beside a process that never sleeps is up to the scheduler: on a 2-CPU
// machine it holds one CPU of two for the whole run, and one machine gave every layer clean samples while
// another (the CI run of 2026-12-01) gave none, all 68 layers honestly `disturbed`. That replaced samples do
// recover a verdict is therefore tested beside a process that is busy a fifth of the time, in bursts: the
// profile must then find clean samples for most layers.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
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

/// A process that stays runnable from a fifth of a second after the call on (the profile has started and read its
/// ceilings from the cache), busy `busy_ms` then asleep `idle_ms` (0: never sleeps), until stop_spinner(). The busy
/// spells are timed on the monotonic clock, not counted in loop turns. Not later: a quick resnet18 profile times its
/// layers in about two seconds here, and a spinner that started after them disturbed nothing (CI of 2026-12-06:
/// 0 disturbed samples beside the never-sleeping one).
pid_t start_spinner(int busy_ms, int idle_ms) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        for (;;) {
            const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_ms);
            while (idle_ms == 0 || std::chrono::steady_clock::now() < until) asm volatile("" ::: "memory");
            std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
        }
    }
    return pid;
}

void stop_spinner(pid_t pid) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
}

struct busy_run_summary {
    std::size_t layers = 0, verdicts = 0, disturbed_layers = 0, disturbed_samples = 0, slowed = 0, slowed_flagged = 0;
    std::string unflagged;  // the slowed layers not marked disturbed, with their ratios
};

/// Checks every layer of `busy` against its quiet median: a disturbed layer has no verdict, and a layer 3x or
/// more slower than undisturbed was either measured clean again (then it would not be 3x slower) or is disturbed.
busy_run_summary check_busy_run(const std::map<std::string, json>& q, const json& busy) {
    busy_run_summary s;
    for (const auto& [name, l] : timed(busy)) {
        ++s.layers;
        EXPECT_TRUE(q.count(name)) << name;
        if (!q.count(name)) continue;
        const double ratio = l["time"]["median_ms"].get<double>() / q.at(name)["time"]["median_ms"].get<double>();
        const bool disturbed = l["time"]["disturbed"].get<bool>();
        s.disturbed_samples += l["time"]["disturbed_samples"].get<std::size_t>();
        s.disturbed_layers += disturbed;
        if (disturbed) {
            EXPECT_EQ(l["bound"], "disturbed") << name;
        }
        if (!disturbed && l["bound"].is_string() && l["bound"] != "none") ++s.verdicts;
        if (ratio >= 3.0) {
            ++s.slowed;
            s.slowed_flagged += disturbed;
            if (!disturbed)
                s.unflagged += name + " took " + std::to_string(ratio) + "x its undisturbed median and got the verdict " +
                               l["bound"].dump() + " (" + l["time"]["disturbed_samples"].dump() + " disturbed samples); ";
        }
    }
    return s;
}

void print(const char* what, const busy_run_summary& s) {
    std::printf("%s: %zu layers timed, %zu with a verdict, %zu disturbed, %zu disturbed samples, %zu layers >= 3x "
                "slower (%zu of them marked disturbed)\n",
                what, s.layers, s.verdicts, s.disturbed_layers, s.disturbed_samples, s.slowed, s.slowed_flagged);
}

/// Profiles resnet18 beside start_spinner(busy_ms, idle_ms), checks every layer against the quiet medians `q`
/// (check_busy_run) into `s`, and prints the summary as `what`. Every layer of the quiet run is timed again; a layer
/// 3x or more slower was measured clean again (then it is not 3x slower) or is disturbed, and at most one of the 68
/// may escape, the slowdown the accounting cannot see (docs/timing.md: once layer1.1.add, 3.8x its quiet median
/// under AddressSanitizer with 12 of its samples replaced). This bound alone proves little: with
/// RIDGELINE_DISTURBANCE=off one layer of 68 reached 3x here; the accounting is proven by the replaced samples and
/// by "disturbed" layers getting no verdict (check_busy_run).
void profile_beside_spinner(const std::map<std::string, json>& q, int busy_ms, int idle_ms, const char* what,
                            busy_run_summary& s) {
    const pid_t spinner = start_spinner(busy_ms, idle_ms);
    ASSERT_GT(spinner, 0);
    const json busy = profile_resnet18();
    stop_spinner(spinner);
    s = check_busy_run(q, busy);
    EXPECT_EQ(s.layers, q.size());
    EXPECT_LE(s.slowed - s.slowed_flagged, 1u) << s.unflagged;
    print(what, s);
}

}  // namespace

TEST(Disturbance, ABusyProcessNeverSlowsALayerIntoAVerdict) {
    if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one CPU: --threads 2 would share it with itself";
    // undisturbed first (with the two-thread ceilings measured, or read from the cache)
    const json quiet = profile_resnet18();
    const auto q = timed(quiet);
    ASSERT_EQ(q.size(), 68u);  // resnet18's 69 layers less the flatten (a view: no time)
    std::size_t quiet_disturbed = 0;
    for (const auto& [name, l] : q) quiet_disturbed += l["time"]["disturbed"].get<bool>();
    // without the busy process, (almost) no layer is disturbed: a detector that calls every sample disturbed fails
    // here. Not none: the test runs alone under ctest, but the machine may be shared (a new user's clone saw 1 of
    // 68 layers disturbed alone on a machine with a load of 5)
    EXPECT_LE(quiet_disturbed, q.size() / 10) << quiet["warnings"].dump();

    // 1. a process that never sleeps, for the rest of the run: no slowed layer gets a verdict
    busy_run_summary always;
    ASSERT_NO_FATAL_FAILURE(profile_beside_spinner(q, 0, 0, "always busy", always));
    // the accounting saw the busy process (else this test proves nothing)
    EXPECT_GT(always.disturbed_samples, 0u);

    // 2. busy 20 ms of every 100: the samples that met a burst are replaced, and most layers find clean ones
    busy_run_summary some;
    ASSERT_NO_FATAL_FAILURE(profile_beside_spinner(q, 20, 80, "busy in bursts", some));
    // calling everything disturbed is no answer: with the CPU free 80% of the time, most layers get verdicts
    EXPECT_GT(some.verdicts, some.layers / 2) << some.verdicts << " of " << some.layers;
}
