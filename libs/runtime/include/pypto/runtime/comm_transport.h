// How a rank reaches its peers' windows when they are not memory of this process. An in-process
// communication domain (every rank a thread of one process) has none: a peer's window is an address
// and comm ops read and write it directly. A domain whose ranks are separate processes (MPI, see
// comm_mpi.h) carries a transport, and every comm op on it, to a peer or to the rank itself, goes
// through one: that keeps the signal cells' atomic updates of one kind (the transport's), so a
// rank's own update never races a peer's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "pypto/ir/dtype.h"

namespace pypto::rt {

// Bytes [offset, offset + bytes) of a rank's window and the local data they move to or from.
struct CommPiece {
  uint64_t offset = 0;
  const std::byte* data = nullptr;
  size_t bytes = 0;
};

class CommTransport {
 public:
  virtual ~CommTransport() = default;

  // Signal cells: one INT32 at `offset` bytes into `rank`'s window.
  virtual void StoreCell(int32_t rank, uint64_t offset, int32_t value) = 0;
  virtual void AddCell(int32_t rank, uint64_t offset, int32_t value) = 0;
  // This rank's own cell, as its peers' updates left it (for polling).
  virtual int32_t LoadOwnCell(uint64_t offset) = 0;

  // Bytes [offset, offset + bytes) of `rank`'s window read into `dst`; the pieces written into
  // `rank`'s window. Both are complete at the target when the call returns.
  virtual void Get(int32_t rank, uint64_t offset, void* dst, size_t bytes) = 0;
  virtual void Put(int32_t rank, std::span<const CommPiece> pieces) = 0;
  // Adds the pieces (elements of `dtype`) element-wise into `rank`'s window, atomically with
  // respect to other adds. Returns an error message when the transport cannot add that type.
  virtual std::string Accumulate(int32_t rank, std::span<const CommPiece> pieces, ir::DataType dtype) = 0;

  // Lets the transport make progress while this rank polls (a peer's update may need it).
  virtual void Progress() = 0;
};

}  // namespace pypto::rt
