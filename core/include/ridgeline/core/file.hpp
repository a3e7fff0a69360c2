#pragma once
// Reading the files a user names (model files, ONNX files, reports) without hanging or crashing on what is
// not a plain file.

#include <filesystem>
#include <string>
#include <string_view>

namespace ridgeline::core {

/// The whole content of `path`. Throws core::parse_error, prefixed with `label` (usually the path), when
/// the file does not exist, is a directory, is not a regular file (a FIFO or device would block or never
/// end: /dev/zero), cannot be opened, or a read fails (the system's reason, e.g. "Input/output error").
std::string read_regular_file(const std::filesystem::path& path, std::string_view label);

/// Checks a JSON text before it is parsed: throws core::parse_error, prefixed with `label`, at a NUL byte (a
/// parser would stop there and take what came before as the whole file) or at brackets nested deeper than
/// `max_depth` (a value nested 100,000 deep would overflow the stack of any recursive copy, dump or compare of it;
/// the formats ridgeline reads nest a few levels). Syntax is the parser's to check.
void check_json_text(std::string_view text, std::string_view label, int max_depth = 64);

/// Writes `content` to `path` atomically: a temporary file in the same folder, flushed, then renamed
/// over the target, so a crash never leaves a truncated file under the real name.
/// Throws core::error naming the path and the system's reason.
void write_file_atomic(const std::string& path, std::string_view content);

/// The checks write_file_atomic makes before writing (the folder exists, `path` is not a folder), for
/// commands that run for minutes and should fail at once rather than at the end. Throws like it.
void check_output_path(const std::string& path);

}  // namespace ridgeline::core
