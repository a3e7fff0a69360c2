#pragma once
// Disturbed samples (docs/timing.md, "Other work on the machine"): what a timing sample lost to other work,
// read from the kernel's own accounting before the sample starts and after it stops, never inside it.
//
// CPU: per thread of this process, the time it spent runnable but not running (the second field of
//   /proc/self/task/<tid>/schedstat, "time spent waiting on a runqueue", in ns: Linux
//   Documentation/scheduler/sched-stats.rst); on a virtual machine, the hypervisor's steal time of the
//   CPUs this process may use (the 8th value of the cpuN lines of /proc/stat, in USER_HZ ticks: proc(5));
//   and the involuntary context switches (getrusage ru_nivcsw).
// GPU: the SM clock during the sample against the device's default clock (as nvbench does: a clock64()
//   kernel before and after, timed by events); a throttled sample is disturbed too.
//
// The rule (is_disturbed): a sample is disturbed when one of its threads lost more than
// `disturbed_lost_fraction` of its wall time (the longest run-queue wait of a thread, plus the longest steal of
// a CPU: one preempted thread of a team holds every other one at the next barrier, so the sample was
// lengthened by at least that much), or when the GPU's clock ran below `throttled_clock_fraction` of its
// default. The longest, not the sum over threads: on a machine of 64 threads, each thread's wake-up from an
// idle CPU (tens of us) would add up to milliseconds that delay nobody. Disturbed samples are kept out of the
// statistics and replaced (backend_api::measure).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ridgeline::backend_api {

/// A sample is disturbed when lost_ms() > disturbed_lost_fraction x wall_ms. 5%: well above what a quiet
/// machine's kernel threads take from a sample (measured: docs/timing.md), and well below a scheduler time
/// slice (3-4 ms on a 1-10 ms sample), which is what other work costs.
inline constexpr double disturbed_lost_fraction = 0.05;
/// A GPU sample whose mean SM clock is below this fraction of the default clock is disturbed (nvbench's
/// default throttle threshold, 75%: nvbench/docs/cli_help.md, --throttle-threshold).
inline constexpr double throttled_clock_fraction = 0.75;

/// What one sample lost, read around it.
struct sample_disturbance {
    double wall_ms = 0;               // the sample's time on the timer
    double run_queue_wait_ms = 0;     // summed over the threads that ran in the sample (for stolen_fraction)
    double max_thread_wait_ms = 0;    // the longest run-queue wait of one thread
    double steal_ms = 0;              // the longest hypervisor steal of one of this process's CPUs
    std::int64_t involuntary_switches = 0;
    int threads = 0;                  // threads of this process that ran during the sample (0: not known)
    double clock_fraction = 1.0;      // GPU: mean SM clock / default clock; 1 where not measured
    std::string throttle_cause{};     // GPU: why a throttled sample's clock was low (NVML's reasons), or ""

    /// What the sample was lengthened by at least: the longest wait of a thread plus the longest steal.
    [[nodiscard]] double lost_ms() const { return max_thread_wait_ms + steal_ms; }
};

/// The rule above.
[[nodiscard]] bool is_disturbed(const sample_disturbance& d);

/// Reads what a sample lost. A device_timer hands one out (device_timer::disturbance()).
class disturbance_meter {
public:
    virtual ~disturbance_meter() = default;
    /// Once per measurement, after its warm-up: finds what to watch (the threads that exist now).
    virtual void arm() = 0;
    /// At the end of a measurement: lets go of what arm() holds (open files).
    virtual void disarm() {}
    /// Just before the timer starts a sample.
    virtual void before_sample() = 0;
    /// Just after the timer stopped; `wall_ms` is what the timer read.
    virtual sample_disturbance after_sample(double wall_ms) = 0;
    /// What it reads ("schedstat", "schedstat+steal", "schedstat+sm_clock"), or "unavailable: <why>" when it
    /// can tell nothing (a sample is then never called disturbed, and reports say so).
    [[nodiscard]] virtual std::string source() const = 0;
    /// What one before_sample()/after_sample() pair costs, in ns (measured by arm()). The protocol makes a
    /// sample at least 20 times as long, so that the reads between samples (which leave the caches a little
    /// colder for the next sample's first run) move a small layer's median by less than its CI.
    [[nodiscard]] virtual double cost_ns() const { return 0; }
};

