// Which debugging outputs a run writes (RunConfig's enable_dump_args, enable_chip_swimlane and
// enable_dep_gen), and where. Carried by the task plan, so that whoever runs the plan (a plugin session) records them.
#pragma once

#include <string>

namespace pypto::rt {

struct DfxOptions {
  // 0 off; 1 tagged arguments only (pl.dump_tag); 2 every argument; 3 metadata of every argument, the
  // payload of tagged ones only.
  int dump_args = 0;
  // 0 off; 1..4 a per-core task timeline (the simulator has no AICPU, so levels 2..4 add nothing).
  int chip_swimlane = 0;
  // The dependency graph of every submit, as deps.json (dep_graph.h).
  bool dep_gen = false;
  // Where the outputs go: <build dir>/dfx_outputs. Written after every run (the last run's remain).
  std::string output_dir;

  bool enabled() const { return dump_args > 0 || chip_swimlane > 0 || dep_gen; }
};

}  // namespace pypto::rt
