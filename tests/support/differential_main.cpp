// ridgeline-differential: many random cases of every op on one backend against the reference loops
// (tests/support/differential.hpp), or, with --emit, tiny cases as JSON lines for scripts/pytorch_golden.py.
//
//   ridgeline-differential --device cpu --cases 500 --seed 1          every data type this CPU supports
//   ridgeline-differential --device cuda --dtype bf16 --op conv2d
//   ridgeline-differential --emit 12 --seed 3 > cases.jsonl           12 tiny cases per op, nothing run
//
// Exit status: 0 when every case matched or was declined with a reason, 1 on any mismatch or failure, 2 for bad use
// (one line on stderr: a bad option, an unknown op, a device that is not here, a --dtype the backend declines).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "differential.hpp"
#include "ridgeline/profiler/registry.hpp"

using namespace ridgeline;
namespace diff = ridgeline::test::differential;

namespace {

int emit(int per_op, std::uint64_t seed, const std::vector<std::string>& only) {
    for (std::string_view kind : diff::kinds()) {
        if (!only.empty() && std::find(only.begin(), only.end(), kind) == only.end()) continue;
        std::seed_seq seq{seed, static_cast<std::uint64_t>(std::hash<std::string_view>{}(kind))};
        std::mt19937_64 rng(seq);
        for (int i = 0; i < per_op; ++i) {
            const diff::layer_case c = diff::random_case(kind, rng, diff::size_class::tiny);
            nlohmann::json j{{"layer", c.layer}, {"inputs", nlohmann::json::array()}, {"same_input", c.same_input}};
            for (const auto& s : c.inputs) j["inputs"].push_back(s.dims());
            // the output shape as ridgeline infers it, so the golden script can check PyTorch agrees
            j["output"] = diff::graph_of(c, core::dtype::fp32).layers.back().output_shape.dims();
            std::cout << j.dump() << "\n";
        }
    }
    return 0;
}

}  // namespace

/// One line on stderr, exit status 2: every bad use ends here.
int bad_use(const std::string& message) {
    std::cerr << "ridgeline-differential: " << message << "\n";
    return 2;
}

int main(int argc, char** argv) {
    CLI::App app{"ridgeline-differential: random cases of every op on a backend, compared with the reference loops"};
    std::string device = "cpu", dtype_text = "all", seed_text = "1";
    int cases = 200, threads = 0, emit_count = 0;
    std::vector<std::string> only;
    app.add_option("--device", device, "cpu or cuda[:N]")->capture_default_str();
    app.add_option("--dtype", dtype_text, "fp32, tf32, bf16, fp16, or all (each the backend supports)")
        ->capture_default_str();
    app.add_option("--cases", cases, "cases per op and data type (1 to 1,000,000)")->capture_default_str();
    app.add_option("--seed", seed_text, "random seed, 0 to 2^64-1 (the same seed draws the same cases)")
        ->capture_default_str();
    app.add_option("--threads", threads, "CPU threads (0: all, at most 4096)")->capture_default_str();
    app.add_option("--op", only, "only these op kinds (repeatable)");
    app.add_option("--emit", emit_count, "print this many tiny cases per op (1 to 10,000) as JSON lines, run nothing");
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return bad_use(e.what());
    }
    if (cases < 1 || cases > 1000000) return bad_use("--cases " + std::to_string(cases) + " is outside 1 to 1,000,000");
    if (threads < 0 || threads > 4096) return bad_use("--threads " + std::to_string(threads) + " is outside 0 to 4096");
    // the seed in full: no sign, digits only, within 64 bits (std::stoull would wrap "-1" and CLI11 saturate)
    std::uint64_t seed = 0;
    if (seed_text.empty() || seed_text.find_first_not_of("0123456789") != std::string::npos || seed_text.size() > 20)
        return bad_use("--seed \"" + seed_text + "\" is not a whole number from 0 to 18446744073709551615");
    try {
        seed = std::stoull(seed_text);
    } catch (const std::out_of_range&) {
        return bad_use("--seed " + seed_text + " is larger than 18446744073709551615");
    }
    for (const auto& k : only)
        if (std::find(diff::kinds().begin(), diff::kinds().end(), k) == diff::kinds().end())
            return bad_use("unknown op kind \"" + k + "\"");
    if (app.count("--emit") > 0) {
        if (emit_count < 1 || emit_count > 10000)
            return bad_use("--emit " + std::to_string(emit_count) + " is outside 1 to 10,000");
        for (const char* o : {"--device", "--dtype", "--cases", "--threads"})
            if (app.count(o) > 0) return bad_use(std::string(o) + " does not apply to --emit, which runs nothing");
        return emit(emit_count, seed, only);
    }

    std::unique_ptr<backend_api::backend> b;
    try {
        b = profiler::select_backend(device, threads).chosen;
    } catch (const std::exception& e) {
        return bad_use(e.what());
    }
    std::vector<core::dtype> dtypes;
    if (dtype_text == "all") {
        dtypes = {core::dtype::fp32, core::dtype::tf32, core::dtype::bf16, core::dtype::fp16};
    } else {
        try {
            dtypes = {core::parse_dtype(dtype_text)};
        } catch (const std::exception& e) {
            return bad_use(e.what());
        }
    }
    const auto probe = diff::graph_of({"relu", {core::shape{4}}}, core::dtype::fp32);
    const auto dev = b->device();
    std::printf("backend %s (%s), %d cases per op and data type, seed %llu\n", b->name().c_str(), dev.name.c_str(),
                cases, static_cast<unsigned long long>(seed));
    bool bad = false;
    for (core::dtype dt : dtypes) {
        if (const auto s = b->supports(probe.layers.at(0), dt); !s.supported) {
            if (dtype_text != "all")  // asked for by name: running nothing is not a pass
                return bad_use("--dtype " + dtype_text + ": the " + b->name() + " backend declines it here (" + s.reason + ")");
            std::printf("\n%s: not run, the backend declines the data type here (%s)\n",
                        std::string(core::to_string(dt)).c_str(), s.reason.c_str());
            continue;
        }
        const auto t0 = std::chrono::steady_clock::now();
        const auto tallies = diff::run_all(*b, dt, cases, seed, only);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("\n%s (%.1f s)\n%-20s %6s %8s %9s %11s %7s\n", std::string(core::to_string(dt)).c_str(), secs, "op",
                    "tried", "matched", "declined", "mismatched", "failed");
        diff::op_tally sum;
        for (const auto& [kind, t] : tallies) {
            std::printf("%-20s %6d %8d %9d %11d %7d\n", kind.c_str(), t.tried, t.matched, t.declined, t.mismatched,
                        t.failed);
            sum.tried += t.tried, sum.matched += t.matched, sum.declined += t.declined;
            sum.mismatched += t.mismatched, sum.failed += t.failed;
        }
        std::printf("%-20s %6d %8d %9d %11d %7d\n", "total", sum.tried, sum.matched, sum.declined, sum.mismatched,
                    sum.failed);
        for (const auto& [kind, t] : tallies)
            for (const auto& [reason, n] : t.decline_reasons)
                std::printf("  declined %-12s x%-4d %s\n", kind.c_str(), n, reason.c_str());
        for (const auto& [kind, t] : tallies) {
            for (const auto& p : t.problems) std::printf("  PROBLEM %s\n", p.c_str());
            bad = bad || t.mismatched > 0 || t.failed > 0;
        }
    }
    return bad ? 1 : 0;
}
