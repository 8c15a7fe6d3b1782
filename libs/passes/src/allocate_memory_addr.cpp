// AllocateMemoryAddr: places every tile of a kernel in its on-chip buffer.
//
// Straight-line kernels are scanned in order. A tile's block is released after its last use; an
// element-wise op whose operand dies at that op writes its result over the operand (in-place),
// which is what lets a 128x128 f32 add (three 64 KB tiles) fit in 184 KB of UB. Some results are
// their operand's storage by definition (a reshape view, matmul_acc's accumulator): they share
// its block, which stays allocated while any tile sharing it is live. A band of whole rows sliced
// from an Acc tile is a view too, as upstream's tile.slice is (pto.subview): a product too large
// to copy a window of next to it in L0C is read out band by band (see SliceView), and a window a
// product accumulates into is its destination in the tile (AccumulatedWindow). A transposed view
// of a Mat tile is a copy here but its source's bytes on a device, so the source lives while the view
// is read (ExtendViewSources).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/passes.h"

#include "acc_window_view.h"
#include "banded_fill_stores.h"
#include "pipe_slot_region.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

int64_t AlignUp(int64_t value, int64_t alignment) {
  return alignment <= 1 ? value : (value + alignment - 1) / alignment * alignment;
}

// First-fit allocation of aligned blocks in one buffer, at or past `floor` (what lies below is
// reserved: a vector kernel's pipe slot region).
class BufferAllocator {
 public:
  BufferAllocator(int64_t capacity, int64_t alignment, int64_t floor = 0)
      : capacity_(capacity), alignment_(alignment), floor_(floor) {}

  std::optional<int64_t> Allocate(int64_t size) {
    size = AlignUp(size, alignment_);
    int64_t cursor = floor_;
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
  int64_t capacity_, alignment_, floor_;
  int64_t in_use_ = 0;
  std::map<int64_t, int64_t> live_;  // offset -> size
};

// The kernel's statements in execution order, flattened through loops and branches, with each
// tile's last use. A loop or an if appears once, as its header (where a loop's iter_args and return
// vars, and an if's return vars, are defined), before its bodies. A tile defined outside a loop and
// used inside it stays live until the loop's last statement, since every iteration reads it; a
// loop's or an if's return vars stay live at least to the statement's end.
class Liveness {
 public:
  explicit Liveness(const StmtPtr& body) {
    Number(body);
    Collect(body, {});
  }
  const std::vector<StmtPtr>& order() const { return order_; }
  const std::unordered_map<const Var*, size_t>& last_use() const { return last_use_; }
  // Every statement index that reads a tile (for hazard checks).
  const std::unordered_map<const Var*, std::vector<size_t>>& uses() const { return uses_; }
  const std::unordered_map<const Var*, size_t>& defs() const { return def_; }
  // Whether statements i and j sit in different branches of one if (so never both run).
  bool Exclusive(size_t i, size_t j) const {
    const auto &a = paths_[i], &b = paths_[j];
    for (size_t k = 0; k < std::min(a.size(), b.size()); ++k)
      if (a[k] != b[k]) return a[k].first == b[k].first;
    return false;
  }
  // The last statement index a loop or an if covers.
  size_t End(const Stmt* stmt) const { return ends_.at(stmt); }

 private:
  struct Loop {
    size_t first, last;
  };
  using Path = std::vector<std::pair<const IfStmt*, int>>;

  // First pass: statements in order, and the index range each loop covers.
  void Number(const StmtPtr& stmt) {
    if (const auto* seq = stmt->As<SeqStmts>()) {
      for (const auto& child : seq->stmts()) Number(child);
    } else if (auto loop = AsLoop(*stmt)) {
      Push(stmt);
      size_t first = order_.size();
      Number(loop->body);
      loops_[stmt.get()] = Loop{first, order_.size() - 1};
      ends_[stmt.get()] = order_.size() - 1;
    } else if (const auto* branch = stmt->As<IfStmt>()) {
      Push(stmt);
      path_.emplace_back(branch, 0);
      Number(branch->then_body());
      if (branch->else_body()) {
        path_.back().second = 1;
        Number(branch->else_body());
      }
      path_.pop_back();
      ends_[branch] = order_.size() - 1;
    } else {
      Push(stmt);
    }
  }
  void Push(const StmtPtr& stmt) {
    order_.push_back(stmt);
    paths_.push_back(path_);
  }

  // Second pass: uses, extended to the end of every loop that does not contain the definition.
  void Collect(const StmtPtr& stmt, std::vector<Loop> enclosing) {
    if (const auto* seq = stmt->As<SeqStmts>()) {
      for (const auto& child : seq->stmts()) Collect(child, enclosing);
      return;
    }
    size_t index = next_++;  // the same traversal order as Number()
    if (const auto* assign = stmt->As<AssignStmt>()) def_[assign->var().get()] = index;
    for (const auto* var : Operands(stmt)) Use(var, index, enclosing);
    if (auto loop = AsLoop(*stmt)) {
      for (const auto& iter_arg : loop->iter_args) def_[iter_arg.var.get()] = index;
      for (const auto& var : loop->return_vars) def_[var.get()] = index;
      enclosing.push_back(loops_.at(stmt.get()));
      // A while condition is evaluated before every iteration: what it reads lives through the loop.
      if (stmt->Is<WhileStmt>())
        for (const auto* var : Operands(stmt)) Use(var, index, enclosing);
      Collect(loop->body, enclosing);
      for (const auto& var : loop->return_vars) KeepTo(var.get(), loops_.at(stmt.get()).last);
    } else if (const auto* branch = stmt->As<IfStmt>()) {
      for (const auto& var : branch->return_vars()) def_[var.get()] = index;
      Collect(branch->then_body(), enclosing);
      if (branch->else_body()) Collect(branch->else_body(), enclosing);
      for (const auto& var : branch->return_vars()) KeepTo(var.get(), ends_.at(branch));
    }
  }

