#pragma once
// Tensor shapes. Activations of 2-D layers are NCHW (batch, channels, height, width), row-major,
// as in PyTorch; dimension 0 is always the batch.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace ridgeline::core {

class shape {
public:
    shape() = default;
    shape(std::initializer_list<std::int64_t> dims) : dims_(dims) {}
    explicit shape(std::vector<std::int64_t> dims) : dims_(std::move(dims)) {}

    [[nodiscard]] std::size_t rank() const { return dims_.size(); }
    [[nodiscard]] const std::vector<std::int64_t>& dims() const { return dims_; }
    [[nodiscard]] std::int64_t operator[](std::size_t i) const { return dims_.at(i); }
    std::int64_t& operator[](std::size_t i) { return dims_.at(i); }

    /// Dimension by index, negative counts from the end (-1 is the last), as in PyTorch.
    /// Throws invalid_layer when out of range.
    [[nodiscard]] std::int64_t at(std::int64_t dim) const;

    /// Number of elements (product of dims; 1 for rank 0). Overflow-checked: throws overflow_error.
    [[nodiscard]] std::int64_t numel() const;

    /// "1x3x224x224"; "scalar" for rank 0.
    [[nodiscard]] std::string to_string() const;

    bool operator==(const shape&) const = default;

private:
    std::vector<std::int64_t> dims_;
};

/// The most dimensions a tensor may have: above any real network (conv3d is 5-D, attention reshapes
/// 6-D; oneDNN takes 12, cuDNN 8), and a bound on the work a hostile shape can cause.
inline constexpr std::size_t max_rank = 16;

/// Parses "1x3x224x224" (also "1,3,224,224" and "[1, 3, 224, 224]"; one kind of separator per shape).
/// Every dimension must be a positive integer, at most max_rank of them; throws parse_error naming the
/// bad part, e.g.
///   invalid shape "1x0x4": dimension 2 is 0, every dimension must be >= 1
shape parse_shape(std::string_view text);

/// Normalises a possibly negative dimension index against `rank`; throws invalid_layer (with `where`
/// as prefix) when out of range.
std::size_t normalize_dim(std::int64_t dim, std::size_t rank, std::string_view where);

/// Strides of a row-major tensor of dims `in` read as dims `out` under NumPy broadcasting: dims aligned on the
/// right, 0 where `in` has size 1 or no dim. `unit` is the stride of in's last dim (1 for elements; a whole
/// matrix's size for the batch dims of a batched matmul).
std::vector<std::int64_t> broadcast_strides(const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out,
                                            std::int64_t unit = 1);

}  // namespace ridgeline::core
