// `_core.mpi_*`: what the host side of an MPI run needs (pypto/runtime/comm_mpi.h). Failures raise
// RuntimeError with the runtime's message.
#include "comm_mpi.h"

#include <pybind11/stl.h>

#include <stdexcept>

#include "pypto/runtime/comm_mpi.h"

namespace py = pybind11;

namespace pypto::bindings {
namespace {

template <typename T>
T OrRaise(pypto::expected<T, std::string> result) {
  if (!result) throw std::runtime_error(result.error());
  if constexpr (!std::is_void_v<T>) return std::move(*result);
}

}  // namespace

void BindCommMpi(py::module_& m) {
  namespace mpi = rt::mpi;
  m.def("mpi_available", &mpi::Available);
  m.def("mpi_unavailable_reason", &mpi::NoMpiMessage);
  m.def("mpi_init", [] { OrRaise(mpi::Init()); });
  m.def("mpi_initialized", &mpi::Initialized);
  m.def("mpi_finalize", &mpi::Finalize);
  m.def("mpi_rank", &mpi::Rank);
  m.def("mpi_size", &mpi::Size);
  m.def("mpi_barrier", &mpi::Barrier, py::call_guard<py::gil_scoped_release>());
  // `nbytes` bytes at address `data` (a tensor's storage), from `root` to every process; `asleep`:
  // the others wait asleep between polls, for a root that may take long (rank 0 compiling).
  m.def(
      "mpi_broadcast",
      [](uintptr_t data, size_t nbytes, int root, bool asleep) {
        mpi::Broadcast(reinterpret_cast<void*>(data), nbytes, root, asleep ? mpi::Waiting::Asleep : mpi::Waiting::Busy);
      },
      py::arg("data"), py::arg("nbytes"), py::arg("root"), py::arg("asleep") = false,
      py::call_guard<py::gil_scoped_release>());
  m.def(
      "mpi_allgather",
      [](const py::bytes& text) {
        std::vector<std::string> texts;
        {
          std::string mine = text;
          py::gil_scoped_release release;
          texts = mpi::AllGather(mine);
        }
        py::list out;
        for (const auto& t : texts) out.append(py::bytes(t));
        return out;
      },
      py::arg("text"));
  // Collective: (this process's window address, or 0 for a process above the program's ranks; the handle).
  m.def(
      "mpi_open_windows",
      [](uint64_t nbytes, int32_t nranks) {
        auto window = OrRaise(mpi::OpenWindows(nbytes, nranks));
        return py::make_tuple(window.base, window.handle);
      },
      py::arg("nbytes"), py::arg("nranks"));
  m.def("mpi_close_windows", &mpi::CloseWindows, py::arg("handle"), py::call_guard<py::gil_scoped_release>());
}

}  // namespace pypto::bindings
