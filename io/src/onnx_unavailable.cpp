// ONNX import in a build without ONNX (RIDGELINE_HAVE_ONNX == 0): says so clearly.
#include "ridgeline/core/error.hpp"
#include "ridgeline/io/onnx_import.hpp"

namespace ridgeline::io {

bool have_onnx() { return false; }

onnx_model import_onnx(const std::filesystem::path& file, const onnx_options&) {
    throw core::error(file.string() + ": this build has no ONNX support (rebuild with Debian's libonnx-dev and "
                                      "libprotobuf-dev installed: scripts/setup.sh, then cmake -DRIDGELINE_ONNX=ON)");
}

}  // namespace ridgeline::io
