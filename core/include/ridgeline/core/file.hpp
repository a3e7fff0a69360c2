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

}  // namespace ridgeline::core
