// The small definitions sim_kernel.h declares: opcode, compute-kind and scalar-op names, the runtime's
// dtype codes and DecodedKernel::Describe. Decoding lives in decode_*.cpp, listings in kernel_listing.cpp.
#include "sim_kernel.h"

#include <fmt/format.h>

#include <string>

namespace pypto::sim {

const char* OpcodeName(Opcode op) {
  switch (op) {
    case Opcode::Load: return "load";
    case Opcode::Store: return "store";
    case Opcode::Add: return "add";
    case Opcode::Sub: return "sub";
    case Opcode::Mul: return "mul";
    case Opcode::Div: return "div";
    case Opcode::LoopBegin: return "for";
    case Opcode::LoopEnd: return "endfor";
    case Opcode::Compute: return "compute";
    case Opcode::BranchIfZero: return "ifnot";
    case Opcode::Jump: return "jump";
    case Opcode::ReadScalar: return "read";
    case Opcode::WriteScalar: return "write";
    case Opcode::ReadTile: return "tread";
    case Opcode::WriteTile: return "twrite";
    case Opcode::SyncAll: return "syncall";
    case Opcode::TPush: return "tpush";
    case Opcode::TPop: return "tpop";
    case Opcode::TFree: return "tfree";
    case Opcode::EventSet: return "evset";
    case Opcode::Comm: return "comm";
    case Opcode::EventWait: return "evwait";
  }
  return "?";
}

const char* ComputeKindName(ComputeKind kind) {
  switch (kind) {
    case ComputeKind::Binary: return "binary";
    case ComputeKind::BinaryScalar: return "scalar";
    case ComputeKind::Unary: return "unary";
    case ComputeKind::LeakyRelu: return "lrelu";
    case ComputeKind::BitNot: return "not";
    case ComputeKind::IntegerBinary: return "integer";
    case ComputeKind::RowReduce: return "rowreduce";
    case ComputeKind::ColReduce: return "colreduce";
    case ComputeKind::RowArgReduce: return "rowargreduce";
    case ComputeKind::ColArgReduce: return "colargreduce";
    case ComputeKind::RowExpand: return "rowexpand";
    case ComputeKind::ColExpand: return "colexpand";
    case ComputeKind::RowExpDif: return "rowexpdif";
    case ComputeKind::ColExpDif: return "colexpdif";
    case ComputeKind::RowBroadcast: return "rowbcast";
    case ComputeKind::ColBroadcast: return "colbcast";
    case ComputeKind::Fill: return "fill";
    case ComputeKind::Copy: return "copy";
    case ComputeKind::Matmul: return "matmul";
    case ComputeKind::MatmulMx: return "matmul_mx";
    case ComputeKind::Cast: return "cast";
    case ComputeKind::Sort32: return "sort32";
    case ComputeKind::MergeSort: return "mrgsort";
    case ComputeKind::MergeLists: return "mrgsort_lists";
    case ComputeKind::GatherMask: return "gather";
    case ComputeKind::GatherAlong: return "gather_index";
    case ComputeKind::ScatterAlong: return "scatter_index";
    case ComputeKind::ScatterLanes: return "scatter_mask";
    case ComputeKind::ScatterRows: return "scatter_rows";
    case ComputeKind::GatherCompare: return "gather_compare";
    case ComputeKind::Random: return "random";
    case ComputeKind::Slice: return "slice";
    case ComputeKind::Insert: return "insert";
    case ComputeKind::Concat: return "concat";
    case ComputeKind::Transpose: return "transpose";
    case ComputeKind::Arange: return "arange";
    case ComputeKind::FillPad: return "fillpad";
    case ComputeKind::FillBits: return "fillbits";
    case ComputeKind::FillPadExpand: return "fillpad_expand";
    case ComputeKind::Compare: return "cmp";
    case ComputeKind::Select: return "sel";
    case ComputeKind::Prelu: return "prelu";
    case ComputeKind::PartialBinary: return "partial";
    case ComputeKind::Triangle: return "tri";
    case ComputeKind::GatherBlocks: return "gatherb";
  }
  return "?";
}

const char* ScalarOpSymbol(ScalarOp op) {
  switch (op) {
    case ScalarOp::Add: return "+";
    case ScalarOp::Sub: return "-";
    case ScalarOp::Mul: return "*";
    case ScalarOp::FloorDiv: return "//";
    case ScalarOp::FloorMod: return "%";
    case ScalarOp::Min: return "min";
    case ScalarOp::Max: return "max";
    case ScalarOp::Shl: return "<<";
    case ScalarOp::Shr: return ">>";
    case ScalarOp::Eq: return "==";
    case ScalarOp::Ne: return "!=";
    case ScalarOp::Lt: return "<";
    case ScalarOp::Le: return "<=";
    case ScalarOp::Gt: return ">";
    case ScalarOp::Ge: return ">=";
    case ScalarOp::SignExtend: return "sext";
    case ScalarOp::ZeroExtend: return "zext";
    case ScalarOp::FEq: return "==f";
    case ScalarOp::FNe: return "!=f";
    case ScalarOp::FLt: return "<f";
    case ScalarOp::FLe: return "<=f";
    case ScalarOp::FGt: return ">f";
    case ScalarOp::FGe: return ">=f";
    case ScalarOp::FpToSi: return "fptosi";
    case ScalarOp::SiToFp: return "sitofp";
    case ScalarOp::CheckIndex: return "check_index";
    case ScalarOp::LoadIndexed: return "load_indexed";
    case ScalarOp::StoreIndexed: return "store_indexed";
  }
  return "?";
}

std::string DecodedKernel::Describe(size_t index) const {
  if (index >= sources.size()) return fmt::format("kernel '{}' instruction #{}", name, index);
  const auto& source = sources[index];
  return fmt::format("kernel '{}' instruction #{} ({}) `{}` at {}", name, index, OpcodeName(code[index].op),
                     source.text, source.location);
}

}  // namespace pypto::sim
