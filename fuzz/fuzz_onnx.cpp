// libFuzzer target: ONNX import (`--onnx`): fuzzed protobuf bytes written to a file in a private temporary
// folder and read with io::import_onnx, then analysed like any model.
// Properties: every rejection is a core::error (never a crash inside ONNX's loader or shape inference,
// never a read outside the model's folder); an imported model analyses, or fails with a core::error, and keeps
// core::fuse's promises (fuzz::check_fuse).
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "fuzz_common.hpp"
#include "ridgeline/core/memory.hpp"
#include "ridgeline/io/onnx_import.hpp"

using namespace ridgeline;

namespace {

/// <private temporary folder>/model.onnx; the folder is removed at exit. Never destroyed itself, so the
/// exit handler can still read it.
const std::filesystem::path& model_path() {
    static const auto* path = [] {
        std::string tmpl = (std::filesystem::temp_directory_path() / "ridgeline-fuzz-onnx-XXXXXX").string();
        if (!::mkdtemp(tmpl.data())) std::abort();
        auto* p = new std::filesystem::path(std::filesystem::path(tmpl) / "model.onnx");
        return p;
    }();
    static const bool cleanup = [] {
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(model_path().parent_path(), ec);
        });
        return true;
    }();
    (void)cleanup;
    return *path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size > 65536) return 0;
    const auto& path = model_path();
    {
        std::FILE* f = std::fopen(path.c_str(), "wb");
        if (!f) std::abort();
        if (size && std::fwrite(data, 1, size, f) != size) std::abort();
        std::fclose(f);
    }
    fuzz::expect_clean([&] {
        const io::onnx_model m = io::import_onnx(path);
        const core::model_analysis a = core::analyze(m.model, core::dtype::fp32);
        (void)core::estimate_training(a, core::memory_of(a));
        fuzz::check_fuse(a);
    });
    return 0;
}
