// AllocateMemoryAddr: places every tile of a kernel in its on-chip buffer.
//
// Straight-line kernels are scanned in order. A tile's block is released after its last use; an
// element-wise op whose operand dies at that op writes its result over the operand (in-place),
// which is what lets a 128x128 f32 add (three 64 KB tiles) fit in 184 KB of UB.
#include <fmt/format.h>

#include <map>
#include <optional>
#include <unordered_map>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

int64_t AlignUp(int64_t value, int64_t alignment) {
  return alignment <= 1 ? value : (value + alignment - 1) / alignment * alignment;
}

// First-fit allocation of aligned blocks in one buffer.
class BufferAllocator {
 public:
  BufferAllocator(int64_t capacity, int64_t alignment) : capacity_(capacity), alignment_(alignment) {}

  std::optional<int64_t> Allocate(int64_t size) {
    size = AlignUp(size, alignment_);
    int64_t cursor = 0;
    for (const auto& [offset, block_size] : live_) {
      if (offset - cursor >= size) break;
      cursor = AlignUp(offset + block_size, alignment_);
    }
    if (cursor + size > capacity_) return std::nullopt;
    live_[cursor] = size;
    in_use_ += size;
    return cursor;
  }
  void Release(int64_t offset) {
    auto it = live_.find(offset);
    if (it == live_.end()) return;
    in_use_ -= it->second;
    live_.erase(it);
  }
  int64_t in_use() const { return in_use_; }

 private:
  int64_t capacity_, alignment_;
  int64_t in_use_ = 0;
  std::map<int64_t, int64_t> live_;  // offset -> size
};

class UseIndex final : public IRVisitor {
 public:
  std::unordered_map<const Var*, size_t> last_use;
  size_t current = 0;

 protected:
  void VisitVar(const std::shared_ptr<const Var>& var) override { last_use[var.get()] = current; }
};

std::vector<const Var*> TileOperands(const StmtPtr& stmt) {
  std::vector<const Var*> operands;
  struct Collector final : IRVisitor {
    std::vector<const Var*>* out;
    void VisitVar(const std::shared_ptr<const Var>& var) override {
      if (var->type()->As<TileType>()) out->push_back(var.get());
    }
  } collector;
  collector.out = &operands;
  if (const auto* assign = stmt->As<AssignStmt>()) collector.VisitExpr(assign->value());
  else collector.VisitStmt(stmt);
  return operands;
}

class KernelAllocator {
 public:
  KernelAllocator(const Function& kernel, const SocSpec& soc) : kernel_(kernel), soc_(soc) {}

  Result<FunctionPtr> Run() {
    auto stmts = FlattenStmts(kernel_.body());
    UseIndex uses;
    for (uses.current = 0; uses.current < stmts.size(); ++uses.current) uses.VisitStmt(stmts[uses.current]);
    last_use_ = std::move(uses.last_use);

    std::unordered_map<const Var*, VarPtr> placed;
    for (size_t i = 0; i < stmts.size(); ++i) {
      auto operands = TileOperands(stmts[i]);
      const auto* assign = stmts[i]->As<AssignStmt>();
      const auto* tile = assign ? assign->var()->type()->As<TileType>() : nullptr;
      const Var* inherited = nullptr;
      if (tile) {
        inherited = InPlaceOperand(*assign, operands, i);
        auto memref = inherited ? Block(inherited) : Allocate(*assign->var(), *tile);
        if (!memref) return pypto::unexpected(memref.error());
        auto type = std::make_shared<TileType>(tile->shape(), tile->dtype(), tile->memory_space(), *memref);
        placed[assign->var().get()] =
            std::make_shared<Var>(assign->var()->name_hint(), type, assign->var()->span());
        owner_[Key(tile->memory_space(), memref->byte_offset)] = assign->var().get();
        space_of_[assign->var().get()] = {tile->memory_space(), memref->byte_offset, memref->size};
      }
      for (const auto* operand : operands)
        if (operand != inherited && last_use_[operand] == i) Release(operand);
      if (tile && !last_use_.contains(assign->var().get())) Release(assign->var().get());
    }
    return kernel_.WithBody(SubstituteVars(kernel_.body(), placed));
  }

