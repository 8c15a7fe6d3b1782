#include "pypto/runtime/run_interrupt.h"

#include <signal.h>

#include <atomic>
#include <mutex>

namespace pypto::rt {
namespace {

// Lock-free, so that the handler may set it.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

std::mutex g_mu;  // guards g_alive and the handler's installation
int g_alive = 0;
struct sigaction g_previous {};

void OnInterrupt(int signal, siginfo_t* info, void* context) {
  const bool again = g_interrupted.exchange(true);
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) g_previous.sa_sigaction(signal, info, context);
  } else if (g_previous.sa_handler == SIG_DFL) {
    // Nobody else listens: the first Ctrl-C stops the run, a second one ends the process as it would have.
    if (again) {
      ::signal(SIGINT, SIG_DFL);
      raise(SIGINT);
    }
  } else if (g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(signal);
  }
}

}  // namespace

InterruptibleRun::InterruptibleRun() {
  std::lock_guard lock(g_mu);
  if (g_alive++ > 0) return;
  struct sigaction current {};
  sigaction(SIGINT, nullptr, &current);
  g_previous = current;
  if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN) return;  // ignored: left so
  g_interrupted.store(false);
  struct sigaction action {};
  action.sa_sigaction = OnInterrupt;
  action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
}

InterruptibleRun::~InterruptibleRun() {
  std::lock_guard lock(g_mu);
  if (--g_alive > 0) return;
  if (!(g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_handler == SIG_IGN) return;
  sigaction(SIGINT, &g_previous, nullptr);
}

bool RunInterrupted() { return g_interrupted.load(std::memory_order_relaxed); }

}  // namespace pypto::rt
