#pragma once
// Scratch folders for tests that leave nothing behind: one folder per test process, made with mkdtemp under
// the temporary directory ($TMPDIR, which ctest points into the build tree) and removed with everything in
// it when the process exits; tests make their own sub-folders in it. The ctest check
// `suite.leaves_no_files` fails when a test left anything in $TMPDIR.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace ridgeline::test {

namespace detail {
class scratch_root {
public:
    scratch_root() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "ridgeline-test-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
        path_ = tmpl;
        owner_ = ::getpid();
    }
    ~scratch_root() {
        if (::getpid() != owner_) return;  // a forked child must not remove its parent's folder
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    scratch_root(const scratch_root&) = delete;
    scratch_root& operator=(const scratch_root&) = delete;
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
    pid_t owner_ = 0;
};
}  // namespace detail

/// This process's scratch folder (created on first use, removed at exit).
inline const std::filesystem::path& scratch_dir() {
    static const detail::scratch_root root;
    return root.path();
}

/// A fresh, empty sub-folder `name` of scratch_dir().
inline std::filesystem::path fresh_scratch_dir(const std::string& name) {
    const std::filesystem::path d = scratch_dir() / name;
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

}  // namespace ridgeline::test
