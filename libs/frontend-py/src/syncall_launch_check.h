// A hard pl.system.syncall waits for every block of its launch on a core of its own, so it can only
// complete when the launch co-starts its blocks (pl.spmd(..., sync_start=True)): otherwise blocks
// still queued for a core are never reached, and on the device the launch hangs. As upstream does,
// the frontend rejects such a program, at the syncall.
#pragma once

#include "pypto/ir/diagnostic.h"
#include "pypto/ir/program.h"

namespace pypto::frontend {

// Every launch in `program` (a pl.at or pl.spmd scope, or a call of a kernel) whose kernel reaches a
// hard syncall must be a pl.spmd launch with sync_start=True.
ir::Result<bool> CheckHardSyncallLaunches(const ir::Program& program);

}  // namespace pypto::frontend