  void Use(const Var* var, size_t index, const std::vector<Loop>& enclosing) {
    size_t last = index;
    auto def = def_.find(var);
    for (const auto& loop : enclosing)
      if (def == def_.end() || def->second < loop.first) last = std::max(last, loop.last);
    last_use_[var] = std::max(last_use_[var], last);
    uses_[var].push_back(index);
  }
  void KeepTo(const Var* var, size_t index) {
    if (var->type()->As<TileType>()) last_use_[var] = std::max(last_use_[var], index);
  }

  std::vector<StmtPtr> order_;
  std::vector<Path> paths_;
  Path path_;
  std::unordered_map<const Stmt*, Loop> loops_;
  std::unordered_map<const Stmt*, size_t> ends_;
  std::unordered_map<const Var*, size_t> def_, last_use_;
  std::unordered_map<const Var*, std::vector<size_t>> uses_;
  size_t next_ = 0;

 public:
  // Tiles a statement reads (an assignment's target is not read; a loop's header reads its init
  // values, an if's its condition).
  static std::vector<const Var*> Operands(const StmtPtr& stmt) {
    struct Collector final : IRVisitor {
      std::vector<const Var*> vars;
      void VisitVar(const std::shared_ptr<const Var>& var) override {
        if (var->type()->As<TileType>()) vars.push_back(var.get());
      }
    } collector;
    if (const auto* assign = stmt->As<AssignStmt>()) collector.VisitExpr(assign->value());
    else if (const auto* loop = stmt->As<ForStmt>())
      for (const auto& iter_arg : loop->iter_args()) collector.VisitExpr(iter_arg.init);
    else if (const auto* loop = stmt->As<WhileStmt>()) {
      for (const auto& iter_arg : loop->iter_args()) collector.VisitExpr(iter_arg.init);
      collector.VisitExpr(loop->condition());
    }
    else if (const auto* branch = stmt->As<IfStmt>()) collector.VisitExpr(branch->condition());
    else collector.VisitStmt(stmt);
    return collector.vars;
  }
};

// A loop-carried tile lives in one buffer, which its next value is computed into. An op that cannot
// write over its own operand (mrgsort, a transpose: `acc = pl.mrgsort(acc, ...)`) computes the next
// value into a buffer of its own instead: the loop yields a copy, `acc_next = merged`, which the
// allocator turns into a tile.move into the carried buffer.
class OutOfPlaceCarries : public IRMutator {
 protected:
  StmtPtr MutateFor(const std::shared_ptr<const ForStmt>& stmt) override {
    auto mutated = IRMutator::MutateFor(stmt);
    const auto* loop = mutated->As<ForStmt>();
    auto body = CopyNextValues(loop->body(), loop->iter_args());
    if (body == loop->body()) return mutated;
    return std::make_shared<ForStmt>(loop->loop_var(), loop->start(), loop->stop(), loop->step(), loop->iter_args(),
                                     body, loop->return_vars(), loop->kind(), loop->span());
  }

  StmtPtr MutateWhile(const std::shared_ptr<const WhileStmt>& stmt) override {
    auto mutated = IRMutator::MutateWhile(stmt);
    const auto* loop = mutated->As<WhileStmt>();
    auto body = CopyNextValues(loop->body(), loop->iter_args());
    if (body == loop->body()) return mutated;
    return std::make_shared<WhileStmt>(loop->condition(), loop->iter_args(), body, loop->return_vars(), loop->span());
  }

 private:
  static StmtPtr CopyNextValues(const StmtPtr& body, const std::vector<IterArg>& iter_args) {
    std::vector<StmtPtr> stmts = FlattenStmts(body);
    const auto* yield = stmts.empty() ? nullptr : stmts.back()->As<YieldStmt>();
    if (!yield) return body;
    std::vector<ExprPtr> values = yield->values();
    std::vector<StmtPtr> copies;
    for (size_t i = 0; i < iter_args.size() && i < values.size(); ++i) {
      const auto* next = values[i]->As<Var>();
      if (!next || !next->type()->As<TileType>() || !ComputedOutOfPlace(stmts, *next, *iter_args[i].var)) continue;
      auto copy = std::make_shared<Var>(next->name_hint() + "_next", next->type(), next->span());
      copies.push_back(std::make_shared<AssignStmt>(copy, values[i], yield->span()));
      values[i] = copy;
    }
    if (copies.empty()) return body;
    stmts.pop_back();
    stmts.insert(stmts.end(), copies.begin(), copies.end());
    stmts.push_back(std::make_shared<YieldStmt>(std::move(values), yield->span()));
    return std::make_shared<SeqStmts>(std::move(stmts), body->span());
  }

