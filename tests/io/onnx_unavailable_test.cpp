// A build without ONNX says so clearly.
#include <gtest/gtest.h>

#include "ridgeline/core/error.hpp"
#include "ridgeline/io/onnx_import.hpp"

TEST(OnnxImport, ThisBuildHasNoOnnx) {
    EXPECT_FALSE(ridgeline::io::have_onnx());
    try {
        (void)ridgeline::io::import_onnx("model.onnx");
        FAIL() << "no error";
    } catch (const ridgeline::core::error& e) {
        EXPECT_EQ(std::string(e.what()).rfind("model.onnx: this build has no ONNX support", 0), 0u) << e.what();
    }
}
