#include "ridgeline/report/chart.hpp"
#include "ridgeline/report/profile.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ridgeline/report/format.hpp"

namespace ridgeline::report {

std::string xml_escape(const std::string& s) {
    std::string out;
    for (char ch : s) {
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

void add_profile(chart& c, const backends::profile_result& r, const std::string& series_name) {
    const int s = static_cast<int>(c.series.size());
    c.series.push_back(series_name);
    if (r.ceilings) {
        for (const auto& [dt, g] : r.ceilings->peak_gflops)
            c.roofs.push_back({dt, g, r.ceilings->bandwidth_gbs, s});
    }
    for (const auto& p : r.layers) {
        if (!p.has_time()) continue;
        const auto& cost = p.analysis.cost;
        if (cost.flops <= 0 || cost.bytes <= 0) continue;  // no point on a FLOP/s chart
        if (shown_rates(p).hidden) continue;  // mistrusted or disturbed: no rate to plot
        c.points.push_back({p.analysis.layer.name, static_cast<double>(cost.flops) / static_cast<double>(cost.bytes),
                            p.achieved_gflops(), p.time->stats.median, p.roofline ? p.roofline->bound : "unknown", s});
    }
}

namespace {

const char* bound_color(const std::string& b) {
    if (b == "compute") return "#d62728";
    if (b == "memory") return "#1f77b4";
    if (b == "overhead") return "#7f7f7f";
    if (b == "ambiguous") return "#ff7f0e";
    return "#9467bd";
}

std::string tick_label(double v) {
    if (v >= 1e6) return fixed(v / 1e6, 0) + "M";
    if (v >= 1e3) return fixed(v / 1e3, 0) + "k";
    if (v >= 1) return fixed(v, 0);
    if (v >= 0.01) return fixed(v, 2);
    return fixed(v, 3);
}

std::string f(double v) { return fixed(v, 1); }

}  // namespace

std::string render_svg(const chart& c) {
    const double W = 860, H = 540, left = 78, right = 170, top = 40, bottom = 58;
    const double pw = W - left - right, ph = H - top - bottom;
    // ranges in decades
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
    const double x0 = std::floor(std::log10(xmin)), x1 = std::ceil(std::log10(xmax) + 1e-9);
    const double y0 = std::floor(std::log10(std::max(ymin, ymax * 1e-6))), y1 = std::ceil(std::log10(ymax * 1.5) + 1e-9);
    auto X = [&](double v) { return left + (std::log10(v) - x0) / std::max(1e-9, x1 - x0) * pw; };
    auto Y = [&](double v) { return top + ph - (std::log10(v) - y0) / std::max(1e-9, y1 - y0) * ph; };

    std::ostringstream o;
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
    o << "<text x=\"" << left + pw / 2 << "\" y=\"" << H - 14
      << "\" text-anchor=\"middle\">arithmetic intensity (FLOP/byte)</text>\n";
    o << "<text transform=\"translate(18," << top + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">performance (GFLOP/s)</text>\n";
    // roofs
    const char* dashes[] = {"", "6,4", "2,3", "10,3,2,3"};
    for (const auto& r : c.roofs) {
        if (!(r.peak_gflops > 0) || !(r.bandwidth_gbs > 0)) continue;
        const double ridge = r.peak_gflops / r.bandwidth_gbs;
        const double xa = std::pow(10, x0), xb = std::pow(10, x1);
        const double ya = std::max(r.bandwidth_gbs * xa, std::pow(10, y0));
        const double xs = ya / r.bandwidth_gbs;
        o << "<polyline class=\"roof\" data-series=\"" << r.series << "\" fill=\"none\" stroke=\"#222\" stroke-width=\"1.6\""
          << " stroke-dasharray=\"" << dashes[r.series % 4] << "\" points=\"" << f(X(xs)) << "," << f(Y(ya)) << " "
          << f(X(ridge)) << "," << f(Y(r.peak_gflops)) << " " << f(X(xb)) << "," << f(Y(r.peak_gflops)) << "\"/>\n";
        o << "<circle class=\"ridge\" cx=\"" << f(X(ridge)) << "\" cy=\"" << f(Y(r.peak_gflops))
          << "\" r=\"3\" fill=\"#222\"><title>ridge point " << xml_escape(r.label) << ": " << fixed(ridge, 2)
          << " FLOP/B</title></circle>\n";
        const std::string who = c.series.size() > 1 ? c.series[static_cast<std::size_t>(r.series)] + " " : "";
        o << "<text x=\"" << f(X(xb) - 4) << "\" y=\"" << f(Y(r.peak_gflops) - 5) << "\" text-anchor=\"end\" font-size=\"11\">"
          << xml_escape(who + r.label) << " " << fixed(r.peak_gflops, 0) << " GFLOP/s</text>\n";
        const double xl = std::max(xs * 1.5, std::pow(10, x0 + 0.3));
        if (xl < ridge)
            o << "<text x=\"" << f(X(xl)) << "\" y=\"" << f(Y(r.bandwidth_gbs * xl) - 6) << "\" font-size=\"11\">"
              << xml_escape(who) << fixed(r.bandwidth_gbs, 1) << " GB/s</text>\n";
    }
    // points: largest by time labelled
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
    for (std::size_t i = 0; i < c.points.size(); ++i) {
        const auto& p = c.points[i];
        if (!(p.intensity > 0) || !(p.gflops > 0)) continue;
        const double x = X(p.intensity), y = Y(p.gflops);
        std::ostringstream tip;
        tip << p.label << ": " << time_ms(p.time_ms) << ", " << fixed(p.gflops, 2) << " GFLOP/s, " << fixed(p.intensity, 2)
            << " FLOP/B, " << p.bound;
        if (c.series.size() > 1) tip << " (" << c.series[static_cast<std::size_t>(p.series)] << ")";
        const std::string cls = "point bound-" + p.bound + " series-" + std::to_string(p.series);
        const std::string attrs = " class=\"" + cls + "\" data-layer=\"" + xml_escape(p.label) + "\" fill=\"" +
                                  bound_color(p.bound) + "\" fill-opacity=\"0.8\" stroke=\"#000\" stroke-width=\"0.5\"";
        switch (p.series % 3) {
            case 0: o << "<circle" << attrs << " cx=\"" << f(x) << "\" cy=\"" << f(y) << "\" r=\"4.5\">"; break;
            case 1: o << "<rect" << attrs << " x=\"" << f(x - 4) << "\" y=\"" << f(y - 4) << "\" width=\"8\" height=\"8\">"; break;
            default:
                o << "<polygon" << attrs << " points=\"" << f(x) << "," << f(y - 5) << " " << f(x - 5) << "," << f(y + 4) << " "
                  << f(x + 5) << "," << f(y + 4) << "\">";
        }
        o << "<title>" << xml_escape(tip.str()) << "</title></" << (p.series % 3 == 0 ? "circle" : p.series % 3 == 1 ? "rect" : "polygon")
          << ">\n";
        if (labelled[i])
            o << "<text class=\"label\" x=\"" << f(x + 7) << "\" y=\"" << f(y - 6) << "\" font-size=\"10\">" << xml_escape(p.label)
              << "</text>\n";
    }
    // legend
    double ly = top + 6;
    const double lx = left + pw + 14;
    o << "<text x=\"" << lx << "\" y=\"" << ly + 4 << "\" font-weight=\"bold\">bound</text>\n";
    for (const char* b : {"compute", "memory", "overhead", "ambiguous"}) {
        ly += 18;
        o << "<circle cx=\"" << lx + 5 << "\" cy=\"" << ly << "\" r=\"4.5\" fill=\"" << bound_color(b) << "\"/><text x=\""
          << lx + 15 << "\" y=\"" << ly + 4 << "\">" << b << "</text>\n";
    }
    if (c.series.size() > 1) {
        ly += 28;
        o << "<text x=\"" << lx << "\" y=\"" << ly << "\" font-weight=\"bold\">runs</text>\n";
        const char* shapes[] = {"circle", "square", "triangle"};
        for (std::size_t s = 0; s < c.series.size(); ++s) {
            ly += 18;
            o << "<text x=\"" << lx << "\" y=\"" << ly << "\">" << shapes[s % 3] << ": " << xml_escape(c.series[s]) << "</text>\n";
        }
    }
    o << "</svg>\n";
    return o.str();
}

std::string render_html(const std::string& title, const std::string& svg, const std::string& table_html) {
    std::ostringstream o;
    o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << xml_escape(title) << "</title>\n"
      << "<style>body{font-family:sans-serif;margin:16px;color:#222}h1{font-size:18px}"
         ".wrap{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}"
         "table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}"
         "td:first-child,th:first-child,td.op{text-align:left}th{background:#f3f3f3;position:sticky;top:0}"
         ".tablebox{max-height:540px;overflow:auto}"
         ".b-compute{color:#d62728}.b-memory{color:#1f77b4}.b-overhead{color:#7f7f7f}.b-ambiguous{color:#ff7f0e}"
         ".b-mistrusted{color:#9467bd;font-weight:bold}</style></head>\n<body>\n<h1>"
      << xml_escape(title) << "</h1>\n<div class=\"wrap\">\n<div class=\"chart\">\n"
      << svg << "</div>\n<div class=\"tablebox\">\n" << table_html << "</div>\n</div>\n"
      << "<p style=\"font-size:11px;color:#666\">ridgeline roofline: compute roofs per data type, the bandwidth roof "
         "and the ridge point; one point per measured layer, coloured by its bound (docs/roofline.md).</p>\n"
      << "</body></html>\n";
    return o.str();
}

std::string profile_table_html(const backends::profile_result& r) {
    std::ostringstream o;
    o << "<table class=\"layers\"><thead><tr><th>layer</th><th>op</th><th>median</th><th>GFLOP/s</th><th>GB/s</th>"
         "<th>FLOP/B</th><th>bound</th><th>% roof</th></tr></thead><tbody>\n";
    for (const auto& p : r.layers) {
        if (!p.has_time()) continue;
        const auto ai = p.analysis.cost.arithmetic_intensity();
        const std::string bound = p.roofline ? p.roofline->bound : p.time->disturbed ? "disturbed" : "";
        const layer_rates shown = shown_rates(p);
        o << "<tr><td>" << xml_escape(p.analysis.layer.name) << "</td><td class=\"op\">" << core::kind_of(p.analysis.layer.op)
          << "</td><td>" << time_ms(p.time->stats.median) << "</td><td>" << (shown.hidden ? "?" : fixed(shown.gflops, 2))
          << "</td><td>" << (shown.hidden ? "?" : fixed(shown.gbs, 2)) << "</td><td>" << (ai ? fixed(*ai, 2) : "-")
          << "</td><td class=\"b-" << bound << "\">" << bound << "</td><td>"
          << (std::isfinite(shown.roof_fraction) ? fixed(100 * shown.roof_fraction, 0) + "%" : "") << "</td></tr>\n";
    }
    o << "</tbody></table>\n";
    return o.str();
}

}  // namespace ridgeline::report
