// ridgeline-differential: many random cases of every op on one backend against the reference loops
// (tests/support/differential.hpp), or, with --emit, tiny cases as JSON lines for scripts/pytorch_golden.py.
//
//   ridgeline-differential --device cpu --cases 500 --seed 1          every data type this CPU supports
//   ridgeline-differential --device cuda --dtype bf16 --op conv2d
//   ridgeline-differential --emit 12 --seed 3 > cases.jsonl           12 tiny cases per op, nothing run
//
// Exit status: 0 when every case matched or was declined with a reason, 1 on any mismatch or failure, 2 for bad use.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "differential.hpp"
#include "ridgeline/backends/registry.hpp"

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
            nlohmann::json j{{"layer", c.layer}, {"inputs", nlohmann::json::array()}};
            for (const auto& s : c.inputs) j["inputs"].push_back(s.dims());
            // the output shape as ridgeline infers it, so the golden script can check PyTorch agrees
            j["output"] = diff::graph_of(c, core::dtype::fp32).layers.at(0).output_shape.dims();
            std::cout << j.dump() << "\n";
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"ridgeline-differential: random cases of every op on a backend, compared with the reference loops"};
    std::string device = "cpu", dtype_text = "all";
    int cases = 200, threads = 0, emit_count = 0;
    std::uint64_t seed = 1;
    std::vector<std::string> only;
    app.add_option("--device", device, "cpu or cuda[:N]")->capture_default_str();
    app.add_option("--dtype", dtype_text, "fp32, tf32, bf16, fp16, or all (each the backend supports)")
        ->capture_default_str();
    app.add_option("--cases", cases, "cases per op and data type")->check(CLI::PositiveNumber)->capture_default_str();
    app.add_option("--seed", seed, "random seed (the same seed draws the same cases)")->capture_default_str();
    app.add_option("--threads", threads, "CPU threads (0: all)")->capture_default_str();
    app.add_option("--op", only, "only these op kinds (repeatable)");
    app.add_option("--emit", emit_count, "print this many tiny cases per op as JSON lines and run nothing");
    CLI11_PARSE(app, argc, argv);
    for (const auto& k : only)
        if (std::find(diff::kinds().begin(), diff::kinds().end(), k) == diff::kinds().end()) {
            std::cerr << "ridgeline-differential: unknown op kind \"" << k << "\"\n";
            return 2;
        }
    if (emit_count > 0) return emit(emit_count, seed, only);

    std::unique_ptr<backends::backend> b;
    try {
        b = backends::select_backend(device, threads).chosen;
    } catch (const std::exception& e) {
        std::cerr << "ridgeline-differential: " << e.what() << "\n";
        return 2;
    }
    std::vector<core::dtype> dtypes;
    if (dtype_text == "all") {
        dtypes = {core::dtype::fp32, core::dtype::tf32, core::dtype::bf16, core::dtype::fp16};
    } else {
        try {
            dtypes = {core::parse_dtype(dtype_text)};
        } catch (const std::exception& e) {
            std::cerr << "ridgeline-differential: " << e.what() << "\n";
            return 2;
        }
    }
    const auto probe = diff::graph_of({"relu", {core::shape{4}}}, core::dtype::fp32);
    const auto dev = b->device();
    std::printf("backend %s (%s), %d cases per op and data type, seed %llu\n", b->name().c_str(), dev.name.c_str(),
                cases, static_cast<unsigned long long>(seed));
    bool bad = false;
    for (core::dtype dt : dtypes) {
        if (const auto s = b->supports(probe.layers.at(0), dt); !s.supported) {
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