  // Whether `next` is assigned, among `stmts`, the result of an op reading `carried` that cannot
  // write over its operands (CheckOverwrite's test).
  static bool ComputedOutOfPlace(const std::vector<StmtPtr>& stmts, const Var& next, const Var& carried) {
    for (const auto& stmt : stmts) {
      const auto* assign = stmt->As<AssignStmt>();
      if (!assign || assign->var().get() != &next) continue;
      const auto* call = assign->value()->As<Call>();
      if (!call || !call->is_op_call() || call->op()->inplace_safe || call->op()->result_aliases_arg) return false;
      return std::any_of(call->args().begin(), call->args().end(),
                         [&](const ExprPtr& arg) { return arg.get() == &carried; });
    }
    return false;
  }
};

// Tiles that must live in one buffer: a loop's init value, iter_arg, yielded value and return var
// (so the body updates the carried tile in place), and an if's return var with the values its
// branches yield. A union-find over variables.
class SharedBuffers {
 public:
  explicit SharedBuffers(const StmtPtr& body) { Walk(body); }

  const Var* Root(const Var* var) const {
    auto it = parent_.find(var);
    return it == parent_.end() || it->second == var ? var : Root(it->second);
  }
  bool Shared(const Var* var) const { return parent_.contains(var); }
  // The loops carrying a tile: (loop, index of the iter_arg).
  const std::vector<std::pair<const Stmt*, size_t>>& carries() const { return carries_; }

 private:
  void Walk(const StmtPtr& stmt) {
    for (const auto& child : FlattenStmts(stmt)) {
      if (auto loop = AsLoop(*child)) {
        const auto* yield = TrailingYield(loop->body);
        for (size_t i = 0; i < loop->iter_args.size(); ++i) {
          const Var* var = loop->iter_args[i].var.get();
          if (!var->type()->As<TileType>()) continue;
          Join(var, loop->iter_args[i].init.get());
          if (i < loop->return_vars.size()) Join(var, loop->return_vars[i].get());
          if (yield && i < yield->values().size()) Join(var, yield->values()[i].get());
          carries_.emplace_back(child.get(), i);
        }
        Walk(loop->body);
      } else if (const auto* branch = child->As<IfStmt>()) {
        for (const auto& body : {branch->then_body(), branch->else_body()}) {
          if (!body) continue;
          const auto* yield = TrailingYield(body);
          for (size_t i = 0; yield && i < branch->return_vars().size() && i < yield->values().size(); ++i)
            if (branch->return_vars()[i]->type()->As<TileType>())
              Join(branch->return_vars()[i].get(), yield->values()[i].get());
          Walk(body);
        }
      }
    }
  }

  void Join(const Var* a, const Expr* b_expr) {
    const auto* b = b_expr ? b_expr->As<Var>() : nullptr;
    if (!b) return;
    parent_.try_emplace(a, a);
    parent_.try_emplace(b, b);
    parent_[Root(a)] = Root(b);
  }

  std::unordered_map<const Var*, const Var*> parent_;
  std::vector<std::pair<const Stmt*, size_t>> carries_;
};

class KernelAllocator {
 public:
  // With `ring`, the tiles popped from the cube are placed in a pipe slot region at the bottom of UB
  // (pipe_slot_region.h), and every other Vec tile past it.
  // Without `views_keep_sources`, a transposed view's source may die before the view (for a kernel
  // whose Mat tiles fit no other way: the simulators run it, backend-ptoas refuses the view).
  KernelAllocator(const Function& kernel, const SocSpec& soc, const PipeSlotUse* ring = nullptr,
                  bool views_keep_sources = true)
      : kernel_(kernel), soc_(soc), ring_(ring), views_keep_sources_(views_keep_sources) {}

  // The bytes of the pipe slot region, after Run() placed a ring.
  int64_t ring_bytes() const { return ring_bytes_; }

  Result<FunctionPtr> Run() {
    Liveness liveness(kernel_.body());
    SharedBuffers shared_buffers(kernel_.body());
    shared_ = &shared_buffers;
    if (auto ok = CheckCarriedHazards(liveness, shared_buffers); !ok) return pypto::unexpected(ok.error());
    const auto& stmts = liveness.order();
    last_use_ = liveness.last_use();
    if (views_keep_sources_) ExtendViewSources(liveness);
    if (ring_)
      if (auto ok = PlanRing(liveness, shared_buffers); !ok) return pypto::unexpected(ok.error());
    CollectInPlaceWrites(liveness);
    // Statement index -> the tiles whose life ends there. A tile read inside a loop it was defined
    // outside of ends with the loop's last statement, which need not read it.
    std::unordered_map<size_t, std::vector<const Var*>> dying;
    for (const auto& [var, last] : last_use_) dying[last].push_back(var);

    for (size_t i = 0; i < stmts.size(); ++i) {
      auto operands = Liveness::Operands(stmts[i]);
      const auto* assign = stmts[i]->As<AssignStmt>();
      const auto* tile = assign ? assign->var()->type()->As<TileType>() : nullptr;
      std::vector<const Var*> defined;  // control-flow results defined here
      if (auto loop = AsLoop(*stmts[i])) {
        for (const auto& iter_arg : loop->iter_args) defined.push_back(iter_arg.var.get());
        for (const auto& var : loop->return_vars) defined.push_back(var.get());
      } else if (const auto* branch = stmts[i]->As<IfStmt>()) {
        for (const auto& var : branch->return_vars()) defined.push_back(var.get());
      }
      for (const auto* var : defined) {
        const auto* var_tile = var->type()->As<TileType>();
        if (!var_tile) continue;
        auto group = GroupBlock(var);
        auto memref = group ? Result<TileMemRef>(*group) : Allocate(*var, *var_tile);
        if (!memref) return pypto::unexpected(memref.error());
        Place(*var, *var_tile, *memref);
      }
      if (tile) {
        auto memref = PlaceAssigned(*assign, *tile, operands, i);
        if (!memref) return pypto::unexpected(memref.error());
        Place(*assign->var(), *tile, *memref);
      }
      if (auto it = dying.find(i); it != dying.end())
        for (const auto* var : it->second) Release(var);
      if (tile && !last_use_.contains(assign->var().get())) Release(assign->var().get());
      for (const auto* var : defined)
        if (!last_use_.contains(var)) Release(var);
    }
    auto body = InsertCopies(kernel_.body());
    if (!body) return pypto::unexpected(body.error());
    return kernel_.WithBody(SubstituteVars(*body, placed_));
  }

