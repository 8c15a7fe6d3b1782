// What a user asks of the toolchain before compiling: which platforms the installed plugins serve,
// and whether each compiled program's hand-written kernels should have their args[] table explained.
#pragma once

#include <string>

namespace pypto::driver {

// One line per known platform, from the plugins' descriptions, tab-separated: name, plugin, kind,
// SoC, the plugin's description and file. A device platform a simulator stands for is listed even
// when no plugin serves it ("-" for its plugin), as a run there says what to install. "no backend
// plugins found" first when there are none.
std::string PlatformsTable();

// The plugins that failed to load, one "warning: ..." line each (empty when all loaded).
std::string PluginLoadWarnings();

// `pypto-run --explain-abi`: every program compiled in this process, and in the processes it starts,
// prints its hand-written kernels' args[] tables to stderr (the switch is the environment variable
// PYPTO_EXPLAIN_ABI, which child processes inherit).
void RequestAbiExplanations();
bool AbiExplanationsRequested();

}  // namespace pypto::driver
