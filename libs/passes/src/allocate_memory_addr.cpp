// AllocateMemoryAddr: places every tile of a kernel in its on-chip buffer.
//
// Straight-line kernels are scanned in order. A tile's block is released after its last use; an
// element-wise op whose operand dies at that op writes its result over the operand (in-place),
// which is what lets a 128x128 f32 add (three 64 KB tiles) fit in 184 KB of UB. Some results are
// their operand's storage by definition (a reshape view, matmul_acc's accumulator): they share
// its block, which stays allocated while any tile sharing it is live.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

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

// The kernel's statements in execution order, flattened through loops, with each tile's last use.
// A tile defined outside a loop and used inside it stays live until the loop's last statement,
// since every iteration reads it.
class Liveness {
 public:
  explicit Liveness(const StmtPtr& body) {
    Number(body);
    Collect(body, {});
  }
  const std::vector<StmtPtr>& order() const { return order_; }
  const std::unordered_map<const Var*, size_t>& last_use() const { return last_use_; }

 private:
  struct Loop {
    size_t first, last;
  };

  // First pass: leaf statements in order, and the index range each loop covers.
  void Number(const StmtPtr& stmt) {
    if (const auto* seq = stmt->As<SeqStmts>()) {
      for (const auto& child : seq->stmts()) Number(child);
    } else if (const auto* loop = stmt->As<ForStmt>()) {
      size_t first = order_.size();
      Number(loop->body());
      loops_[loop] = Loop{first, order_.empty() ? first : order_.size() - 1};
    } else {
      order_.push_back(stmt);
    }
  }

  // Second pass: uses, extended to the end of every loop that does not contain the definition.
  void Collect(const StmtPtr& stmt, std::vector<Loop> enclosing) {
    if (const auto* seq = stmt->As<SeqStmts>()) {
      for (const auto& child : seq->stmts()) Collect(child, enclosing);
      return;
    }
    if (const auto* loop = stmt->As<ForStmt>()) {
      enclosing.push_back(loops_.at(loop));
      Collect(loop->body(), std::move(enclosing));
      return;
    }
    size_t index = next_++;  // the same traversal order as Number()
    if (const auto* assign = stmt->As<AssignStmt>()) def_[assign->var().get()] = index;
    for (const auto* var : Operands(stmt)) {
      size_t last = index;
      auto def = def_.find(var);
      for (const auto& loop : enclosing)
        if (def == def_.end() || def->second < loop.first) last = std::max(last, loop.last);
      last_use_[var] = std::max(last_use_[var], last);
    }
  }

  std::vector<StmtPtr> order_;
  std::unordered_map<const ForStmt*, Loop> loops_;
  std::unordered_map<const Var*, size_t> def_, last_use_;
  size_t next_ = 0;

 public:
  // Tiles a statement reads (an assignment's target is not read).
  static std::vector<const Var*> Operands(const StmtPtr& stmt) {
    struct Collector final : IRVisitor {
      std::vector<const Var*> vars;
      void VisitVar(const std::shared_ptr<const Var>& var) override {
        if (var->type()->As<TileType>()) vars.push_back(var.get());
      }
    } collector;
    if (const auto* assign = stmt->As<AssignStmt>()) collector.VisitExpr(assign->value());
    else collector.VisitStmt(stmt);
    return collector.vars;
  }
};

class KernelAllocator {
 public:
  KernelAllocator(const Function& kernel, const SocSpec& soc) : kernel_(kernel), soc_(soc) {}

  Result<FunctionPtr> Run() {
    Liveness liveness(kernel_.body());
    const auto& stmts = liveness.order();
    last_use_ = liveness.last_use();

    std::unordered_map<const Var*, VarPtr> placed;
    for (size_t i = 0; i < stmts.size(); ++i) {
      auto operands = Liveness::Operands(stmts[i]);
      const auto* assign = stmts[i]->As<AssignStmt>();
      const auto* tile = assign ? assign->var()->type()->As<TileType>() : nullptr;
      if (tile) {
        const Var* shared = AliasedOperand(*assign);
        if (!shared) shared = InPlaceOperand(*assign, operands, i);
        auto memref = shared ? Block(shared) : Allocate(*assign->var(), *tile);
        if (!memref) return pypto::unexpected(memref.error());
        auto type = std::make_shared<TileType>(tile->shape(), tile->dtype(), tile->memory_space(), *memref);
        placed[assign->var().get()] =
            std::make_shared<Var>(assign->var()->name_hint(), type, assign->var()->span());
        ++holders_[Key(tile->memory_space(), memref->byte_offset)];
        space_of_[assign->var().get()] = {tile->memory_space(), memref->byte_offset, memref->size};
      }
      for (const auto* operand : operands)
        if (last_use_[operand] == i) Release(operand);
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

  // The operand whose storage the result is by the op's definition (OpDef::result_aliases_arg).
  const Var* AliasedOperand(const AssignStmt& assign) const {
    const auto* call = assign.value()->As<Call>();
    if (!call || !call->is_op_call() || !call->op()->result_aliases_arg) return nullptr;
    const auto* var = call->args()[static_cast<size_t>(*call->op()->result_aliases_arg)]->As<Var>();
    return var && space_of_.contains(var) ? var : nullptr;
  }

  // An operand whose life ends here, which alone holds a block that can hold the result.
  const Var* InPlaceOperand(const AssignStmt& assign, const std::vector<const Var*>& operands, size_t index) {
    const auto* call = assign.value()->As<Call>();
    if (!call || !call->is_op_call() || !call->op()->inplace_safe) return nullptr;
    const auto& result = *assign.var()->type()->As<TileType>();
    for (const auto* operand : operands) {
      auto it = space_of_.find(operand);
      if (it == space_of_.end() || last_use_[operand] != index) continue;
      if (holders_[Key(it->second.space, it->second.offset)] != 1) continue;
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

  // Called once per tile, at its last use; the block is freed when its last holder goes.
  void Release(const Var* var) {
    auto it = space_of_.find(var);
    if (it == space_of_.end() || !released_.insert(var).second) return;  // x * x uses x twice
    auto key = Key(it->second.space, it->second.offset);
    if (--holders_[key] > 0) return;
    buffers_.at(it->second.space).Release(it->second.offset);
    holders_.erase(key);
  }

  const Function& kernel_;
  const SocSpec& soc_;
  std::unordered_map<const Var*, size_t> last_use_;
  std::map<MemorySpace, BufferAllocator> buffers_;
  std::unordered_map<const Var*, Placement> space_of_;
  std::unordered_map<int64_t, int> holders_;  // live tiles per block (Key)
  std::unordered_set<const Var*> released_;
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
