#include "ridgeline/report/format.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ridgeline/core/error.hpp"

namespace ridgeline::report {

std::string with_commas(std::int64_t v) {
    const unsigned long long magnitude =
        v < 0 ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    const std::string digits = std::to_string(magnitude);
    std::string out;
    const std::size_t n = digits.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (i && (n - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return v < 0 ? "-" + out : out;
}

std::string counted(std::int64_t n, std::string_view noun) {
    return with_commas(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

std::string si(double v, std::string_view unit) {
    static const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
    if (!std::isfinite(v)) return "-";
    double a = std::fabs(v);
    int p = 0;
    while (a >= 999.95 && p < 6) {
        a /= 1000.0;
        v /= 1000.0;
        ++p;
    }
    std::string num;
    if (p == 0 && v == std::floor(v))
        num = fmt::format("{:.0f}", v);
    else if (a >= 99.995)
        num = fmt::format("{:.1f}", v);
    else if (a >= 9.9995)
        num = fmt::format("{:.2f}", v);
    else
        num = fmt::format("{:.3f}", v);
    const std::string prefix = prefixes[p];
    if (prefix.empty() && unit.empty()) return num;
    return num + " " + prefix + std::string(unit);
}

std::string shortest(double v) {
    char buf[64];
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, ptr) : fmt::format("{}", v);
}

std::string fixed(double v, int decimals) {
    if (!std::isfinite(v)) return "-";
    return fmt::format("{:.{}f}", v, decimals);
}

std::string time_ms(double ms) {
    if (!std::isfinite(ms)) return "-";
    const double a = std::fabs(ms);
    if (a >= 1000.0) return fmt::format("{:.3f} s", ms / 1000.0);
    if (a >= 1.0) return fmt::format("{:.3f} ms", ms);
    if (a >= 1e-3) return fmt::format("{:.2f} us", ms * 1e3);
    return fmt::format("{:.1f} ns", ms * 1e6);
}

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

std::string text_table::render() const {
    std::vector<std::size_t> width(headers_.size(), 0);
    for (std::size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
    for (const auto& r : rows_)
        for (std::size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
    auto line = [&](const std::vector<std::string>& cells) {
        std::string s;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            const std::size_t pad = width[c] - cells[c].size();
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

namespace {

/// Writes all of `content` to `fd`; on an error returns the system's reason.
std::string write_all(int fd, std::string_view content) {
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return std::strerror(errno);
        }
        done += static_cast<std::size_t>(n);
    }
    return {};
}

/// The file a write to `path` lands in: symbolic links followed (renaming onto a link would replace the
/// link itself); `path` unchanged when it does not exist yet.
std::filesystem::path resolved(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(path, ec))) {
        const fs::path real = fs::weakly_canonical(path, ec);
        if (!ec) return real;
    }
    return path;
}

}  // namespace

void check_output_path(const std::string& path) {
    namespace fs = std::filesystem;
    const fs::path target = resolved(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::exists(dir, ec))
        throw core::error("cannot write \"" + path + "\": folder \"" + dir.string() + "\" does not exist");
    if (!fs::is_directory(dir, ec))
        throw core::error("cannot write \"" + path + "\": \"" + dir.string() + "\" is a file, not a folder");
    if (fs::is_directory(target, ec)) throw core::error("cannot write \"" + path + "\": it is a folder");
}

void write_file_atomic(const std::string& path, std::string_view content) {
    namespace fs = std::filesystem;
    check_output_path(path);
    const fs::path target = resolved(path);
    std::error_code ec;
    const fs::file_status st = fs::status(target, ec);
    if (fs::exists(st) && !fs::is_regular_file(st)) {
        // a device, FIFO or socket (/dev/stdout, /dev/null, a pipe): written in place, never replaced by a
        // rename (as root, that would put a regular file where /dev/null was); every error is reported
        const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0) throw core::error("cannot write \"" + path + "\": " + std::strerror(errno));
        std::string why = write_all(fd, content);
        if (::close(fd) != 0 && why.empty()) why = std::strerror(errno);
        if (!why.empty()) throw core::error("cannot write \"" + path + "\": " + why);
        return;
    }
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string tmpl = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) throw core::error("cannot write \"" + path + "\": " + std::strerror(errno));
    if (std::string why = write_all(fd, content); !why.empty()) {
        ::close(fd);
        ::unlink(tmpl.c_str());
        throw core::error("cannot write \"" + path + "\": " + why);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmpl.c_str());
        throw core::error("cannot write \"" + path + "\": " + why);
    }
    ::chmod(tmpl.c_str(), 0644);
    if (std::rename(tmpl.c_str(), target.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmpl.c_str());
        throw core::error("cannot write \"" + path + "\": " + why);
    }
}

}  // namespace ridgeline::report
