#include "ridgeline/report/chart.hpp"
#include "ridgeline/report/profile.hpp"
#include "chart_parts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "ridgeline/core/fusion.hpp"
#include "ridgeline/report/format.hpp"

namespace ridgeline::report {

using namespace chart_parts;

std::string pre_escape(const std::string& text) {
    std::string out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = text.find('\n', start);
        out += xml_escape(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        out += '\n';
        start = end + 1;
    }
    return out;
}

std::string xml_escape(const std::string& raw) {
    // XML 1.0 has no control characters but tab, newline and return, not even as references: C0, DEL and C1 become
    // their code points first (core::printable), then the rest is escaped
    const std::string s = printable(raw);
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char ch = s[i];
        // the Unicode bidirectional controls (U+202A-U+202E, U+2066-U+2069; E2 80 AA-AE, E2 81 A6-A9 in UTF-8)
        // would reorder the text around a layer's name ("evil" shown as "live"): shown as their code points
        if (static_cast<unsigned char>(ch) == 0xE2 && i + 2 < s.size()) {
            const auto b1 = static_cast<unsigned char>(s[i + 1]), b2 = static_cast<unsigned char>(s[i + 2]);
            if ((b1 == 0x80 && b2 >= 0xAA && b2 <= 0xAE) || (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9)) {
                char code[16];
                std::snprintf(code, sizeof code, "[U+%04X]", 0x2000 + ((b1 & 0x3F) << 6) + (b2 & 0x3F));
                out += code;
                i += 2;
                continue;
            }
        }
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += ch;
        }
    }
    return out;
}

std::vector<cache_roof> cache_roofs(const backend_api::ceilings& c, const std::vector<double>& judged) {
    const double dram = c.dram_roof_gbs();
    const bool gpu = c.backend.rfind("cuda", 0) == 0;
    std::vector<cache_roof> out;
    if (std::any_of(judged.begin(), judged.end(), [&](double g) { return g > dram * 1.01; }))
        for (std::size_t i = 0; i < c.cache_level_bytes.size(); ++i) {
            const double g = c.level_roof_gbs(i);
            if (g > dram * 1.01) out.push_back({gpu ? "L2" : "L" + std::to_string(i + 1), g});
        }
    // a layer judged below the DRAM roof (a larger working set: ceilings::dram_roof_gbs(bytes)): the roof it reaches
    // at the largest sizes drawn too, so that its point sits under the line it was judged against
    const auto knots = c.dram_roof_knots();
    if (knots.size() >= 2 && std::any_of(judged.begin(), judged.end(), [&](double g) { return g > 0 && g < dram * 0.99; }))
        out.push_back({"DRAM from " + si(static_cast<double>(knots.back().first), "B"), knots.back().second});
    std::stable_sort(out.begin(), out.end(), [](const cache_roof& a, const cache_roof& b) { return a.gbs > b.gbs; });
    return out;
}

void add_profile(chart& c, const profiler::profile_result& r, const std::string& series_name) {
    const int s = static_cast<int>(c.series.size());
    c.series.push_back(series_name);
    const std::string dt(core::to_string(r.analysis.data_type));
    if (r.ceilings && r.ceilings->peak_gflops.count(dt)) {
        chart_roof roof{dt, r.ceilings->peak_gflops.at(dt), r.ceilings->bandwidth_gbs, s, 0.0, {}, 0.0};
        roof.dispatch_ms = r.ceilings->dispatch_ms(r.timing.cache == backend_api::cache_mode::cold);
        if (r.ceilings->gemm_gflops.count(dt) && r.ceilings->gemm_gflops.at(dt) < roof.peak_gflops)
            roof.gemm_gflops = r.ceilings->gemm_gflops.at(dt);
        std::vector<double> judged;
        for (const auto& p : r.layers)
            if (p.roofline && p.roofs_used.bandwidth_gbs > 0) judged.push_back(p.roofs_used.bandwidth_gbs);
        roof.caches = cache_roofs(*r.ceilings, judged);
        c.roofs.push_back(roof);
    }
    for (const auto& p : r.layers) {
        if (!p.has_time()) continue;
        const auto& cost = p.analysis.cost;
        if (cost.executed_flops() <= 0 || cost.bytes <= 0) continue;  // no point on a FLOP/s chart
        if (shown_rates(p).hidden) continue;  // mistrusted or disturbed: no rate to plot
        c.points.push_back({core::group_label(p.analysis),
                            static_cast<double>(cost.executed_flops()) / static_cast<double>(cost.bytes),
                            p.achieved_gflops(), p.time->stats.median,
                            p.roofline ? std::optional(p.roofline->bound) : std::nullopt, s});
    }
}


