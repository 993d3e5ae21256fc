// Adam, AdamW and AMSGrad's element-wise update (Optimizer::adamStep; optim/optimizer.hpp has the
// formulas). A file of its own because of its flags (CMakeLists.txt): -fno-math-errno lets the compiler
// turn std::sqrt into the vector square-root instruction (vsqrtps / sqrtps), which IEEE 754 requires to
// be correctly rounded, like the scalar one the loop's remainder runs; -ffp-contract=off keeps every
// +, -, * and / rounded on its own, where the native build could fuse pairs into multiply-adds that the
// portable one (x86-64-v2, no FMA) cannot. So each element is the same chain of correctly rounded
// operations wherever it sits in its tensor (vector body or remainder, any alignment) and in every build.
// Eigen's array sqrt is not used: under EIGEN_FAST_MATH (its default) a packet's root is an rsqrt estimate
// and a Newton step, up to 3 units in the last place off the correctly rounded root and specific to the
// CPU's rsqrt table, while the scalar remainder gets std::sqrt.
#include <cmath>

#include "optim/optimizer.hpp"

namespace fedsilo {

namespace {

struct AdamCoefficients {
  float b1, oneMinusB1, b2, oneMinusB2;
  float stepSize;         // lr / (1 - beta1^t)
  float correction2Sqrt;  // sqrt(1 - beta2^t)
  float eps;
  float l2;     // adam: weight decay added to the gradient; adamw: 0
  float decay;  // adamw: 1 - lr wd applied to p first; adam: 1
};

// One loop per variant, so that the compiler vectorises each without a branch per element.
template <bool kL2, bool kDecoupled, bool kAmsgrad>
void adamLoop(const AdamCoefficients& c, float* __restrict p, const float* __restrict g, float* __restrict m,
              float* __restrict v, float* __restrict vmax, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float gi = g[i];
    if (kL2) gi = gi + c.l2 * p[i];  // the parameters before this step
    if (kDecoupled) p[i] *= c.decay;
    m[i] = m[i] * c.b1 + c.oneMinusB1 * gi;
    v[i] = v[i] * c.b2 + c.oneMinusB2 * gi * gi;
    float second = v[i];
    if (kAmsgrad) {
      second = vmax[i] < second ? second : vmax[i];
      vmax[i] = second;
    }
    p[i] -= c.stepSize * (m[i] / (std::sqrt(second) / c.correction2Sqrt + c.eps));
  }
}

template <bool kL2, bool kDecoupled>
void adamLoop(const AdamCoefficients& c, float* p, const float* g, float* m, float* v, float* vmax, std::size_t n) {
  if (vmax)
    adamLoop<kL2, kDecoupled, true>(c, p, g, m, v, vmax, n);
  else
    adamLoop<kL2, kDecoupled, false>(c, p, g, m, v, vmax, n);
}

}  // namespace

void Optimizer::adamStep(float* p, const float* g, float* m, float* v, float* vmax, std::size_t n,
                         std::int64_t t) const {
  const bool decoupled = s_.optimizer == OptimizerKind::AdamW;
  const double steps = static_cast<double>(t);
  AdamCoefficients c;
  c.b1 = static_cast<float>(s_.beta1);
  c.oneMinusB1 = static_cast<float>(1.0 - s_.beta1);
  c.b2 = static_cast<float>(s_.beta2);
  c.oneMinusB2 = static_cast<float>(1.0 - s_.beta2);
  c.stepSize = static_cast<float>(s_.lr / (1.0 - std::pow(s_.beta1, steps)));
  c.correction2Sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(s_.beta2, steps)));
  c.eps = static_cast<float>(s_.eps);
  c.l2 = decoupled ? 0.0f : static_cast<float>(s_.weightDecay);
  c.decay = static_cast<float>(1.0 - s_.lr * s_.weightDecay);
  if (c.l2 != 0.0f)
    adamLoop<true, false>(c, p, g, m, v, vmax, n);
  else if (decoupled)
    adamLoop<false, true>(c, p, g, m, v, vmax, n);
  else
    adamLoop<false, false>(c, p, g, m, v, vmax, n);
}

}  // namespace fedsilo
