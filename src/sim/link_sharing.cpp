#include "sim/link_sharing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"

namespace fedsilo {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Uploads that have not finished yet, and what is left of each.
struct ActiveUploads {
  std::vector<std::size_t> ids;
  std::vector<double> left;  // bytes, by upload id
};

// The time until the first active upload finishes at `rates`, and which do finish then.
double nextCompletion(const ActiveUploads& a, const std::vector<double>& rates, std::vector<std::size_t>& finishing) {
  double best = kInf;
  finishing.clear();
  for (std::size_t j = 0; j < a.ids.size(); ++j) {
    const double dt = a.left[a.ids[j]] / rates[j];
    if (dt < best) {
      best = dt;
      finishing.assign(1, j);
    } else if (dt == best) {
      finishing.push_back(j);
    }
  }
  return best;
}

}  // namespace

std::vector<double> maxMinFairRates(const std::vector<double>& caps, double capacity) {
  std::vector<std::size_t> order(caps.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return caps[a] < caps[b]; });
  std::vector<double> rates(caps.size(), 0.0);
  double left = capacity;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const double share = left / static_cast<double>(order.size() - i);
    if (caps[order[i]] <= share) {  // limited by its own link: the rest goes to the others
      rates[order[i]] = caps[order[i]];
      left -= caps[order[i]];
      continue;
    }
    for (std::size_t j = i; j < order.size(); ++j) rates[order[j]] = share;
    break;
  }
  return rates;
}

std::vector<double> sharedLinkFinish(const std::vector<SharedUpload>& uploads, double capacityBytesPerSecond) {
  const std::size_t n = uploads.size();
  std::vector<double> finish(n, 0.0);
  for (const SharedUpload& u : uploads)
    FEDSILO_ASSERT(u.bytes >= 0.0 && u.capBytesPerSecond > 0.0 && std::isfinite(u.start), "bad upload");
  if (std::isinf(capacityBytesPerSecond)) {
    for (std::size_t i = 0; i < n; ++i)
      finish[i] = uploads[i].start +
                  (std::isinf(uploads[i].capBytesPerSecond) ? 0.0 : uploads[i].bytes / uploads[i].capBytesPerSecond);
    return finish;
  }
  // Arrivals in time order (ties: the order given).
  std::vector<std::size_t> arrivals(n);
  std::iota(arrivals.begin(), arrivals.end(), std::size_t{0});
  std::stable_sort(arrivals.begin(), arrivals.end(),
                   [&](std::size_t a, std::size_t b) { return uploads[a].start < uploads[b].start; });
  ActiveUploads active;
  active.left.resize(n);
  std::size_t next = 0;
  double t = n > 0 ? uploads[arrivals[0]].start : 0.0;
  std::vector<std::size_t> finishing;
  while (next < n || !active.ids.empty()) {
    for (; next < n && uploads[arrivals[next]].start <= t; ++next) {
      const std::size_t i = arrivals[next];
      if (uploads[i].bytes == 0.0) {
        finish[i] = uploads[i].start;
        continue;
      }
      active.ids.push_back(i);
      active.left[i] = uploads[i].bytes;
    }
    if (active.ids.empty()) {
      if (next < n) t = uploads[arrivals[next]].start;
      continue;
    }
    std::vector<double> caps;
    for (std::size_t i : active.ids) caps.push_back(uploads[i].capBytesPerSecond);
    const std::vector<double> rates = maxMinFairRates(caps, capacityBytesPerSecond);
    const double untilDone = nextCompletion(active, rates, finishing);
    const double untilArrival = next < n ? uploads[arrivals[next]].start - t : kInf;
    const double dt = std::min(untilDone, untilArrival);
    for (std::size_t j = 0; j < active.ids.size(); ++j) active.left[active.ids[j]] -= rates[j] * dt;
    t += dt;
    if (untilDone > untilArrival) continue;
    // The uploads that finish now leave exactly (their remainder is rounding only).
    std::vector<char> done(active.ids.size(), 0);
    for (std::size_t j : finishing) {
      finish[active.ids[j]] = t;
      done[j] = 1;
    }
    std::vector<std::size_t> still;
    for (std::size_t j = 0; j < active.ids.size(); ++j)
      if (!done[j]) still.push_back(active.ids[j]);
    active.ids.swap(still);
  }
  return finish;
}

}  // namespace fedsilo