namespace {

/// The log-log plot's geometry (decades of intensity and GFLOP/s) and the SVG being written: render_svg's steps
/// share it.
struct svg_plot {
    const chart& c;
    // H1: the roofline panel's height; H: the whole chart's, the time panel (time_h) under the roofline
    double legend_w = 150, plot_w = 612, left = 78, right = 170, top = 40, bottom = 58, H1 = 540, time_h = 0, H = 540,
           W = 0, pw = 0, ph = 0;
    double x0 = 0, x1 = 0, y0 = 0, y1 = 0;  // decades
    std::ostringstream o;
    label_placer labels{0, 0, 0, 0};
    std::vector<std::string> unplaced_roofs;  // compute and GEMM roofs whose label found no free place
    std::vector<std::string> bandwidth_key;   // every bandwidth roof's level and value, for the legend

    explicit svg_plot(const chart& ch) : c(ch) {
        // the legend's width follows its longest line, so that no run's name is clipped at the right edge
        std::size_t legend_chars = 25;  // "arrows: first run to the next" at 11 px
        for (std::size_t s = 0; s < c.series.size() && c.series.size() > 1; ++s)
            legend_chars = std::max(legend_chars, c.series[s].size() + 20);  // "NAME: GEMM 213 GFLOP/s"
        legend_w = std::max(150.0, 0.6 * 12 * static_cast<double>(legend_chars) + 20);
        right = legend_w + 20;
        W = left + plot_w + right;
        pw = plot_w;
        ph = H1 - top - bottom;
        time_h = has_time_panel(c) ? 330 : 0;
        H = H1 + time_h;
        set_ranges();
        labels = label_placer(left + 2, top + 2, left + pw - 2, top + ph - 2);
    }
    [[nodiscard]] double radius(const chart_point& p) const { return point_radius(c, p); }
    [[nodiscard]] double X(double v) const { return left + (std::log10(v) - x0) / std::max(1e-9, x1 - x0) * pw; }
    [[nodiscard]] double Y(double v) const { return top + ph - (std::log10(v) - y0) / std::max(1e-9, y1 - y0) * ph; }

    /// The decades that hold every point and a decade either side of each ridge.
    void set_ranges() {
        double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
        for (const auto& p : c.points) {
            if (p.intensity > 0 && p.gflops > 0) {
                xmin = std::min(xmin, p.intensity);
                xmax = std::max(xmax, p.intensity);
                ymin = std::min(ymin, p.gflops);
                ymax = std::max(ymax, p.gflops);
            }
        }
        for (const auto& r : c.roofs) {
            if (r.peak_gflops > 0) ymax = std::max(ymax, r.peak_gflops);
            if (r.peak_gflops > 0 && r.bandwidth_gbs > 0) {
                const double ridge = r.peak_gflops / r.bandwidth_gbs;
                xmin = std::min(xmin, ridge / 10);
                xmax = std::max(xmax, ridge * 10);
            }
        }
        if (xmax <= 0) {
            xmin = 0.01;
            xmax = 1000;
        }
        if (ymax <= 0) {
            ymin = 0.01;
            ymax = 1000;
        }
        x0 = std::floor(std::log10(xmin));
        x1 = std::ceil(std::log10(xmax) + 1e-9);
        y0 = std::floor(std::log10(std::max(ymin, ymax * 1e-6)));
        y1 = std::ceil(std::log10(ymax * 1.5) + 1e-9);
    }

