#pragma once
// The kernels and protocols behind the CPU ceilings (cpu_ceilings.cpp measures them, cpu_ceilings_check.cpp checks
// a cached set): register-resident FMA kernels per instruction set, STREAM kernels over arrays of a given working
// set, the dispatch cost of the smallest op, and the bookkeeping of one ceiling's measurement. Internal to cpu/.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ridgeline/backend_api/backend.hpp"
#include "ridgeline/backend_api/timing.hpp"

namespace ridgeline::cpu::ceilings_detail {

/// One FMA kernel: `kernel(iters)` runs `iters` iterations of `flops_per_iter` FLOP on the calling thread.
struct fma_variant {
    const char* name;   // "fp32 avx2"
    const char* dtype;  // "fp32"
    const char* needs;  // the cpu flag it needs
    double flops_per_iter;
    float (*kernel)(std::int64_t);
};
/// fp32 fma128, fp32 avx2, fp32 avx512, bf16 avx512_bf16 (12 independent accumulators per thread).
const fma_variant* fma_variants_begin();
const fma_variant* fma_variants_end();

/// The protocol of a ceiling (best clean sample; full: about 0.1-0.25 s, quick: about 0.02-0.06 s).
backend_api::timing_options ceiling_protocol(bool quick);
/// The short protocol of a spot check and of a sweep point measured again: 5 samples within about 0.03 s.
backend_api::timing_options spot_protocol();

/// One ceiling's measurement: repeated while it could not collect its clean samples (up to `attempts` in all; the
/// spot check, retried whole once when disturbed, takes 1); the result with
/// the most clean samples is kept, its spread ((median - best) / best) recorded in c.spread[key], its stolen
/// fraction in c.stolen_fraction, and the ceilings marked disturbed when it never collected the minimum of clean
/// samples (or the accounting was off).
backend_api::timing_result measure_ceiling(const std::function<void()>& run, backend_api::device_timer& timer,
                                        const backend_api::timing_options& protocol,
                                        const backend_api::ceilings_options& options, backend_api::ceilings& c,
                                        const std::string& key, int attempts = 3,
                                        const std::function<void()>& flush = {});

/// GFLOP/s of an FMA variant on every OpenMP thread at once, `iters` iterations per thread and run (from the best
/// sample; a disturbed measurement marks c, as measure_ceiling does; 0 when interrupted).
double fma_gflops(const fma_variant& v, std::int64_t iters, const backend_api::timing_options& protocol,
                  const backend_api::ceilings_options& options, backend_api::ceilings& c, const std::string& key,
                  int attempts = 3);

/// The STREAM kernels (McCalpin): copy c = a, triad a = b + s*c, read sum(a + b + c), and a copy with
/// non-temporal stores (as oneDNN writes large outputs: no read-for-ownership of the destination).
enum class stream_kernel { copy, triad, read, copy_streaming };
const char* to_string(stream_kernel k);

/// Arrays for the STREAM kernels at one working set, first touched in parallel by the threads that use them (each
/// thread its own static slice). Every kernel of one pass moves the same `working_set_bytes`: triad and read over
/// three arrays of a third of it each, the streaming copy from one array of half of it into another (so that no
/// kernel reuses from the cache a source smaller than its working set: a streaming copy over two of three
/// arrays read 33 MB out of a 32 MiB L3 and called a 100 MB working set 118 GB/s, against 42 for triad).
/// The plain copy (STREAM's c = a over a third each) is for the DRAM level only.
class stream_arrays {
public:
    /// Without `streaming_copy` (the DRAM level's STREAM: copy, triad and read over a third each) a and c hold a
    /// third, not a half: a quarter less memory to allocate and touch (1.3 GB of 5.1 on a VM with a 300 MB L3).
    explicit stream_arrays(std::int64_t working_set_bytes, bool streaming_copy = true);
    [[nodiscard]] std::int64_t working_set_bytes() const { return 24 * n_; }
    /// Bytes one pass of `k` counts: 24 per element of a third (triad, read, the streaming copy's 16 per element
    /// of a half), 16 per element of a third for the plain copy.
    [[nodiscard]] double bytes_per_pass(stream_kernel k) const;
    /// `reps` passes of `k`, every thread on its own slice (the same slice in every pass).
    void passes(stream_kernel k, int reps);

private:
    std::int64_t n_ = 0;  // elements of a third of the working set
    bool streaming_copy_ = true;
    struct free_deleter {
        void operator()(double* p) const noexcept;
    };
    using buffer = std::unique_ptr<double[], free_deleter>;
    /// `count` doubles, 2 MiB aligned and marked for transparent huge pages where the kernel offers them
    /// (madvise mode): touching gigabytes takes a fault per 2 MiB instead of per 4 KiB.
    static buffer allocate(std::int64_t count);
    buffer a_, b_, c_;
};

/// GB/s of `k` on `s`: passes enough that one run moves >= 8 MiB, best clean sample (a disturbed measurement marks
/// c, as measure_ceiling does; 0 when interrupted).
double stream_gbs(stream_arrays& s, stream_kernel k, const backend_api::timing_options& protocol,
                  const backend_api::ceilings_options& options, backend_api::ceilings& c, const std::string& key,
                  int attempts = 3);

/// One point of the working-set sweep: the highest of triad, read and the streaming copy on arrays of just this
/// working set, each under `protocol`. Spreads go to c.spread["working_set"] (the largest) and
/// c.spread["working_set.<bytes>"]; `clean` turns false where a kernel's samples were disturbed (it counts 0).
double sweep_point_gbs(std::int64_t working_set_bytes, const backend_api::timing_options& protocol,
                       const backend_api::ceilings_options& options, backend_api::ceilings& c, bool& clean,
                       int attempts = 3);

/// The median time of the smallest op (relu of one fp32 element) through `b`, in ms, with the last-level cache
/// flushed before each run when `cold`; its spread under `key`.
backend_api::timing_result dispatch_time(backend_api::backend& b, const backend_api::timing_options& protocol,
                                      const backend_api::ceilings_options& options, backend_api::ceilings& c,
                                      const std::string& key, bool cold, int attempts = 3);

/// Says each step of a measurement as it starts (ceilings_options::on_progress), with the time left estimated from
/// the steps' planned seconds and the pace so far.
class progress {
public:
    progress(const backend_api::ceilings_options& options, std::vector<std::pair<std::string, double>> plan);
    /// The next step of the plan starts (its name as planned, or `name` when given).
    void next(const std::string& name = {});

private:
    const backend_api::ceilings_options& options_;
    std::vector<std::pair<std::string, double>> plan_;
    std::size_t index_ = 0;
    double t0_ = 0;
};

}  // namespace ridgeline::cpu::ceilings_detail