/// A sample lasts at least this many times the disturbance meter's cost.
inline constexpr double sample_to_meter_cost = 20.0;

/// Whose time a cpu_disturbance_meter watches: every thread of the process on every CPU it may use (the CPU
/// backends, whose threads do the work), or only the thread that calls arm() and the CPUs it was on at each
/// sample's start and end (a GPU: the launching thread is the one whose delay leaves the GPU idle; the other
/// threads of the driver and the steal of the other CPUs of a 16-CPU VM are not the sample's).
enum class meter_scope { process, calling_thread };

/// The CPU meter: per-thread run-queue wait, steal time, involuntary switches of this process (Linux /proc).
class cpu_disturbance_meter final : public disturbance_meter {
public:
    explicit cpu_disturbance_meter(meter_scope scope = meter_scope::process);
    ~cpu_disturbance_meter() override;
    cpu_disturbance_meter(const cpu_disturbance_meter&) = delete;
    cpu_disturbance_meter& operator=(const cpu_disturbance_meter&) = delete;

    void arm() override;
    void disarm() override { close_all(); }
    void before_sample() override;
    sample_disturbance after_sample(double wall_ms) override;
    [[nodiscard]] std::string source() const override;
    [[nodiscard]] double cost_ns() const override { return cost_ns_; }

private:
    double cost_ns_ = 0;
    struct watched {
        int fd = -1;                 // its /proc/self/task/<tid>/schedstat
        int tid = 0;
        std::int64_t on_cpu_ns = 0;  // CPU time before the sample
        std::int64_t wait_ns = 0;    // run-queue wait before the sample
    };
    void close_all();
    [[nodiscard]] std::vector<std::int64_t> steal_ticks() const;  // per CPU of cpus_

    std::vector<watched> threads_;
    meter_scope scope_ = meter_scope::process;
    int cpu_before_ = -1;    // calling_thread: the CPU the thread was on at the sample's start
    std::vector<int> cpus_;  // the CPUs this process may run on
    int stat_fd_ = -1;       // /proc/stat, read only where steal time exists (a VM)
    std::vector<std::int64_t> steal_before_;
    std::int64_t nivcsw_before_ = 0;
    double ns_per_tick_ = 1e7;
    std::string unavailable_;  // why schedstat cannot be read; empty when it can
};

/// A meter that reads nothing: the accounting turned off on purpose (RIDGELINE_DISTURBANCE=off, for
/// bench/timing_overhead.sh). Its source says so; measurements taken with it are never cached as ceilings and
/// reports warn that no sample could be called disturbed.
class off_disturbance_meter final : public disturbance_meter {
public:
    void arm() override {}
    void before_sample() override {}
    sample_disturbance after_sample(double wall_ms) override {
        sample_disturbance d;
        d.wall_ms = wall_ms;
        return d;
    }
    [[nodiscard]] std::string source() const override { return "off (RIDGELINE_DISTURBANCE=off)"; }
};

/// Whether the environment turns the accounting off: RIDGELINE_DISTURBANCE is off, 0, false or no, in any case.
bool disturbance_accounting_off();

// Parsers, public for tests (synthetic accounting).

/// The first two fields of a schedstat line: time on the CPU and run-queue wait, in ns.
std::optional<std::pair<std::int64_t, std::int64_t>> parse_schedstat(std::string_view line);
/// Steal ticks (USER_HZ) of each of the given CPUs, in their order, from the text of /proc/stat; 0 where absent.
std::vector<std::int64_t> parse_steal_ticks(std::string_view proc_stat, const std::vector<int>& cpus);
/// The longest steal (ticks) over a sample: before[i] and now[i] are CPU cpus[i]'s ticks; only the CPUs in `only`
/// count, every one where `only` is empty.
std::int64_t longest_steal_ticks(const std::vector<std::int64_t>& before, const std::vector<std::int64_t>& now,
                                 const std::vector<int>& cpus, const std::vector<int>& only);

}  // namespace ridgeline::backend_api