    void frame();
    void roofs();
    void roof_lines(const chart_roof& r);
    void roof_labels(const chart_roof& r);
    /// A straight line (a polyline of two points with `attrs`), blocked for the labels.
    void line(const std::string& attrs, double xa, double ya, double xb, double yb);
    bool put_label(const std::string& text, const std::vector<std::pair<double, double>>& at, const std::string& anchor);
    void points();
    /// compare: an arrow from each layer's point in the first run to its point in each later run.
    void arrows();
    void legend();
};

void svg_plot::frame() {
    o << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"roofline\" width=\"" << W << "\" height=\"" << H
      << "\" viewBox=\"0 0 " << W << " " << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    o << "<rect x=\"0\" y=\"0\" width=\"" << W << "\" height=\"" << H << "\" fill=\"#ffffff\"/>\n";
    o << "<text x=\"" << left << "\" y=\"24\" font-size=\"15\" font-weight=\"bold\">" << xml_escape(c.title) << "</text>\n";
    // grid and ticks
    for (double d = x0; d <= x1 + 1e-9; d += 1) {
        const double x = X(std::pow(10, d));
        o << "<line x1=\"" << f(x) << "\" y1=\"" << top << "\" x2=\"" << f(x) << "\" y2=\"" << top + ph
          << "\" stroke=\"#e6e6e6\"/><text x=\"" << f(x) << "\" y=\"" << top + ph + 18
          << "\" text-anchor=\"middle\">" << tick_label(std::pow(10, d)) << "</text>\n";
    }
    for (double d = y0; d <= y1 + 1e-9; d += 1) {
        const double y = Y(std::pow(10, d));
        o << "<line x1=\"" << left << "\" y1=\"" << f(y) << "\" x2=\"" << left + pw << "\" y2=\"" << f(y)
          << "\" stroke=\"#e6e6e6\"/><text x=\"" << left - 8 << "\" y=\"" << f(y + 4)
          << "\" text-anchor=\"end\">" << tick_label(std::pow(10, d)) << "</text>\n";
    }
    o << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << pw << "\" height=\"" << ph
      << "\" fill=\"none\" stroke=\"#333\"/>\n";
    o << "<text x=\"" << left + pw / 2 << "\" y=\"" << H1 - 14
      << "\" text-anchor=\"middle\">arithmetic intensity (executed FLOP/byte)</text>\n";
    o << "<text transform=\"translate(18," << top + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">performance (executed GFLOP/s)</text>\n";

    // points first in the placer's eyes: no label may cover one
    for (const auto& p : c.points)
        if (p.intensity > 0 && p.gflops > 0) {
            const double x = X(p.intensity), y = Y(p.gflops), rp = radius(p) + 0.5;
            labels.block({x - rp, y - rp, x + rp, y + rp});
        }
}

void svg_plot::roofs() {
    // every series' lines first, each blocked for the labels, then the labels: no label of a roof or of a point
    // is cut by any roof line
    for (const auto& r : c.roofs)
        if (r.peak_gflops > 0 && r.bandwidth_gbs > 0) roof_lines(r);
    for (const auto& r : c.roofs)
        if (r.peak_gflops > 0 && r.bandwidth_gbs > 0) roof_labels(r);
}


void svg_plot::line(const std::string& attrs, double xa, double ya, double xb, double yb) {
    o << "<polyline " << attrs << " points=\"" << f(xa) << "," << f(ya) << " " << f(xb) << "," << f(yb) << "\"/>\n";
    labels.block_segment(xa, ya, xb, yb);
}

void svg_plot::roof_lines(const chart_roof& r) {
    // a series' lines share its dash pattern
    const std::string dash = series_dashes(r.series);
    const double xa = std::pow(10, x0), xb = std::pow(10, x1);
    auto diagonal = [&](double gbs, const std::string& cls, double width, const std::string& color) {
        const double ridge = r.peak_gflops / gbs;
        const double ya = std::max(gbs * xa, std::pow(10, y0));
        const double xs = ya / gbs;
        line("class=\"" + cls + "\" data-series=\"" + std::to_string(r.series) + "\" data-gbs=\"" + fixed(gbs, 1) +
                 "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"" + fixed(width, 1) + "\" stroke-dasharray=\"" + dash + "\"",
             X(xs), Y(ya), X(std::min(ridge, xb)), Y(std::min(r.peak_gflops, gbs * xb)));
    };
    const double ridge = r.peak_gflops / r.bandwidth_gbs;
    // compute roof, from the highest bandwidth line's ridge to the right edge
    const double top_gbs = r.caches.empty() ? r.bandwidth_gbs : std::max(r.bandwidth_gbs, r.caches.front().gbs);
    line("class=\"roof\" data-series=\"" + std::to_string(r.series) +
             "\" fill=\"none\" stroke=\"#222\" stroke-width=\"1.6\" stroke-dasharray=\"" + dash + "\"",
         X(std::max(r.peak_gflops / top_gbs, xa)), Y(r.peak_gflops), X(xb), Y(r.peak_gflops));
    // DRAM and the cache levels
    diagonal(r.bandwidth_gbs, "roof", 1.6, "#222");
    for (const auto& level : r.caches) diagonal(level.gbs, "roof cache-roof", 1.0, "#777");
    o << "<circle class=\"ridge\" cx=\"" << f(X(ridge)) << "\" cy=\"" << f(Y(r.peak_gflops))
      << "\" r=\"3\" fill=\"#222\"><title>ridge point " << xml_escape(r.label) << ": " << fixed(ridge, 2)
      << " FLOP/B</title></circle>\n";
    // the library GEMM: a lower ceiling, dashed grey, never the roof
    if (r.gemm_gflops > 0)
        line("class=\"gemm-ceiling\" data-series=\"" + std::to_string(r.series) +
                 "\" fill=\"none\" stroke=\"#999\" stroke-width=\"1\" stroke-dasharray=\"3,3\"",
             X(std::max(r.gemm_gflops / top_gbs, xa)), Y(r.gemm_gflops), X(xb), Y(r.gemm_gflops));
}

bool svg_plot::put_label(const std::string& text, const std::vector<std::pair<double, double>>& at, const std::string& anchor) {
    const auto xy = labels.place(text, 11, anchor, at);
    if (xy)
        o << "<text class=\"roof-label\" x=\"" << f(xy->first) << "\" y=\"" << f(xy->second) << "\" text-anchor=\"" << anchor
          << "\" font-size=\"11\">" << xml_escape(text) << "</text>\n";
    return xy.has_value();
}

void svg_plot::roof_labels(const chart_roof& r) {
    // the compute roof above its line at the right, the GEMM below its own, each bandwidth beside its line; a
    // series' labels carry its name when there are several; a label with no free place is named in the legend
    const std::string who = c.series.size() > 1 ? c.series[static_cast<std::size_t>(r.series)] + ": " : "";
    const double xb = std::pow(10, x1), yr = Y(r.peak_gflops);
    const std::string peak = who + r.label + " " + fixed(r.peak_gflops, 0) + " GFLOP/s";
    if (!put_label(peak,
                   {{X(xb) - 4, yr - 5}, {X(xb) - 4, yr + 14}, {X(xb) - 4, yr - 19}, {X(xb) - 4, yr + 28},
                    {X(xb) - 160, yr - 5}, {X(xb) - 160, yr + 14}, {X(xb) - 300, yr - 5}, {X(xb) - 300, yr + 14}},
                   "end"))
        unplaced_roofs.push_back(peak);
    if (r.gemm_gflops > 0) {
        const double yg = Y(r.gemm_gflops);
        const std::string gemm = who + "GEMM " + fixed(r.gemm_gflops, 0) + " GFLOP/s (lower ceiling)";
        if (!put_label(gemm, {{X(xb) - 4, yg + 14}, {X(xb) - 4, yg + 28}, {X(xb) - 4, yg - 5}, {X(xb) - 200, yg + 14},
                              {X(xb) - 300, yg + 14}, {X(xb) - 4, yg + 42}},
                       "end"))
            unplaced_roofs.push_back(who + "GEMM " + fixed(r.gemm_gflops, 0) + " GFLOP/s");
    }
    // each bandwidth roof tagged by its level beside its line (its value in the legend): above-left of a point of
    // the line (ending there) or below-right of it (starting there); as the line rises to the right, neither box
    // meets it, and a tag that finds no free place is still named, with its value, in the legend
    std::vector<cache_roof> all = r.caches;
    all.push_back({"DRAM", r.bandwidth_gbs});
    for (const auto& [level, g] : all) {
        const double gr = r.peak_gflops / g;
        std::vector<std::pair<double, double>> above, below;
        for (double t : {0.45, 0.6, 0.3, 0.75, 0.2, 0.9, 0.38, 0.52, 0.68, 0.1, 0.82, 0.25, 0.97}) {
            const double xl = std::pow(10, x0 + t * (std::log10(std::min(gr, xb)) - x0));
            if (g * xl <= std::pow(10, y0)) continue;
            above.push_back({X(xl) - 4, Y(g * xl) - 5});
            below.push_back({X(xl) + 4, Y(g * xl) + 13});
        }
        if (!put_label(who + level, above, "end")) put_label(who + level, below, "start");
        bandwidth_key.push_back(who + level + " " + fixed(g, g < 100 ? 1 : 0) + " GB/s");
    }
}

void svg_plot::points() {
    // points: largest by time labelled, where a label fits
    std::vector<std::size_t> order(c.points.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return c.points[a].time_ms > c.points[b].time_ms; });
    std::vector<bool> labelled(c.points.size(), false);
    for (std::size_t i = 0; i < order.size() && static_cast<int>(i) < c.label_top; ++i) labelled[order[i]] = true;
    if (c.connect) {
        for (std::size_t s = 0; s < c.series.size(); ++s) {
            std::string pts;
            for (const auto& p : c.points)
                if (p.series == static_cast<int>(s) && p.intensity > 0 && p.gflops > 0)
                    pts += f(X(p.intensity)) + "," + f(Y(p.gflops)) + " ";
            if (!pts.empty())
                o << "<polyline class=\"path\" fill=\"none\" stroke=\"#888\" stroke-width=\"1\" points=\"" << pts << "\"/>\n";
        }
    }
    if (c.series.size() > 1 && !c.connect) arrows();
    std::ostringstream point_labels;
    for (std::size_t k = 0; k < order.size(); ++k) {
        const std::size_t i = order[k];
        const auto& p = c.points[i];
        if (!labelled[i] || !(p.intensity > 0) || !(p.gflops > 0)) continue;
        const double x = X(p.intensity), y = Y(p.gflops), rp = radius(p);
        const double w = 6.0 * static_cast<double>(p.label.size());
        if (auto xy = labels.place(p.label, 10, "start",
                                   {{x + rp + 2, y - 6}, {x + rp + 2, y + 12}, {x + rp + 2, y + 3}, {x - rp - 2 - w, y - 6},
                                    {x - rp - 2 - w, y + 12}, {x + rp + 2, y - rp - 10}, {x + rp + 2, y + rp + 16},
                                    {x - w / 2, y + rp + 13}, {x - w / 2, y - rp - 4}, {x - w / 2, y + rp + 25},
                                    {x - w / 2, y - rp - 16}}))
            point_labels << "<text class=\"label\" x=\"" << f(xy->first) << "\" y=\"" << f(xy->second) << "\" font-size=\"10\">"
                         << xml_escape(p.label) << "</text>\n";
    }
    for (const std::size_t i : order) {  // the largest first, so that a small point stays visible on a large one
        const auto& p = c.points[i];
        if (!(p.intensity > 0) || !(p.gflops > 0)) continue;
        const double x = X(p.intensity), y = Y(p.gflops);
        std::ostringstream tip;
        tip << p.label << ": " << time_ms(p.time_ms) << ", " << fixed(p.gflops, 2) << " GFLOP/s, " << fixed(p.intensity, 2)
            << " FLOP/B, " << bound_name(p.bound);
        if (c.series.size() > 1) tip << " (" << c.series[static_cast<std::size_t>(p.series)] << ")";
        const std::string cls = "point bound-" + bound_name(p.bound) + " series-" + std::to_string(p.series);
        const std::string attrs = " class=\"" + cls + "\" data-layer=\"" + xml_escape(p.label) + "\" fill=\"" +
                                  bound_color(p.bound) + "\" fill-opacity=\"0.7\" stroke=\"#000\" stroke-width=\"0.5\"";
        const double rp = radius(p), side = rp * 1.77;  // a square of the circle's area: side sqrt(pi) r
        switch (p.series % 3) {
            case 0: o << "<circle" << attrs << " cx=\"" << f(x) << "\" cy=\"" << f(y) << "\" r=\"" << f(rp) << "\">"; break;
            case 1:
                o << "<rect" << attrs << " x=\"" << f(x - side / 2) << "\" y=\"" << f(y - side / 2) << "\" width=\"" << f(side)
                  << "\" height=\"" << f(side) << "\">";
                break;
            default:  // a triangle of about the circle's area
                o << "<polygon" << attrs << " points=\"" << f(x) << "," << f(y - 1.3 * rp) << " " << f(x - 1.35 * rp) << ","
                  << f(y + rp) << " " << f(x + 1.35 * rp) << "," << f(y + rp) << "\">";
        }
        o << "<title>" << xml_escape(tip.str()) << "</title></" << (p.series % 3 == 0 ? "circle" : p.series % 3 == 1 ? "rect" : "polygon")
          << ">\n";
    }
    o << point_labels.str();
}

