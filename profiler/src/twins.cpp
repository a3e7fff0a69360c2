// The twin check: layers with the same signature must take the same time (profiler.hpp, twin_check).

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "profiler_detail.hpp"

namespace ridgeline::profiler {

bool twins_disagree(const backend_api::timing_result& a, const backend_api::timing_result& b) {
    const auto& fast = a.stats.median <= b.stats.median ? a : b;
    const auto& slow = a.stats.median <= b.stats.median ? b : a;
    return slow.stats.ci95_low > fast.stats.ci95_high * (1 + twin_tolerance);
}

namespace detail {

namespace {

bool comparable(const layer_profile& p) { return p.has_time() && !p.time->disturbed; }

std::string ms_text(double ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g ms", ms);
    return buf;
}

/// Whether any two members of the group disagree.
bool group_disagrees(const std::vector<layer_profile*>& group) {
    for (std::size_t i = 0; i < group.size(); ++i)
        for (std::size_t j = i + 1; j < group.size(); ++j)
            if (twins_disagree(*group[i]->time, *group[j]->time)) return true;
    return false;
}

}  // namespace

void check_twins(profile_result& r, backend_api::backend& b, const profile_options& o) {
    std::map<std::string, std::vector<layer_profile*>> groups;
    std::vector<std::string> order;  // signatures in model order
    for (auto& p : r.layers) {
        if (!comparable(p)) continue;
        const std::string sig = core::layer_signature(p.analysis, r.analysis.data_type);
        if (!groups.count(sig)) order.push_back(sig);
        groups[sig].push_back(&p);
    }
    profile_options again = o;  // verified once already; judged against the roofs as they stand now
    again.verify = false;
    again.ceilings = r.ceilings;
    again.on_progress = {};
    for (const std::string& sig : order) {
        auto& group = groups[sig];
        if (group.size() < 2) continue;
        for (layer_profile* p : group) {
            twin_check t;
            t.group_size = static_cast<int>(group.size());
            for (const layer_profile* q : group)
                if (q != p && t.twins.size() < twin_names_listed) t.twins.push_back(q->analysis.layer.name);
            p->twins = std::move(t);
        }
        if (!group_disagrees(group)) continue;
        // every twin again, in order, each keeping the lower of its medians; then up to twin_extra_tries more of each
        // twin still apart from the group's fastest (a VM's speed has modes minutes apart: resnet18's layer1 3x3
        // convolutions read 0.52 ms in one and 0.98 in the next)
        auto measure_again = [&](layer_profile* p) {
            if (o.on_progress)
                o.on_progress(progress_event{r.layers.size(), r.layers.size(),
                                             "twins read apart: " + p->analysis.layer.name + ", measurement " +
                                                 std::to_string(p->twins->measurements + 1),
                                             0, -1});
            layer_profile next = profile_layer(p->analysis, r.analysis, b, again);
            ++p->twins->measurements;
            if (!p->twins->remeasured) {
                p->twins->remeasured = true;
                p->twins->first_median_ms = p->time->stats.median;
                if (comparable(next)) p->twins->second_median_ms = next.time->stats.median;
                r.twins_remeasured.push_back(p->analysis.layer.name);
            }
            if (comparable(next) && next.time->stats.median < p->time->stats.median) {
                p->time = std::move(next.time);
                p->roofline = std::move(next.roofline);
                p->roofs_used = next.roofs_used;
                p->host_ms_per_run = next.host_ms_per_run;
            }
        };
        auto stopped = [&] { return o.stop && o.stop->load(); };
        for (layer_profile* p : group) {
            if (stopped()) break;
            measure_again(p);
        }
        auto fastest = [&] {
            const layer_profile* f = group.front();
            for (const layer_profile* p : group)
                if (p->time->stats.median < f->time->stats.median) f = p;
            return f;
        };
        for (int tries = 0; tries < twin_extra_tries && !stopped(); ++tries)
            for (layer_profile* p : group) {
                if (stopped()) break;
                const layer_profile* f = fastest();
                if (p != f && twins_disagree(*p->time, *f->time)) measure_again(p);
            }
        if (stopped()) r.twins_interrupted = true;  // judged on what was measured, and the report says so
        for (layer_profile* p : group)
            for (const layer_profile* q : group)
                if (q != p && twins_disagree(*p->time, *q->time)) p->twins->disagree = true;
        double lo = 0, hi = 0;
        for (const layer_profile* p : group) {
            const double m = p->time->stats.median;
            lo = lo > 0 ? std::min(lo, m) : m;
            hi = std::max(hi, m);
        }
        for (layer_profile* p : group)
            if (p->twins->disagree) {
                r.twins_disagreeing.push_back(p->analysis.layer.name);
                if (p->roofline)
                    p->roofline->reason +=
                        "; but its twins (the same op and shapes) read " + ms_text(lo) + " to " + ms_text(hi) +
                        " and disagree beyond their CIs after measuring again: " +
                        (p->time->stats.median <= lo ? std::string("the slower ones were") : std::string("this time was")) +
                        " slowed by something the accounting cannot see";
            }
        if (stopped()) break;
    }
    // the sums again: a layer measured again may have a lower median
    r.sum_of_layers_ms = 0;
    r.bound_ms.clear();
    for (const auto& p : r.layers)
        if (p.has_time()) {
            r.sum_of_layers_ms += p.time->stats.median;
            if (p.roofline) r.bound_ms[p.roofline->bound] += p.time->stats.median;
        }
}

}  // namespace detail
}  // namespace ridgeline::profiler
