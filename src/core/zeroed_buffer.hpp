// A zero-filled array whose pages are mapped when first written, not when it is allocated.
//
// std::vector::assign(n, 0) writes every zero itself, so a workspace reserved for the largest batch
// costs its whole size in page faults and stores at once, even in a --dry-run that never trains (a
// CNN's activations: hundreds of MB). calloc gets large blocks as fresh anonymous pages, which the
// kernel gives out zeroed, and glibc's calloc does not clear those again (it clears only heap memory
// that was in use before); so the pages of a ZeroedBuffer cost nothing until a pass writes them. The
// allocation itself still happens here, once (the "no allocation after reserve()" rule holds), and
// the size is still checked beforehand by allocateOrFail (core/memory.hpp) from the computed bytes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>

namespace fedsilo {

template <typename T>
class ZeroedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "ZeroedBuffer holds plain values whose zero is all bits zero");

 public:
  // Eigen's maximum alignment (64 bytes with AVX-512), as AlignedVector (core/types.hpp): the same
  // summation order wherever the block lands.
  static constexpr std::size_t kAlign = 64;

  ZeroedBuffer() = default;
  ZeroedBuffer(const ZeroedBuffer&) = delete;
  ZeroedBuffer& operator=(const ZeroedBuffer&) = delete;
  ZeroedBuffer(ZeroedBuffer&& o) noexcept { swap(o); }
  ZeroedBuffer& operator=(ZeroedBuffer&& o) noexcept {
    ZeroedBuffer(std::move(o)).swap(*this);
    return *this;
  }
  ~ZeroedBuffer() { std::free(block_); }

  // Replaces the contents by n zeros (the old block is freed first, so the two are never held at
  // once). Throws std::bad_alloc when the memory cannot be had.
  void assignZeros(std::size_t n) {
    ZeroedBuffer().swap(*this);
    if (n == 0) return;
    if (n > (SIZE_MAX - kAlign) / sizeof(T)) throw std::bad_alloc();
    void* block = std::calloc(1, n * sizeof(T) + kAlign);
    if (block == nullptr) throw std::bad_alloc();
    const std::uintptr_t at = (reinterpret_cast<std::uintptr_t>(block) + kAlign - 1) / kAlign * kAlign;
    block_ = block;
    data_ = reinterpret_cast<T*>(at);
    size_ = n;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }

  void swap(ZeroedBuffer& o) noexcept {
    std::swap(block_, o.block_);
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
  }

 private:
  void* block_ = nullptr;  // what calloc returned: data_ is its first kAlign-aligned address
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace fedsilo
