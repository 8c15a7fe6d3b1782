// tile.transpose_view: a Mat tile read transposed without moving it (upstream's zero-copy view of a
// matmul operand). The NZ bytes of an [N, K] Mat tile are the ZN bytes of its [K, N] transpose, so the
// view is a second alloc_tile at the source's address, typed [K, N] in the ZN layout, and a tmov or
// textract from it into Right reads the transpose, as the b_trans=True path does.
//
// Memory allocation gives the view a buffer of its own (its value is a copy on the simulators) and
// keeps the source alive while the view is read, so that no other tile takes the source's bytes then.
// Where Mat cannot hold both, it lets the source die first; the view is lowered only where no Mat tile
// in use while the view is read lies in the source's bytes, and otherwise the error names that tile.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "kernel_planner.h"
#include "pypto/ir/functor.h"

namespace pypto::backend_ptoas::detail {
namespace {

// When the bytes of each tile are in use, over the kernel's statements in execution order (a loop or
// an if counted once, as its header, before its bodies): from its definition to its last read, or to
// that of a tile naming it (KernelPlan::tile_aliases, by `root`). A tile read in a loop it was defined
// outside of is read until the loop's last statement, since every iteration reads it.
class TileLives {
 public:
  TileLives(const ir::StmtPtr& body, const std::map<const ir::Var*, const ir::Var*>& aliases) : aliases_(aliases) {
    Walk(body, {});
  }
  size_t Def(const ir::Var* tile) const { return def_.contains(tile) ? def_.at(tile) : 0; }
  size_t LastRead(const ir::Var* tile) const {
    const ir::Var* root = Root(tile);
    return std::max(Def(tile), last_read_.contains(root) ? last_read_.at(root) : 0);
  }

 private:
  struct Loop {
    size_t first, last;
  };

  const ir::Var* Root(const ir::Var* tile) const {
    auto it = aliases_.find(tile);
    return it == aliases_.end() ? tile : it->second;
  }

  void Walk(const ir::StmtPtr& stmt, std::vector<Loop> enclosing) {
    if (const auto* seq = stmt->As<ir::SeqStmts>()) {
      for (const auto& child : seq->stmts()) Walk(child, enclosing);
      return;
    }
    const size_t index = next_++;
    if (const auto* assign = stmt->As<ir::AssignStmt>()) def_[assign->var().get()] = index;
    for (const auto* tile : Reads(*stmt)) Read(tile, index, enclosing);
    if (auto loop = ir::AsLoop(*stmt)) {
      for (const auto& iter_arg : loop->iter_args) def_[iter_arg.var.get()] = index;
      for (const auto& var : loop->return_vars) def_[var.get()] = index;
      const size_t first = next_;
      enclosing.push_back(Loop{first, first + Count(loop->body) - 1});
      if (stmt->Is<ir::WhileStmt>())  // its condition is read before every iteration
        for (const auto* tile : Reads(*stmt)) Read(tile, index, enclosing);
      Walk(loop->body, enclosing);
    } else if (const auto* branch = stmt->As<ir::IfStmt>()) {
      for (const auto& var : branch->return_vars()) def_[var.get()] = index;
      Walk(branch->then_body(), enclosing);
      if (branch->else_body()) Walk(branch->else_body(), enclosing);
    }
  }

  void Read(const ir::Var* tile, size_t index, const std::vector<Loop>& enclosing) {
    size_t last = index;
    auto def = def_.find(tile);
    for (const auto& loop : enclosing)
      if (def == def_.end() || def->second < loop.first) last = std::max(last, loop.last);
    size_t& root_last = last_read_[Root(tile)];
    root_last = std::max(root_last, last);
  }

  // The statements `stmt` stands for in the numbering.
  static size_t Count(const ir::StmtPtr& stmt) {
    if (const auto* seq = stmt->As<ir::SeqStmts>()) {
      size_t n = 0;
      for (const auto& child : seq->stmts()) n += Count(child);
      return n;
    }
    if (auto loop = ir::AsLoop(*stmt)) return 1 + Count(loop->body);
    if (const auto* branch = stmt->As<ir::IfStmt>())
      return 1 + Count(branch->then_body()) + (branch->else_body() ? Count(branch->else_body()) : 0);
    return 1;
  }

