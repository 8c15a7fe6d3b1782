// SplitOversizedAccumulatorChains: a K loop written in the kernel whose accumulator exceeds L0C is
// run once per block of the accumulator. So
//
//   acc = tile.create([M, N], target_memory=Acc)
//   for kb, (acc_i,) in range(..., init_values=(acc,)):
//     at = tile.load(...); bt = tile.load(...)            # [M, Kt] and [Kt, N] in Mat
//     if kb == 0: c = tile.matmul(tile.move(at, Left), tile.move(bt, Right))
//     else:       c = tile.matmul_acc(acc_i, tile.move(at, Left), tile.move(bt, Right))
//     yield c
//   tile.store(acc_n, [r, s], out)
//
// becomes
//
//   for acc_mi in range(0, M, m):
//     for acc_ni in range(0, N, n):
//       acc = tile.create([m, n], target_memory=Acc)
//       for kb, (acc_i,) in range(..., init_values=(acc,)):
//         ... the same loop, the moves becoming tile.extract(at, acc_mi, 0, [m, Kt], Left) and
//             tile.extract(bt, 0, acc_ni, [Kt, n], Right), every [M, N] value an [m, n] one
//       tile.store(acc_n, [r + acc_mi, s + acc_ni], out)
//
// The loop's other work (its loads) is repeated per block: it must have no effect but its values
// (no store in it), and the accumulator must be read only by the matmuls, yields and final stores.
#include "split_accumulator_chains.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"

#include "index_exprs.h"
#include "matmul_blocks.h"
#include "sequence_rewriter.h"
#include "stmt_patterns.h"

namespace pypto::passes {
namespace {

using namespace pypto::ir;

// Whether `type` is the accumulator's: the chain's values all have its type.
bool IsAccType(const TypePtr& type, const std::string& acc_type) { return type && type->str() == acc_type; }

// How a matmul in the loop reads one of its operands.
struct Feed {
  VarPtr mat;       // the Mat tile moved into Left/Right
  bool left;        // the left operand ([M, K], or [K, M] transposed), else the right one
  bool transposed;  // read with a_trans / b_trans
};

// What the loop does with the accumulator, and whether the block rewrite can follow all of it.
class ChainAnalysis final : public IRVisitor {
 public:
  ChainAnalysis(std::string acc_type, std::unordered_map<const Var*, int> reads)
      : acc_type_(std::move(acc_type)), reads_(std::move(reads)) {}

  bool ok = true;
  std::unordered_map<const Var*, Feed> feeds;  // moved operands, by the moved variable

  // Every matmul operand is a move read by the chain's matmuls only.
  bool Complete() const {
    if (!ok || feeds.empty()) return false;
    for (const auto& [var, uses] : operand_uses_) {
      const auto read = reads_.find(var);
      if (!feeds.contains(var) || read == reads_.end() || read->second != uses) return false;
    }
    return true;
  }

  void VisitAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    const auto* call = stmt->value()->As<Call>();
    const std::string op = call && call->is_op_call() ? call->target_name() : "";
    if (op == "tile.move") moves_[stmt->var().get()] = call;
    if (IsAccType(stmt->var()->type(), acc_type_)) {
      if (op == "tile.matmul" || op == "tile.matmul_acc") {
        Operands(*call, op == "tile.matmul_acc" ? 1 : 0);
      } else if (op != "tile.create") {
        ok = false;  // an accumulator made some other way
      }
    }
    IRVisitor::VisitAssign(stmt);
  }

  void VisitCall(const std::shared_ptr<const Call>& call) override {
    const bool acc_first = call->is_op_call() && call->target_name() == "tile.matmul_acc";
    // Nothing in the loop may write memory: it runs once per block.
    if (call->is_op_call() && call->target_name() == "tile.store") ok = false;
    if (!call->is_op_call()) ok = false;
    for (size_t i = 0; i < call->args().size(); ++i) {
      const ExprPtr& arg = call->args()[i];
      if (arg->Is<Var>() && IsAccType(arg->type(), acc_type_) && !(acc_first && i == 0)) ok = false;
    }
    IRVisitor::VisitCall(call);
  }

