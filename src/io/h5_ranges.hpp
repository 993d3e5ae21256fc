// [start, start + count) ranges of rows (or columns) of an HDF5 dataset, merged when adjacent: what
// one rank reads or writes of a per-client dataset, whose rows its clients own in any pattern.
#pragma once
#include <hdf5.h>

#include <utility>
#include <vector>

#include "comm/placement.hpp"
#include "core/h5_handle.hpp"

namespace fedsilo {

struct Ranges {
  std::vector<std::pair<hsize_t, hsize_t>> r;

  void add(hsize_t start, hsize_t count) {
    if (count == 0) return;
    if (!r.empty() && r.back().first + r.back().second == start) r.back().second += count;
    else r.emplace_back(start, count);
  }
  // The rows of the clients `rank` hosts.
  static Ranges ofClients(const Placement& placement, int rank) {
    Ranges ranges;
    for (int k : placement.clients(rank)) ranges.add(static_cast<hsize_t>(k), 1);
    return ranges;
  }

  // Selects the ranges as rows of `space` (rank 1, or rank 2 with full rows of `width`), or nothing.
  void selectRows(hid_t space, hsize_t width) const {
    select(space, [&](std::pair<hsize_t, hsize_t> range, hsize_t* start, hsize_t* count) {
      start[0] = range.first, start[1] = 0, count[0] = range.second, count[1] = width;
    });
  }
  // Selects the ranges as columns of row `row` of a rank-2 `space`, or nothing.
  void selectColumns(hid_t space, hsize_t row) const {
    select(space, [&](std::pair<hsize_t, hsize_t> range, hsize_t* start, hsize_t* count) {
      start[0] = row, start[1] = range.first, count[0] = 1, count[1] = range.second;
    });
  }

 private:
  template <class Block>
  void select(hid_t space, const Block& block) const {
    if (r.empty()) {
      H5Sselect_none(space);
      return;
    }
    for (std::size_t i = 0; i < r.size(); ++i) {
      hsize_t start[2], count[2];
      block(r[i], start, count);
      h5::check(H5Sselect_hyperslab(space, i == 0 ? H5S_SELECT_SET : H5S_SELECT_OR, start, nullptr, count, nullptr),
                "select rows");
    }
  }
};

}  // namespace fedsilo
