// Basic numeric types shared by every module.
#pragma once
#include <Eigen/Core>
#include <Eigen/StdVector>
#include <cstdint>
#include <limits>
#include <vector>

namespace fedsilo {

using Index = std::int64_t;

// The value of a figure that was not computed: a round that was not evaluated, a client without a
// validation split, an accuracy of an empty set (HDF5 and the analysis read it as missing).
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Activations are column-major: one column per sample (features x batch).
using Mat = Eigen::MatrixXf;
using MatMap = Eigen::Map<Mat>;
using CMatMap = Eigen::Map<const Mat>;
using Vec = Eigen::VectorXf;
using VecMap = Eigen::Map<Vec>;
using CVecMap = Eigen::Map<const Vec>;
// Row-major view, used for weights stored in PyTorch order [out][in].
using MatRM = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatRMMap = Eigen::Map<MatRM>;
using CMatRMMap = Eigen::Map<const MatRM>;

using IndexList = std::vector<Index>;

// Buffers that Eigen reads are aligned to Eigen's maximum alignment (64 bytes with AVX-512).
// Besides speed this is about reproducibility: Eigen's vectorised reductions peel an unaligned
// head, so the summation order (and the last bits of a sum) would depend on where malloc put the
// buffer, and two processes could disagree.
template <typename T>
using AlignedVector = std::vector<T, Eigen::aligned_allocator<T>>;

// Per-sample input shape: channels x height x width (tabular data: c = features, h = w = 1;
// token sequences: c = 1, h = 1, w = sequence length).
struct Shape {
  int c = 1, h = 1, w = 1;
  int size() const { return c * h * w; }
  bool operator==(const Shape& o) const { return c == o.c && h == o.h && w == o.w; }
};

}  // namespace fedsilo
