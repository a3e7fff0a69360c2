#include "ridgeline/report/format.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "ridgeline/core/error.hpp"
#include "ridgeline/core/format.hpp"

namespace ridgeline::report {

namespace {
std::size_t g_table_width = default_table_width;

/// `s` cut to `width` columns by an ellipsis in its middle (a layer name's start and end say the most).
std::string elide_middle(const std::string& s, std::size_t width) {
    const std::size_t n = display_columns(s);
    if (n <= width || width < 5) return s;
    const std::size_t keep = width - 1, head = (keep + 1) / 2, tail = keep - head;
    // byte offsets of code points: take whole UTF-8 sequences only
    auto prefix = [&](std::size_t cols) {
        std::size_t i = 0, c = 0;
        while (i < s.size() && c < cols) {
            ++i;
            while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
            ++c;
        }
        return i;
    };
    return s.substr(0, prefix(head)) + "\u2026" + s.substr(prefix(n - tail));
}

/// The words of `s` on lines of at most `width` columns (a word longer than that on a line of its own).
std::vector<std::string> wrap_words(const std::string& s, std::size_t width) {
    std::vector<std::string> lines;
    std::string line;
    for (const std::string_view w : core::split(s, ' ')) {
        const std::string word(w);
        if (word.empty()) continue;
        if (!line.empty() && display_columns(line) + 1 + display_columns(word) > width) {
            lines.push_back(line);
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty() || lines.empty()) lines.push_back(line);
    return lines;
}
}  // namespace

std::size_t table_width() { return g_table_width; }
void set_table_width(std::size_t columns) { g_table_width = columns; }

std::size_t display_columns(const std::string& s) {
    // every byte but the continuation bytes 10xxxxxx: "ünï.çødé" is 8 columns, not 12 bytes (East Asian wide
    // characters take 2 columns on most terminals and count 1 here)
    std::size_t n = 0;
    for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
    return n;
}

void text_table::add_column(std::string header, align a, fit f) {
    headers_.push_back(std::move(header));
    aligns_.push_back(a);
    fits_.push_back(f);
}

void text_table::add_row(std::vector<std::string> cells) {
    cells.resize(headers_.size());
    for (auto& c : cells) c = printable(c);
    rows_.push_back(std::move(cells));
}

void text_table::add_rule() { rows_.emplace_back(); }

namespace {
/// Each column's widest cell (header included).
std::vector<std::size_t> natural_widths(const std::vector<std::string>& headers,
                                        const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> w(headers.size(), 0);
    for (std::size_t c = 0; c < headers.size(); ++c) w[c] = display_columns(headers[c]);
    for (const auto& r : rows)
        for (std::size_t c = 0; c < r.size(); ++c) w[c] = std::max(w[c], display_columns(r[c]));
    return w;
}

std::size_t total_width(const std::vector<std::size_t>& w, const std::vector<bool>& keep) {
    std::size_t total = 0, n = 0;
    for (std::size_t c = 0; c < w.size(); ++c)
        if (keep[c]) {
            total += w[c];
            ++n;
        }
    return total + (n > 1 ? 2 * (n - 1) : 0);
}
}  // namespace

std::vector<bool> text_table::kept(std::size_t width) const {
    std::vector<bool> keep(headers_.size(), true);
    if (width == 0) return keep;
    const std::vector<std::size_t> w = natural_widths(headers_, rows_);
    int rank = 0;
    for (const auto& f : fits_) rank = std::max(rank, f.drop);
    for (; rank > 0 && total_width(w, keep) > width; --rank)
        for (std::size_t c = 0; c < fits_.size(); ++c)
            if (fits_[c].drop == rank) keep[c] = false;
    return keep;
}

std::string text_table::dropped(std::size_t width) const {
    const std::vector<bool> keep = kept(width);
    std::string out;
    for (std::size_t c = 0; c < headers_.size(); ++c)
        if (!keep[c]) out += (out.empty() ? "" : ", ") + headers_[c];
    return out;
}

std::string text_table::render(std::size_t width) const {
    const std::vector<bool> keep = kept(width);
    std::vector<std::size_t> w = natural_widths(headers_, rows_);
    // still too wide: the shrink column gives up width (to 16), then the wrap column wraps (to 30)
    if (width > 0)
        for (std::size_t c = 0; c < w.size(); ++c) {
            const std::size_t total = total_width(w, keep);
            if (!keep[c] || total <= width) continue;
            if (fits_[c].shrink) w[c] = std::max<std::size_t>(16, w[c] - std::min(w[c], total - width));
        }
    if (width > 0)
        for (std::size_t c = 0; c < w.size(); ++c) {
            const std::size_t total = total_width(w, keep);
            if (!keep[c] || total <= width) continue;
            if (fits_[c].wrap) w[c] = std::max<std::size_t>(30, w[c] - std::min(w[c], total - width));
        }
    auto line = [&](const std::vector<std::string>& cells) {
        // a cell that wraps makes more lines; the others are blank on them
        std::vector<std::vector<std::string>> parts(cells.size());
        std::size_t lines = 1;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            if (!keep[c]) continue;
            if (fits_[c].wrap && display_columns(cells[c]) > w[c]) parts[c] = wrap_words(cells[c], w[c]);
            else parts[c] = {fits_[c].shrink ? elide_middle(cells[c], w[c]) : cells[c]};
            lines = std::max(lines, parts[c].size());
        }
        std::string out;
        for (std::size_t k = 0; k < lines; ++k) {
            std::string s;
            bool first = true;
            for (std::size_t c = 0; c < cells.size(); ++c) {
                if (!keep[c]) continue;
                const std::string cell = k < parts[c].size() ? parts[c][k] : std::string();
                const std::size_t pad = w[c] - std::min(w[c], display_columns(cell));
                if (!first) s += "  ";
                first = false;
                if (aligns_[c] == align::right) s += std::string(pad, ' ');
                s += cell;
                if (aligns_[c] == align::left) s += std::string(pad, ' ');
            }
            while (!s.empty() && s.back() == ' ') s.pop_back();
            out += s + "\n";
        }
        return out;
    };
    const std::string rule = std::string(total_width(w, keep), '-') + "\n";
    std::string out = line(headers_) + rule;
    for (const auto& r : rows_) out += r.empty() ? rule : line(r);
    return out;
}

std::string wrap_lines(const std::string& text, std::size_t width) {
    if (width == 0) return text;
    std::string out;
    const std::vector<std::string_view> lines = core::split(text, '\n');  // "a\n" -> {"a", ""}: the newline kept
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const std::string line(lines[i]);
        if (display_columns(line) <= width) {
            out += line;
        } else {
            // the line's own indent kept; the continuations two spaces further in, re-wrapped to the width left
            const std::string indent = line.substr(0, line.find_first_not_of(' '));
            const std::vector<std::string> parts = wrap_words(line.substr(indent.size()), width - indent.size());
            out += indent + parts[0];
            std::string rest;
            for (std::size_t k = 1; k < parts.size(); ++k) rest += (rest.empty() ? "" : " ") + parts[k];
            if (!rest.empty())
                for (const auto& p : wrap_words(rest, width - indent.size() - 2)) out += "\n" + indent + "  " + p;
        }
        if (i + 1 < lines.size()) out += "\n";
    }
    return out;
}

std::string csv_field(std::string_view s) {
    if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (char ch : s) {
        if (ch == '"') out += '"';
        out += ch;
    }
    return out + "\"";
}

}  // namespace ridgeline::report
