// The kernel_entry wrapper. The runtime dispatches every AICore task through one fixed symbol,
// `kernel_entry(__gm__ int64_t* args)`, whose args[] hold first one pointer per tensor argument to
// that tensor's 128-byte ChipTensor descriptor (in the task, not the data itself), then each scalar
// argument as a raw 64-bit value. The wrapper turns that into the typed call ptoas's function expects.
#include "pypto/backend_ptoas/kernel_wrapper.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <set>
#include <vector>

#include "c_types.h"
#include "kernel_plan.h"
#include "pypto/backend_ptoas/module.h"
#include "pypto/ir/dynamic_extent.h"
#include "pypto/ir/function.h"
#include "pypto/ir/functor.h"

namespace pypto::backend_ptoas {
namespace {

constexpr std::string_view kHeader = R"(#include <cstdint>

// ccec knows the address-space and core qualifiers; the CPU simulator build needs them spelled out.
#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#if defined(__CPU_SIM)
#define __aicore__
#else
#define __aicore__ [aicore]
#endif
#endif

#include <pto/pto-inst.hpp>
#include "tensor.h"

using namespace pto;
)";

bool IsCppKeyword(std::string_view name) {
  static const std::set<std::string_view> kKeywords = {
      "auto",   "bool",     "break",  "case",   "char",     "class",    "const",   "continue", "default",
      "delete", "do",       "double", "else",   "enum",     "explicit", "extern",  "false",    "float",
      "for",    "friend",   "goto",   "if",     "inline",   "int",      "long",    "namespace", "new",
      "operator", "private", "protected", "public", "register", "return", "short", "signed",  "sizeof",
      "static", "struct",   "switch", "template", "this",   "throw",    "true",    "try",      "typedef",
      "union",  "unsigned", "using",  "virtual", "void",    "volatile", "while"};
  return kKeywords.contains(name);
}

// C++ local names for the kernel's parameters and the helpers the unpacking needs, all distinct.
class LocalNames {
 public:
  explicit LocalNames(const std::string& kernel_name) : taken_{"args", kernel_name} {}

  std::string Take(std::string_view hint) {
    std::string name(hint);
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    }
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || IsCppKeyword(name)) name.insert(0, "p_");
    std::string unique = name;
    for (int n = 1; !taken_.insert(unique).second; ++n) unique = fmt::format("{}_{}", name, n);
    return unique;
  }

 private:
  std::set<std::string> taken_;
};

struct Unpacking {
  std::vector<std::string> lines;
  std::vector<std::string> call_args;  // the module's argument order: tensors, then scalars
};

pypto::expected<Unpacking, std::string> UnpackArgs(const ir::Function& kernel) {
  std::vector<ir::VarPtr> tensors, scalars;
  for (const auto& param : kernel.params()) {
    if (param->type()->As<ir::TensorType>()) {
      tensors.push_back(param);
    } else if (param->type()->As<ir::ScalarType>()) {
      scalars.push_back(param);
    } else {
      return pypto::unexpected(fmt::format("{}: parameter '{}' of kernel '{}' has type {}, which kernel_entry cannot "
                                           "unpack",
                                           param->span().str(), param->name_hint(), kernel.name(),
                                           param->type()->str()));
    }
  }
  LocalNames names(kernel.name());
  Unpacking out;
  size_t slot = 0;
  std::vector<std::string> extents;  // after the scalars: each dynamic axis's extent, off its descriptor
  for (const auto& param : tensors) {
    auto type = CElementType(param->type()->As<ir::TensorType>()->dtype());
    if (!type) return pypto::unexpected(fmt::format("{}: {}", param->span().str(), type.error()));
    std::string data = names.Take(param->name_hint());
    std::string desc = names.Take(data + "_desc");
    // start_offset counts elements, so it is added after the cast to the element pointer.
    out.lines.push_back(
        fmt::format("  __gm__ ChipTensor* {} = reinterpret_cast<__gm__ ChipTensor*>(args[{}]);", desc, slot++));
    out.lines.push_back(fmt::format("  __gm__ {0}* {1} = reinterpret_cast<__gm__ {0}*>({2}->buffer.addr) + {2}->start_offset;",
                                    *type, data, desc));
    out.call_args.push_back(data);
    const auto& shape = param->type()->As<ir::TensorType>()->shape();
    for (size_t axis = 0; axis < shape.size(); ++axis)
      if (shape[axis] == ir::kDynamicExtent) extents.push_back(fmt::format("static_cast<int64_t>({}->shapes[{}])", desc, axis));
  }
  for (const auto& param : scalars) {
    auto type = CElementType(param->type()->As<ir::ScalarType>()->dtype());
    if (!type) return pypto::unexpected(fmt::format("{}: {}", param->span().str(), type.error()));
    std::string value = names.Take(param->name_hint());
    std::string bits = names.Take(value + "_bits");
    // The task stores a scalar's bytes in the low end of a 64-bit slot; a union reads them back
    // as the declared type (a float is not converted from an integer).
    out.lines.push_back(fmt::format("  union {{ uint64_t raw; {} value; }} {};", *type, bits));
    out.lines.push_back(fmt::format("  {}.raw = static_cast<uint64_t>(args[{}]);", bits, slot++));
    out.lines.push_back(fmt::format("  {} {} = {}.value;", *type, value, bits));
    out.call_args.push_back(value);
  }
  out.call_args.insert(out.call_args.end(), extents.begin(), extents.end());
  // The launch identity, from the contexts the runtime passes after the arguments.
  const LaunchIdentity launch = UsedLaunchIdentity(kernel);
  if (launch.block) {
    out.call_args.push_back("static_cast<int32_t>(get_block_idx(args))");
    out.call_args.push_back("static_cast<int32_t>(get_block_num(args))");
  }
  if (launch.subblock) out.call_args.push_back("static_cast<int32_t>(get_sub_block_id(args))");
  return out;
}

