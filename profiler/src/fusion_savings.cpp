// What fusing would save (profile_options::fusion_savings): the groups core::fuse finds in the profiled model, each
// timed once as one kernel against its members' medians, and the fused model's end to end.
#include <cmath>
#include <map>

#include "profiler_detail.hpp"
#include "ridgeline/core/fusion.hpp"

namespace ridgeline::profiler::detail {

void measure_fusion_savings(profile_result& r, backend_api::backend& b, const profile_options& o) {
    for (const auto& la : r.analysis.layers)
        if (!la.fused.empty()) return;  // a fused profile: nothing left to fuse
    const core::model_analysis fused = core::fuse(r.analysis);
    std::map<std::string, const layer_profile*> by_name;
    for (const auto& p : r.layers) by_name[p.analysis.layer.name] = &p;
    fusion_savings s;
    std::map<std::string, std::size_t> first_of;  // a group's signature -> its first entry in s.groups
    profile_options one = o;
    one.fusion_savings = false;
    one.trace_passes = 0;
    one.graph_replay = false;
    for (const auto& g : fused.layers) {
        if (g.fused.empty()) continue;
        if (o.stop && o.stop->load()) break;
        fusion_saving f;
        f.group = g;
        double sum = 0;
        for (const auto& m : g.fused) {
            const auto it = by_name.find(m.layer.name);
            // a member other work disturbed has no time to compare with: no saving is claimed from it
            const bool clean = it != by_name.end() && it->second->has_time() && !it->second->time->disturbed;
            sum += clean ? it->second->time->stats.median : std::numeric_limits<double>::quiet_NaN();
        }
        f.members_ms = sum;
        const std::string sig = core::layer_signature(g, fused.data_type);
        if (const auto it = first_of.find(sig); it != first_of.end() && !o.every_layer) {
            f.fused = s.groups[it->second].fused;
            f.fused.analysis = g;
            f.fused.measured_as = core::group_label(s.groups[it->second].group);
        } else {
            first_of[sig] = s.groups.size();
            f.fused = profile_layer(g, fused, b, one);
        }
        s.groups.push_back(std::move(f));
    }
    if (s.groups.empty()) return;
    if (o.end_to_end && !(o.stop && o.stop->load())) {
        profile_result e;
        profile_end_to_end(e, fused, b, one);
        s.end_to_end = std::move(e.end_to_end);
        s.end_to_end_state = e.end_to_end_state;
        s.end_to_end_reason = e.end_to_end_reason;
        s.end_to_end_verification = std::move(e.end_to_end_verification);
    }
    r.fusion = std::move(s);
}

}  // namespace ridgeline::profiler::detail
