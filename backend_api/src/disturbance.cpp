#include "ridgeline/backend_api/disturbance.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace ridgeline::backend_api {

bool disturbance_accounting_off() {
    const char* e = std::getenv("RIDGELINE_DISTURBANCE");
    if (!e) return false;
    std::string v(e);
    for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return v == "off" || v == "0" || v == "false" || v == "no";
}

bool is_disturbed(const sample_disturbance& d) {
    if (d.clock_fraction < throttled_clock_fraction) return true;
    return d.wall_ms > 0 && d.lost_ms() > disturbed_lost_fraction * d.wall_ms;
}

namespace {

bool read_int(std::string_view& s, std::int64_t& v) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p == s.data()) return false;
    s.remove_prefix(static_cast<std::size_t>(p - s.data()));
    return true;
}

/// The whole of a small /proc file from offset 0 through an open descriptor (pread: no seek, no reopen).
std::string_view pread_all(int fd, char* buf, std::size_t size) {
    const ssize_t n = ::pread(fd, buf, size - 1, 0);
    if (n <= 0) return {};
    return {buf, static_cast<std::size_t>(n)};
}

std::int64_t involuntary_switches() {
    rusage u{};
    if (::getrusage(RUSAGE_SELF, &u) != 0) return 0;
    return u.ru_nivcsw;
}

}  // namespace

std::optional<std::pair<std::int64_t, std::int64_t>> parse_schedstat(std::string_view line) {
    std::int64_t on_cpu = 0, wait = 0;
    if (!read_int(line, on_cpu) || !read_int(line, wait) || on_cpu < 0 || wait < 0) return std::nullopt;
    return std::pair{on_cpu, wait};
}

std::vector<std::int64_t> parse_steal_ticks(std::string_view text, const std::vector<int>& cpus) {
    std::vector<std::int64_t> steal(cpus.size(), 0);
    while (!text.empty()) {
        const std::size_t eol = text.find('\n');
        if (eol == std::string_view::npos) break;  // a line cut short is not read
        std::string_view line = text.substr(0, eol);
        text = text.substr(eol + 1);
        // "cpuN user nice system idle iowait irq softirq steal guest guest_nice" (proc(5)); "cpu " is the total
        if (line.size() < 4 || line.substr(0, 3) != "cpu" || line[3] == ' ') continue;
        line.remove_prefix(3);
        std::int64_t cpu = -1;
        if (!read_int(line, cpu)) continue;
        for (std::size_t i = 0; i < cpus.size(); ++i) {
            if (cpus[i] != cpu) continue;
            std::int64_t v = 0;
            bool ok = true;
            for (int field = 0; field < 8 && ok; ++field) ok = read_int(line, v);
            if (ok && v > 0) steal[i] = v;
        }
    }
    return steal;
}

std::int64_t longest_steal_ticks(const std::vector<std::int64_t>& before, const std::vector<std::int64_t>& now,
                                 const std::vector<int>& cpus, const std::vector<int>& only) {
    std::int64_t ticks = 0;
    for (std::size_t i = 0; i < now.size() && i < before.size() && i < cpus.size(); ++i)
        if (only.empty() || std::find(only.begin(), only.end(), cpus[i]) != only.end())
            ticks = std::max(ticks, now[i] - before[i]);
    return ticks;
}

cpu_disturbance_meter::cpu_disturbance_meter(meter_scope scope) : scope_(scope) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus_.push_back(c);
    const long hz = ::sysconf(_SC_CLK_TCK);
    ns_per_tick_ = hz > 0 ? 1e9 / static_cast<double>(hz) : 1e7;
    // steal time exists only under a hypervisor that reports it: read /proc/stat per sample only where it is
    // already non-zero for these CPUs (elsewhere it stays 0 and reading it would cost for nothing)
    stat_fd_ = ::open("/proc/stat", O_RDONLY | O_CLOEXEC);
    const auto steal = steal_ticks();
    if (stat_fd_ >= 0 && std::all_of(steal.begin(), steal.end(), [](std::int64_t v) { return v == 0; })) {
        ::close(stat_fd_);
        stat_fd_ = -1;
    }
    arm();
}

cpu_disturbance_meter::~cpu_disturbance_meter() {
    close_all();
    if (stat_fd_ >= 0) ::close(stat_fd_);
}

void cpu_disturbance_meter::close_all() {
    for (auto& t : threads_)
        if (t.fd >= 0) ::close(t.fd);
    threads_.clear();
}

std::vector<std::int64_t> cpu_disturbance_meter::steal_ticks() const {
    if (stat_fd_ < 0) return std::vector<std::int64_t>(cpus_.size(), 0);
    // the whole file: on a machine of hundreds of CPUs it is longer than any fixed buffer
    std::string text;
    char buf[16384];
    for (off_t at = 0;;) {
        const ssize_t n = ::pread(stat_fd_, buf, sizeof buf, at);
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
        at += n;
    }
    return parse_steal_ticks(text, cpus_);
}