void svg_plot::arrows() {
    o << "<defs><marker id=\"arrowhead\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" "
         "markerHeight=\"6\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/></marker></defs>\n";
    for (const auto& from : c.points) {
        if (from.series != 0 || !(from.intensity > 0) || !(from.gflops > 0)) continue;
        for (const auto& to : c.points) {
            if (to.series == 0 || to.label != from.label || !(to.intensity > 0) || !(to.gflops > 0)) continue;
            const double xa = X(from.intensity), ya = Y(from.gflops), xb = X(to.intensity), yb = Y(to.gflops);
            const double len = std::hypot(xb - xa, yb - ya), ra = radius(from), rb = radius(to) + 1;
            if (len <= ra + rb + 2) continue;  // the two points touch: no room for an arrow
            const double ux = (xb - xa) / len, uy = (yb - ya) / len;
            o << "<line class=\"arrow\" data-layer=\"" << xml_escape(from.label) << "\" x1=\"" << f(xa + ux * ra) << "\" y1=\""
              << f(ya + uy * ra) << "\" x2=\"" << f(xb - ux * rb) << "\" y2=\"" << f(yb - uy * rb)
              << "\" stroke=\"#555\" stroke-width=\"0.8\" stroke-opacity=\"0.7\" marker-end=\"url(#arrowhead)\"/>\n";
        }
    }
}

