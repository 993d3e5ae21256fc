// What the convolution tests (conv2d_test.cpp, bf16_conv_test.cpp) share: a layer's geometry, and the
// convolution by its definition, one multiply-add at a time in long double, with the sum of |terms| of
// every element (the scale of its rounding error).
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

namespace fedsilo::test {

struct Geometry {
  int inC, h, w, outC, k, stride, pad;
  int oh() const { return (h + 2 * pad - k) / stride + 1; }
  int ow() const { return (w + 2 * pad - k) / stride + 1; }
  std::size_t inSize() const { return static_cast<std::size_t>(inC) * h * w; }
  std::size_t outSize() const { return static_cast<std::size_t>(outC) * oh() * ow(); }
  std::size_t weights() const { return static_cast<std::size_t>(outC) * inC * k * k; }
};

// y = conv(x, w) + b and, for dL/dy = dy (no activation), dw, db, dx; each with its sum of |terms| (S).
struct ConvReference {
  std::vector<long double> y, dw, db, dx, ySum, dwSum, dbSum, dxSum;
};

// params: the weight [outC][inC][k][k], then the bias [outC]; x and dy: `batch` samples each.
template <typename T>
ConvReference referenceConv(const Geometry& g, const std::vector<T>& params, const std::vector<T>& x,
                            const std::vector<T>& dy, int batch) {
  const int OH = g.oh(), OW = g.ow();
  const std::size_t in = g.inSize(), out = g.outSize(), nw = g.weights();
  auto zeros = [](std::size_t n) { return std::vector<long double>(n, 0.0L); };
  ConvReference r{zeros(out * batch), zeros(nw), zeros(g.outC), zeros(in * batch),
                  zeros(out * batch), zeros(nw), zeros(g.outC), zeros(in * batch)};
  for (int b = 0; b < batch; ++b)
    for (int o = 0; o < g.outC; ++o)
      for (int i = 0; i < OH; ++i)
        for (int j = 0; j < OW; ++j) {
          const std::size_t yi = b * out + (static_cast<std::size_t>(o) * OH + i) * OW + j;
          long double s = params[nw + o], a = std::fabs(static_cast<long double>(params[nw + o]));
          const long double gy = dy[yi];
          r.db[o] += gy;
          r.dbSum[o] += std::fabs(gy);
          for (int c = 0; c < g.inC; ++c)
            for (int kh = 0; kh < g.k; ++kh)
              for (int kw = 0; kw < g.k; ++kw) {
                const int ih = i * g.stride + kh - g.pad, iw = j * g.stride + kw - g.pad;
                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
                const std::size_t xi = b * in + (static_cast<std::size_t>(c) * g.h + ih) * g.w + iw;
                const std::size_t wi = ((static_cast<std::size_t>(o) * g.inC + c) * g.k + kh) * g.k + kw;
                const long double wv = params[wi], xv = x[xi];
                s += wv * xv;
                a += std::fabs(wv * xv);
                r.dw[wi] += gy * xv;
                r.dwSum[wi] += std::fabs(gy * xv);
                r.dx[xi] += gy * wv;
                r.dxSum[xi] += std::fabs(gy * wv);
              }
          r.y[yi] = s;
          r.ySum[yi] = a;
        }
  return r;
}

}  // namespace fedsilo::test
