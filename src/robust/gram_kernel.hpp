// The lower triangle of the Gram matrix Y Y^T of K float rows, added into doubles: the O(K^2 n) part
// of Krum's pairwise distances (robust/pairwise_distances.hpp). Register tiles of rows (5 x 5 with 32
// vector registers, 3 x 3 with 16) run over the columns in float packets of this build's widest
// vector (Eigen's packet: 16 lanes with AVX-512, 8 with AVX, 4 with SSE), one fused multiply-add per
// product where the build has FMA. Each lane of each entry is one chain of at most kGramChain
// multiply-adds; at the end of a call the lanes are added in float (Eigen's fixed reduction tree) and
// the sum is added to the double entry. Entries of the upper triangle are never computed, except
// within the tiles on the diagonal.
//
// Precision: a product's contribution is rounded at most kGramFloatRoundings times in float (its
// chain, its own rounding where the build has no FMA, the lane tree of at most 16 lanes), so each
// entry a call adds errs by at most gamma(kGramFloatRoundings) * sum_l |y_il y_jl| (Higham, "Accuracy
// and Stability of Numerical Algorithms", 2nd ed., section 3.1), gamma(m) = m u / (1 - m u), u = 2^-24.
//
// Deterministic: the same rows give the same bits wherever they sit in memory and whichever process
// computes them, in one build; builds with other packet widths or without FMA group the float sums
// otherwise (other bits, the same bound).
#pragma once
#include <cstddef>

namespace fedsilo {

// Most multiply-adds in one lane's float chain: a call takes at most kGramChain * gramLanes() columns.
constexpr std::size_t kGramChain = 32;
// Most float roundings of one product's contribution: its chain, its product, a tree of 16 lanes.
constexpr int kGramFloatRoundings = static_cast<int>(kGramChain) + 1 + 4;

// Float lanes per packet in this build (16, 8 or 4).
std::size_t gramLanes();

// Most columns addLowerGram takes in one call.
inline std::size_t gramMaxColumns() { return kGramChain * gramLanes(); }

// `width` rounded up to whole packets: how far each row must be readable (the extra floats zero).
std::size_t gramPaddedWidth(std::size_t width);

// packed[i (i + 1) / 2 + j] += sum_l y_il y_jl for every j <= i < K, over the columns l < width of the
// rows y_k = rows + k * stride. Needs width <= gramMaxColumns(), stride >= gramPaddedWidth(width) and
// the floats of each row from width to gramPaddedWidth(width) zero.
void addLowerGram(const float* rows, int K, std::size_t stride, std::size_t width, double* packed);

}  // namespace fedsilo