 private:
  struct Placement {
    MemorySpace space;
    int64_t offset;
    int64_t size;
  };
  static int64_t Key(MemorySpace space, int64_t offset) { return (static_cast<int64_t>(space) << 48) | offset; }

  // The pipe slot region: a popped tile holds its slot until its last reader, and slots are freed in
  // the order of their pops (a pipe frees its oldest slot), so each holds it at least as long as the
  // tiles popped before it. The ring is as deep as the most slots held at once.
  Result<bool> PlanRing(const Liveness& liveness, const SharedBuffers& shared) {
    size_t freed = 0;
    std::map<size_t, int> held;  // statement -> slots taken (+) there, or given back (-) after it
    for (const Var* pop : ring_->pops) {
      if (shared.Shared(pop)) return RingError(*pop, "it is carried by a loop or an if");
      const size_t def = liveness.defs().at(pop);
      auto last = last_use_.find(pop);
      freed = std::max(freed, last == last_use_.end() ? def : last->second);
      last_use_[pop] = freed;
      ring_tiles_.insert(pop);
      ++held[def];
      --held[freed + 1];
    }
    int depth = 0, now = 0;
    for (const auto& [at, change] : held) depth = std::max(depth, now += change);
    if (depth > FrontendSlotsPerPipe(ring_->dir_mask))
      return RingError(*ring_->pops.front(), fmt::format("{} popped tiles are held at once", depth));
    ring_bytes_ = depth * ring_->slot_size;
    slots_.emplace(ring_bytes_, soc_.alignment);
    return true;
  }

  static pypto::unexpected<Diagnostic> RingError(const Var& tile, const std::string& why) {
    return MakeError(DiagnosticKind::Resource,
                     fmt::format("the tile '{}' popped from the cube cannot be read in its pipe slot: {}",
                                 tile.name_hint(), why),
                     tile.span(), "give it a buffer of its own");
  }
  bool InRing(const Var* var) const { return ring_tiles_.contains(var); }

  // The block of a tile's shared-buffer group, once some member of the group is placed.
  std::optional<TileMemRef> GroupBlock(const Var* var) {
    if (!shared_->Shared(var)) return std::nullopt;
    auto it = group_block_.find(shared_->Root(var));
    if (it == group_block_.end()) return std::nullopt;
    return TileMemRef{it->second.offset, it->second.size};
  }

  void Place(const Var& var, const TileType& tile, const TileMemRef& memref) {
    auto type = std::make_shared<TileType>(tile.shape(), tile.dtype(), tile.memory_space(), memref,
                                           tile.valid_shape());
    placed_[&var] = std::make_shared<Var>(var.name_hint(), type, var.span());
    ++holders_[Key(tile.memory_space(), memref.byte_offset)];
    space_of_[&var] = {tile.memory_space(), memref.byte_offset, memref.size};
    if (shared_->Shared(&var)) group_block_.try_emplace(shared_->Root(&var), space_of_[&var]);
  }

  // A tile.transpose_view has a block of its own (the simulators copy the transpose into it), but on a
  // device it is the source's bytes read in the transposed fractal layout (backend-ptoas writes it at
  // the source's address). So the source lives until the view's last read, or that of a tile naming
  // the view (`u = view`): no tile is placed in its bytes while they are read through the view.
  void ExtendViewSources(const Liveness& liveness) {
    std::vector<std::pair<const Var*, const Var*>> reads;  // (view or a name of one, what it reads)
    std::unordered_set<const Var*> views;
    for (const auto& stmt : liveness.order()) {
      const auto* assign = stmt->As<AssignStmt>();
      const Var* source = assign ? TransposedSource(*assign->value()) : nullptr;
      if (const auto* renamed = assign ? assign->value()->As<Var>() : nullptr; renamed && views.contains(renamed))
        source = renamed;
      if (!source) continue;
      views.insert(assign->var().get());
      reads.emplace_back(assign->var().get(), source);
    }
    // Latest first, so a view's life reaches its source after the tiles naming the view extended it.
    for (auto it = reads.rbegin(); it != reads.rend(); ++it) {
      auto view = last_use_.find(it->first);
      if (view == last_use_.end()) continue;
      const size_t last = view->second;
      last_use_[it->second] = std::max(last_use_[it->second], last);
    }
  }

