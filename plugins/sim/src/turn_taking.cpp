#include "turn_taking.h"

namespace pypto::sim {

bool TurnTaking::Take(std::unique_lock<std::mutex>& lock, bool& taken, bool& unchecked) {
  if (!unchecked && !cv_.wait_for(lock, kTurnWait, [&] { return unchecked || !taken; })) {
    unchecked = true;  // the member holding the turn waits for one of its group
    cv_.notify_all();
  }
  if (unchecked) return false;
  taken = true;
  return true;
}

void TurnTaking::Give(bool& taken) {
  taken = false;
  cv_.notify_all();
}

}  // namespace pypto::sim
