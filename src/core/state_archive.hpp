// Checkpoint archive: one symmetric interface for saving and restoring state (like a Boost
// archive): the same code path names every array, and the archive either stores it or fills it.
// Implemented by io/Checkpoint over parallel HDF5. Every call is collective (same names, same order
// on every rank).
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

namespace fedsilo {

class StateArchive {
 public:
  virtual ~StateArchive() = default;
  virtual bool saving() const = 0;
  // Replicated arrays (identical on every rank; rank 0's copy is stored).
  virtual void floats(const std::string& name, std::vector<float>& v) = 0;
  virtual void doubles(const std::string& name, std::vector<double>& v) = 0;
  // Per-client arrays of this rank's clients (client id -> values). On load the map is filled with
  // exactly the entries that were saved for this rank's clients.
  virtual void clientFloats(const std::string& name, std::unordered_map<int, std::vector<float>>& perClient) = 0;
  virtual void clientDoubles(const std::string& name, std::unordered_map<int, std::vector<double>>& perClient) = 0;
};

}  // namespace fedsilo
