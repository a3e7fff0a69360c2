// Profiles one Linear layer through ridgeline's library API: verified against the reference, timed with
// the timing protocol, and judged on the roofline of this device's measured ceilings.
//   profile_linear [device [threads]]   device: auto (default), cpu, cpu-ref, cuda, cuda:N; threads: 0 = all CPUs
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "ridgeline/api.hpp"

int main(int argc, char** argv) {
    using namespace ridgeline;
    try {
        auto backend = make_backend(argc > 1 ? argv[1] : "auto", argc > 2 ? std::atoi(argv[2]) : 0);
        profiler::profile_options options;
        options.timing = backend_api::timing_options::quick();
        // the device's ceilings (smaller problems with quick): without them there is no roofline verdict
        options.ceilings = backend->measure_ceilings(backend_api::ceilings_options{.quick = true});

        // y = x W^T + b for x of 64 x 1024 and W of 512 x 1024: 64*1024*512 = 33,554,432 MACs
        const profiler::layer_profile p =
            profile_layer("linear:in_features=1024,out_features=512", {core::shape{64, 1024}}, *backend,
                          core::dtype::fp32, options);
        if (!p.has_time()) {
            std::fprintf(stderr, "profile_linear: not measured (%s): %s\n", std::string(to_string(p.state)).c_str(),
                         p.reason.c_str());
            return 1;
        }
        std::printf("backend %s\n", backend->name().c_str());
        std::printf("macs %lld\n", static_cast<long long>(p.analysis.cost.macs));
        // states are enums; to_string gives the name the reports use
        std::printf("verification %s\n", std::string(to_string(p.verification.state)).c_str());
        std::printf("median %.6f ms\n", p.time->stats.median);
        std::printf("bound %s\n", std::string(p.roofline ? to_string(p.roofline->bound) : "none").c_str());
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "profile_linear: %s\n", e.what());
        return 1;
    }
}
