#include "nn/onednn_conv.hpp"

#ifdef FEDSILO_ONEDNN
#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "core/memory.hpp"
#include "core/types.hpp"

namespace fedsilo {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Args = std::unordered_map<int, memory>;

memory::desc plainDesc(const memory::dims& dims, Tag tag) { return memory::desc(dims, memory::data_type::f32, tag); }

// One tensor as fedsilo holds it (`user`: a view whose data handle is set per call) and in the layout a
// primitive asked for (`mem`: its own buffer, or `user` itself when the layouts agree), with the
// reorders between the two.
struct Tensor {
  memory user, mem;
  dnnl::reorder toMem, toUser;
  bool same = true;

  Tensor() = default;
  Tensor(const dnnl::engine& eng, const memory::desc& md, const memory::desc& userMd) {
    user = memory(userMd, eng, DNNL_MEMORY_NONE);
    same = md == userMd;
    mem = same ? user : memory(md, eng);
    if (!same) {
      toMem = dnnl::reorder(user, mem);
      toUser = dnnl::reorder(mem, user);
    }
  }
  // Points the user view at `data` and brings it into the primitive's layout.
  void in(dnnl::stream& s, const float* data) {
    user.set_data_handle(const_cast<float*>(data));
    if (!same) toMem.execute(s, user, mem);
  }
  // Before a primitive writes this tensor: its result goes to `data` in fedsilo's layout (directly when
  // the layouts agree, else through out()).
  void bindOut(float* data) { user.set_data_handle(data); }
  void out(dnnl::stream& s) {
    if (!same) toUser.execute(s, mem, user);
  }
};

// Debian's oneDNN runs on OpenMP: one thread per rank, as every fedsilo kernel (set once per process).
void useOneThread() {
  static const bool done = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)done;
}

}  // namespace

struct OnednnConv::Impl {
  int inC, h, w, outC, k, stride, pad, oh, ow;
  Index inSize, outSize;
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  bool built = false;
  dnnl::convolution_forward fwd, fwdRelu;
  dnnl::convolution_backward_data bwdData;
  dnnl::convolution_backward_weights bwdWeights;
  // forward: x, W, bias, y; backward: x and dz in the weights primitive's layouts, dz and W in the data
  // primitive's, dx; a chunk's weight and bias gradients (diffWei, diffBias) and their sum over chunks
  Tensor src, wei, bias, dst, srcW, diffDstW, diffDst, weiD, diffSrc;
  memory scratch, diffWei, diffBias, sumWei, sumBias, dwUser;  // dwUser: a view of the caller's dW
  dnnl::reorder sumToDw;
  // the last chunk's zero-padded samples (x, y, dx) and a chunk's dL/d(pre-activation)
  AlignedVector<float> xPad, yPad, dxPad, dzChunk;

  Impl(int inC_, int h_, int w_, int outC_, int k_, int stride_, int pad_)
      : inC(inC_), h(h_), w(w_), outC(outC_), k(k_), stride(stride_), pad(pad_) {
    oh = (h + 2 * pad - k) / stride + 1;
    ow = (w + 2 * pad - k) / stride + 1;
    inSize = static_cast<Index>(inC) * h * w;
    outSize = static_cast<Index>(outC) * oh * ow;
  }
  void build();
  void forwardChunk(const float* x, float* y, bool relu);
  void backwardChunk(const float* x, const float* dz, float* dx, bool first);
  void writeWeightGradient(float* dw);
};

