// What fusing would save (profiler::fusion_savings): the profile table's lines and the JSON's "fusion_savings".
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "ridgeline/core/fusion.hpp"
#include "ridgeline/report/format.hpp"
#include "ridgeline/report/profile.hpp"

namespace ridgeline::report {

namespace {

/// A group's fused median, where it was timed clean.
std::optional<double> fused_ms(const profiler::fusion_saving& g) {
    if (!g.fused.has_time() || g.fused.time->disturbed) return std::nullopt;
    return g.fused.time->stats.median;
}

nlohmann::json or_null(std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json fusion_savings_json(const profiler::profile_result& r) {
    if (!r.fusion) return nullptr;
    const profiler::fusion_savings& f = *r.fusion;
    nlohmann::json groups = nlohmann::json::array();
    for (const auto& g : f.groups) {
        nlohmann::json members = nlohmann::json::array();
        for (const auto& m : g.group.fused) members.push_back(m.layer.name);
        groups.push_back({{"name", g.group.layer.name},
                          {"label", core::group_label(g.group)},
                          {"members", members},
                          {"state", std::string(profiler::to_string(g.fused.state))},
                          {"reason", g.fused.reason},
                          {"measured_as", g.fused.measured_as},
                          {"fused_ms", or_null(fused_ms(g))},
                          {"members_ms", std::isfinite(g.members_ms) ? nlohmann::json(g.members_ms) : nlohmann::json(nullptr)},
                          {"verification", std::string(profiler::to_string(g.fused.verification.state))},
                          {"implementation", g.fused.implementation}});
    }
    return {{"groups", groups},
            {"end_to_end", {{"state", std::string(profiler::to_string(f.end_to_end_state))},
                            {"reason", f.end_to_end_reason},
                            {"time", f.end_to_end ? time_json(*f.end_to_end) : nlohmann::json(nullptr)},
                            {"verification", verification_json(f.end_to_end_verification)}}}};
}

std::string fusion_savings_text(const profiler::profile_result& r) {
    if (!r.fusion) return {};
    const profiler::fusion_savings& f = *r.fusion;
    std::ostringstream out;
    out << "what fusing saves (" << counted(static_cast<std::int64_t>(f.groups.size()), "group")
        << " a deployment fuses, each timed once as one kernel; --fuse profiles the fused model):\n";
    out << "  end to end ";
    const bool ours = r.end_to_end && r.end_to_end_state == profiler::run_state::measured;
    const bool theirs = f.end_to_end && f.end_to_end_state == profiler::run_state::measured;
    out << (ours ? time_ms(r.end_to_end->stats.median) : std::string(profiler::to_string(r.end_to_end_state)))
        << " as profiled, "
        << (theirs ? time_ms(f.end_to_end->stats.median) : std::string(profiler::to_string(f.end_to_end_state)) +
                                                                 (f.end_to_end_reason.empty() ? "" : " (" + f.end_to_end_reason + ")"))
        << " fused";
    std::vector<std::string> about;  // what follows the fused time in parentheses
    if (ours && theirs) {
        const double change = 100.0 * (f.end_to_end->stats.median / r.end_to_end->stats.median - 1.0);
        about.push_back((change > 0 ? "+" : "") + fixed(change, 1) + "%");
    }
    if (f.end_to_end_verification.state == profiler::verification_state::passed)  // before timing, disturbed or not
        about.emplace_back("outputs verified");
    for (std::size_t i = 0; i < about.size(); ++i) out << (i ? ", " : " (") << about[i] << (i + 1 == about.size() ? ")" : "");
    // the groups whose members and fused kernel all have clean times
    double members = 0, fused = 0;
    int compared = 0, left_out = 0;
    std::vector<const profiler::fusion_saving*> ranked;
    for (const auto& g : f.groups) {
        const auto t = fused_ms(g);
        if (!t || !std::isfinite(g.members_ms)) {
            ++left_out;
            continue;
        }
        members += g.members_ms;
        fused += *t;
        ++compared;
        if (g.fused.measured_as.empty()) ranked.push_back(&g);
    }
    if (compared > 0)
        out << "; " << counted(compared, "group") << ": " << time_ms(members) << " as their members, " << time_ms(fused)
            << " fused";
    else  // no sums of nothing: a profile disturbed throughout compares no group
        out << "; no group to compare";
    if (left_out > 0) out << " (" << left_out << " left out: not timed, disturbed, or a member without a time)";
    out << "\n";
    std::sort(ranked.begin(), ranked.end(), [](const auto* a, const auto* b) {
        return a->members_ms - *fused_ms(*a) > b->members_ms - *fused_ms(*b);
    });
    // the three that save most, and the three a fused kernel slows most (oneDNN picks another kernel for some: its
    // name is the JSON's implementation)
    auto list = [&](const char* what, auto begin, auto end, bool saves) {
        std::string items;
        int shown = 0;
        for (auto it = begin; it != end && shown < 3; ++it) {
            const profiler::fusion_saving& g = **it;
            if ((g.members_ms > *fused_ms(g)) != saves) continue;
            items += std::string(shown++ ? ";" : "") + " " + core::group_label(g.group) + " " + time_ms(g.members_ms) +
                     " -> " + time_ms(*fused_ms(g));
        }
        if (!items.empty()) out << "  " << what << ":" << items << "\n";
    };
    list("most saved", ranked.begin(), ranked.end(), true);
    list("slower fused", ranked.rbegin(), ranked.rend(), false);
    return out.str();
}

}  // namespace ridgeline::report