  static const Var* TransposedSource(const Expr& value) {
    const auto* call = value.As<Call>();
    if (!call || !call->is_op_call() || call->target_name() != "tile.transpose_view") return nullptr;
    const auto* source = call->args()[0]->As<Var>();
    return source && source->type()->As<TileType>() ? source : nullptr;
  }

  // A carried tile is updated in place, so its previous value must not be read once the next one is
  // computed in the same iteration: `new = f(acc); g(acc); acc = new` would read the new value.
  Result<bool> CheckCarriedHazards(const Liveness& liveness, const SharedBuffers& shared) {
    const auto& order = liveness.order();
    for (const auto& [loop, index] : shared.carries()) {
      const Var* carried = AsLoop(*loop)->iter_args[index].var.get();
      auto uses = liveness.uses().find(carried);
      if (uses == liveness.uses().end()) continue;
      const size_t end = liveness.End(loop);
      for (size_t d = 0; d < order.size(); ++d) {
        const auto* assign = order[d]->As<AssignStmt>();
        if (!assign || d > end || shared.Root(assign->var().get()) != shared.Root(carried) ||
            !shared.Shared(assign->var().get()) || liveness.defs().at(carried) >= d)
          continue;
        if (auto ok = CheckOverwrite(*assign, carried, order[d]); !ok) return ok;
        for (size_t u : uses->second) {
          if (u <= d || u > end || order[u]->Is<YieldStmt>() || liveness.Exclusive(u, d)) continue;
          return MakeError(DiagnosticKind::Type,
                           fmt::format("the loop-carried tile '{}' is read after its next value '{}' is computed "
                                       "(line {}); both live in one buffer",
                                       carried->name_hint(), assign->var()->name_hint(), order[d]->span().line),
                           order[u]->span(), "compute the carried value's next value after its last read");
        }
      }
    }
    return true;
  }

  // Writing the carried tile's buffer while reading the carried tile is safe only for element-wise
  // ops (and ops whose result is that operand by definition, such as matmul_acc).
  static Result<bool> CheckOverwrite(const AssignStmt& assign, const Var* carried, const StmtPtr& stmt) {
    const auto* call = assign.value()->As<Call>();
    if (!call || !call->is_op_call() || call->op()->inplace_safe || call->op()->result_aliases_arg) return true;
    for (const auto& arg : call->args())
      if (arg.get() == carried)
        return MakeError(DiagnosticKind::Type,
                         fmt::format("'{}' computes the next value of the loop-carried tile '{}' from it with {}, "
                                     "which cannot write over its own operand",
                                     assign.var()->name_hint(), carried->name_hint(), call->op()->name),
                         stmt->span(), "compute into a temporary first, then combine it with an element-wise op");
    return true;
  }

  // The block of an assigned tile. A tile of a shared-buffer group takes the group's block; a plain
  // `u = t` into a group is copied there (t keeps its own block: it may be read after the group's
  // buffer is overwritten, `if c: u = t` beside `u = f(t)`). Outside a group, `u = t` is t itself.
  Result<TileMemRef> PlaceAssigned(const AssignStmt& assign, const TileType& tile,
                                   const std::vector<const Var*>& operands, size_t index) {
    const Var* var = assign.var().get();
    const auto* source = assign.value()->As<Var>();
    if (source && !space_of_.contains(source)) source = nullptr;
    if (source && InRing(source)) return RingError(*source, fmt::format("'{}' renames it", var->name_hint()));
    if (shared_->Shared(var) && source) {
      auto group = GroupBlock(var);
      Result<TileMemRef> memref = group ? Result<TileMemRef>(*group) : Allocate(*var, tile);
      if (memref && !SameBlock(*source, *memref)) copies_.insert(&assign);
      return memref;
    }
    if (auto group = GroupBlock(var)) return *group;
    if (source) {
      if (views_.contains(source)) views_.insert(var);  // `u = view` names the same window
      return Block(source);
    }
    if (const Var* parent = SliceView(assign, index)) {
      views_.insert(assign.var().get());
      return Block(parent);
    }
    const Var* shared = AliasedOperand(assign);
    if (shared && InRing(shared)) return RingError(*shared, fmt::format("'{}' writes into it", var->name_hint()));
    if (shared && views_.contains(shared)) views_.insert(var);  // a product accumulated into a view
    if (!shared) shared = InPlaceOperand(assign, operands, index);
    return shared ? Block(shared) : Allocate(*var, tile);
  }

  bool SameBlock(const Var& var, const TileMemRef& block) const {
    const auto& placement = space_of_.at(&var);
    return placement.offset == block.byte_offset && placement.size == block.size;
  }

