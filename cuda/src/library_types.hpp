#pragma once
// The libraries' enum values for ridgeline's data types (the names are in translate.hpp's precision_of;
// tests/cuda/translate_test.cpp checks that both agree).

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>
#include <library_types.h>

#include <string>

#include "ridgeline/core/dtype.hpp"

namespace ridgeline::cuda {

/// Storage type of activations and weights: fp32 and tf32 CUDA_R_32F, fp16 CUDA_R_16F, bf16 CUDA_R_16BF.
inline cudaDataType_t storage_type(core::dtype dt) {
    switch (dt) {
        case core::dtype::fp32:
        case core::dtype::tf32: return CUDA_R_32F;
        case core::dtype::fp16: return CUDA_R_16F;
        case core::dtype::bf16: return CUDA_R_16BF;
    }
    return CUDA_R_32F;
}

/// cuBLAS compute type: fp32 accumulation everywhere; TF32 tensor cores only for tf32. The scale type
/// (alpha, beta) is CUDA_R_32F for all four.
inline cublasComputeType_t compute_type(core::dtype dt) {
    return dt == core::dtype::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

inline cudnnDataType_t cudnn_type(core::dtype dt) {
    switch (dt) {
        case core::dtype::fp32:
        case core::dtype::tf32: return CUDNN_DATA_FLOAT;
        case core::dtype::fp16: return CUDNN_DATA_HALF;
        case core::dtype::bf16: return CUDNN_DATA_BFLOAT16;
    }
    return CUDNN_DATA_FLOAT;
}

/// cuDNN math type asked for: FMA only for fp32 (no TF32), tensor ops otherwise. The convolution's compute
/// type is CUDNN_DATA_FLOAT in every case (cuDNN's PSEUDO_HALF / PSEUDO_BFLOAT16 configurations for the
/// 16-bit types: fp32 accumulation, as cuBLAS above).
inline cudnnMathType_t cudnn_math(core::dtype dt) {
    return dt == core::dtype::fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
}

inline std::string cudnn_math_name(cudnnMathType_t m) {
    switch (m) {
        case CUDNN_DEFAULT_MATH: return "CUDNN_DEFAULT_MATH";
        case CUDNN_TENSOR_OP_MATH: return "CUDNN_TENSOR_OP_MATH";
        case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION";
        case CUDNN_FMA_MATH: return "CUDNN_FMA_MATH";
    }
    return "cudnnMathType " + std::to_string(static_cast<int>(m));
}

inline std::string cublas_compute_name(cublasComputeType_t c) {
    switch (c) {
        case CUBLAS_COMPUTE_32F: return "CUBLAS_COMPUTE_32F";
        case CUBLAS_COMPUTE_32F_FAST_TF32: return "CUBLAS_COMPUTE_32F_FAST_TF32";
        case CUBLAS_COMPUTE_32F_FAST_16F: return "CUBLAS_COMPUTE_32F_FAST_16F";
        case CUBLAS_COMPUTE_32F_FAST_16BF: return "CUBLAS_COMPUTE_32F_FAST_16BF";
        default: break;
    }
    return "cublasComputeType " + std::to_string(static_cast<int>(c));
}

inline std::string storage_type_name(cudaDataType_t t) {
    switch (t) {
        case CUDA_R_32F: return "CUDA_R_32F";
        case CUDA_R_16F: return "CUDA_R_16F";
        case CUDA_R_16BF: return "CUDA_R_16BF";
        default: break;
    }
    return "cudaDataType " + std::to_string(static_cast<int>(t));
}

}  // namespace ridgeline::cuda
