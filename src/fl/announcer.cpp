#include "fl/announcer.hpp"

namespace fedsilo {

namespace {
class SilentAnnouncer final : public Announcer {
 public:
  void decision(const std::string&) override {}
  void warning(const std::string&) override {}
  void rankWarning(const std::string&) override {}
  void startPhase(int, RoundPhase, const PhaseSize&, const PhaseSize&) override {}
  void clientDone(std::int64_t) override {}
};
}  // namespace

Announcer& silentAnnouncer() {
  static SilentAnnouncer silent;
  return silent;
}

}  // namespace fedsilo