 private:
  void Operands(const Call& call, size_t first) {
    const bool a_trans = FindAttr<bool>(call.kwargs(), "a_trans").value_or(false);
    const bool b_trans = FindAttr<bool>(call.kwargs(), "b_trans").value_or(false);
    Operand(call.args()[first], true, a_trans);
    Operand(call.args()[first + 1], false, b_trans);
  }

  void Operand(const ExprPtr& arg, bool left, bool transposed) {
    const auto var = std::dynamic_pointer_cast<const Var>(arg);
    const auto move = var ? moves_.find(var.get()) : moves_.end();
    if (move == moves_.end()) {
      ok = false;
      return;
    }
    const auto mat = std::dynamic_pointer_cast<const Var>(move->second->args()[0]);
    const auto* tile = mat ? mat->type()->As<TileType>() : nullptr;
    if (!tile || tile->memory_space() != MemorySpace::Mat || tile->shape().size() != 2 ||
        tile->has_partial_valid_shape()) {
      ok = false;
      return;
    }
    const Feed feed{mat, left, transposed};
    auto [it, inserted] = feeds.emplace(var.get(), feed);
    if (!inserted && (it->second.left != left || it->second.transposed != transposed)) ok = false;
    ++operand_uses_[var.get()];
  }

  std::string acc_type_;
  std::unordered_map<const Var*, int> reads_;
  std::unordered_map<const Var*, const Call*> moves_;
  std::unordered_map<const Var*, int> operand_uses_;
};

// The loop rewritten for the block at (mi, ni): each [M, N] accumulator value an [m, n] one, each
// operand move a window extract.
class BlockRetyper final : public IRMutator {
 public:
  BlockRetyper(std::string acc_type, const std::unordered_map<const Var*, Feed>& feeds, ResultBlock block, ExprPtr mi,
               ExprPtr ni)
      : acc_type_(std::move(acc_type)), feeds_(feeds), block_(block), mi_(std::move(mi)), ni_(std::move(ni)) {}

  std::optional<Diagnostic> error;
  std::unordered_set<const Var*> windows;

  ExprPtr MutateVar(const std::shared_ptr<const Var>& var) override {
    if (auto it = renamed_.find(var.get()); it != renamed_.end()) return it->second;
    if (!IsAccType(var->type(), acc_type_)) return var;
    const auto& tile = *var->type()->As<TileType>();
    auto type = std::make_shared<TileType>(Shape{block_.m, block_.n}, tile.dtype(), tile.memory_space());
    auto renamed = std::make_shared<Var>(var->name_hint(), type, var->span());
    renamed_[var.get()] = renamed;
    return renamed;
  }

  ExprPtr MutateCall(const std::shared_ptr<const Call>& call) override {
    auto mutated = IRMutator::MutateCall(call);
    const auto& result = static_cast<const Call&>(*mutated);
    if (!IsAccType(call->type(), acc_type_)) return mutated;
    // Deduced again from the block's operands; a create takes the block's shape.
    std::vector<ExprPtr> args = result.args();
    if (result.target_name() == "tile.create") args[0] = IndexTuple({block_.m, block_.n}, call->span());
    return Remade(result.target_name(), std::move(args), result.kwargs(), call);
  }

