// The MPI backend of distributed programs: each rank an MPI process running its own simulator.
// A process holds its own rank's window, allocated as an MPI one-sided window (MPI_Win_allocate,
// the same size on every rank, so a buffer keeps its offset: the symmetric layout), and reaches its
// peers' windows through RMA in one passive-target epoch (comm_mpi.cpp). The host side
// (pypto/ir/distributed_mpi.py) broadcasts the inputs, runs its rank's dispatches and gathers the
// results through the collectives below. A build without MPI (meson found no 'mpi' dependency)
// compiles comm_mpi_absent.cpp instead: every call then fails with NoMpiMessage().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pypto/support/expected.h"

namespace pypto::rt::mpi {

// Whether this build has MPI at all.
bool Available();
// What a caller is told where it does not.
std::string NoMpiMessage();

// Initializes MPI once per process (it must then be finalized before the process exits).
pypto::expected<void, std::string> Init();
bool Initialized();
void Finalize();
int Rank();
int Size();

// Collectives over every process of the job.
void Barrier();
// How the processes other than the root wait for a broadcast: inside MPI (the shortest delay), or
// asleep between polls up to 2 ms apart, for a root that may keep them waiting long (rank 0
// compiling a program): spinning would take the cores the root works on when the processes
// outnumber them.
enum class Waiting { Busy, Asleep };
void Broadcast(void* data, size_t bytes, int root, Waiting waiting = Waiting::Busy);
// Every process's `text`, by rank, on every process.
std::vector<std::string> AllGather(const std::string& text);

// A rank's window, open for the length of a run.
struct OpenWindow {
  uintptr_t base = 0;   // this process's window (zeroed), 0 on a process with no rank in the domain
  int64_t handle = 0;   // for CloseWindow
};

// Collective: allocates every process's window of `bytes` and, on the processes of ranks below
// `nranks` (the program's world; the processes above it only take part in the collectives),
// registers the domain whose comm ops reach the peers by RMA.
pypto::expected<OpenWindow, std::string> OpenWindows(uint64_t bytes, int32_t nranks);
// Collective: unregisters the domain and frees the window.
void CloseWindows(int64_t handle);

}  // namespace pypto::rt::mpi
