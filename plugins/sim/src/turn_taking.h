// Turns for the race detectors (lane_race.h, block_race.h): what a hand-written kernel writes is seen
// as what changed in its tensors while it ran, which holds only while no other member of its group (the
// lanes of a block, the blocks of a launch) runs, so watched members take turns. A member that waits
// kTurnWait for its turn means the member holding it waits for it, or for another member (a home-made
// barrier, a cross-core flag raised only after the waiting one ran): the group then goes unchecked, and
// its members run side by side, as they must to get anywhere.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace pypto::sim {

class TurnTaking {
 public:
  static constexpr std::chrono::milliseconds kTurnWait{250};

  // With `lock` held (the caller's mutex, which guards both flags): waits for `taken` to be false and
  // sets it, returning true, the member being watched; or returns false, unwatched, when the group is
  // `unchecked` or becomes so after waiting kTurnWait in vain.
  bool Take(std::unique_lock<std::mutex>& lock, bool& taken, bool& unchecked);
  // With the lock held: a watched member's turn is over.
  void Give(bool& taken);

 private:
  std::condition_variable cv_;  // a turn ended, or a group went unchecked
};

}  // namespace pypto::sim