  StmtPtr MutateAssign(const std::shared_ptr<const AssignStmt>& stmt) override {
    const auto feed = feeds_.find(stmt->var().get());
    if (feed == feeds_.end()) return IRMutator::MutateAssign(stmt);
    const Span& span = stmt->span();
    const auto& mat = *feed->second.mat->type()->As<TileType>();
    const ExprPtr zero = IndexConst(0, span);
    // A left operand is cut along M (its rows, or columns when transposed), a right one along N.
    const bool rows = feed->second.left != feed->second.transposed;
    const int64_t extent = feed->second.left ? block_.m : block_.n;
    const ExprPtr& at = feed->second.left ? mi_ : ni_;
    std::vector<int64_t> shape = mat.shape();
    shape[rows ? 0 : 1] = extent;
    Call::Kwargs kwargs{{"target_memory", feed->second.left ? MemorySpace::Left : MemorySpace::Right}};
    auto window = Remade("tile.extract",
                         {feed->second.mat, rows ? at : zero, rows ? zero : at, IndexTuple(shape, span)},
                         std::move(kwargs), stmt->value());
    auto var = std::make_shared<Var>(stmt->var()->name_hint(), window->type(), span);
    renamed_[stmt->var().get()] = var;
    windows.insert(var.get());
    return std::make_shared<AssignStmt>(var, window, span);
  }

 private:
  ExprPtr Remade(const std::string& op, std::vector<ExprPtr> args, Call::Kwargs kwargs, const ExprPtr& original) {
    auto call = OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), original->span());
    if (!call) {
      if (!error) error = call.error();
      return original;
    }
    return *call;
  }

  std::string acc_type_;
  const std::unordered_map<const Var*, Feed>& feeds_;
  ResultBlock block_;
  ExprPtr mi_, ni_;
  std::unordered_map<const Var*, VarPtr> renamed_;
};

// A chain found in a statement sequence.
struct Chain {
  size_t create, loop;
  std::vector<size_t> stores;  // ascending; every read of the loop's result
  VarPtr acc;
  ResultBlock block;
  std::unordered_map<const Var*, Feed> feeds;

  bool Replaces(size_t index) const {
    return index == create || index == loop || std::ranges::find(stores, index) != stores.end();
  }
};

class ChainSplitter final : public SequenceRewriter {
 public:
  ChainSplitter(const SocSpec& soc, std::unordered_map<const Var*, int> reads) : soc_(soc), reads_(std::move(reads)) {}

  std::unordered_set<const Var*> windows;

 protected:
  bool RewriteSequence(std::vector<StmtPtr>& stmts) override {
    bool changed = false;
    for (size_t i = 0; i < stmts.size(); ++i) {
      auto chain = Find(stmts, i);
      if (!chain) continue;
      auto nest = Build(*chain, stmts);
      if (!nest) {
        error = nest.error();
        return false;
      }
      // The nest takes the first store's place: whatever the loop or the stores read is defined by then.
      std::vector<StmtPtr> rewritten;
      for (size_t j = 0; j < stmts.size(); ++j) {
        if (j == chain->stores.front()) rewritten.push_back(*nest);
        if (!chain->Replaces(j)) rewritten.push_back(stmts[j]);
      }
      stmts = std::move(rewritten);
      changed = true;
    }
    return changed;
  }

 private:
  int ReadsOf(const Var& var) const {
    const auto it = reads_.find(&var);
    return it == reads_.end() ? 0 : it->second;
  }

