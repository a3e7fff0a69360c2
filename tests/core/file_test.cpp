// core/file.hpp: reading the files a user names, and writing reports atomically.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "../support/scratch.hpp"
#include "ridgeline/core/file.hpp"

using namespace ridgeline::core;

TEST(File, AtomicWriteReplacesWholeFileAndLeavesNoTemporary) {
    namespace fs = std::filesystem;
    const fs::path dir = ridgeline::test::fresh_scratch_dir("atomic-write");
    const std::string path = (dir / "out.json").string();
    write_file_atomic(path, "first version, long");
    write_file_atomic(path, "second");
    std::ifstream in(path);
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(content, "second");
    int files = 0;
    for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
    EXPECT_EQ(files, 1);  // no temporary left behind
    EXPECT_THROW(write_file_atomic((dir / "missing" / "x.json").string(), "x"), std::runtime_error);
}
