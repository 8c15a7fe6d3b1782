// The MPI backend of distributed programs as `_core.mpi_*` (pypto/ir/distributed_mpi.py).
#pragma once

#include <pybind11/pybind11.h>

namespace pypto::bindings {

void BindCommMpi(pybind11::module_& m);

}  // namespace pypto::bindings