  // The plain assignments PlaceAssigned copies become `tile.move` into the tile's own buffer.
  Result<StmtPtr> InsertCopies(const StmtPtr& body) const {
    if (copies_.empty()) return body;
    class CopyInserter : public IRMutator {
     public:
      explicit CopyInserter(const std::unordered_set<const AssignStmt*>& copies) : copies_(copies) {}
      std::optional<Diagnostic> error;

     protected:
      StmtPtr MutateAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
        if (!copies_.contains(stmt.get())) return IRMutator::MutateAssign(stmt);
        const auto& tile = *stmt->var()->type()->As<TileType>();
        auto copy = OpRegistry::Get().CreateCall("tile.move", {stmt->value()},
                                                 {{"target_memory", tile.memory_space()}}, stmt->span());
        if (!copy) {
          if (!error) error = copy.error();
          return stmt;
        }
        return std::make_shared<AssignStmt>(stmt->var(), *copy, stmt->span());
      }

     private:
      const std::unordered_set<const AssignStmt*>& copies_;
    };
    CopyInserter inserter(copies_);
    auto rewritten = inserter.MutateStmt(body);
    if (inserter.error) return pypto::unexpected(*inserter.error);
    return rewritten;
  }

  // The operand whose storage the result is by the op's definition (OpDef::result_aliases_arg).
  const Var* AliasedOperand(const AssignStmt& assign) const {
    const auto* call = assign.value()->As<Call>();
    if (!call || !call->is_op_call() || !call->op()->result_aliases_arg) return nullptr;
    const auto* var = call->args()[static_cast<size_t>(*call->op()->result_aliases_arg)]->As<Var>();
    return var && space_of_.contains(var) ? var : nullptr;
  }

  // The Acc tile `assign` (a tile.slice) is a view of, or null when the window is a copy. A view
  // shares its parent's block (the simulator and codegen find the window from the slice's own
  // offsets), so it must be a contiguous band of the parent, only read (no op writes into it or
  // makes a view of it that others write) and outlived by no write into the parent.
  const Var* SliceView(const AssignStmt& assign, size_t index) const {
    const auto* call = assign.value()->As<Call>();
    if (!call || !call->is_op_call() || call->target_name() != "tile.slice") return nullptr;
    const auto* parent = call->args()[0]->As<Var>();
    if (!parent || !space_of_.contains(parent)) return nullptr;
    const auto* outer = parent->type()->As<TileType>();
    const auto* window = assign.var()->type()->As<TileType>();
    if (AccumulatedWindow(*assign.var(), *outer)) return parent;
    if (!IsRowBand(*window, *outer)) return nullptr;
    if (outer->memory_space() != MemorySpace::Acc && !VecBandView(*call, *parent)) return nullptr;
    const Var* view = assign.var().get();
    if (shared_->Shared(view) || written_in_place_.contains(view)) return nullptr;
    const auto last = last_use_.find(view);
    const size_t end = last == last_use_.end() ? index : last->second;
    for (const auto& [at, written] : writes_) {
      if (at <= index || at > end) continue;
      const auto placed = space_of_.find(written);
      if (placed == space_of_.end()) return nullptr;  // not placed yet: it may alias the parent
      const auto& block = space_of_.at(parent);
      if (placed->second.space == block.space && placed->second.offset == block.offset) return nullptr;
    }
    return parent;
  }

  // A window of an Acc matrix that only products accumulate into is a view wherever it lies (its
  // rows may be strided in the parent): the product lands in the parent (acc_window_view.h).
  bool AccumulatedWindow(const Var& view, const TileType& outer) const {
    return accumulated_.contains(&view) && !other_writes_.contains(&view) && !shared_->Shared(&view) &&
           IsAccWindowViewable(outer);
  }

  // Beside a pipe slot region, a band of a Vec tile at a constant origin is a view too (as upstream's
  // tile.slice is): the kernel's slices then need no bytes of their own, which the ring took.
  bool VecBandView(const Call& slice, const Var& parent) const {
    if (!ring_ || InRing(&parent) || parent.type()->As<TileType>()->memory_space() != MemorySpace::Vec) return false;
    const auto* origin = slice.args()[2]->As<TupleLiteral>();
    return origin && std::all_of(origin->elements().begin(), origin->elements().end(),
                                 [](const ExprPtr& offset) { return AsConstInt(offset).has_value(); });
  }

  // Whether `window` is whole rows of `outer` (or part of one row): its bytes are contiguous there.
  // Only a matrix qualifies (a tile whose dimensions before the last two are all 1): a view is
  // placed by its last two offsets (the simulator's DecodeSliceView, pto.subview of a 2-D tile), so
  // a window of an N-d batch at a batch offset above 0 would read batch 0, and one of partial rows
  // of several batches is not contiguous at all. Such a window is copied.
  static bool IsRowBand(const TileType& window, const TileType& outer) {
    const auto& inner = window.shape();
    const auto& whole = outer.shape();
    if (inner.size() < 2 || whole.size() < 2 || inner.back() <= 0) return false;
    if (!std::all_of(whole.begin(), whole.end() - 2, [](int64_t extent) { return extent == 1; })) return false;
    return inner.back() == whole.back() || window.num_elements() == inner.back();
  }