  std::optional<Chain> Find(const std::vector<StmtPtr>& stmts, size_t i) const {
    const auto* create = stmts[i]->As<AssignStmt>();
    if (!create || !OpCallOf(stmts[i], "tile.create") || ReadsOf(*create->var()) != 1) return std::nullopt;
    const auto* acc = create->var()->type()->As<TileType>();
    if (!acc || acc->memory_space() != MemorySpace::Acc || acc->shape().size() != 2) return std::nullopt;
    const int64_t M = acc->shape()[0], N = acc->shape()[1], bytes = DataTypeBytes(acc->dtype());
    const int64_t l0c = soc_.capacity(MemorySpace::Acc);
    if (M * N * bytes <= l0c) return std::nullopt;
    for (size_t j = i + 1; j < stmts.size(); ++j) {
      const auto* loop = stmts[j]->As<ForStmt>();
      if (!loop || loop->iter_args().size() != 1 || loop->iter_args()[0].init.get() != create->var().get()) continue;
      const VarPtr& result = loop->return_vars()[0];
      Chain chain{.create = i, .loop = j, .acc = create->var()};
      for (size_t k = j + 1; k < stmts.size(); ++k) {
        const Call* store = OpCallOf(stmts[k], "tile.store");
        if (store && stmts[k]->Is<EvalStmt>() && store->args()[0].get() == result.get() && store->args().size() == 3 &&
            store->args()[1]->Is<TupleLiteral>())
          chain.stores.push_back(k);
      }
      if (chain.stores.empty() || static_cast<int>(chain.stores.size()) != ReadsOf(*result)) return std::nullopt;
      ChainAnalysis analysis(create->var()->type()->str(), reads_);
      analysis.VisitStmt(stmts[j]);
      if (!analysis.Complete()) return std::nullopt;
      auto block = ChooseResultBlock(M, N, bytes, l0c / 2, N);
      if (!block) return std::nullopt;
      chain.block = *block;
      chain.feeds = std::move(analysis.feeds);
      return chain;
    }
    return std::nullopt;
  }

  Result<StmtPtr> Build(const Chain& chain, const std::vector<StmtPtr>& stmts) {
    const Span& span = stmts[chain.loop]->span();
    const auto& acc = *chain.acc->type()->As<TileType>();
    const int64_t M = acc.shape()[0], N = acc.shape()[1];
    auto grid_var = [&](const char* suffix, int64_t extent, int64_t step) -> ExprPtr {
      if (extent == step) return IndexConst(0, span);
      return std::make_shared<Var>(fmt::format("{}_{}", chain.acc->name_hint(), suffix),
                                   std::make_shared<ScalarType>(DataType::INDEX), span);
    };
    ExprPtr mi = grid_var("mi", M, chain.block.m), ni = grid_var("ni", N, chain.block.n);
    BlockRetyper retyper(chain.acc->type()->str(), chain.feeds, chain.block, mi, ni);
    std::vector<StmtPtr> body{retyper.MutateStmt(stmts[chain.create]), retyper.MutateStmt(stmts[chain.loop])};
    if (retyper.error) return pypto::unexpected(*retyper.error);
    windows.insert(retyper.windows.begin(), retyper.windows.end());
    const VarPtr block_result =
        std::dynamic_pointer_cast<const Var>(retyper.MutateVar(stmts[chain.loop]->As<ForStmt>()->return_vars()[0]));
    for (size_t index : chain.stores) {
      auto store = BlockStore(*OpCallOf(stmts[index], "tile.store"), block_result, mi, ni);
      if (!store) return store;
      body.push_back(*store);
    }
    StmtPtr nest = std::make_shared<SeqStmts>(std::move(body), span);
    auto wrap = [&](const ExprPtr& var, int64_t extent, int64_t step) {
      if (extent == step) return;
      nest = std::make_shared<ForStmt>(std::dynamic_pointer_cast<const Var>(var), IndexConst(0, span),
                                       IndexConst(extent, span), IndexConst(step, span), nest, ForKind::Sequential,
                                       span);
    };
    wrap(ni, N, chain.block.n);
    wrap(mi, M, chain.block.m);
    return nest;
  }

  const SocSpec& soc_;
  std::unordered_map<const Var*, int> reads_;
};

}  // namespace

Result<SplitChains> SplitOversizedAccumulatorChains(const StmtPtr& kernel_body, const SocSpec& soc) {
  ChainSplitter splitter(soc, ReadCounts(kernel_body));
  StmtPtr body = splitter.MutateStmt(kernel_body);
  if (splitter.error) return pypto::unexpected(*splitter.error);
  return SplitChains{body, std::move(splitter.windows)};
}

}  // namespace pypto::passes
