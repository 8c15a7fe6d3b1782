// One PTO-dialect operation as data, and its two spellings: the custom assembly syntax that ptoas's
// parsers read (the .pto file), and MLIR's generic form, which any MLIR tool parses without the PTO
// dialect (`mlir-opt --allow-unregistered-dialect`). The emitter describes each op once, so the two
// spellings cannot drift apart.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pypto::backend_ptoas {

// An SSA value and its type: `%tile_a` and `!pto.tile_buf<...>`.
struct TypedValue {
  std::string value;
  std::string type;
};

// How a group of operands is spelled in the custom syntax. In the generic form each group is a run
// of operands, in the order of the groups.
enum class OperandSyntax {
  Leading,  // ` %arg0`: the first operand; the result type implies its type (make_tensor_view)
  Source,   // ` %a_view`: the first operand, its type named before `->` (partition_view)
  List,     // `, offsets = [%a, %b]`: a variadic group
  Keyword,  // ` addr = %a`: an optional operand
  Ins,      // ` ins(%a, %b : A, B)`: what a destination-passing op reads
  Outs,     // ` outs(%c : C)`: and what it writes
};

struct OperandGroup {
  OperandSyntax syntax;
  std::string keyword;  // List and Keyword groups: "offsets", "addr"
  std::vector<TypedValue> operands;
};

struct PtoAttr {
  std::string name;
  std::string value;  // an MLIR attribute: "#pto.layout<nd>", "true"
};

// Where the custom syntax puts the attribute dictionary; the generic form has one place for it.
enum class AttrPlacement {
  AfterOperands,    // `strides = [..] {layout = ..}`, `outs(..) {descending = true}`
  InIns,            // `ins(%t {rmode = ..} : T)`, where tcvt's and tcolsum's parsers read it
  InInsAfterComma,  // `ins(%t, {maskPattern = ..} : T)`, where tgather's parser reads it
};

// The operands in the order and groups of the op's PTOAS definition (its `arguments`), for the
// generic form, where they differ from the custom syntax's: tsetval writes `ins(%off, %v) outs(%t)`
// for its arguments (dst, offset, val); tmrgsort format 2 `ins(lists.., tmp) outs(dst, executed)`
// for (srcs, blockLen, dsts, tmp, excuted).
struct GenericOperands {
  std::vector<std::vector<TypedValue>> groups;
  // The op sizes its groups by attribute (AttrSizedOperandSegments): operand_segment_sizes names them.
  bool sized = false;
};

struct PtoOp {
  std::string name;                  // "pto.tload"
  std::optional<TypedValue> result;  // destination-passing ops have none
  std::vector<OperandGroup> groups;
  std::vector<PtoAttr> attrs;
  AttrPlacement attr_placement = AttrPlacement::AfterOperands;
  // ptoas parses this op's attributes only in the generic form (pto.ttri), so the custom spelling is it.
  bool generic_only = false;
  // The custom spelling, where its syntax is none of OperandSyntax's (`pto.load_scalar %p[%off] : P -> T`,
  // `pto.store_scalar %v, %p[%off] : P, T`, tgetval's bare `outs : T`): the op's operands are then
  // described by generic_operands.
  std::optional<std::string> custom_syntax;
  std::optional<GenericOperands> generic_operands;
};

// `%view = pto.subset %tile[%row, %col] sizes [R, C] : T`: a window of `tile` that is its own bytes.
PtoOp SubsetOp(const TypedValue& view, const TypedValue& tile, const TypedValue& row, const TypedValue& col,
               const std::string& sizes);

// `%a_pview = pto.partition_view %a_view, offsets = [..], sizes = [..] : T -> P`,
// `pto.tadd ins(%a, %b : A, B) outs(%c : C)`.
std::string CustomForm(const PtoOp& op);

// `%a_pview = "pto.partition_view"(%a_view, %c0, %c0, %c32, %c64) {operand_segment_sizes = array<i32:
// 1, 2, 2>} : (T, index, index, index, index) -> P`, `"pto.tadd"(%a, %b, %c) : (A, B, C) -> ()`.
// Ops with List or Keyword groups (whose sizes vary) say how the operands split into groups with
// `operand_segment_sizes`, as MLIR's AttrSizedOperandSegments ops do; ins and outs are fixed operands.
std::string GenericForm(const PtoOp& op);

}  // namespace pypto::backend_ptoas
