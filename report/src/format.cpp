#include "ridgeline/report/format.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "ridgeline/core/error.hpp"

namespace ridgeline::report {

void text_table::add_column(std::string header, align a) {
    headers_.push_back(std::move(header));
    aligns_.push_back(a);
}

void text_table::add_row(std::vector<std::string> cells) {
    cells.resize(headers_.size());
    for (auto& c : cells) c = printable(c);
    rows_.push_back(std::move(cells));
}

void text_table::add_rule() { rows_.emplace_back(); }

namespace {
/// The columns a cell takes on a terminal: its UTF-8 code points (every byte but the continuation bytes
/// 10xxxxxx); a name like "ünï.çødé" is 8 columns, not 12 bytes. East Asian wide characters take 2 columns on most
/// terminals and count 1 here.
std::size_t columns(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
    return n;
}
}  // namespace

std::string text_table::render() const {
    std::vector<std::size_t> width(headers_.size(), 0);
    for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = columns(headers_[c]);
    for (const auto& r : rows_)
        for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], columns(r[c]));
    auto line = [&](const std::vector<std::string>& cells) {
        std::string s;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            const std::size_t pad = width[c] - columns(cells[c]);
            if (c) s += "  ";
            if (aligns_[c] == align::right) s += std::string(pad, ' ');
            s += cells[c];
            if (aligns_[c] == align::left && c + 1 < cells.size()) s += std::string(pad, ' ');
        }
        while (!s.empty() && s.back() == ' ') s.pop_back();
        return s + "\n";
    };
    std::size_t total = 0;
    for (std::size_t c = 0; c < width.size(); ++c) total += width[c] + (c ? 2 : 0);
    const std::string rule = std::string(total, '-') + "\n";
    std::string out = line(headers_) + rule;
    for (const auto& r : rows_) out += r.empty() ? rule : line(r);
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
