#pragma once
// The chart's parts shared by its two panels (chart.cpp: the roofline; chart_time.cpp: time against work): colours,
// ticks, the label placer, a point's radius. Private to report/.

#include <algorithm>
#include <cmath>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "ridgeline/report/chart.hpp"
#include "ridgeline/report/format.hpp"

namespace ridgeline::report::chart_parts {

inline const char* bound_color(std::optional<core::bound_class> b) {
    if (!b) return "#9467bd";
    switch (*b) {
        case core::bound_class::compute: return "#d62728";
        case core::bound_class::memory: return "#1f77b4";
        case core::bound_class::overhead: return "#7f7f7f";
        case core::bound_class::ambiguous: return "#ff7f0e";
        default: return "#9467bd";
    }
}

inline std::string bound_name(std::optional<core::bound_class> b) { return b ? std::string(to_string(*b)) : "unknown"; }

inline std::string tick_label(double v) {
    if (v >= 1e6) return fixed(v / 1e6, 0) + "M";
    if (v >= 1e3) return fixed(v / 1e3, 0) + "k";
    if (v >= 1) return fixed(v, 0);
    if (v >= 0.01) return fixed(v, 2);
    return fixed(v, 3);
}

inline std::string f(double v) { return fixed(v, 1); }



/// Places text labels so that none overlaps another or a placed mark: a label's box is estimated from its
/// length (0.6 em per character, the average advance of a sans-serif font; Roofline.ChartLabelsDoNotOverlap
/// measures the real boxes in Chromium).
class label_placer {
public:
    struct box {
        double x0, y0, x1, y1;
        [[nodiscard]] bool overlaps(const box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
    };
    label_placer(double xmin, double ymin, double xmax, double ymax) : area_{xmin, ymin, xmax, ymax} {}
    void block(const box& b) { taken_.push_back(b); }
    /// A line from (xa, ya) to (xb, yb): small boxes every 4 px along it, so that no label is drawn across it.
    void block_segment(double xa, double ya, double xb, double yb) {
        const double len = std::hypot(xb - xa, yb - ya);
        const int steps = std::max(1, static_cast<int>(len / 4));
        for (int k = 0; k <= steps; ++k) {
            const double t = static_cast<double>(k) / steps, x = xa + t * (xb - xa), y = ya + t * (yb - ya);
            taken_.push_back({x - 1.5, y - 1.5, x + 1.5, y + 1.5});
        }
    }
    static box text_box(double x, double y, const std::string& text, double font, const std::string& anchor) {
        // 0.6 em a character, the average advance of a sans-serif font; capitals and digits are wider (DejaVu Sans:
        // "DRAM" is 0.72 em a letter, which the average put under its real box beside "L3")
        double em = 0;
        for (unsigned char ch : text) em += (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ? 0.75 : 0.6;
        const double w = font * em;
        const double x0 = anchor == "end" ? x - w : anchor == "middle" ? x - w / 2 : x;
        return {x0 - 1, y - font, x0 + w + 1, y + 0.3 * font};
    }
    /// The first candidate (x, y) where the text fits inside the area without overlap; taken and returned.
    std::optional<std::pair<double, double>> place(const std::string& text, double font, const std::string& anchor,
                                                   const std::vector<std::pair<double, double>>& candidates) {
        for (const auto& [x, y] : candidates) {
            const box b = text_box(x, y, text, font, anchor);
            if (b.x0 < area_.x0 || b.x1 > area_.x1 || b.y0 < area_.y0 || b.y1 > area_.y1) continue;
            bool free = true;
            for (const auto& t : taken_) free = free && !b.overlaps(t);
            if (!free) continue;
            taken_.push_back(b);
            return std::pair{x, y};
        }
        return std::nullopt;
    }

private:
    box area_;
    std::vector<box> taken_;
};

inline const char* series_dashes(int series) {
    static const char* dashes[] = {"", "6,4", "2,3", "10,3,2,3"};
    return dashes[series % 4];
}

/// A point's radius: its area shows its share of its series' time (a sweep's points, whole passes at each batch
/// size, are one size); 18 px for the whole time, at least 2.5 px.
inline double point_radius(const chart& c, const chart_point& p) {
    if (c.connect) return 4.5;
    double total = 0;
    for (const auto& q : c.points)
        if (q.series == p.series) total += q.time_ms;
    return total > 0 ? std::clamp(18.0 * std::sqrt(p.time_ms / total), 2.5, 18.0) : 4.5;
}

/// The second panel, time against work (the time-based roofline: Wang et al., arXiv 2009.04598): each point's
/// median against its executed FLOPs on log-log axes, each roof's compute floor (FLOPs / peak) and overhead floor
/// (the dispatch cost), a sweep's fitted time; drawn into `o` in the area (left, top, width, height).
void time_panel(std::ostream& o, const chart& c, double left, double top, double width, double height);
/// Whether `c` has a point for the time panel (a time and a rate).
bool has_time_panel(const chart& c);

}  // namespace ridgeline::report::chart_parts
