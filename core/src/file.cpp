#include "ridgeline/core/file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
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

}  // namespace ridgeline::core