  // The tiles a statement reads (a loop's header reads its initial values and condition, an if's its
  // condition; an assignment's target is not read).
  static std::vector<const ir::Var*> Reads(const ir::Stmt& stmt) {
    struct Collector final : ir::IRVisitor {
      std::vector<const ir::Var*> tiles;
      void VisitVar(const std::shared_ptr<const ir::Var>& var) override {
        if (var->type()->As<ir::TileType>()) tiles.push_back(var.get());
      }
    } collector;
    if (const auto* assign = stmt.As<ir::AssignStmt>()) {
      collector.VisitExpr(assign->value());
    } else if (auto loop = ir::AsLoop(stmt)) {
      for (const auto& iter_arg : loop->iter_args) collector.VisitExpr(iter_arg.init);
      if (const auto* condition_loop = stmt.As<ir::WhileStmt>()) collector.VisitExpr(condition_loop->condition());
    } else if (const auto* branch = stmt.As<ir::IfStmt>()) {
      collector.VisitExpr(branch->condition());
    } else if (const auto* eval = stmt.As<ir::EvalStmt>()) {
      collector.VisitExpr(eval->expr());
    } else if (const auto* yield = stmt.As<ir::YieldStmt>()) {
      for (const auto& value : yield->values()) collector.VisitExpr(value);
    } else if (const auto* ret = stmt.As<ir::ReturnStmt>()) {
      for (const auto& value : ret->values()) collector.VisitExpr(value);
    }
    return collector.tiles;
  }

  const std::map<const ir::Var*, const ir::Var*>& aliases_;
  std::unordered_map<const ir::Var*, size_t> def_, last_read_;
  size_t next_ = 0;
};

}  // namespace

Status Planner::CheckTransposeView(const ir::Call& call, const ir::Var& result, const ir::Span& span) {
  const ir::Var& source = *call.args()[0]->As<ir::Var>();
  const auto* tile = source.type()->As<ir::TileType>();
  if (tile->memory_space() != ir::MemorySpace::Mat) {
    return Error(span, fmt::format("backend-ptoas lowers 'tile.transpose_view' of a Mat tile only (on a device it "
                                   "reads the tile's fractal layout transposed), but '{}' in kernel '{}' lives in "
                                   "{}; transpose it with pl.transpose",
                                   source.name_hint(), kernel_.name(), ir::MemorySpaceName(tile->memory_space())));
  }
  plan_.zn_views[&result] = RootTile(source);
  zn_view_spans_[&result] = span;
  return {};
}

// The source's bytes are in use from its definition to the view's last read; another Mat tile in
// them is an error when its own use overlaps that.
Status Planner::CheckTransposeViewSources() const {
  if (plan_.zn_views.empty()) return {};
  const TileLives lives(kernel_.body(), plan_.tile_aliases);
  for (const auto& [view, source] : plan_.zn_views) {
    const auto& bytes = *source->type()->As<ir::TileType>()->memref();
    const size_t first = lives.Def(source), last = lives.LastRead(view);
    for (const auto* assign : plan_.tile_defs) {
      const ir::Var* other = assign->var().get();
      if (other == source || other == view) continue;
      if (auto it = plan_.zn_views.find(other); it != plan_.zn_views.end() && it->second == source) continue;
      const auto* type = other->type()->As<ir::TileType>();
      if (type->memory_space() != ir::MemorySpace::Mat) continue;
      const auto& place = *type->memref();
      if (place.byte_offset >= bytes.byte_offset + bytes.size || bytes.byte_offset >= place.byte_offset + place.size)
        continue;
      if (lives.Def(other) > last || lives.LastRead(other) < first) continue;
      return Error(zn_view_spans_.at(view),
                   fmt::format("backend-ptoas cannot lower 'tile.transpose_view' of '{}' in kernel '{}': on a device "
                               "the view '{}' reads the bytes of '{}' (Mat {}..{}), and memory allocation places "
                               "'{}' in them while the view is read (Mat cannot hold both); write the matmul as "
                               "pl.matmul(a, b, b_trans=True) of the untransposed tile instead",
                               source->name_hint(), kernel_.name(), view->name_hint(), source->name_hint(),
                               bytes.byte_offset, bytes.byte_offset + bytes.size, other->name_hint()));
    }
  }
  return {};
}

}  // namespace pypto::backend_ptoas::detail
