// The backend plugin serving a platform, for the driver's compile and run steps.
#pragma once

#include <string>

#include "pypto/driver/failure.h"
#include "pypto-c/backend_plugin.h"

namespace pypto::driver {

// A device platform that only a simulator names (its plugin is not installed) is DeviceUnavailable,
// pointing at the simulator.
Result<const pypto_backend_plugin*> PluginFor(const std::string& platform);

}  // namespace pypto::driver