void svg_plot::legend() {
    // legend, right of the plot
    double ly = top + 6;
    const double lx = left + pw + 14;
    o << "<text class=\"legend\" x=\"" << lx << "\" y=\"" << ly + 4 << "\" font-weight=\"bold\">bound</text>\n";
    using core::bound_class;
    for (bound_class b : {bound_class::compute, bound_class::memory, bound_class::overhead, bound_class::ambiguous}) {
        ly += 18;
        o << "<circle cx=\"" << lx + 5 << "\" cy=\"" << ly << "\" r=\"4.5\" fill=\"" << bound_color(b) << "\"/><text class=\"legend\" x=\""
          << lx + 15 << "\" y=\"" << ly + 4 << "\">" << to_string(b) << "</text>\n";
    }
    if (!c.connect) {
        ly += 18;
        o << "<text class=\"legend\" x=\"" << lx << "\" y=\"" << ly + 4 << "\" font-size=\"11\">area: share of the time</text>\n";
    }
    ly += 26;
    o << "<text class=\"legend\" x=\"" << lx << "\" y=\"" << ly << "\" font-weight=\"bold\">roofs</text>\n";
    ly += 18;
    o << "<line x1=\"" << lx << "\" y1=\"" << ly - 4 << "\" x2=\"" << lx + 22 << "\" y2=\"" << ly - 4
      << "\" stroke=\"#222\" stroke-width=\"1.6\"/><text class=\"legend\" x=\"" << lx + 28 << "\" y=\"" << ly
      << "\">compute, DRAM</text>\n";
    ly += 18;
    o << "<line x1=\"" << lx << "\" y1=\"" << ly - 4 << "\" x2=\"" << lx + 22 << "\" y2=\"" << ly - 4
      << "\" stroke=\"#777\" stroke-width=\"1\"/><text class=\"legend\" x=\"" << lx + 28 << "\" y=\"" << ly
      << "\">a cache level</text>\n";
    ly += 18;
    o << "<line x1=\"" << lx << "\" y1=\"" << ly - 4 << "\" x2=\"" << lx + 22 << "\" y2=\"" << ly - 4
      << "\" stroke=\"#999\" stroke-dasharray=\"3,3\"/><text class=\"legend\" x=\"" << lx + 28 << "\" y=\"" << ly
      << "\">GEMM (lower)</text>\n";
    ly += 4;
    for (const std::string& text : bandwidth_key) {  // the bandwidth roofs' values, fastest first
        ly += 16;
        o << "<text class=\"legend\" x=\"" << lx << "\" y=\"" << ly << "\" font-size=\"11\">" << xml_escape(text) << "</text>\n";
    }
    for (const std::string& text : unplaced_roofs) {  // a roof is always named, on its line or here
        ly += 16;
        o << "<text class=\"legend roof-label\" x=\"" << lx << "\" y=\"" << ly << "\" font-size=\"11\">" << xml_escape(text)
          << "</text>\n";
    }
    if (c.series.size() > 1) {
        ly += 28;
        o << "<text class=\"legend\" x=\"" << lx << "\" y=\"" << ly << "\" font-weight=\"bold\">runs (marker, roofs)</text>\n";
        for (std::size_t s = 0; s < c.series.size(); ++s) {
            ly += 18;
            const double cx = lx + 5, cy = ly - 4;
            switch (s % 3) {
                case 0: o << "<circle cx=\"" << f(cx) << "\" cy=\"" << f(cy) << "\" r=\"4.5\""; break;
                case 1: o << "<rect x=\"" << f(cx - 4) << "\" y=\"" << f(cy - 4) << "\" width=\"8\" height=\"8\""; break;
                default:
                    o << "<polygon points=\"" << f(cx) << "," << f(cy - 5) << " " << f(cx - 5) << "," << f(cy + 4) << " " << f(cx + 5)
                      << "," << f(cy + 4) << "\"";
            }
            o << " fill=\"#bbb\" stroke=\"#000\" stroke-width=\"0.5\"/>";
            o << "<line x1=\"" << lx + 14 << "\" y1=\"" << f(cy) << "\" x2=\"" << lx + 36 << "\" y2=\"" << f(cy)
              << "\" stroke=\"#222\" stroke-width=\"1.6\" stroke-dasharray=\"" << series_dashes(static_cast<int>(s)) << "\"/>";
            o << "<text class=\"legend\" x=\"" << lx + 42 << "\" y=\"" << ly << "\">" << xml_escape(c.series[s]) << "</text>\n";
        }
        ly += 18;
        o << "<text class=\"legend\" x=\"" << lx << "\" y=\"" << ly << "\" font-size=\"11\">arrows: first run to the next</text>\n";
    }
}

}  // namespace

