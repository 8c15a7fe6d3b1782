#include "overwritten_fills.h"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace pypto::sim {
namespace {

bool SameBytes(const TileRef& a, const TileRef& b) {
  return a.space == b.space && a.byte_offset == b.byte_offset && a.bytes == b.bytes;
}

bool Overlap(const TileRef& a, const TileRef& b) {
  return a.space == b.space && a.byte_offset < b.byte_offset + b.bytes && b.byte_offset < a.byte_offset + a.bytes;
}

bool IsCompute(const Instr& instr, ComputeKind kind) {
  return instr.op == Opcode::Compute && instr.compute.kind == kind;
}

// Instructions a jump can land on: branch targets, a loop's first body instruction (where LoopEnd
// goes back to) and the instruction after a loop (where LoopBegin exits to).
std::vector<bool> EntryPoints(const std::vector<Instr>& code) {
  std::vector<bool> entry(code.size() + 1, false);
  for (const Instr& instr : code) {
    if (instr.op == Opcode::BranchIfZero || instr.op == Opcode::Jump) entry[instr.branch.target] = true;
    if (instr.op == Opcode::LoopBegin || instr.op == Opcode::LoopEnd) entry[instr.loop.partner + 1] = true;
  }
  return entry;
}

bool OverwritesFill(const Instr& fill, const Instr& next) {
  if (!IsCompute(fill, ComputeKind::Fill) || fill.widen != Widen::None) return false;
  if (!IsCompute(next, ComputeKind::RowBroadcast) && !IsCompute(next, ComputeKind::ColBroadcast)) return false;
  if (next.partial || next.widen != Widen::None || next.kind != fill.kind) return false;
  if (!SameBytes(fill.dst, next.dst) || next.num_elements != fill.num_elements) return false;
  if (next.compute.rows * next.compute.cols != next.num_elements) return false;
  return !Overlap(next.src1, fill.dst);
}

}  // namespace

void DropOverwrittenFills(DecodedKernel& kernel) {
  std::vector<Instr>& code = kernel.code;
  const std::vector<bool> entry = EntryPoints(code);
  // new_index[i]: where instruction i goes; a dropped fill maps to its broadcast's new place.
  std::vector<uint32_t> new_index(code.size() + 1);
  std::vector<bool> dropped(code.size(), false);
  uint32_t kept = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    new_index[i] = kept;
    if (i + 1 < code.size() && !entry[i + 1] && OverwritesFill(code[i], code[i + 1])) {
      // The scalar code of both runs before the broadcast, in the order it ran before; it is
      // contiguous, since the decoder appends each instruction's scalar code as it emits it.
      Instr& next = code[i + 1];
      if (code[i].scalar_count != 0) {
        next.scalar_count += code[i].scalar_count;
        next.scalar_begin = code[i].scalar_begin;
      }
      dropped[i] = true;
      continue;
    }
    ++kept;
  }
  new_index[code.size()] = kept;
  if (kept == code.size()) return;
  std::vector<Instr> out;
  std::vector<InstrSource> sources;
  out.reserve(kept);
  sources.reserve(kept);
  for (size_t i = 0; i < code.size(); ++i) {
    if (dropped[i]) continue;
    Instr instr = code[i];
    if (instr.op == Opcode::BranchIfZero || instr.op == Opcode::Jump)
      instr.branch.target = new_index[instr.branch.target];
    if (instr.op == Opcode::LoopBegin || instr.op == Opcode::LoopEnd) instr.loop.partner = new_index[instr.loop.partner];
    out.push_back(instr);
    sources.push_back(kernel.sources[i]);
  }
  code = std::move(out);
  kernel.sources = std::move(sources);
}

}  // namespace pypto::sim