 private:
  struct Placement {
    MemorySpace space;
    int64_t offset;
    int64_t size;
  };
  static int64_t Key(MemorySpace space, int64_t offset) { return (static_cast<int64_t>(space) << 48) | offset; }

  // An operand whose life ends here and whose block can hold the result.
  const Var* InPlaceOperand(const AssignStmt& assign, const std::vector<const Var*>& operands, size_t index) {
    const auto* call = assign.value()->As<Call>();
    if (!call || !call->is_op_call() || !call->op()->inplace_safe) return nullptr;
    const auto& result = *assign.var()->type()->As<TileType>();
    for (const auto* operand : operands) {
      auto it = space_of_.find(operand);
      if (it == space_of_.end() || last_use_[operand] != index) continue;
      if (owner_[Key(it->second.space, it->second.offset)] != operand) continue;
      if (it->second.space == result.memory_space() && it->second.size >= result.num_bytes()) return operand;
    }
    return nullptr;
  }

  Result<TileMemRef> Block(const Var* var) {
    const auto& placement = space_of_.at(var);
    return TileMemRef{placement.offset, placement.size};
  }

  Result<TileMemRef> Allocate(const Var& var, const TileType& tile) {
    auto [it, inserted] =
        buffers_.try_emplace(tile.memory_space(), soc_.capacity(tile.memory_space()), soc_.alignment);
    auto offset = it->second.Allocate(tile.num_bytes());
    if (!offset) {
      int64_t capacity = soc_.capacity(tile.memory_space());
      return MakeError(DiagnosticKind::Resource,
                       fmt::format("kernel '{}' does not fit in {}: tile '{}' ({}) needs {} bytes while {} bytes "
                                   "are in use, and {} has {} bytes",
                                   kernel_.name(), MemorySpaceName(tile.memory_space()), var.name_hint(), tile.str(),
                                   tile.num_bytes(), it->second.in_use(), soc_.name, capacity),
                       var.span(), "use smaller tiles, or let tiles die earlier so their buffers can be reused");
    }
    return TileMemRef{*offset, tile.num_bytes()};
  }

  void Release(const Var* var) {
    auto it = space_of_.find(var);
    if (it == space_of_.end()) return;
    auto key = Key(it->second.space, it->second.offset);
    if (owner_[key] != var) return;  // the block was handed to an in-place result
    buffers_.at(it->second.space).Release(it->second.offset);
    owner_.erase(key);
  }

  const Function& kernel_;
  const SocSpec& soc_;
  std::unordered_map<const Var*, size_t> last_use_;
  std::map<MemorySpace, BufferAllocator> buffers_;
  std::unordered_map<const Var*, Placement> space_of_;
  std::unordered_map<int64_t, const Var*> owner_;
};

}  // namespace

Pass AllocateMemoryAddr() {
  return Pass("AllocateMemoryAddr", {IRProperty::NoNestedCalls, IRProperty::CoreTypesResolved}, {IRProperty::TileMemoryAllocated}, {},
              [](const ProgramPtr& program, const PassContext& context) -> Result<ProgramPtr> {
                std::vector<FunctionPtr> functions;
                for (const auto& function : program->functions()) {
                  if (!IsKernel(function->type())) {
                    functions.push_back(function);
                    continue;
                  }
                  auto allocated = KernelAllocator(*function, *context.soc).Run();
                  if (!allocated) return pypto::unexpected(allocated.error());
                  functions.push_back(*allocated);
                }
                return std::make_shared<Program>(program->name(), functions, program->entry_name());
              });
}

}  // namespace pypto::passes
