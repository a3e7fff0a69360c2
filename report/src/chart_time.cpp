// The chart's second panel: time against work (chart_parts.hpp).
#include <sstream>

#include "chart_parts.hpp"

namespace ridgeline::report::chart_parts {

namespace {

/// A tick of a power of ten: "10 k", "1 G" FLOPs; "100 us", "10 ms" of time.
std::string flops_tick(double v) {
    const char* units[] = {"", " k", " M", " G", " T", " P", " E"};
    int u = 0;
    while (v >= 999.5 && u < 6) {
        v /= 1e3;
        ++u;
    }
    return fixed(v, 0) + units[u];
}
std::string time_tick(double ms) {
    if (ms >= 999.5) return fixed(ms / 1e3, 0) + " s";
    if (ms >= 0.9995) return fixed(ms, 0) + " ms";
    if (ms >= 0.9995e-3) return fixed(ms * 1e3, 0) + " us";
    return fixed(ms * 1e6, 0) + " ns";
}

/// Executed FLOPs of a point: its rate times its time.
double work(const chart_point& p) { return p.gflops * 1e9 * p.time_ms * 1e-3; }

struct time_axes {
    double left, top, pw, ph, x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // decades of FLOPs and of ms
    [[nodiscard]] double X(double v) const { return left + (std::log10(v) - x0) / std::max(1e-9, x1 - x0) * pw; }
    [[nodiscard]] double Y(double v) const { return top + ph - (std::log10(v) - y0) / std::max(1e-9, y1 - y0) * ph; }
};

time_axes axes_for(const chart& c, double left, double top, double width, double height) {
    time_axes a{left, top, width, height};
    double fmin = 1e300, fmax = 0, tmin = 1e300, tmax = 0;
    for (const auto& p : c.points)
        if (p.gflops > 0 && p.time_ms > 0) {
            fmin = std::min(fmin, work(p));
            fmax = std::max(fmax, work(p));
            tmin = std::min(tmin, p.time_ms);
            tmax = std::max(tmax, p.time_ms);
        }
    for (const auto& r : c.roofs)
        if (r.dispatch_ms > 0) tmin = std::min(tmin, r.dispatch_ms);
    a.x0 = std::floor(std::log10(fmin));
    a.x1 = std::max(a.x0 + 1, std::ceil(std::log10(fmax) + 1e-9));
    a.y0 = std::floor(std::log10(tmin * 0.8));
    a.y1 = std::max(a.y0 + 1, std::ceil(std::log10(tmax * 1.2) + 1e-9));
    return a;
}

void frame(std::ostream& o, const time_axes& a) {
    o << "<text x=\"" << a.left << "\" y=\"" << a.top - 10 << "\" font-size=\"13\" font-weight=\"bold\">time against work: "
      << "the floors a time cannot go under (time-based roofline)</text>\n";
    for (double d = a.x0; d <= a.x1 + 1e-9; d += 1) {
        const double x = a.X(std::pow(10, d));
        o << "<line x1=\"" << f(x) << "\" y1=\"" << a.top << "\" x2=\"" << f(x) << "\" y2=\"" << a.top + a.ph
          << "\" stroke=\"#e6e6e6\"/><text x=\"" << f(x) << "\" y=\"" << a.top + a.ph + 18 << "\" text-anchor=\"middle\">"
          << flops_tick(std::pow(10, d)) << "</text>\n";
    }
    for (double d = a.y0; d <= a.y1 + 1e-9; d += 1) {
        const double y = a.Y(std::pow(10, d));
        o << "<line x1=\"" << a.left << "\" y1=\"" << f(y) << "\" x2=\"" << a.left + a.pw << "\" y2=\"" << f(y)
          << "\" stroke=\"#e6e6e6\"/><text x=\"" << a.left - 8 << "\" y=\"" << f(y + 4) << "\" text-anchor=\"end\">"
          << time_tick(std::pow(10, d)) << "</text>\n";
    }
    o << "<rect x=\"" << a.left << "\" y=\"" << a.top << "\" width=\"" << a.pw << "\" height=\"" << a.ph
      << "\" fill=\"none\" stroke=\"#333\"/>\n";
    o << "<text x=\"" << a.left + a.pw / 2 << "\" y=\"" << a.top + a.ph + 40
      << "\" text-anchor=\"middle\">work (executed FLOPs)</text>\n";
    o << "<text transform=\"translate(18," << a.top + a.ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">time (median)</text>\n";
}

/// A floor t(F) drawn across the panel, clipped to it, blocked for the labels; its label placed beside it.
void floor_line(std::ostream& o, const time_axes& a, label_placer& labels, const std::string& cls, const std::string& style,
                const std::vector<std::pair<double, double>>& curve, const std::string& label) {
    std::string pts;
    std::vector<std::pair<double, double>> inside;
    for (const auto& [flops, ms] : curve) {
        const double y = a.Y(ms);
        if (y < a.top || y > a.top + a.ph) continue;
        inside.push_back({a.X(flops), y});
        pts += f(a.X(flops)) + "," + f(y) + " ";
    }
    if (inside.size() < 2) return;
    o << "<polyline class=\"" << cls << "\" fill=\"none\" " << style << " points=\"" << pts << "\"/>\n";
    for (std::size_t i = 1; i < inside.size(); ++i)
        labels.block_segment(inside[i - 1].first, inside[i - 1].second, inside[i].first, inside[i].second);
    std::vector<std::pair<double, double>> at;
    for (std::size_t i = inside.size(); i-- > 0;) {  // from the right end, above the line, then below
        at.push_back({inside[i].first - 4, inside[i].second - 6});
        at.push_back({inside[i].first - 4, inside[i].second + 15});
    }
    if (auto xy = labels.place(label, 11, "end", at))
        o << "<text class=\"roof-label\" x=\"" << f(xy->first) << "\" y=\"" << f(xy->second)
          << "\" text-anchor=\"end\" font-size=\"11\">" << xml_escape(label) << "</text>\n";
}

void floors(std::ostream& o, const chart& c, const time_axes& a, label_placer& labels) {
    const double fa = std::pow(10, a.x0), fb = std::pow(10, a.x1);
    for (const auto& r : c.roofs) {
        const std::string who = c.series.size() > 1 ? c.series[static_cast<std::size_t>(r.series)] + ": " : "";
        const std::string dash = std::string("stroke-dasharray=\"") + series_dashes(r.series) + "\"";
        if (r.peak_gflops > 0) {
            std::vector<std::pair<double, double>> curve;
            for (int k = 0; k <= 60; ++k) {
                const double flops = std::pow(10, a.x0 + (a.x1 - a.x0) * k / 60.0);
                curve.push_back({flops, flops / (r.peak_gflops * 1e9) * 1e3});
            }
            floor_line(o, a, labels, "floor compute-floor", "stroke=\"#222\" stroke-width=\"1.4\" " + dash, curve,
                       who + "compute floor: FLOPs / " + fixed(r.peak_gflops, 0) + " GFLOP/s");
        }
        if (r.dispatch_ms > 0)
            floor_line(o, a, labels, "floor overhead-floor", "stroke=\"#7f7f7f\" stroke-width=\"1.4\" " + dash,
                       {{fa, r.dispatch_ms}, {fb, r.dispatch_ms}}, who + "overhead floor: dispatch " + time_ms(r.dispatch_ms));
    }
    if (c.fit_gflops > 0) {
        std::vector<std::pair<double, double>> curve;
        for (int k = 0; k <= 60; ++k) {
            const double flops = std::pow(10, a.x0 + (a.x1 - a.x0) * k / 60.0);
            curve.push_back({flops, c.fit_t0_ms + flops / (c.fit_gflops * 1e9) * 1e3});
        }
        floor_line(o, a, labels, "fit", "stroke=\"#2ca02c\" stroke-width=\"1.2\" stroke-dasharray=\"5,3\"", curve,
                   "fit: " + time_ms(c.fit_t0_ms) + " + FLOPs / " + fixed(c.fit_gflops, 1) + " GFLOP/s");
    }
}

void points(std::ostream& o, const chart& c, const time_axes& a, label_placer& labels) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < c.points.size(); ++i)
        if (c.points[i].gflops > 0 && c.points[i].time_ms > 0) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return c.points[x].time_ms > c.points[y].time_ms; });
    for (std::size_t i : order) {
        const auto& p = c.points[i];
        const double rp = point_radius(c, p) + 0.5;
        labels.block({a.X(work(p)) - rp, a.Y(p.time_ms) - rp, a.X(work(p)) + rp, a.Y(p.time_ms) + rp});
    }
    if (c.connect)
        for (std::size_t s = 0; s < c.series.size(); ++s) {
            std::string pts;
            for (const auto& p : c.points)
                if (p.series == static_cast<int>(s) && p.gflops > 0 && p.time_ms > 0)
                    pts += f(a.X(work(p))) + "," + f(a.Y(p.time_ms)) + " ";
            if (!pts.empty()) o << "<polyline class=\"path\" fill=\"none\" stroke=\"#888\" stroke-width=\"1\" points=\"" << pts << "\"/>\n";
        }
    std::ostringstream texts;
    for (std::size_t k = 0; k < order.size(); ++k) {
        const auto& p = c.points[order[k]];
        const double x = a.X(work(p)), y = a.Y(p.time_ms), rp = point_radius(c, p);
        o << "<circle class=\"time-point bound-" << bound_name(p.bound) << " series-" << p.series << "\" data-layer=\""
          << xml_escape(p.label) << "\" cx=\"" << f(x) << "\" cy=\"" << f(y) << "\" r=\"" << f(rp) << "\" fill=\""
          << bound_color(p.bound) << "\" fill-opacity=\"" << (p.series == 0 ? "0.7" : "0.35") << "\" stroke=\"#000\" stroke-width=\"0.5\"><title>"
          << xml_escape(p.label + ": " + time_ms(p.time_ms) + ", " + si(work(p)) + " FLOPs") << "</title></circle>\n";
        if (static_cast<int>(k) >= c.label_top) continue;
        const double w = 6.0 * static_cast<double>(p.label.size());
        if (auto xy = labels.place(p.label, 10, "start", {{x + rp + 2, y - 6}, {x + rp + 2, y + 12}, {x - rp - 2 - w, y - 6},
                                                          {x - rp - 2 - w, y + 12}}))
            texts << "<text class=\"label\" x=\"" << f(xy->first) << "\" y=\"" << f(xy->second) << "\" font-size=\"10\">"
                  << xml_escape(p.label) << "</text>\n";
    }
    o << texts.str();
}

}  // namespace

bool has_time_panel(const chart& c) {
    return std::any_of(c.points.begin(), c.points.end(), [](const chart_point& p) { return p.gflops > 0 && p.time_ms > 0; });
}

void time_panel(std::ostream& o, const chart& c, double left, double top, double width, double height) {
    const time_axes a = axes_for(c, left, top, width, height);
    label_placer labels(left + 2, top + 2, left + width - 2, top + height - 2);
    frame(o, a);
    floors(o, c, a, labels);
    points(o, c, a, labels);
}

}  // namespace ridgeline::report::chart_parts
