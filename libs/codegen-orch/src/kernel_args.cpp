#include "pypto/codegen_orch/kernel_args.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

#include "pypto/ir/type.h"
#include "pypto/runtime/runtime.h"

namespace pypto::codegen_orch {
namespace {

struct Row {
  std::string slot, name, kind, direction, type, meaning;
};

std::string Origin(const ir::Function& kernel) {
  const auto* source = ir::FunctionAttr<std::string>(kernel, ir::kExternalSourceAttr);
  return source ? ", hand-written: " + *source : "";
}

std::vector<Row> Rows(const ir::Function& kernel) {
  std::vector<Row> tensors, scalars;
  for (size_t i = 0; i < kernel.params().size(); ++i) {
    const auto& param = kernel.params()[i];
    const std::string direction(ir::ParamDirectionName(kernel.param_directions()[i]));
    if (param->type()->As<ir::TensorType>()) {
      tensors.push_back({"", param->name_hint(), "tensor", direction, param->type()->str(),
                         "-> its ChipTensor descriptor"});
    } else {
      scalars.push_back({"", param->name_hint(), "scalar", direction, param->type()->str(), "the value's 64 bits"});
    }
  }
  std::vector<Row> rows = std::move(tensors);
  rows.insert(rows.end(), scalars.begin(), scalars.end());
  for (size_t i = 0; i < rows.size(); ++i) rows[i].slot = fmt::format("args[{}]", i);
  rows.push_back({fmt::format("args[{}]", rt::kLocalContextSlot), "LocalContext", "", "", "",
                  "get_block_idx(args), get_block_num(args)"});
  rows.push_back({fmt::format("args[{}]", rt::kGlobalContextSlot), "GlobalContext", "", "", "",
                  "get_sub_block_id(args)"});
  return rows;
}

}  // namespace

std::string ExplainKernelArgs(const ir::Function& kernel) {
  const std::vector<Row> rows = Rows(kernel);
  std::array<size_t, 5> width{};
  for (const Row& row : rows) {
    const std::array<const std::string*, 5> cells = {&row.slot, &row.name, &row.kind, &row.direction, &row.type};
    for (size_t c = 0; c < cells.size(); ++c) width[c] = std::max(width[c], cells[c]->size());
  }
  std::string text = fmt::format("kernel_entry(args) of '{}' ({}{})\n", kernel.name(),
                                 ir::FunctionTypeName(kernel.type()), Origin(kernel));
  for (const Row& row : rows) {
    std::string line = fmt::format("  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {:<{}}  {}", row.slot, width[0], row.name,
                                   width[1], row.kind, width[2], row.direction, width[3], row.type, width[4],
                                   row.meaning);
    // Context rows leave the middle columns empty: no run of blanks before their meaning.
    if (row.kind.empty())
      line = fmt::format("  {:<{}}  {:<{}}  {}", row.slot, width[0], row.name, width[1], row.meaning);
    text += line + "\n";
  }
  return text;
}

std::string ExplainExternArgs(const ir::Program& program) {
  std::string text;
  for (const auto& function : program.functions()) {
    if (!function->attrs().contains(ir::kExternalSourceAttr)) continue;
    if (!text.empty()) text += "\n";
    text += ExplainKernelArgs(*function);
  }
  return text.empty() ? fmt::format("program '{}' has no hand-written kernels\n", program.name()) : text;
}

}  // namespace pypto::codegen_orch