void OnednnConv::Impl::build() {
  const memory::dims srcDims{kChunk, inC, h, w}, weiDims{outC, inC, k, k}, biasDims{outC},
      dstDims{kChunk, outC, oh, ow}, strides{stride, stride}, padding{pad, pad};
  auto any = [](const memory::dims& dims) { return plainDesc(dims, Tag::any); };
  const auto algo = dnnl::algorithm::convolution_direct;
  dnnl::primitive_attr attr, attrRelu;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attrRelu.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops relu;
  relu.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  attrRelu.set_post_ops(relu);
  const dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training, algo, any(srcDims), any(weiDims),
                                           plainDesc(biasDims, Tag::x), any(dstDims), strides, padding, padding);
  const dnnl::convolution_forward::primitive_desc fpd(fd, attr, eng), fpdRelu(fd, attrRelu, eng);
  const dnnl::convolution_backward_data::primitive_desc dpd(
      dnnl::convolution_backward_data::desc(algo, any(srcDims), any(weiDims), any(dstDims), strides, padding, padding),
      attr, eng, fpd);
  const dnnl::convolution_backward_weights::primitive_desc wpd(
      dnnl::convolution_backward_weights::desc(algo, any(srcDims), any(weiDims), plainDesc(biasDims, Tag::x),
                                               any(dstDims), strides, padding, padding),
      attr, eng, fpd);
  // the ReLU variant must agree on layouts with the plain one: both write `dst`, read `src` and `wei`
  FEDSILO_ASSERT(fpdRelu.dst_desc() == fpd.dst_desc() && fpdRelu.src_desc() == fpd.src_desc() &&
                     fpdRelu.weights_desc() == fpd.weights_desc(),
                 "oneDNN chose other layouts for the fused-ReLU convolution");
  const memory::desc xMd = plainDesc(srcDims, Tag::nchw), yMd = plainDesc(dstDims, Tag::nchw),
                     wMd = plainDesc(weiDims, Tag::oihw), bMd = plainDesc(biasDims, Tag::x);
  src = Tensor(eng, fpd.src_desc(), xMd);
  wei = Tensor(eng, fpd.weights_desc(), wMd);
  bias = Tensor(eng, fpd.bias_desc(), bMd);
  dst = Tensor(eng, fpd.dst_desc(), yMd);
  srcW = Tensor(eng, wpd.src_desc(), xMd);
  diffDstW = Tensor(eng, wpd.diff_dst_desc(), yMd);
  diffDst = Tensor(eng, dpd.diff_dst_desc(), yMd);
  weiD = Tensor(eng, dpd.weights_desc(), wMd);
  diffSrc = Tensor(eng, dpd.diff_src_desc(), xMd);
  diffWei = memory(wpd.diff_weights_desc(), eng);
  diffBias = memory(wpd.diff_bias_desc(), eng);
  sumWei = memory(wpd.diff_weights_desc(), eng);
  sumBias = memory(wpd.diff_bias_desc(), eng);
  dwUser = memory(wMd, eng, DNNL_MEMORY_NONE);
  if (!(sumWei.get_desc() == wMd)) sumToDw = dnnl::reorder(sumWei, dwUser);
  std::size_t scratchBytes = 0;
  for (const auto& md :
       {fpd.scratchpad_desc(), fpdRelu.scratchpad_desc(), dpd.scratchpad_desc(), wpd.scratchpad_desc()})
    scratchBytes = std::max(scratchBytes, md.get_size());
  scratch = memory(plainDesc({static_cast<memory::dim>(scratchBytes / sizeof(float) + 1)}, Tag::x), eng);
  fwd = dnnl::convolution_forward(fpd);
  fwdRelu = dnnl::convolution_forward(fpdRelu);
  bwdData = dnnl::convolution_backward_data(dpd);
  bwdWeights = dnnl::convolution_backward_weights(wpd);
  xPad.assign(static_cast<std::size_t>(kChunk * inSize), 0.0f);
  yPad.assign(static_cast<std::size_t>(kChunk * outSize), 0.0f);
  dxPad.assign(static_cast<std::size_t>(kChunk * inSize), 0.0f);
  dzChunk.assign(static_cast<std::size_t>(kChunk * outSize), 0.0f);
  built = true;
}

// One full chunk of kChunk samples (x, y: fedsilo's layout), W already in `wei`.
void OnednnConv::Impl::forwardChunk(const float* x, float* y, bool relu) {
  src.in(strm, x);
  dst.bindOut(y);
  Args args{{DNNL_ARG_SRC, src.mem}, {DNNL_ARG_WEIGHTS, wei.mem}, {DNNL_ARG_BIAS, bias.mem},
            {DNNL_ARG_DST, dst.mem}, {DNNL_ARG_SCRATCHPAD, scratch}};
  (relu ? fwdRelu : fwd).execute(strm, args);
  dst.out(strm);
  strm.wait();
}

// One full chunk: dz = dL/d(pre-activation); the chunk's weight and bias gradients are written into
// (first) or added to sumWei / sumBias; dx (if not null) overwritten.
void OnednnConv::Impl::backwardChunk(const float* x, const float* dz, float* dx, bool first) {
  srcW.in(strm, x);
  diffDstW.in(strm, dz);
  Args wargs{{DNNL_ARG_SRC, srcW.mem},
             {DNNL_ARG_DIFF_DST, diffDstW.mem},
             {DNNL_ARG_DIFF_WEIGHTS, first ? sumWei : diffWei},
             {DNNL_ARG_DIFF_BIAS, first ? sumBias : diffBias},
             {DNNL_ARG_SCRATCHPAD, scratch}};
  bwdWeights.execute(strm, wargs);
  if (dx) {
    diffDst.in(strm, dz);
    diffSrc.bindOut(dx);
    Args dargs{{DNNL_ARG_DIFF_DST, diffDst.mem}, {DNNL_ARG_WEIGHTS, weiD.mem}, {DNNL_ARG_DIFF_SRC, diffSrc.mem},
               {DNNL_ARG_SCRATCHPAD, scratch}};
    bwdData.execute(strm, dargs);
    diffSrc.out(strm);
  }
  strm.wait();
  if (first) return;
  // in chunk order, element by element: the sum is the same whatever the rank count
  auto add = [](memory& sum, const memory& part) {
    float* s = static_cast<float*>(sum.get_data_handle());
    const float* p = static_cast<const float*>(part.get_data_handle());
    const std::size_t n = sum.get_desc().get_size() / sizeof(float);
    for (std::size_t i = 0; i < n; ++i) s[i] += p[i];
  };
  add(sumWei, diffWei);
  add(sumBias, diffBias);
}