  // Each op that writes into an operand's buffer (OpDef::result_aliases_arg): (statement, operand).
  void CollectInPlaceWrites(const Liveness& liveness) {
    const auto& order = liveness.order();
    std::unordered_map<const Var*, std::vector<size_t>> products;  // tiles products accumulate into
    for (size_t i = 0; i < order.size(); ++i) {
      const auto* assign = order[i]->As<AssignStmt>();
      const auto* call = assign ? assign->value()->As<Call>() : nullptr;
      if (!call || !call->is_op_call() || !call->op()->result_aliases_arg) continue;
      const auto* target = call->args()[static_cast<size_t>(*call->op()->result_aliases_arg)]->As<Var>();
      if (!target || !target->type()->As<TileType>()) continue;
      writes_.emplace_back(i, target);
      written_in_place_.insert(target);
      if (call->target_name() == "tile.matmul_acc" || call->target_name() == "tile.gemv_acc")
        products[target].push_back(i);
      else
        other_writes_.insert(target);
    }
    for (const auto& [target, at] : products)
      if (OnlyAccumulatedInto(*target, at, liveness)) accumulated_.insert(target);
  }

  // Whether a tile is read only by the products accumulating into it (statements `at`) and their
  // results are never read: then a program that sliced it from an Acc tile meant the products to land
  // there (InferTileMemorySpace refuses the same program were the window a copy). A window read
  // otherwise stays a copy, as the simulator reads a view whose rows are strided only as such a
  // destination.
  static bool OnlyAccumulatedInto(const Var& tile, const std::vector<size_t>& at, const Liveness& liveness) {
    const auto reads = liveness.uses().find(&tile);
    if (reads != liveness.uses().end())
      for (size_t index : reads->second)
        if (std::find(at.begin(), at.end(), index) == at.end()) return false;
    for (size_t index : at) {
      const auto* result = liveness.order()[index]->As<AssignStmt>()->var().get();
      const auto used = liveness.uses().find(result);
      if (used != liveness.uses().end() && !used->second.empty()) return false;
    }
    return true;
  }

  // An operand whose life ends here, which alone holds a block that can hold the result.
  const Var* InPlaceOperand(const AssignStmt& assign, const std::vector<const Var*>& operands, size_t index) {
    const auto* call = assign.value()->As<Call>();
    if (!call || !call->is_op_call() || !call->op()->inplace_safe) return nullptr;
    const auto& result = *assign.var()->type()->As<TileType>();
    for (const auto* operand : operands) {
      auto it = space_of_.find(operand);
      if (it == space_of_.end() || last_use_[operand] != index || InRing(operand)) continue;
      if (holders_[Key(it->second.space, it->second.offset)] != 1) continue;
      if (views_.contains(operand)) continue;  // its bytes are a window inside the block, not its start
      if (Widens(result, *operand)) continue;
      if (it->second.space == result.memory_space() && it->second.size >= result.num_bytes()) return operand;
    }
    return nullptr;
  }

  // Whether the result's elements are wider than the operand's (a widening cast): written in place,
  // element i would land past element i of the operand, over elements not yet read.
  static bool Widens(const TileType& result, const Var& operand) {
    const auto* tile = operand.type()->As<TileType>();
    return tile && DataTypeBits(result.dtype()) > DataTypeBits(tile->dtype());
  }

  Result<TileMemRef> Block(const Var* var) {
    const auto& placement = space_of_.at(var);
    return TileMemRef{placement.offset, placement.size};
  }

  // Where the kernel came from: its pl.at scope or @pl.jit.incore definition, when the IR says.
  std::string ScopeOrigin() const {
    return kernel_.span().known() ? fmt::format(" (from {})", kernel_.span().str()) : "";
  }

  // A tile in a buffer this SoC has not: the MX scale buffers exist only on A5.
  Result<TileMemRef> MissingBuffer(const Var& var, const TileType& tile) const {
    const MemorySpace space = tile.memory_space();
    const bool scale = space == MemorySpace::LeftScale || space == MemorySpace::RightScale;
    return MakeError(DiagnosticKind::Resource,
                     fmt::format("kernel '{}'{} places tile '{}' ({}) in the {} ({}), which {} ({}) does not have",
                                 kernel_.name(), ScopeOrigin(), var.name_hint(), tile.str(), HardwareBufferName(space),
                                 MemorySpaceName(space), soc_.name, soc_.arch),
                     var.span(),
                     scale ? "the MX block-scale matmul (pl.matmul_mx) runs on A5: compile for a5 or a5sim"
                           : "compile for a platform whose SoC has that buffer");
  }