std::string render_svg(const chart& c) {
    svg_plot plot(c);
    plot.frame();
    plot.roofs();
    plot.points();
    plot.legend();
    if (plot.time_h > 0) time_panel(plot.o, c, plot.left, plot.H1 + 40, plot.pw, plot.time_h - 40 - plot.bottom);
    plot.o << "</svg>\n";
    return plot.o.str();
}

std::string render_html(const std::string& title, const std::string& svg, const std::string& table_html,
                        const std::string& facts_html, const std::string& report_text) {
    std::ostringstream o;
    o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << xml_escape(title) << "</title>\n"
      << "<style>body{font-family:sans-serif;margin:16px;color:#222}h1{font-size:18px}"
         ".wrap{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}"
         "table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}"
         "td:first-child,th:first-child,td.op,th.op{text-align:left}th{background:#f3f3f3;position:sticky;top:0}"
         ".tablebox{max-height:540px;overflow:auto}"
         ".b-compute{color:#d62728}.b-memory{color:#1f77b4}.b-overhead{color:#7f7f7f}.b-ambiguous{color:#ff7f0e}"
         ".b-mistrusted{color:#9467bd;font-weight:bold}.facts{font-size:13px}.facts li.warning{color:#b00}"
         "pre{font-size:12px}</style></head>\n<body>\n<h1>"
      << xml_escape(title) << "</h1>\n" << facts_html << "<div class=\"wrap\">\n<div class=\"chart\">\n"
      << svg << "</div>\n<div class=\"tablebox\">\n" << table_html << "</div>\n</div>\n";
    if (!report_text.empty())
        o << "<details class=\"report\" open><summary>the report as the terminal shows it</summary><pre>"
          << pre_escape(report_text) << "</pre></details>\n";
    o
      << "<p style=\"font-size:11px;color:#666\">ridgeline roofline: compute roofs per data type, the bandwidth roof "
         "and the ridge point; one point per measured layer, coloured by its bound (docs/roofline.md). "
      << xml_escape(std::string(core::rule_legend())) << "; hover a rule for the whole reason; ~ after a bound: its "
         "twins (the same op and shapes) disagree beyond their CIs.</p>\n"
      << "</body></html>\n";
    return o.str();
}

