#include "ridgeline/core/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ridgeline/core/error.hpp"

namespace ridgeline::core {

std::string read_regular_file(const std::filesystem::path& path, std::string_view label) {
    namespace fs = std::filesystem;
    const std::string at(label);
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec && ec.value() != ENOENT && ec.value() != ENOTDIR)  // a loop of links, a folder that cannot be searched
        throw parse_error(at + ": cannot reach the file (" + ec.message() + ")");
    if (!fs::exists(st)) throw parse_error(at + ": no such file");
    if (fs::is_directory(st)) throw parse_error(at + ": is a directory, not a file");
    if (!fs::is_regular_file(st))
        throw parse_error(at + ": is not a regular file (a device, FIFO or socket cannot be read as a model or report)");
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw parse_error(at + ": cannot open the file (" + std::strerror(errno) + ")");
    std::string bytes;
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            const std::string why = std::strerror(errno);
            ::close(fd);
            throw parse_error(at + ": cannot read the file (" + why + ")");
        }
        bytes.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return bytes;
}

void check_json_text(std::string_view text, std::string_view label, int max_depth) {
    bool in_string = false, escaped = false;
    int depth = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\0')
            throw parse_error(std::string(label) + ": not valid JSON: a NUL byte at offset " + std::to_string(i));
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth)
                throw parse_error(std::string(label) + ": not valid JSON for ridgeline: nested deeper than " +
                                  std::to_string(max_depth) + " levels at offset " + std::to_string(i) +
                                  " (no file ridgeline reads nests so deep)");
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
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
        throw error("cannot write \"" + path + "\": folder \"" + dir.string() + "\" does not exist");
    if (!fs::is_directory(dir, ec))
        throw error("cannot write \"" + path + "\": \"" + dir.string() + "\" is a file, not a folder");
    if (fs::is_directory(target, ec)) throw error("cannot write \"" + path + "\": it is a folder");
    // what write_file_atomic will do, tried now: a device or FIFO written in place, anything else through a
    // temporary file in the folder (a read-only or forbidden folder failed only after minutes of measuring)
    const fs::file_status st = fs::status(target, ec);
    if (fs::exists(st) && !fs::is_regular_file(st)) {
        if (::access(target.c_str(), W_OK) != 0)
            throw error("cannot write \"" + path + "\": " + std::strerror(errno));
        return;
    }
    std::string probe = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    const int fd = ::mkstemp(probe.data());
    if (fd < 0) throw error("cannot write \"" + path + "\": " + std::strerror(errno));
    ::close(fd);
    ::unlink(probe.c_str());
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
        if (fd < 0) throw error("cannot write \"" + path + "\": " + std::strerror(errno));
        std::string why = write_all(fd, content);
        if (::close(fd) != 0 && why.empty()) why = std::strerror(errno);
        if (!why.empty()) throw error("cannot write \"" + path + "\": " + why);
        return;
    }
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string tmpl = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    const int fd = ::mkstemp(tmpl.data());
    if (fd < 0) throw error("cannot write \"" + path + "\": " + std::strerror(errno));
    if (std::string why = write_all(fd, content); !why.empty()) {
        ::close(fd);
        ::unlink(tmpl.c_str());
        throw error("cannot write \"" + path + "\": " + why);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmpl.c_str());
        throw error("cannot write \"" + path + "\": " + why);
    }
    ::chmod(tmpl.c_str(), 0644);
    if (std::rename(tmpl.c_str(), target.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(tmpl.c_str());
        throw error("cannot write \"" + path + "\": " + why);
    }
}

}  // namespace ridgeline::core
