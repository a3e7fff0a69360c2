#include "check.hpp"

#include <cstdio>

#include "ridgeline/backend_api/backend.hpp"

namespace ridgeline::cuda::detail {

namespace {

/// The library's name and text of an error, or when it has none "<type> <code>" and `unknown`.
library_error named(const char* name, const char* text, const char* type, int code, const char* unknown) {
    library_error r;
    r.name = name ? name : type + (" " + std::to_string(code));
    r.text = text ? text : unknown;
    return r;
}

}  // namespace

library_error describe(cudaError_t e) {
    library_error r = named(cudaGetErrorName(e), cudaGetErrorString(e), "cudaError", static_cast<int>(e),
                            "unknown CUDA runtime error");
    if (e == cudaErrorMemoryAllocation) r.kind = error_kind::out_of_memory;
    return r;
}

library_error describe(cublasStatus_t s) {
    library_error r = named(cublasGetStatusName(s), cublasGetStatusString(s), "cublasStatus", static_cast<int>(s),
                            "unknown cuBLAS status");
    if (s == CUBLAS_STATUS_ALLOC_FAILED) r.kind = error_kind::out_of_memory;
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) r.kind = error_kind::unsupported;
    return r;
}

library_error describe(cudnnStatus_t s) {
    library_error r;
    const char* name = cudnnGetErrorString(s);  // cuDNN's "error string" is the status name
    r.name = name ? name : "cudnnStatus " + std::to_string(static_cast<int>(s));
    // cuDNN 9 keeps a message about the last failure of this thread (what was wrong with which parameter)
    char last[1024] = {0};
    cudnnGetLastErrorString(last, sizeof last);
    r.text = last[0] ? std::string(last) : "no further detail from cuDNN";
    const int code = static_cast<int>(s);
    if (code / 1000 == 3) r.kind = error_kind::unsupported;
    if (s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
        s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
        r.kind = error_kind::out_of_memory;
    return r;
}

std::string format_call_error(std::string_view call, std::string_view file, int line, const library_error& e) {
    // an absolute path of a file of this project: keep it from the module folder on ("cuda/src/x.cpp")
    std::string_view shown = file;
    for (std::string_view top : {"/cuda/src/", "/tests/"}) {
        const auto at = file.rfind(top);
        if (at != std::string_view::npos) {
            shown = file.substr(at + 1);
            break;
        }
    }
    std::string m;
    m.reserve(call.size() + shown.size() + e.name.size() + e.text.size() + 32);
    m.append(call).append(" failed at ").append(shown).append(":").append(std::to_string(line));
    m.append(": ").append(e.name);
    if (!e.text.empty() && e.text != e.name) m.append(": ").append(e.text);
    return m;
}

void throw_call_error(std::string_view call, std::string_view file, int line, const library_error& e) {
    std::string message = format_call_error(call, file, line, e);
    switch (e.kind) {
        case error_kind::out_of_memory: throw device_bad_alloc(std::move(message));
        case error_kind::unsupported: throw backend_api::unsupported(std::move(message));
        case error_kind::failure: break;
    }
    throw backend_api::backend_error(std::move(message));
}

void warn_call_error(std::string_view call, std::string_view file, int line, const library_error& e) noexcept {
    try {
        std::fprintf(stderr, "ridgeline: warning: %s\n", format_call_error(call, file, line, e).c_str());
    } catch (...) {
        std::fputs("ridgeline: warning: a CUDA call failed while releasing a resource\n", stderr);
    }
}

}  // namespace ridgeline::cuda::detail
