// The frontend reads DSL text through the `ast` module of an embedded interpreter (nothing of the
// program runs as Python), so the targets that feed it start one interpreter for the whole run.
#pragma once

#include <pybind11/embed.h>

namespace pypto::fuzz {

// Starts the interpreter once and keeps the GIL with the fuzzing thread: every input runs on it.
//
// These targets run with leak detection off (-detect_leaks=0, set by ./dev fuzz and the
// fuzz-regressions suite): Python keeps its objects in pymalloc's mmap'ed arenas, which
// LeakSanitizer does not scan, so every object they reference reads as leaked. PYTHONMALLOC=malloc
// would make them visible, at a tenth of the executions per second.
inline void StartInterpreter() {
  if (!Py_IsInitialized()) pybind11::initialize_interpreter();
}

}  // namespace pypto::fuzz