void OnednnConv::Impl::writeWeightGradient(float* dw) {
  if (sumToDw) {
    dwUser.set_data_handle(dw);
    sumToDw.execute(strm, sumWei, dwUser);
    strm.wait();
  } else {
    std::memcpy(dw, sumWei.get_data_handle(), sumWei.get_desc().get_size());
  }
}

OnednnConv::OnednnConv(int inC, int h, int w, int outC, int k, int stride, int pad)
    : impl_(std::make_unique<Impl>(inC, h, w, outC, k, stride, pad)) {
  useOneThread();
}

OnednnConv::~OnednnConv() = default;

void OnednnConv::reserve(int maxBatch) {
  FEDSILO_ASSERT(maxBatch > 0);
  if (impl_->built) return;
  allocateOrFail(fmt("the oneDNN conv2d ", impl_->inC, "x", impl_->h, "x", impl_->w, " -> ", impl_->outC,
                     " primitives and buffers for chunks of ", kChunk, " samples"),
                 bytesOf<float>(static_cast<std::uint64_t>(kChunk) * 4 * (impl_->inSize + impl_->outSize)),
                 [&] { impl_->build(); });
}

void OnednnConv::forward(const float* w, const float* bias, const float* x, float* y, int batch, bool relu) {
  Impl& m = *impl_;
  FEDSILO_ASSERT(m.built, "OnednnConv::reserve must precede forward");
  m.wei.in(m.strm, w);
  m.bias.in(m.strm, bias);
  for (int b0 = 0; b0 < batch; b0 += kChunk) {
    const int nb = std::min(kChunk, batch - b0);
    const float* xc = x + b0 * m.inSize;
    if (nb == kChunk) {
      m.forwardChunk(xc, y + b0 * m.outSize, relu);
      continue;
    }
    std::copy(xc, xc + nb * m.inSize, m.xPad.begin());
    std::fill(m.xPad.begin() + nb * m.inSize, m.xPad.end(), 0.0f);
    m.forwardChunk(m.xPad.data(), m.yPad.data(), relu);
    std::copy(m.yPad.begin(), m.yPad.begin() + nb * m.outSize, y + b0 * m.outSize);
  }
}

void OnednnConv::backward(const float* w, float* dw, float* db, const float* x, const float* y, const float* dy,
                          float* dx, int batch, bool relu) {
  Impl& m = *impl_;
  FEDSILO_ASSERT(m.built, "OnednnConv::reserve must precede backward");
  if (dx) m.weiD.in(m.strm, w);
  for (int b0 = 0; b0 < batch; b0 += kChunk) {
    const int nb = std::min(kChunk, batch - b0);
    const Index inValues = nb * m.inSize, outValues = nb * m.outSize;
    const float* xc = x + b0 * m.inSize;
    const float* dyc = dy + b0 * m.outSize;
    float* dz = m.dzChunk.data();
    if (relu) {  // exactly ReluT::backward
      const float* yc = y + b0 * m.outSize;
      for (Index i = 0; i < outValues; ++i) dz[i] = yc[i] > 0.0f ? dyc[i] : 0.0f;
    } else if (nb == kChunk) {
      dz = const_cast<float*>(dyc);  // read only
    } else {
      std::copy(dyc, dyc + outValues, dz);
    }
    if (nb < kChunk) {  // zero samples: dz = 0 adds exact zeros to dW and db
      std::fill(m.dzChunk.begin() + outValues, m.dzChunk.end(), 0.0f);
      std::copy(xc, xc + inValues, m.xPad.begin());
      std::fill(m.xPad.begin() + inValues, m.xPad.end(), 0.0f);
      xc = m.xPad.data();
    }
    float* dxc = dx ? (nb == kChunk ? dx + b0 * m.inSize : m.dxPad.data()) : nullptr;
    m.backwardChunk(xc, dz, dxc, b0 == 0);
    if (dx && nb < kChunk) std::copy(m.dxPad.begin(), m.dxPad.begin() + inValues, dx + b0 * m.inSize);
  }
  m.writeWeightGradient(dw);
  std::memcpy(db, m.sumBias.get_data_handle(), static_cast<std::size_t>(m.outC) * sizeof(float));
}

}  // namespace fedsilo
#endif
