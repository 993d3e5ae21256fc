// A two-block layout for the byte and clock tests: fc1 (100 floats) and fc2 (10 floats after it).
#pragma once
#include <vector>

#include "nn/model.hpp"

namespace fedsilo::test {

inline std::vector<LayerBlock> twoBlocks() {
  LayerBlock a, b;
  a.name = "fc1";
  a.size = 100;
  b.name = "fc2";
  b.offset = 100;
  b.size = 10;
  return {a, b};
}

}  // namespace fedsilo::test
