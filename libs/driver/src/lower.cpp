#include "pypto/driver/pipeline.h"
#include "pypto/passes/pipeline.h"

namespace pypto::driver {

Result<ir::ProgramPtr> Lower(const ir::ProgramPtr& program, const std::string& platform, bool verify,
                             const std::optional<std::string>& dump_dir) {
  passes::PassManagerOptions options{.verify = verify};
  if (dump_dir) passes::DumpPassesTo(options, *dump_dir, *program);
  auto info = PlatformOf(platform);
  if (!info) return pypto::unexpected(info.error());
  const ir::SocSpec soc = info->soc;
  auto lowered = passes::Lower(program, passes::PassContext{.soc = &soc}, options);
  if (!lowered) return Fail(std::move(lowered.error()));
  return std::move(*lowered);
}

}  // namespace pypto::driver