std::string profile_table_html(const profiler::profile_result& r) {
    std::ostringstream o;
    o << "<table class=\"layers\"><thead><tr><th>layer</th><th class=\"op\">op</th><th>median</th><th>CI95</th><th>GFLOP/s</th><th>GB/s</th>"
         "<th>FLOP/B</th><th>bound</th><th>rule</th><th>% roof</th></tr></thead><tbody>\n";
    for (const auto& p : r.layers) {
        if (!p.has_time()) continue;
        const auto ai = p.analysis.cost.arithmetic_intensity();
        const std::string bound = p.roofline         ? std::string(to_string(p.roofline->bound))
                                  : p.time->disturbed ? std::string(to_string(core::bound_class::disturbed))
                                                      : std::string();
        const layer_rates shown = shown_rates(p);
        o << "<tr><td>" << xml_escape(core::group_label(p.analysis)) << "</td><td class=\"op\">" << core::kind_of(p.analysis.layer.op)
          << "</td><td>" << time_ms(p.time->stats.median) << "</td><td>" << xml_escape(ci_text(*p.time)) << "</td><td>"
          << (shown.hidden ? "?" : fixed(shown.gflops, 2))
          << "</td><td>" << (shown.hidden ? "?" : fixed(shown.gbs, 2)) << "</td><td>" << (ai ? fixed(*ai, 2) : "-")
          << "</td><td class=\"b-" << bound << "\">" << bound << (p.twins && p.twins->disagree ? "~" : "")
          << "</td><td title=\"" << xml_escape(p.roofline ? p.roofline->reason : std::string()) << "\">"
          << xml_escape(p.roofline ? rule_text(*p.roofline) : std::string()) << "</td><td>"
          << (std::isfinite(shown.roof_fraction) ? fixed(100 * shown.roof_fraction, 0) + "%" : "") << "</td></tr>\n";
    }
    o << "</tbody></table>\n";
    return o.str();
}

