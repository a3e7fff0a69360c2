#include "ridgeline/cpu/cpu_info.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace ridgeline::cpu {

namespace {

std::string read_first_line(const std::string& path) {
    std::ifstream f(path);
    std::string line;
    std::getline(f, line);
    return line;
}

std::int64_t parse_cache_size(const std::string& s) {
    if (s.empty()) return 0;
    std::int64_t v = 0;
    std::size_t i = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) v = v * 10 + (s[i++] - '0');
    if (i < s.size() && (s[i] == 'K' || s[i] == 'k')) v *= 1024;
    if (i < s.size() && (s[i] == 'M' || s[i] == 'm')) v *= 1024 * 1024;
    return v;
}

std::int64_t meminfo_kb(const std::string& key) {
    std::ifstream f("/proc/meminfo");
    std::string k;
    std::int64_t v = 0;
    std::string unit;
    while (f >> k >> v >> unit)
        if (k == key + ":") return v * 1024;
    return 0;
}

cpu_info read_host() {
    cpu_info c;
    cpu_set_t set;
    CPU_ZERO(&set);
    std::set<int> allowed;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int i = 0; i < CPU_SETSIZE; ++i)
            if (CPU_ISSET(i, &set)) allowed.insert(i);
    }
    c.logical_cpus = allowed.empty() ? static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)) : static_cast<int>(allowed.size());

    std::ifstream f("/proc/cpuinfo");
    std::string line;
    int processor = -1, physical = 0;
    std::set<std::pair<int, int>> cores;
    std::string flags_line;
    while (std::getline(f, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string key = line.substr(0, colon);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
        std::string value = line.substr(colon + 1);
        if (!value.empty() && value.front() == ' ') value.erase(0, 1);
        if (key == "processor") processor = std::stoi(value);
        else if (key == "model name" && c.model_name.empty()) c.model_name = value;
        else if (key == "physical id") physical = std::stoi(value);
        else if (key == "core id" && (allowed.empty() || allowed.count(processor))) cores.insert({physical, std::stoi(value)});
        else if (key == "flags" && flags_line.empty()) flags_line = value;
        else if (key == "cpu MHz" && c.max_mhz == 0) c.max_mhz = std::stod(value);
    }
    c.physical_cores = cores.empty() ? c.logical_cpus : static_cast<int>(cores.size());
    std::istringstream fl(flags_line);
    std::set<std::string> all;
    for (std::string w; fl >> w;) all.insert(w);
    for (const char* want : {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                             "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_int8", "amx_tile"})
        if (all.count(want)) c.flags.emplace_back(want);
    c.memory_bytes = meminfo_kb("MemTotal");
    for (int idx = 0; idx < 8; ++idx) {
        const std::string base = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(idx) + "/";
        const std::string level = read_first_line(base + "level");
        const std::string type = read_first_line(base + "type");
        const std::int64_t size = parse_cache_size(read_first_line(base + "size"));
        if (level == "1" && type == "Data") c.l1d_bytes = size;
        if (level == "2") c.l2_bytes = size;
        if (level == "3") c.l3_bytes = size;
    }
    c.cache_source = c.l1d_bytes > 0 || c.l2_bytes > 0 ? "sysfs" : "none";
    if (c.cache_source == "none") {  // no cache topology in /sys (some VMs): what the CPU (or hypervisor) reports
        const auto conf = [](int name) { const long v = sysconf(name); return v > 0 ? static_cast<std::int64_t>(v) : 0; };
        c.l1d_bytes = conf(_SC_LEVEL1_DCACHE_SIZE);
        c.l2_bytes = conf(_SC_LEVEL2_CACHE_SIZE);
        c.l3_bytes = conf(_SC_LEVEL3_CACHE_SIZE);
        if (c.l1d_bytes > 0 || c.l2_bytes > 0) c.cache_source = "cpuid";
    }
    {
        // distinct instances of the last-level cache among the allowed CPUs
        const int llc_index = [&] {
            for (int idx = 7; idx >= 0; --idx) {
                const std::string level = read_first_line("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(idx) + "/level");
                if (level == "3" || level == "2") return idx;
            }
            return -1;
        }();
        const std::int64_t per = c.l3_bytes ? c.l3_bytes : c.l2_bytes;
        std::set<std::string> instances;
        if (llc_index >= 0)
            for (int cpu : allowed) {
                const std::string shared = read_first_line("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" +
                                                           std::to_string(llc_index) + "/shared_cpu_list");
                if (!shared.empty()) instances.insert(shared);
            }
        c.llc_total_bytes = per * static_cast<std::int64_t>(std::max<std::size_t>(1, instances.size()));
        // from CPUID the last level is an upper bound (a hypervisor may report the host socket's): at most 128 MiB
        // until the ceilings' sweep reads where it ends (cpu_ceilings.cpp); the cold-cache flush covers that much
        if (c.cache_source == "cpuid") c.llc_total_bytes = std::min<std::int64_t>(per, std::int64_t{128} << 20);
    }
    c.governor = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    const std::string maxf = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    if (!maxf.empty()) c.max_mhz = std::stod(maxf) / 1000.0;
    return c;
}

}  // namespace

bool cpu_info::has(const std::string& flag) const { return std::find(flags.begin(), flags.end(), flag) != flags.end(); }

std::string cpu_info::isa() const {
    std::string s;
    for (const auto& f : flags) s += (s.empty() ? "" : " ") + f;
    return s;
}

std::size_t cache_flush_bytes() {
    const std::int64_t llc = host_cpu().llc_total_bytes;
    return static_cast<std::size_t>(2 * (llc > 0 ? llc : std::int64_t{32} << 20));
}

const cpu_info& host_cpu() {
    static const cpu_info info = read_host();
    return info;
}

std::int64_t available_memory_bytes() { return meminfo_kb("MemAvailable"); }

double load_average() {
    std::ifstream f("/proc/loadavg");
    double v = -1;
    if (!(f >> v)) return -1;
    return v;
}

}  // namespace ridgeline::cpu
