// A client: its id and its slices of the shared training pool (index lists, never copies of data).
#pragma once
#include "core/types.hpp"

namespace fedsilo {

struct ClientData {
  int id = 0;
  IndexList train, val, test;    // indices into DataBundle::train (test: into ::test when testFromTestSet)
  bool testFromTestSet = false;  // natural partitions with their own test files (LEAF, Synthetic)
  Index numTrain() const { return static_cast<Index>(train.size()); }
};

}  // namespace fedsilo