std::string profile_facts_html(const profiler::profile_result& r, const std::vector<std::string>& warnings) {
    std::ostringstream o;
    o << "<ul class=\"facts\">\n<li>end to end: ";
    if (r.end_to_end && r.end_to_end_state == profiler::run_state::measured)
        o << time_ms(r.end_to_end->stats.median) << " median (" << xml_escape(ci_text(*r.end_to_end)) << ", "
          << r.end_to_end->samples << " samples)";
    else
        o << xml_escape(std::string(to_string(r.end_to_end_state))) << (r.end_to_end_reason.empty() ? "" : " (" + xml_escape(r.end_to_end_reason) + ")");
    o << "; sum of layer medians " << time_ms(r.sum_of_layers_ms) << "</li>\n<li>time by bound:";
    std::map<std::string, double> by_bound;
    for (const auto& p : r.layers)
        if (p.has_time())
            by_bound[p.roofline ? std::string(to_string(p.roofline->bound)) : "no verdict"] += p.time->stats.median;
    for (const auto& [bound, ms] : by_bound)
        o << " " << xml_escape(bound) << " " << time_ms(ms) << (r.sum_of_layers_ms > 0 ? " (" + fixed(100 * ms / r.sum_of_layers_ms, 0) + "%)" : "");
    const auto& t = r.analysis.totals;
    o << "</li>\n<li>" << r.layers.size() << " layers: params " << with_commas(t.params) << ", MACs "
      << with_commas(t.macs) << ", FLOPs " << with_commas(t.flops) << ", bytes " << with_commas(t.bytes) << "</li>\n";
    for (const auto& w : warnings) o << "<li class=\"warning\">warning: " << xml_escape(w) << "</li>\n";
    o << "</ul>\n";
    return o.str();
}

}  // namespace ridgeline::report