void cpu_disturbance_meter::arm() {
    close_all();
    DIR* dir = ::opendir("/proc/self/task");
    if (!dir) {
        unavailable_ = std::string("unavailable: /proc/self/task: ") + std::strerror(errno);
        return;
    }
    const std::string self = std::to_string(static_cast<long>(::syscall(SYS_gettid)));
    while (const dirent* e = ::readdir(dir)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        if (scope_ == meter_scope::calling_thread && self != e->d_name) continue;
        const std::string path = std::string("/proc/self/task/") + e->d_name + "/schedstat";
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            // a kernel without CONFIG_SCHED_INFO has no schedstat; a thread that just exited has no folder
            if (errno != ENOENT || threads_.empty()) unavailable_ = "unavailable: " + path + ": " + std::strerror(errno);
            continue;
        }
        watched w;
        w.fd = fd;
        w.tid = std::atoi(e->d_name);
        threads_.push_back(w);
    }
    ::closedir(dir);
    if (!threads_.empty()) unavailable_.clear();
    // what a pair of reads costs: the median of three
    double pairs[3];
    for (double& ns : pairs) {
        const auto t0 = std::chrono::steady_clock::now();
        before_sample();
        (void)after_sample(1.0);
        ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    }
    std::sort(std::begin(pairs), std::end(pairs));
    cost_ns_ = pairs[1];
}

namespace {
/// CPU time of thread `tid` in ns through its POSIX CPU-time clock (the Linux encoding of
/// pthread_getcpuclockid: ~tid << 3 | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED). Unlike schedstat's first field,
/// which for a thread running on another CPU is brought up to date only at the scheduler's tick (1-10 ms),
/// this clock includes the current slice. -1 when the thread is gone.
std::int64_t thread_cpu_ns(int tid) {
    timespec ts{};
    const auto id = static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6u);
    if (::clock_gettime(id, &ts) != 0) return -1;
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}
}  // namespace

void cpu_disturbance_meter::before_sample() {
    char buf[128];
    for (auto& t : threads_) {
        const auto v = parse_schedstat(pread_all(t.fd, buf, sizeof buf));
        t.wait_ns = v ? v->second : -1;  // -1: the thread is gone (or unreadable); skipped after the sample
        t.on_cpu_ns = thread_cpu_ns(t.tid);
    }
    nivcsw_before_ = involuntary_switches();
    steal_before_ = steal_ticks();
    if (scope_ == meter_scope::calling_thread) cpu_before_ = ::sched_getcpu();
}

sample_disturbance cpu_disturbance_meter::after_sample(double wall_ms) {
    sample_disturbance d;
    d.wall_ms = wall_ms;
    char buf[128];
    std::int64_t wait_ns = 0, max_wait_ns = 0;
    for (const auto& t : threads_) {
        if (t.wait_ns < 0) continue;
        const auto v = parse_schedstat(pread_all(t.fd, buf, sizeof buf));
        if (!v) continue;
        // the run-queue wait (schedstat's second field) is added when a waiting thread gets the CPU back, so
        // every wait of a thread the sample needed is in by the time the sample ends; a thread that ran or
        // waited to run during the sample is one of its threads
        const std::int64_t waited = std::max<std::int64_t>(0, v->second - t.wait_ns);
        const std::int64_t cpu = thread_cpu_ns(t.tid);
        if ((t.on_cpu_ns >= 0 && cpu > t.on_cpu_ns) || waited > 0) ++d.threads;
        wait_ns += waited;
        max_wait_ns = std::max(max_wait_ns, waited);
    }
    d.run_queue_wait_ms = static_cast<double>(wait_ns) * 1e-6;
    d.max_thread_wait_ms = static_cast<double>(max_wait_ns) * 1e-6;
    d.involuntary_switches = std::max<std::int64_t>(0, involuntary_switches() - nivcsw_before_);
    if (stat_fd_ >= 0 && !cpus_.empty()) {
        // the longest steal of a CPU this process may use, or (calling_thread) of the CPUs the thread was on at
        // the sample's start and end (ticks of USER_HZ: a tick is counted whole)
        std::vector<int> only;
        if (scope_ == meter_scope::calling_thread) only = {cpu_before_, ::sched_getcpu()};
        const std::int64_t ticks = longest_steal_ticks(steal_before_, steal_ticks(), cpus_, only);
        d.steal_ms = static_cast<double>(ticks) * ns_per_tick_ * 1e-6;
    }
    return d;
}

std::string cpu_disturbance_meter::source() const {
    if (!unavailable_.empty()) return unavailable_;
    const char* whose = scope_ == meter_scope::calling_thread ? " (the launching thread)" : "";
    return std::string(stat_fd_ >= 0 ? "schedstat+steal" : "schedstat") + whose;
}

}  // namespace ridgeline::backend_api