// Whether the kernel calls an op whose name starts with `prefix`: comm.* make its module take a
// CommContext per window (comm_ops.cpp), prefetch.make_context the SDMA workspace (prefetch_ops.cpp),
// neither of which the runtime hands a kernel yet.
bool UsesOps(const ir::Function& kernel, std::string_view prefix) {
  if (!kernel.body()) return false;
  struct Finder final : ir::IRVisitor {
    std::string_view prefix;
    bool found = false;
    void VisitCall(const std::shared_ptr<const ir::Call>& call) override {
      found |= call->is_op_call() && call->target_name().starts_with(prefix);
      ir::IRVisitor::VisitCall(call);
    }
  } finder;
  finder.prefix = prefix;
  finder.VisitStmt(kernel.body());
  return finder.found;
}

}  // namespace

pypto::expected<std::string, std::string> EmitKernelWrapper(const ir::Function& kernel, std::string_view ptoas_cpp) {
  // On a2a3 a member's last argument is the GM buffer its pipe slots pass through (cross_core_pipes.h),
  // which upstream's orchestration allocates per call; this runtime does not yet.
  if (UsesCrossCorePipes(kernel))
    return pypto::unexpected(fmt::format("{}: kernel_entry cannot call kernel '{}' yet: it hands tiles to its peer "
                                         "through cross-core pipes, whose GM slot buffer (its last argument on a2a3) "
                                         "the runtime does not allocate yet",
                                         kernel.span().str(), kernel.name()));
  if (UsesOps(kernel, "comm."))
    return pypto::unexpected(fmt::format("{}: kernel_entry cannot call kernel '{}' yet: it communicates with other "
                                         "ranks, and its module takes each window's CommContext (a !pto.ptr<i64> "
                                         "argument after the scalars), which the runtime does not pass a kernel yet",
                                         kernel.span().str(), kernel.name()));
  if (UsesOps(kernel, "prefetch.make_context"))
    return pypto::unexpected(fmt::format("{}: kernel_entry cannot call kernel '{}' yet: it prefetches into L2, and "
                                         "its module takes the SDMA workspace (a !pto.ptr<i8> argument after the "
                                         "dynamic extents), which the runtime does not pass a kernel yet",
                                         kernel.span().str(), kernel.name()));
  auto unpacking = UnpackArgs(kernel);
  if (!unpacking) return pypto::unexpected(unpacking.error());
  std::string out = fmt::format("// Kernel '{}': ptoas output behind the runtime's kernel_entry ABI.\n", kernel.name());
  out += kHeader;
  const LaunchIdentity launch = UsedLaunchIdentity(kernel);
  if (launch.block || launch.subblock) out += "#include \"intrinsic.h\"  // get_block_idx(args) and kin\n";
  out += "\n// ---- ptoas output ----\n";
  out += PreprocessPtoasOutput(ptoas_cpp);
  if (!out.ends_with('\n')) out += '\n';
  out += "// ---- end of ptoas output ----\n\n";
  out += "extern \"C\" __aicore__ void kernel_entry(__gm__ int64_t* args) {\n";
  // The hardware keeps the atomic mode of the previous task on the core; stores here are plain.
  out += "#if !defined(__CPU_SIM)\n  set_atomic_none();\n#endif\n";
  for (const auto& line : unpacking->lines) out += line + "\n";
  out += fmt::format("  {}({});\n}}\n", kernel.name(), fmt::join(unpacking->call_args, ", "));
  return out;
}

}  // namespace pypto::backend_ptoas