  Result<TileMemRef> Allocate(const Var& var, const TileType& tile) {
    if (InRing(&var)) {
      auto slot = slots_->Allocate(ring_->slot_size);
      if (!slot) return RingError(var, "its ring has no free slot");
      return TileMemRef{*slot, tile.num_bytes()};
    }
    const int64_t floor = tile.memory_space() == MemorySpace::Vec ? AlignUp(ring_bytes_, soc_.alignment) : 0;
    auto [it, inserted] =
        buffers_.try_emplace(tile.memory_space(), soc_.capacity(tile.memory_space()), soc_.alignment, floor);
    auto offset = it->second.Allocate(tile.num_bytes());
    if (!offset && soc_.capacity(tile.memory_space()) == 0) return MissingBuffer(var, tile);
    if (!offset) {
      int64_t capacity = soc_.capacity(tile.memory_space());
      return MakeError(DiagnosticKind::Resource,
                       fmt::format("kernel '{}'{} does not fit in {} ({}): tile '{}' ({}) needs {} bytes while {} "
                                   "bytes are in use, and {} has {} bytes",
                                   kernel_.name(), ScopeOrigin(), HardwareBufferName(tile.memory_space()),
                                   MemorySpaceName(tile.memory_space()), var.name_hint(), tile.str(), tile.num_bytes(),
                                   it->second.in_use(), soc_.name, capacity),
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
    if (InRing(var)) slots_->Release(it->second.offset);
    else buffers_.at(it->second.space).Release(it->second.offset);
    holders_.erase(key);
  }

  const Function& kernel_;
  const SocSpec& soc_;
  const PipeSlotUse* ring_ = nullptr;
  bool views_keep_sources_ = true;
  std::unordered_set<const Var*> ring_tiles_;  // the popped tiles read in their slots
  int64_t ring_bytes_ = 0;
  std::optional<BufferAllocator> slots_;       // the pipe slot region, one slot per block
  std::unordered_map<const Var*, size_t> last_use_;
  std::map<MemorySpace, BufferAllocator> buffers_;
  std::unordered_map<const Var*, Placement> space_of_;
  std::unordered_map<int64_t, int> holders_;  // live tiles per block (Key)
  std::unordered_set<const Var*> released_;
  const SharedBuffers* shared_ = nullptr;
  std::unordered_map<const Var*, Placement> group_block_;  // group root -> its block
  std::unordered_map<const Var*, VarPtr> placed_;
  std::unordered_set<const AssignStmt*> copies_;            // `u = t` that copy t into u's buffer
  std::vector<std::pair<size_t, const Var*>> writes_;     // in-place writes: (statement, tile written)
  std::unordered_set<const Var*> accumulated_;            // ... tiles only products accumulating into them read
  std::unordered_set<const Var*> other_writes_;           // ... tiles other ops write into
  std::unordered_set<const Var*> written_in_place_;       // ... their tiles
  std::unordered_set<const Var*> views_;                  // slices placed in their parent's block
};

// The first byte past a kernel's Vec tiles.
int64_t VecEnd(const Function& kernel) {
  struct Ends final : IRVisitor {
    int64_t end = 0;
    void VisitVar(const std::shared_ptr<const Var>& var) override { Extend(*var); }
    void VisitAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
      Extend(*stmt->var());
      IRVisitor::VisitAssign(stmt);
    }
    void Extend(const Var& var) {
      const auto* tile = var.type()->As<TileType>();
      if (tile && tile->memory_space() == MemorySpace::Vec && tile->memref())
        end = std::max(end, tile->memref()->byte_offset + tile->memref()->size);
    }
  } ends;
  ends.VisitStmt(kernel.body());
  return ends.end;
}

// A vector kernel whose tiles leave no room past them for the slot buffer of PTOAS's frontend pipe
// (pipe_slot_region.h) is placed again around a pipe slot region, when that fits: on a2a3 its ring
// is the local end of a pipe through GM, on a5 the whole ring, both members' `slot_num` that deep.
std::optional<FunctionPtr> WithPipeSlotRegion(const Function& kernel, const Result<FunctionPtr>& placed,
                                              const SocSpec& soc) {
  if (kernel.type() != FunctionType::AIV || (soc.arch != "a2a3" && soc.arch != "a5")) return std::nullopt;
  const PipeSlotUse use = CollectPipeSlotUse(kernel);
  if (use.pops.empty() || !std::all_of(use.pops.begin(), use.pops.end(), [](const Var* pop) {
        return ReadableInSlot(*pop);
      }))
    return std::nullopt;
  const int64_t ring = FrontendSlotsPerPipe(use.dir_mask) * use.slot_size;
  if (placed && AlignUp(VecEnd(**placed), soc.alignment) + ring <= soc.capacity(MemorySpace::Vec)) return std::nullopt;
  KernelAllocator allocator(kernel, soc, &use);
  auto around = allocator.Run();
  if (!around) return std::nullopt;
  auto attrs = (*around)->attrs();
  attrs[kPipeSlotRegionAttr] = allocator.ring_bytes();
  const Function& f = **around;
  return std::make_shared<Function>(f.name(), f.params(), f.param_directions(), f.return_types(), f.body(), f.type(),
                                    std::move(attrs), f.span());
}

}  // namespace

Pass AllocateMemoryAddr() {
  return Pass("AllocateMemoryAddr",
              {IRProperty::NoNestedCalls, IRProperty::CoreTypesResolved, IRProperty::StructuredCtrlFlow},
              {IRProperty::TileMemoryAllocated}, {},
              [](const ProgramPtr& program, const PassContext& context) -> Result<ProgramPtr> {
                return RewriteEachFunction(program, [&](const FunctionPtr& function) -> Result<FunctionPtr> {
                  if (!IsKernel(function->type())) return function;
                  auto banded = FillStoresInBands(function->body(), *context.soc);
                  if (!banded) return pypto::unexpected(banded.error());
                  auto body = OutOfPlaceCarries().MutateStmt(*banded);
                  const FunctionPtr kernel = body == function->body() ? function : function->WithBody(body);
                  auto placed = KernelAllocator(*kernel, *context.soc).Run();
                  // Mat too small to keep a transposed view's source alive: the simulators still run
                  // the kernel, and backend-ptoas names the tile placed over the source.
                  if (!placed) placed = KernelAllocator(*kernel, *context.soc, nullptr, false).Run();
                  if (auto ring = WithPipeSlotRegion(*kernel, placed, *context.soc)) return *ring;
                  return placed;
                });
              });
}

}  // namespace pypto::passes
