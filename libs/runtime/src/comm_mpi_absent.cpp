// comm_mpi.h in a build without MPI: the MPI backend says so, with what to install.
#include "pypto/runtime/comm_mpi.h"

namespace pypto::rt::mpi {

bool Available() { return false; }

std::string NoMpiMessage() {
  return "this pypto build has no MPI (meson found no 'mpi' dependency when it was configured): install Open MPI "
         "(apt-get install libopenmpi-dev openmpi-bin) and reconfigure (meson setup --reconfigure build), or run "
         "with the thread backend (RunConfig(comm_backend=\"threads\"))";
}

pypto::expected<void, std::string> Init() { return pypto::unexpected(NoMpiMessage()); }
bool Initialized() { return false; }
void Finalize() {}
int Rank() { return 0; }
int Size() { return 1; }
void Barrier() {}
void Broadcast(void*, size_t, int, Waiting) {}
std::vector<std::string> AllGather(const std::string& text) { return {text}; }
pypto::expected<OpenWindow, std::string> OpenWindows(uint64_t, int32_t) { return pypto::unexpected(NoMpiMessage()); }
void CloseWindows(int64_t) {}

}  // namespace pypto::rt::mpi
