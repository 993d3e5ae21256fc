#include "nn/first_token.hpp"

#include "core/error.hpp"

namespace fedsilo {

template <typename T>
FirstTokenT<T>::FirstTokenT(int dim, int seqLen) : dim_(dim), seqLen_(seqLen) {
  if (dim <= 0 || seqLen <= 0)
    throw ConfigError(fmt("first token: dim ", dim, ", sequence length ", seqLen, " must be positive"));
}

template class FirstTokenT<float>;
template class FirstTokenT<double>;

}  // namespace fedsilo
