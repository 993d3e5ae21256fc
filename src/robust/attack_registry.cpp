// The table of attacks: one explicit list (no self-registering statics).
#include "robust/attack.hpp"

namespace fedsilo {

const std::vector<AttackEntry>& attackRegistry() {
  static const std::vector<AttackEntry> table = {
      {AttackKind::None, nullptr},           {AttackKind::LabelFlip, nullptr},  // data poisoning: the trainer flips the
                                                                                // labels (flipLabel)
      {AttackKind::SignFlip, &signFlipRows}, {AttackKind::Scale, &scaleRows},  {AttackKind::Gaussian, &gaussianRows},
      {AttackKind::Alie, &alieRows},         {AttackKind::Ipm, &ipmRows},
  };
  return table;
}

void applyAttack(const AttackConfig& cfg, const AttackRound& r, UpdateMatrix& u) {
  if (!attacksInRound(cfg, r.round)) return;
  for (const AttackEntry& e : attackRegistry())
    if (e.kind == cfg.kind && e.replaceRows) e.replaceRows(cfg, r, u);
}

}  // namespace fedsilo
