// FormatListing: a decoded kernel as readable text (parameters, registers, one line per instruction
// with its scalar code and source, buffer usage). Separate from the decoder: it only reads the result.
#include "sim_kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

#include "pypto/ir/dynamic_extent.h"

namespace pypto::sim {

namespace {

std::string OperandText(const Operand& operand) {
  return operand.is_reg() ? fmt::format("r{}", operand.reg) : std::to_string(operand.imm);
}

// ", valid [rows, cols]" for an instruction that moves or reads only a tile's valid region.
std::string ValidText(const Instr& instr) {
  if (!instr.partial) return "";
  return fmt::format(", valid [{}, {}]", OperandText(instr.valid.rows), OperandText(instr.valid.cols));
}

std::string Region(const Instr& instr) {
  std::vector<std::string> parts;
  for (int d = 0; d < instr.rank; ++d) {
    if (instr.offset_regs[d] >= 0) {
      parts.push_back(fmt::format("r{0}:r{0}+{1}", instr.offset_regs[d], instr.shape[d]));
    } else {
      parts.push_back(fmt::format("{}:{}", instr.offsets[d], instr.offsets[d] + instr.shape[d]));
    }
  }
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

// The element pl.read / pl.write address: `[r3, 0]`.
std::string ElementIndex(const Instr& instr) {
  std::vector<std::string> parts;
  for (int d = 0; d < instr.rank; ++d)
    parts.push_back(instr.offset_regs[d] >= 0 ? fmt::format("r{}", instr.offset_regs[d])
                                              : std::to_string(instr.offsets[d]));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

std::string ScalarOperandText(const ScalarOperand& scalar) {
  return scalar.source == ScalarOperand::Source::Imm ? fmt::format("{}", scalar.imm) : fmt::format("r{}", scalar.reg);
}

std::string ScalarText(const ScalarInstr& instr) {
  if (instr.op == ScalarOp::LoadIndexed)
    return fmt::format("r{} = r[{} + {}]", instr.dst, instr.a.imm, OperandText(instr.b));
  if (instr.op == ScalarOp::StoreIndexed)
    return fmt::format("r[{} + {}] = {}", instr.dst, OperandText(instr.a), OperandText(instr.b));
  if (instr.op == ScalarOp::Min || instr.op == ScalarOp::Max || instr.op == ScalarOp::SignExtend ||
      instr.op == ScalarOp::ZeroExtend || instr.op == ScalarOp::FpToSi || instr.op == ScalarOp::SiToFp ||
      instr.op == ScalarOp::CheckIndex) {
    return fmt::format("r{} = {}({}, {})", instr.dst, ScalarOpSymbol(instr.op), OperandText(instr.a),
                       OperandText(instr.b));
  }
  return fmt::format("r{} = {} {} {}", instr.dst, OperandText(instr.a), ScalarOpSymbol(instr.op),
                     OperandText(instr.b));
}

std::string Place(const TileRef& ref) {
  if (ref.offset_reg >= 0)  // a view at a computed place
    return fmt::format("{}[0x{:05x} + r{}, +{}]", ir::MemorySpaceName(ref.space), ref.byte_offset, ref.offset_reg,
                       ref.bytes);
  return fmt::format("{}[0x{:05x}, +{}]", ir::MemorySpaceName(ref.space), ref.byte_offset, ref.bytes);
}

const char* KindName(ElemKind kind) {
  switch (kind) {
    case ElemKind::F32: return "f32";
    case ElemKind::I32: return "i32";
    case ElemKind::Raw: return "raw";
  }
  return "?";
}

}  // namespace

std::string FormatListing(const DecodedKernel& kernel, const ir::SocSpec& soc) {
  std::string out = fmt::format("kernel {} (func_id {}, {} core, {} / {})\n", kernel.name, kernel.func_id,
                                rt::CoreTypeName(kernel.core_type), soc.name, soc.arch);
  out += fmt::format("params ({} tensors, {} scalars):\n", kernel.tensor_count, kernel.scalar_count);
  for (const auto& param : kernel.params) {
    if (param.is_tensor) {
      std::vector<std::string> dims;  // a dynamic axis (the extent the task's tensor has) as `?`
      for (int64_t dim : param.shape) dims.push_back(dim == ir::kDynamicExtent ? "?" : std::to_string(dim));
      out += fmt::format("  args[{}] {}: tensor {} [{}]\n", param.slot, param.name, ir::DataTypeName(param.dtype),
                         fmt::join(dims, ", "));
    } else {
      out += fmt::format("  args[{}] {}: scalar {}\n", param.slot, param.name, ir::DataTypeName(param.dtype));
    }
  }
  if (!kernel.registers.empty()) {
    out += fmt::format("registers ({} x int64):\n", kernel.registers.size());
    for (size_t r = 0; r < kernel.registers.size(); ++r) {
      const auto& info = kernel.registers[r];
      out += fmt::format("  r{:<3} {}{}\n", r, info.name, info.role.empty() ? "" : fmt::format("  ({})", info.role));
    }
  }
  out += fmt::format("code ({} instructions", kernel.code.size());
  if (!kernel.scalar_code.empty()) {
    out += fmt::format(", {} scalar operation{}", kernel.scalar_code.size(), kernel.scalar_code.size() == 1 ? "" : "s");
  }
  out += "):\n";
  int depth = 0;  // loop nesting, shown as indentation
  for (size_t i = 0; i < kernel.code.size(); ++i) {
    const Instr& instr = kernel.code[i];
    if (instr.op == Opcode::LoopEnd) depth = std::max(depth - 1, 0);
    const std::string indent(static_cast<size_t>(2 * depth), ' ');
    // The scalar code runs first, so it is listed first.
    for (uint32_t s = instr.scalar_begin; s < instr.scalar_begin + instr.scalar_count; ++s) {
      out += fmt::format("       {}{:<24} ; {}\n", indent, ScalarText(kernel.scalar_code[s]), kernel.scalar_text[s]);
    }
    std::string line;
    switch (instr.op) {
      case Opcode::Load:
        line = fmt::format("{:<5} {:<3} {} <- args[{}]{}  ({} elements)", OpcodeName(instr.op), KindName(instr.kind),
                           Place(instr.dst), instr.tensor_slot, Region(instr), instr.num_elements) +
               ValidText(instr) + (instr.remote ? fmt::format(", of peer {}", OperandText(instr.comm.peer)) : "");
        break;
      case Opcode::Store:
        line = fmt::format("{:<5} {:<3} args[{}]{} <- {}  ({} elements)", OpcodeName(instr.op), KindName(instr.kind),
                           instr.tensor_slot, Region(instr), Place(instr.src0), instr.num_elements) +
               ValidText(instr) + (instr.remote ? fmt::format(", of peer {}", OperandText(instr.comm.peer)) : "");
        break;
      case Opcode::LoopBegin:
        line = fmt::format("{:<5} r{} in {}({}, {}, {}), exits to #{}", OpcodeName(instr.op), instr.loop.var,
                           ir::ForKindName(instr.loop.kind), OperandText(instr.loop.start),
                           OperandText(instr.loop.stop), OperandText(instr.loop.step), instr.loop.partner + 1);
        break;
      case Opcode::LoopEnd:
        line = fmt::format("{} r{} += {}, back to #{} while r{} > 0", OpcodeName(instr.op), instr.loop.var,
                           OperandText(instr.loop.step), instr.loop.partner + 1, instr.loop.trips);
        break;
      case Opcode::BranchIfZero:
        line = fmt::format("{} {} -> #{}", OpcodeName(instr.op), OperandText(instr.branch.cond), instr.branch.target);
        break;
      case Opcode::Jump:
        line = fmt::format("{} -> #{}", OpcodeName(instr.op), instr.branch.target);
        break;
      case Opcode::SyncAll:
        line = OpcodeName(instr.op);
        break;
      case Opcode::EventSet:
      case Opcode::EventWait:
        line = fmt::format("{:<5} event {}{}", OpcodeName(instr.op), OperandText(instr.event_id),
                           instr.op == Opcode::EventSet ? fmt::format(", ffts_mode {}", instr.event.mode) : "");
        break;
      case Opcode::TPush:
      case Opcode::TPop:
      case Opcode::TFree: {
        const TileRef& tile = instr.op == Opcode::TPush ? instr.src0 : instr.dst;
        const std::string split = instr.pipe.split == rt::PipeSplit::Whole
                                      ? ""
                                      : fmt::format(", split {}", rt::PipeSplitName(instr.pipe.split));
        line = fmt::format("{:<5} pipe {} ({}, {} slots{}){}", OpcodeName(instr.op), instr.pipe.id,
                           rt::PipeDirectionName(instr.pipe.direction), instr.pipe.slots, split,
                           tile.bytes > 0 ? (instr.op == Opcode::TPush ? " <- " : " -> ") + Place(tile) : "");
        break;
      }
      case Opcode::ReadScalar:
      case Opcode::WriteScalar: {
        const std::string element = fmt::format("args[{}]{}", instr.tensor_slot, ElementIndex(instr));
        line = instr.op == Opcode::ReadScalar
                   ? fmt::format("{:<5} {:<3} r{} <- {}", OpcodeName(instr.op), KindName(instr.kind), instr.scalar_dst,
                                 element)
                   : fmt::format("{:<5} {:<3} {} <- {}", OpcodeName(instr.op), KindName(instr.kind), element,
                                 ScalarOperandText(instr.value));
        break;
      }
      case Opcode::Comm: {
        static constexpr const char* kKinds[] = {"rank", "nranks", "notify", "wait", "barrier"};
        static constexpr const char* kCmps[] = {"==", "!=", ">", ">=", "<", "<="};
        const auto kind = static_cast<size_t>(instr.comm.kind);
        const std::string window = fmt::format("args[{}]", instr.tensor_slot);
        if (instr.comm.kind == CommKind::Rank || instr.comm.kind == CommKind::Nranks)
          line = fmt::format("{:<5} {} r{} <- {}", OpcodeName(instr.op), kKinds[kind], instr.scalar_dst, window);
        else if (instr.comm.kind == CommKind::Notify)
          line = fmt::format("{:<5} {} peer {}: {}{} {} {}", OpcodeName(instr.op), kKinds[kind],
                             OperandText(instr.comm.peer), window, ElementIndex(instr),
                             instr.comm.atomic_add ? "+=" : "=", OperandText(instr.comm.value));
        else if (instr.comm.kind == CommKind::Wait)
          line = fmt::format("{:<5} {} {}{} {} {}", OpcodeName(instr.op), kKinds[kind], window, ElementIndex(instr),
                             kCmps[static_cast<size_t>(instr.comm.cmp)], OperandText(instr.comm.value));
        else
          line = fmt::format("{:<5} {} {}", OpcodeName(instr.op), kKinds[kind], window);
        break;
      }
      case Opcode::ReadTile:
        line = fmt::format("{:<5} {:<3} r{} <- {}{}", OpcodeName(instr.op), KindName(instr.kind), instr.scalar_dst,
                           Place(instr.src0), ElementIndex(instr));
        break;
      case Opcode::WriteTile:
        line = fmt::format("{:<5} {:<3} {}{} <- {}", OpcodeName(instr.op), KindName(instr.kind), Place(instr.dst),
                           ElementIndex(instr), ScalarOperandText(instr.value));
        break;
      case Opcode::Compute: {
        std::string operands;
        for (const TileRef* ref : {&instr.src0, &instr.src1, &instr.src2})
          if (ref->bytes > 0) operands += (operands.empty() ? "" : ", ") + Place(*ref);
        if (instr.compute.kind == ComputeKind::Fill || instr.compute.kind == ComputeKind::BinaryScalar ||
            instr.compute.kind == ComputeKind::LeakyRelu || instr.compute.kind == ComputeKind::Triangle ||
            ((instr.compute.kind == ComputeKind::Compare || instr.compute.kind == ComputeKind::Select) &&
             instr.src1.bytes == 0)) {
          const ScalarOperand& scalar = instr.compute.scalar;
          operands += (operands.empty() ? "" : ", ") + ScalarOperandText(scalar);
        }
        line = fmt::format("{:<9} {:<3} {} <- {}  ({} elements)", ComputeKindName(instr.compute.kind),
                           KindName(instr.kind), Place(instr.dst), operands, instr.num_elements) +
               ValidText(instr);
        break;
      }
      default:
        line = fmt::format("{:<5} {:<3} {} <- {}, {}  ({} elements)", OpcodeName(instr.op), KindName(instr.kind),
                           Place(instr.dst), Place(instr.src0), Place(instr.src1), instr.num_elements);
        break;
    }
    out += fmt::format("  {:3}: {}{}\n", i, indent, line);
    out += fmt::format("       {}; {}  @ {}\n", indent, kernel.sources[i].text, kernel.sources[i].location);
    if (instr.op == Opcode::LoopBegin) ++depth;
  }
  out += "buffers:\n";
  for (auto space : {ir::MemorySpace::Vec, ir::MemorySpace::Mat, ir::MemorySpace::Left, ir::MemorySpace::Right,
                     ir::MemorySpace::Acc, ir::MemorySpace::Bias, ir::MemorySpace::LeftScale,
                     ir::MemorySpace::RightScale}) {
    const int64_t used = kernel.high_water[static_cast<size_t>(space)];
    if (used > 0 || (space == ir::MemorySpace::Vec && kernel.core_type == rt::CoreType::AIV)) {
      out += fmt::format("  {}: {} of {} bytes used\n", ir::MemorySpaceName(space), used, soc.capacity(space));
    }
  }
  return out;
}

}  // namespace pypto::sim
