#pragma once
// Test memory that ends where an inaccessible page starts, so that a vectorised loop reading one element past its
// row faults (the masked loads' fault suppression is what the tests check). For the cpu tests of ridgeline's own
// loops (tests/cpu/dnnl_window_gather_test.cpp, dnnl_bf16_rows_test.cpp).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace ridgeline::test {

/// n elements that end where an inaccessible page starts (mmap, mprotect): reading past them faults.
template <class T>
class guarded {
public:
    explicit guarded(std::int64_t n) : page_(sysconf(_SC_PAGESIZE)) {
        const auto bytes = static_cast<std::size_t>(n) * sizeof(T);
        pages_ = (bytes + page_ - 1) / page_ + 1;
        base_ = mmap(nullptr, pages_ * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base_ == MAP_FAILED) throw std::runtime_error("mmap failed");
        char* guard = static_cast<char*>(base_) + (pages_ - 1) * page_;
        mprotect(guard, page_, PROT_NONE);
        data_ = reinterpret_cast<T*>(guard - bytes);
    }
    guarded(const guarded&) = delete;
    guarded& operator=(const guarded&) = delete;
    ~guarded() { munmap(base_, pages_ * page_); }
    T* data() { return data_; }

private:
    std::size_t page_, pages_ = 0;
    void* base_ = nullptr;
    T* data_ = nullptr;
};

}  // namespace ridgeline::test
