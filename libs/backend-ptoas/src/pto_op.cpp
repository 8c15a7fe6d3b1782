#include "pto_op.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace pypto::backend_ptoas {
namespace {

std::vector<std::string> Values(const std::vector<TypedValue>& operands) {
  std::vector<std::string> values;
  for (const auto& operand : operands) values.push_back(operand.value);
  return values;
}

std::vector<std::string> Types(const std::vector<TypedValue>& operands) {
  std::vector<std::string> types;
  for (const auto& operand : operands) types.push_back(operand.type);
  return types;
}

std::string AttrDict(const std::vector<PtoAttr>& attrs) {
  std::vector<std::string> entries;
  for (const auto& attr : attrs) entries.push_back(fmt::format("{} = {}", attr.name, attr.value));
  return fmt::format("{{{}}}", fmt::join(entries, ", "));
}

// `ins(%a, %b [attrs] : A, B)`: the attributes go inside when the op's parser reads them there.
std::string InsGroup(const PtoOp& op, const OperandGroup& group) {
  std::string attrs;
  if (!op.attrs.empty() && op.attr_placement == AttrPlacement::InIns) attrs = " " + AttrDict(op.attrs);
  if (!op.attrs.empty() && op.attr_placement == AttrPlacement::InInsAfterComma) attrs = ", " + AttrDict(op.attrs);
  return fmt::format(" ins({}{} : {})", fmt::join(Values(group.operands), ", "), attrs,
                     fmt::join(Types(group.operands), ", "));
}

std::string CustomGroup(const PtoOp& op, const OperandGroup& group) {
  switch (group.syntax) {
    case OperandSyntax::Leading:
    case OperandSyntax::Source: return fmt::format(" {}", fmt::join(Values(group.operands), ", "));
    case OperandSyntax::List:
      return fmt::format(", {} = [{}]", group.keyword, fmt::join(Values(group.operands), ", "));
    case OperandSyntax::Keyword: return fmt::format(" {} = {}", group.keyword, fmt::join(Values(group.operands), ", "));
    case OperandSyntax::Ins: return InsGroup(op, group);
    case OperandSyntax::Outs:
      return fmt::format(" outs({} : {})", fmt::join(Values(group.operands), ", "),
                         fmt::join(Types(group.operands), ", "));
  }
  return "";
}

// Ops whose PTOAS definitions size their operand groups by attribute (AttrSizedOperandSegments) and
// end in optional groups this backend never fills: tload's padding operands (pad_value,
// left_padding_num, right_padding_num, init_condition), tmov's fp and preQuantScalar, tgather's
// cdst, indices, tmp and kValue. The generic form names those groups' sizes too (zeros), so that its
// operand_segment_sizes has one entry per group of the dialect's op (tools/pto-check checks it).
int UnfilledTrailingGroups(const std::string& name) {
  if (name == "pto.tload" || name == "pto.tgather") return 4;
  if (name == "pto.tmov") return 2;
  return 0;
}

bool HasSegments(const PtoOp& op) {
  if (UnfilledTrailingGroups(op.name) > 0) return true;
  return std::any_of(op.groups.begin(), op.groups.end(), [](const OperandGroup& group) {
    return group.syntax == OperandSyntax::List || group.syntax == OperandSyntax::Keyword;
  });
}

}  // namespace

std::string CustomForm(const PtoOp& op) {
  if (op.generic_only) return GenericForm(op);
  if (op.custom_syntax) return *op.custom_syntax;
  std::string text = op.result ? fmt::format("{} = {}", op.result->value, op.name) : op.name;
  for (const auto& group : op.groups) text += CustomGroup(op, group);
  if (!op.attrs.empty() && op.attr_placement == AttrPlacement::AfterOperands) text += " " + AttrDict(op.attrs);
  if (!op.result) return text;
  // Ops with a result end in its type, after the types of the operands their syntax names there.
  std::vector<std::string> signature;
  for (const auto& group : op.groups) {
    if (group.syntax != OperandSyntax::Source) continue;
    signature.push_back(fmt::format("{}", fmt::join(Types(group.operands), ", ")));
  }
  signature.push_back(op.result->type);
  return fmt::format("{} : {}", text, fmt::join(signature, " -> "));
}

std::string GenericForm(const PtoOp& op) {
  std::vector<TypedValue> operands;
  std::vector<int> segments;
  auto add_group = [&](const std::vector<TypedValue>& group) {
    operands.insert(operands.end(), group.begin(), group.end());
    segments.push_back(static_cast<int>(group.size()));
  };
  if (op.generic_operands) {
    for (const auto& group : op.generic_operands->groups) add_group(group);
  } else {
    for (const auto& group : op.groups) add_group(group.operands);
    segments.resize(segments.size() + UnfilledTrailingGroups(op.name), 0);
  }
  std::vector<PtoAttr> attrs = op.attrs;
  if (op.generic_operands ? op.generic_operands->sized : HasSegments(op)) {
    attrs.push_back({"operand_segment_sizes", fmt::format("array<i32: {}>", fmt::join(segments, ", "))});
  }
  std::string text = op.result ? fmt::format("{} = ", op.result->value) : "";
  text += fmt::format("\"{}\"({})", op.name, fmt::join(Values(operands), ", "));
  if (!attrs.empty()) text += " " + AttrDict(attrs);
  return fmt::format("{} : ({}) -> {}", text, fmt::join(Types(operands), ", "), op.result ? op.result->type : "()");
}

PtoOp SubsetOp(const TypedValue& view, const TypedValue& tile, const TypedValue& row, const TypedValue& col,
               const std::string& sizes) {
  PtoOp subset{.name = "pto.subset", .result = view, .attrs = {{"sizes", sizes}}};
  subset.custom_syntax = fmt::format("{} = pto.subset {}[{}, {}] sizes {} : {}", view.value, tile.value, row.value,
                                     col.value, sizes, tile.type);
  subset.generic_operands = GenericOperands{{{tile}, {row, col}}};
  return subset;
}

}  // namespace pypto::backend_ptoas
