#include <gtest/gtest.h>

#include "pypto/ir/functor.h"
#include "pypto/ir/printer.h"
#include "pypto/passes/passes.h"
#include "pypto/passes/pipeline.h"
#include "kernel_builder.h"
#include "sample_programs.h"

namespace pypto::passes {
namespace {

std::vector<ir::TileMemRef> TileAddresses(const ir::Program& program, const std::string& kernel) {
  std::vector<ir::TileMemRef> memrefs;
  for (const auto& stmt : ir::FlattenStmts(program.Find(kernel)->body()))
    if (const auto* assign = stmt->As<ir::AssignStmt>())
      if (const auto* tile = assign->var()->type()->As<ir::TileType>()) memrefs.push_back(*tile->memref());
  return memrefs;
}

TEST(AllocateMemoryAddr, SumReusesTheDeadOperandsBuffer) {
  auto lowered = Lower(testing::TileAddProgram(), PassContext{}, {.verify = true});
  ASSERT_TRUE(lowered) << lowered.error().str();
  EXPECT_EQ(TileAddresses(**lowered, "tile_add_incore_0"),
            (std::vector<ir::TileMemRef>{{0, 65536}, {65536, 65536}, {0, 65536}}));
}

TEST(AllocateMemoryAddr, KernelTooLargeForUbIsAnErrorNamingEverything) {
  // Two 256x96 f32 operands are 96 KB each: together more than the 184 KB of usable UB.
  auto lowered = Lower(testing::TileAddProgram(256, 96), PassContext{});
  ASSERT_FALSE(lowered);
  EXPECT_EQ(lowered.error().message,
            "kernel 'tile_add_incore_0' (from k.py:2:5) does not fit in UB (Vec): tile 'tile_b' "
            "(pl.Tile[[256, 96], pl.FP32, pl.Mem.Vec]) needs 98304 bytes while 98304 bytes are in use, and "
            "Ascend910B has 188416 bytes");
  EXPECT_EQ(lowered.error().span.str(), "k.py:4:9");
}

// A tile loaded before a loop and read in every iteration must keep its buffer for the whole loop:
// the loop's own tiles cannot take it over, even after the tile's last textual use.
TEST(AllocateMemoryAddr, TileUsedInsideALoopLivesThroughTheLoop) {
  using namespace ir;
  auto a = testing::Tensor("a", {64, 64}), c = testing::Tensor("c", {64, 64});
  auto i = std::make_shared<Var>("i", std::make_shared<ScalarType>(DataType::INDEX));
  auto index = [](int64_t v) { return std::make_shared<ConstInt>(v, DataType::INDEX); };
  auto load_bias = testing::Op("tile.load", {a, testing::Ints({0, 0}), testing::Ints({16, 64})});
  auto bias = testing::Local("bias", load_bias);
  auto row = *MakeBinary(BinaryOp::Mul, i, index(16), Span{});
  auto offsets = std::make_shared<TupleLiteral>(std::vector<ExprPtr>{row, index(0)});
  auto load_x = testing::Op("tile.load", {a, offsets, testing::Ints({16, 64})});
  auto x = testing::Local("x", load_x);
  auto sum = testing::Op("tile.add", {x, bias});
  auto y = testing::Local("y", sum);
  auto store = testing::Op("tile.store", {y, offsets, c});
  auto loop_body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{
      testing::Assign(x, load_x), testing::Assign(y, sum), std::make_shared<EvalStmt>(store)});
  auto loop = std::make_shared<ForStmt>(i, index(0), index(4), index(1), loop_body, ForKind::Sequential);
  auto body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{testing::Assign(bias, load_bias), loop});
  auto kernel = std::make_shared<Function>("k", std::vector<VarPtr>{a, c},
                                           std::vector<ParamDirection>{ParamDirection::In, ParamDirection::Out},
                                           std::vector<TypePtr>{}, body, FunctionType::AIV);
  PassManager manager;
  manager.Add(AllocateMemoryAddr());
  auto result = manager.Run(std::make_shared<Program>("p", std::vector<FunctionPtr>{kernel}, "k"), PassContext{});
  ASSERT_TRUE(result) << result.error().str();
  std::vector<TileMemRef> memrefs;
  struct Collector final : IRVisitor {
    std::vector<TileMemRef>* out;
    void VisitStmt(const StmtPtr& stmt) override {
      if (const auto* assign = stmt->As<AssignStmt>())
        if (const auto* tile = assign->var()->type()->As<TileType>()) out->push_back(*tile->memref());
      IRVisitor::VisitStmt(stmt);
    }
  } collector;
  collector.out = &memrefs;
  collector.VisitStmt((*result)->Find("k")->body());
  // bias at 0; x after it; y reuses x's buffer (x dies at the add), never bias's.
  EXPECT_EQ(memrefs, (std::vector<TileMemRef>{{0, 4096}, {4096, 4096}, {4096, 4096}}));
}

// ... and gives it back when the loop ends, though the loop's last statement does not read it: a
// tile loaded after the loop takes the buffer (a K loop's pre-loop weight windows in pypto-lib's
// qwen3 decode kernels were otherwise held to the kernel's end).
TEST(AllocateMemoryAddr, TileUsedInsideALoopIsFreedWhenTheLoopEnds) {
  using namespace ir;
  auto a = testing::Tensor("a", {64, 64}), c = testing::Tensor("c", {64, 64});
  auto i = std::make_shared<Var>("i", std::make_shared<ScalarType>(DataType::INDEX));
  auto index = [](int64_t v) { return std::make_shared<ConstInt>(v, DataType::INDEX); };
  auto load_bias = testing::Op("tile.load", {a, testing::Ints({0, 0}), testing::Ints({16, 64})});
  auto bias = testing::Local("bias", load_bias);
  auto row = *MakeBinary(BinaryOp::Mul, i, index(16), Span{});
  auto offsets = std::make_shared<TupleLiteral>(std::vector<ExprPtr>{row, index(0)});
  auto load_x = testing::Op("tile.load", {a, offsets, testing::Ints({16, 64})});
  auto x = testing::Local("x", load_x);
  auto sum = testing::Op("tile.add", {x, bias});
  auto y = testing::Local("y", sum);
  auto loop_body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{
      testing::Assign(x, load_x), testing::Assign(y, sum),
      std::make_shared<EvalStmt>(testing::Op("tile.store", {y, offsets, c}))});
  auto loop = std::make_shared<ForStmt>(i, index(0), index(4), index(1), loop_body, ForKind::Sequential);
  auto load_z = testing::Op("tile.load", {a, testing::Ints({0, 0}), testing::Ints({16, 64})});
  auto z = testing::Local("z", load_z);
  auto body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{
      testing::Assign(bias, load_bias), loop, testing::Assign(z, load_z),
      std::make_shared<EvalStmt>(testing::Op("tile.store", {z, testing::Ints({0, 0}), c}))});
  auto kernel = std::make_shared<Function>("k", std::vector<VarPtr>{a, c},
                                           std::vector<ParamDirection>{ParamDirection::In, ParamDirection::Out},
                                           std::vector<TypePtr>{}, body, FunctionType::AIV);
  PassManager manager;
  manager.Add(AllocateMemoryAddr());
  auto result = manager.Run(std::make_shared<Program>("p", std::vector<FunctionPtr>{kernel}, "k"), PassContext{});
  ASSERT_TRUE(result) << result.error().str();
  // bias, x, y (in x's buffer) inside the loop; z after it, in bias's buffer.
  EXPECT_EQ(PrintFunction(*(*result)->Find("k")),
            "@pl.function(type=pl.FunctionType.AIV)\n"
            "def k(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):\n"
            "    bias: pl.Tile[[16, 64], pl.FP32, pl.MemRef(0, 4096), pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 64])\n"
            "    for i in pl.range(4):\n"
            "        x: pl.Tile[[16, 64], pl.FP32, pl.MemRef(4096, 4096), pl.Mem.Vec] = pl.tile.load(a, [i * 16, 0], "
            "[16, 64])\n"
            "        y: pl.Tile[[16, 64], pl.FP32, pl.MemRef(4096, 4096), pl.Mem.Vec] = pl.tile.add(x, bias)\n"
            "        pl.tile.store(y, [i * 16, 0], c)\n"
            "    z: pl.Tile[[16, 64], pl.FP32, pl.MemRef(0, 4096), pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 64])\n"
            "    pl.tile.store(z, [0, 0], c)\n");
}

TEST(AllocateMemoryAddr, LargerUbOfAscend950Fits) {
  auto lowered = Lower(testing::TileAddProgram(256, 96), PassContext{.soc = &ir::Ascend950()});
  ASSERT_TRUE(lowered) << lowered.error().str();
}

// What the loop of AccumulatingProgram does with its carried tile.
enum class LoopBody {
  Add,             // next = acc + x; yield next
  AddThenReadOld,  // next = acc + x; extra = acc * x; yield next
  CopyOfLoad,      // u = x; yield u (a plain assignment of a tile loaded in the iteration)
};

// The loop of AccumulatingProgram: `for i in range(4)`, or `while k < 4` carrying k (from 0, + 1).
enum class LoopForm { For, While };

// acc = load(a); for i in range(4) carrying acc: x = load(a); <body>
ir::ProgramPtr AccumulatingProgram(LoopBody kind, LoopForm form = LoopForm::For) {
  using namespace ir;
  auto a = testing::Tensor("a", {16, 64}), c = testing::Tensor("c", {16, 64});
  auto i = std::make_shared<Var>("i", std::make_shared<ScalarType>(DataType::INDEX));
  auto index = [](int64_t v) { return std::make_shared<ConstInt>(v, DataType::INDEX); };
  auto load = testing::Op("tile.load", {a, testing::Ints({0, 0}), testing::Ints({16, 64})});
  auto init = testing::Local("acc", load);
  auto carried = std::make_shared<Var>("acc_i", init->type()), result = std::make_shared<Var>("acc_r", init->type());
  auto load_x = testing::Op("tile.load", {a, testing::Ints({0, 0}), testing::Ints({16, 64})});
  auto x = testing::Local("x", load_x);
  std::vector<StmtPtr> loop_body = {testing::Assign(x, load_x)};
  VarPtr yielded;
  if (kind == LoopBody::CopyOfLoad) {
    yielded = std::make_shared<Var>("u", x->type());
    loop_body.push_back(std::make_shared<AssignStmt>(yielded, x));
  } else {
    auto add = testing::Op("tile.add", {carried, x});
    yielded = testing::Local("next", add);
    loop_body.push_back(std::make_shared<AssignStmt>(yielded, add, Span{"k.py", 6, 9}));
  }
  if (kind == LoopBody::AddThenReadOld) {
    auto mul = testing::Op("tile.mul", {carried, x}, Span{"k.py", 7, 9});
    loop_body.push_back(std::make_shared<AssignStmt>(testing::Local("extra", mul), mul, Span{"k.py", 7, 9}));
  }
  StmtPtr loop;
  if (form == LoopForm::For) {
    loop_body.push_back(std::make_shared<YieldStmt>(std::vector<ExprPtr>{yielded}));
    loop = std::make_shared<ForStmt>(i, index(0), index(4), index(1), std::vector<IterArg>{{carried, init}},
                                     std::make_shared<SeqStmts>(loop_body), std::vector<VarPtr>{result},
                                     ForKind::Sequential);
  } else {
    auto k = std::make_shared<Var>("k", i->type()), k_result = std::make_shared<Var>("k_r", i->type());
    loop_body.push_back(
        std::make_shared<YieldStmt>(std::vector<ExprPtr>{yielded, *MakeBinary(BinaryOp::Add, k, index(1), {})}));
    loop = std::make_shared<WhileStmt>(*MakeBinary(BinaryOp::Lt, k, index(4), {}),
                                       std::vector<IterArg>{{carried, init}, {k, index(0)}},
                                       std::make_shared<SeqStmts>(loop_body), std::vector<VarPtr>{result, k_result});
  }
  auto store = testing::Op("tile.store", {result, testing::Ints({0, 0}), c});
  auto body = std::make_shared<SeqStmts>(
      std::vector<StmtPtr>{testing::Assign(init, load), loop, std::make_shared<EvalStmt>(store)});
  auto kernel = std::make_shared<Function>("k", std::vector<VarPtr>{a, c},
                                           std::vector<ParamDirection>{ParamDirection::In, ParamDirection::Out},
                                           std::vector<TypePtr>{}, body, FunctionType::AIV);
  return std::make_shared<Program>("p", std::vector<FunctionPtr>{kernel}, "k");
}

// The init value, the iter_arg, the next value and the loop's result share one buffer, so the loop
// accumulates in place.
TEST(AllocateMemoryAddr, LoopCarriedTileSharesOneBuffer) {
  PassManager manager({.verify = true});
  manager.Add(AllocateMemoryAddr());
  auto result = manager.Run(AccumulatingProgram(LoopBody::Add), PassContext{});
  ASSERT_TRUE(result) << result.error().str();
  auto stmts = ir::FlattenStmts((*result)->Find("k")->body());
  const auto& loop = *stmts[1]->As<ir::ForStmt>();
  auto memref = [](const ir::VarPtr& var) { return *var->type()->As<ir::TileType>()->memref(); };
  const ir::TileMemRef shared{0, 4096};
  EXPECT_EQ(memref(stmts[0]->As<ir::AssignStmt>()->var()), shared);
  EXPECT_EQ(memref(loop.iter_args()[0].var), shared);
  EXPECT_EQ(memref(loop.return_vars()[0]), shared);
  auto body = ir::FlattenStmts(loop.body());
  EXPECT_EQ(memref(body[0]->As<ir::AssignStmt>()->var()), (ir::TileMemRef{4096, 4096}));  // x
  EXPECT_EQ(memref(body[1]->As<ir::AssignStmt>()->var()), shared);                     // next
}

// A while loop carries its tile in one buffer as a for loop does.
TEST(AllocateMemoryAddr, WhileLoopCarriedTileSharesOneBuffer) {
  PassManager manager({.verify = true});
  manager.Add(AllocateMemoryAddr());
  auto result = manager.Run(AccumulatingProgram(LoopBody::Add, LoopForm::While), PassContext{});
  ASSERT_TRUE(result) << result.error().str();
  auto stmts = ir::FlattenStmts((*result)->Find("k")->body());
  const auto& loop = *stmts[1]->As<ir::WhileStmt>();
  auto memref = [](const ir::VarPtr& var) { return *var->type()->As<ir::TileType>()->memref(); };
  const ir::TileMemRef shared{0, 4096};
  EXPECT_EQ(memref(stmts[0]->As<ir::AssignStmt>()->var()), shared);
  EXPECT_EQ(memref(loop.iter_args()[0].var), shared);
  EXPECT_EQ(memref(loop.return_vars()[0]), shared);
  auto body = ir::FlattenStmts(loop.body());
  EXPECT_EQ(memref(body[0]->As<ir::AssignStmt>()->var()), (ir::TileMemRef{4096, 4096}));  // x
  EXPECT_EQ(memref(body[1]->As<ir::AssignStmt>()->var()), shared);                     // next
}

TEST(AllocateMemoryAddr, ReadingAWhileCarriedTileAfterItsUpdateIsAnError) {
  PassManager manager;
  manager.Add(AllocateMemoryAddr());
  auto result = manager.Run(AccumulatingProgram(LoopBody::AddThenReadOld, LoopForm::While), PassContext{});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().str(),
            "k.py:7:9: error: the loop-carried tile 'acc_i' is read after its next value 'next' is computed (line "
            "6); both live in one buffer\n"
            "  help: compute the carried value's next value after its last read");
}

// `u = x` yields a tile loaded in the iteration: u shares the carried buffer while x has its own, so
// the plain assignment becomes a copy into the shared buffer (before, u took the buffer without its
// data).
TEST(AllocateMemoryAddr, APlainAssignmentIntoACarriedBufferBecomesACopy) {
  using namespace ir;
  PassManager manager({.verify = true});
  manager.Add(AllocateMemoryAddr());
  auto lowered = manager.Run(AccumulatingProgram(LoopBody::CopyOfLoad), PassContext{});
  ASSERT_TRUE(lowered) << lowered.error().str();
  auto stmts = FlattenStmts((*lowered)->Find("k")->body());
  auto lowered_body = FlattenStmts(stmts[1]->As<ForStmt>()->body());
  const auto& copy = *lowered_body[1]->As<AssignStmt>();
  EXPECT_EQ(PrintExpr(copy.value()), "pl.tile.move(x, target_memory=pl.Mem.Vec)");
  auto memref = [](const VarPtr& var) { return *var->type()->As<TileType>()->memref(); };
  EXPECT_EQ(memref(copy.var()), (TileMemRef{0, 4096}));                                  // the carried buffer
  EXPECT_EQ(memref(lowered_body[0]->As<AssignStmt>()->var()), (TileMemRef{4096, 4096}));  // x
}

TEST(AllocateMemoryAddr, ReadingACarriedTileAfterItsUpdateIsAnError) {
  PassManager manager;
  manager.Add(AllocateMemoryAddr());
  auto result = manager.Run(AccumulatingProgram(LoopBody::AddThenReadOld), PassContext{});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().str(),
            "k.py:7:9: error: the loop-carried tile 'acc_i' is read after its next value 'next' is computed (line "
            "6); both live in one buffer\n"
            "  help: compute the carried value's next value after its last read");
}

// A band of whole rows sliced from an Acc tile is a view: it takes the product's own block, as
// upstream's pto.subview does, so a product filling L0C can be read out band by band. A window of
// columns is a copy with a block of its own.
TEST(AllocateMemoryAddr, RowBandOfAnAccTileIsAViewOfItsBlock) {
  using namespace ir;
  auto a = testing::Tensor("a", {64, 64}), band_out = testing::Tensor("band_out", {16, 64});
  auto cols_out = testing::Tensor("cols_out", {64, 32});
  testing::KernelBuilder k;
  auto x = k.Load("x", a, 0, 0, 64, 64, 3, MemorySpace::Mat);
  auto left = k.Let("left", testing::OpWithKwargs("tile.move", {x}, {{"target_memory", MemorySpace::Left}}));
  auto right = k.Let("right", testing::OpWithKwargs("tile.move", {x}, {{"target_memory", MemorySpace::Right}}));
  auto acc = k.Let("acc", testing::Op("tile.matmul", {left, right}));
  auto band = k.Let("band", testing::Op("tile.slice", {acc, testing::Ints({16, 64}), testing::Ints({16, 0})}));
  k.Eval(testing::Op("tile.store", {band, testing::Ints({0, 0}), band_out}));
  auto cols = k.Let("cols", testing::Op("tile.slice", {acc, testing::Ints({64, 32}), testing::Ints({0, 32})}));
  k.Eval(testing::Op("tile.store", {cols, testing::Ints({0, 0}), cols_out}));
  PassManager manager;
  manager.Add(AllocateMemoryAddr());
  auto kernel = std::make_shared<Function>(
      "k", std::vector<VarPtr>{a, band_out, cols_out},
      std::vector<ParamDirection>{ParamDirection::In, ParamDirection::Out, ParamDirection::Out},
      std::vector<TypePtr>{}, std::make_shared<SeqStmts>(k.body), FunctionType::AIC);
  auto result = manager.Run(std::make_shared<Program>("p", std::vector<FunctionPtr>{kernel}, "k"), PassContext{});
  ASSERT_TRUE(result) << result.error().str();
  // x (Mat), left, right, acc (Acc at 0), band (acc's block), cols (Acc after acc).
  EXPECT_EQ(TileAddresses(**result, "k"), (std::vector<TileMemRef>{{0, 16384}, {0, 16384}, {0, 16384},
                                                                    {0, 16384}, {0, 16384}, {16384, 8192}}));
}

// A column window of an Acc matrix that a product accumulates into is a view too: the product lands
// in the matrix (upstream's pto.subview as the MAD's destination), and so does the product's result.
TEST(AllocateMemoryAddr, WindowAProductAccumulatesIntoIsAViewOfItsAccTile) {
  using namespace ir;
  auto a = testing::Tensor("a", {64, 64}), b = testing::Tensor("b", {64, 128}), out = testing::Tensor("out", {64, 128});
  testing::KernelBuilder k;
  auto move = [&](const char* name, const VarPtr& tile, MemorySpace space) {
    return k.Let(name, testing::OpWithKwargs("tile.move", {tile}, {{"target_memory", space}}));
  };
  auto x = k.Load("x", a, 0, 0, 64, 64, 3, MemorySpace::Mat);
  auto y = k.Load("y", b, 0, 0, 64, 128, 3, MemorySpace::Mat);
  auto left = move("left", x, MemorySpace::Left);
  auto acc = k.Let("acc", testing::Op("tile.matmul", {left, move("right", y, MemorySpace::Right)}));
  auto win = k.Let("win", testing::Op("tile.slice", {acc, testing::Ints({64, 64}), testing::Ints({0, 64})}));
  k.Let("sum", testing::Op("tile.matmul_acc", {win, left, move("square", x, MemorySpace::Right)}));
  k.Eval(testing::Op("tile.store", {acc, testing::Ints({0, 0}), out}));
  PassManager manager;
  manager.Add(AllocateMemoryAddr());
  auto kernel = std::make_shared<Function>(
      "k", std::vector<VarPtr>{a, b, out},
      std::vector<ParamDirection>{ParamDirection::In, ParamDirection::In, ParamDirection::Out},
      std::vector<TypePtr>{}, std::make_shared<SeqStmts>(k.body), FunctionType::AIC);
  auto result = manager.Run(std::make_shared<Program>("p", std::vector<FunctionPtr>{kernel}, "k"), PassContext{});
  ASSERT_TRUE(result) << result.error().str();
  // x, y (Mat), left, right, acc (Acc at 0), win (acc's block), square (Right), sum (acc's block).
  EXPECT_EQ(TileAddresses(**result, "k"), (std::vector<TileMemRef>{{0, 16384}, {16384, 32768}, {0, 16384},
                                                                    {0, 32768}, {0, 32768}, {0, 32768},
                                                                    {0, 16384}, {0, 32768}}));
}

// A view is placed by the window's last two offsets, so only a window of a matrix (dimensions before
// the last two all 1) is one. A window at batch 1 of an N-d product, or of some rows of every batch,
// is copied into a block of its own.
TEST(AllocateMemoryAddr, WindowOfAnNdAccTileIsACopy) {
  using namespace ir;
  auto x = testing::Tensor("x", {2, 16, 32}), w = testing::Tensor("w", {2, 32, 64});
  auto batch_out = testing::Tensor("batch_out", {1, 16, 64}), rows_out = testing::Tensor("rows_out", {2, 8, 64});
  testing::KernelBuilder k;
  auto mat = [](MemorySpace space) { return Call::Kwargs{{"target_memory", space}}; };
  auto lhs = k.Let("lhs", testing::OpWithKwargs("tile.load", {x, testing::Ints({0, 0, 0}), testing::Ints({2, 16, 32})},
                                                mat(MemorySpace::Mat)));
  auto rhs = k.Let("rhs", testing::OpWithKwargs("tile.load", {w, testing::Ints({0, 0, 0}), testing::Ints({2, 32, 64})},
                                                mat(MemorySpace::Mat)));
  auto left = k.Let("left", testing::OpWithKwargs("tile.move", {lhs}, mat(MemorySpace::Left)));
  auto right = k.Let("right", testing::OpWithKwargs("tile.move", {rhs}, mat(MemorySpace::Right)));
  auto acc = k.Let("acc", testing::Op("tile.matmul", {left, right}));
  auto batch =
      k.Let("batch", testing::Op("tile.slice", {acc, testing::Ints({1, 16, 64}), testing::Ints({1, 0, 0})}));
  k.Eval(testing::Op("tile.store", {batch, testing::Ints({0, 0, 0}), batch_out}));
  auto rows = k.Let("rows", testing::Op("tile.slice", {acc, testing::Ints({2, 8, 64}), testing::Ints({0, 8, 0})}));
  k.Eval(testing::Op("tile.store", {rows, testing::Ints({0, 0, 0}), rows_out}));
  PassManager manager;
  manager.Add(AllocateMemoryAddr());
  auto kernel = std::make_shared<Function>(
      "k", std::vector<VarPtr>{x, w, batch_out, rows_out},
      std::vector<ParamDirection>{ParamDirection::In, ParamDirection::In, ParamDirection::Out, ParamDirection::Out},
      std::vector<TypePtr>{}, std::make_shared<SeqStmts>(k.body), FunctionType::AIC);
  auto result = manager.Run(std::make_shared<Program>("p", std::vector<FunctionPtr>{kernel}, "k"), PassContext{});
  ASSERT_TRUE(result) << result.error().str();
  // lhs, rhs (Mat), left, right, acc (Acc at 0), batch (Acc after acc), rows (after batch, which is dead).
  EXPECT_EQ(TileAddresses(**result, "k"), (std::vector<TileMemRef>{{0, 4096}, {4096, 16384}, {0, 4096}, {0, 16384},
                                                                    {0, 8192}, {8192, 4096}, {8192, 4096}}));
}

// `w_t = pl.tile.transpose_view(w_mat)` in an AIC kernel, then a second Mat tile a_mat ([16, 32]), and
// w_t read after it: by the move into Right, or, with `extracted`, by an extract of its first 32
// columns into Right (the 256 KB tiles of a test that needs Mat full do not fit Right).
ir::ProgramPtr TransposedViewKernel(int64_t w_rows = 64, int64_t w_cols = 32, bool extracted = false) {
  using namespace ir;
  auto a = testing::Tensor("a", {16, 32}), w = testing::Tensor("w", {w_rows, w_cols});
  auto c = testing::Tensor("c", {16, w_rows});
  testing::KernelBuilder k;
  auto to = [](MemorySpace space) { return Call::Kwargs{{"target_memory", space}}; };
  auto w_mat = k.Load("w_mat", w, 0, 0, w_rows, w_cols, 3, MemorySpace::Mat);
  auto w_t = k.Let("w_t", testing::Op("tile.transpose_view", {w_mat}));
  auto a_mat = k.Load("a_mat", a, 0, 0, 16, 32, 5, MemorySpace::Mat);
  auto a_left = k.Let("a_left", testing::OpWithKwargs("tile.move", {a_mat}, to(MemorySpace::Left)));
  auto zero = std::make_shared<ConstInt>(0, DataType::INDEX);
  auto w_right = k.Let("w_right", extracted ? testing::OpWithKwargs("tile.extract",
                                                                    {w_t, zero, zero, testing::Ints({32, 64})},
                                                                    to(MemorySpace::Right))
                                            : testing::OpWithKwargs("tile.move", {w_t}, to(MemorySpace::Right)));
  auto acc = k.Let("acc", testing::Op("tile.matmul", {a_left, w_right}));
  k.Eval(testing::Op("tile.store", {acc, testing::Ints({0, 0}), c}));
  auto kernel = std::make_shared<Function>(
      "k", std::vector<VarPtr>{a, w, c},
      std::vector<ParamDirection>{ParamDirection::In, ParamDirection::In, ParamDirection::Out},
      std::vector<TypePtr>{}, std::make_shared<SeqStmts>(k.body), FunctionType::AIC);
  return std::make_shared<Program>("p", std::vector<FunctionPtr>{kernel}, "k");
}

// A transposed view is a copy on the simulators (a block of its own), but on a device it reads its
// source's bytes: w_mat keeps Mat 0..8192 until w_t's last read (the move into Right), so a_mat,
// loaded after the view is made, goes past both instead of over w_mat.
TEST(AllocateMemoryAddr, ATransposedViewKeepsItsSourceAliveWhileItIsRead) {
  PassManager manager;
  manager.Add(AllocateMemoryAddr());
  auto result = manager.Run(TransposedViewKernel(), PassContext{});
  ASSERT_TRUE(result) << result.error().str();
  EXPECT_EQ(ir::PrintFunction(*(*result)->Find("k")),
            "@pl.function(type=pl.FunctionType.AIC)\n"
            "def k(self, a: pl.Tensor[[16, 32], pl.FP32], w: pl.Tensor[[64, 32], pl.FP32], "
            "c: pl.Out[pl.Tensor[[16, 64], pl.FP32]]):\n"
            "    w_mat: pl.Tile[[64, 32], pl.FP32, pl.MemRef(0, 8192), pl.Mem.Mat] = pl.tile.load(w, [0, 0], "
            "[64, 32], target_memory=pl.Mem.Mat)\n"
            "    w_t: pl.Tile[[32, 64], pl.FP32, pl.MemRef(8192, 8192), pl.Mem.Mat] = pl.tile.transpose_view(w_mat)\n"
            "    a_mat: pl.Tile[[16, 32], pl.FP32, pl.MemRef(16384, 2048), pl.Mem.Mat] = pl.tile.load(a, [0, 0], "
            "[16, 32], target_memory=pl.Mem.Mat)\n"
            "    a_left: pl.Tile[[16, 32], pl.FP32, pl.MemRef(0, 2048), pl.Mem.Left] = pl.tile.move(a_mat, "
            "target_memory=pl.Mem.Left)\n"
            "    w_right: pl.Tile[[32, 64], pl.FP32, pl.MemRef(0, 8192), pl.Mem.Right] = pl.tile.move(w_t, "
            "target_memory=pl.Mem.Right)\n"
            "    acc: pl.Tile[[16, 64], pl.FP32, pl.MemRef(0, 4096), pl.Mem.Acc] = pl.tile.matmul(a_left, w_right)\n"
            "    pl.tile.store(acc, [0, 0], c)\n");
}

// Where Mat cannot hold the source beside the view and the next tile (w_mat and w_t take all 512 KB),
// the source dies when the view is made, as before: the simulators run the kernel with a_mat over
// w_mat, and backend-ptoas refuses the view, naming a_mat.
TEST(AllocateMemoryAddr, WhereMatCannotKeepAViewsSourceTheSourceDiesFirst) {
  PassManager manager;
  manager.Add(AllocateMemoryAddr());
  auto result = manager.Run(TransposedViewKernel(256, 256, true), PassContext{});
  ASSERT_TRUE(result) << result.error().str();
  // w_mat, w_t, a_mat (over w_mat), a_left, w_right, acc.
  EXPECT_EQ(TileAddresses(**result, "k"), (std::vector<ir::TileMemRef>{{0, 262144},
                                                                        {262144, 262144},
                                                                        {0, 2048},
                                                                        {0, 2048},
                                                                        {0, 8192},
                                                                        {0, 4096}}));
}

// A constant fill larger than UB that is only stored ([128, 416] FP32 is 208 KB of 184 KB) is filled
// as a band of its rows, at most half of UB, and stored once per band.
TEST(AllocateMemoryAddr, FillLargerThanUbIsStoredBandByBand) {
  using namespace ir;
  auto out = testing::Tensor("out", {128, 512});
  testing::KernelBuilder k;
  auto fill = k.Let("fill", testing::OpWithKwargs("tile.full", {testing::Ints({128, 416}), std::make_shared<ConstFloat>(-1.0, DataType::FP32)},
                                                  {{"dtype", DataType::FP32}}));
  k.Eval(testing::Op("tile.store", {fill, testing::Ints({0, 96}), out}));
  PassManager manager;
  manager.Add(AllocateMemoryAddr());
  auto kernel = std::make_shared<Function>("k", std::vector<VarPtr>{out}, std::vector<ParamDirection>{ParamDirection::InOut},
                                           std::vector<TypePtr>{}, std::make_shared<SeqStmts>(k.body), FunctionType::AIV);
  auto result = manager.Run(std::make_shared<Program>("p", std::vector<FunctionPtr>{kernel}, "k"), PassContext{});
  ASSERT_TRUE(result) << result.error().str();
  std::vector<std::string> stmts;
  for (const auto& stmt : FlattenStmts((*result)->Find("k")->body())) {
    if (const auto* assign = stmt->As<AssignStmt>()) stmts.push_back(PrintExpr(assign->value()));
    if (const auto* eval = stmt->As<EvalStmt>()) stmts.push_back(PrintExpr(eval->expr()));
  }
  EXPECT_EQ(stmts, (std::vector<std::string>{"pl.tile.full([32, 416], dtype=pl.FP32, value=-1.0)",
                                             "pl.tile.store(fill_band, [0, 96], out)",
                                             "pl.tile.store(fill_band, [32, 96], out)",
                                             "pl.tile.store(fill_band, [64, 96], out)",
                                             "pl.tile.store(fill_band, [96, 96], out)"}));
}

}  // namespace
}  // namespace pypto::passes

namespace pypto::passes {
namespace {

// The vector member of a mixed kernel whose tiles fill UB (a 176 x 256 FP32 tile, 180224 bytes) and
// which pops two 16 x 16 FP32 tiles from the cube, reads both at once, then stores a band of their sum:
//     big = pl.load(a, [0, 0], [176, 256])
//     p = pl.tpop_from_aic([16, 16]); pl.tfree_to_aic(p)
//     q = pl.tpop_from_aic([16, 16]); pl.tfree_to_aic(q)
//     s = pl.add(p, q); band = s[8:16, :]
//     pl.store(band, [0, 0], out); pl.store(big, [0, 0], out)
ir::ProgramPtr PoppingKernelBesideAFullUb(int64_t rows = 176) {
  using namespace ir;
  auto a = testing::Tensor("a", {rows, 256}), out = testing::Tensor("out", {rows, 256});
  std::vector<StmtPtr> body;
  auto let = [&](const std::string& name, const ExprPtr& value) {
    auto var = testing::Local(name, value);
    body.push_back(testing::Assign(var, value));
    return var;
  };
  auto eval = [&](const ExprPtr& call) { body.push_back(std::make_shared<EvalStmt>(call, call->span())); };
  auto pop = [&](const std::string& name) {
    auto tile = let(name, testing::OpWithKwargs("tile.tpop_from_aic", {testing::Ints({16, 16})},
                                                {{"dtype", DataType::FP32}, {"split", int64_t{0}}}, 3));
    eval(testing::OpWithKwargs("system.tfree_to_aic", {tile}, {{"split", int64_t{0}}}, 3));
    return tile;
  };
  auto big = let("big", testing::Op("tile.load", {a, testing::Ints({0, 0}), testing::Ints({rows, 256})}, 2));
  auto p = pop("p");
  auto q = pop("q");
  auto s = let("s", testing::Op("tile.add", {p, q}, 4));
  auto band = let("band", testing::Op("tile.slice", {s, testing::Ints({8, 16}), testing::Ints({8, 0})}, 4));
  eval(testing::Op("tile.store", {band, testing::Ints({0, 0}), out}, 5));
  eval(testing::Op("tile.store", {big, testing::Ints({0, 0}), out}, 5));
  auto kernel = std::make_shared<Function>("k", std::vector<VarPtr>{a, out},
                                           std::vector<ParamDirection>{ParamDirection::In, ParamDirection::Out},
                                           std::vector<TypePtr>{}, std::make_shared<SeqStmts>(body), FunctionType::AIV);
  return std::make_shared<Program>("p", std::vector<FunctionPtr>{kernel}, "k");
}

// PTOAS's frontend pipe would keep 8 slots of 1024 bytes past the tiles, which end at 182272 of UB's
// 188416 bytes: the kernel is placed again around a pipe slot region at the bottom of UB, as deep as
// the popped tiles read at once (p and q: 2 slots), its popped tiles in their slots, every other tile
// past it, the sum in a buffer of its own (not over p's slot) and its band a view of it.
TEST(AllocateMemoryAddr, PoppedTilesGoInAPipeSlotRegionWhenTheFrontendRingHasNoRoom) {
  PassManager manager;
  manager.Add(AllocateMemoryAddr());
  auto result = manager.Run(PoppingKernelBesideAFullUb(), PassContext{});
  ASSERT_TRUE(result) << result.error().str();
  EXPECT_EQ(TileAddresses(**result, "k"), (std::vector<ir::TileMemRef>{
                                              {2048, 180224}, {0, 1024}, {1024, 1024}, {182272, 1024}, {182272, 1024}}));
  const int64_t* region = ir::FunctionAttr<int64_t>(*(*result)->Find("k"), "pipe_slot_region");
  ASSERT_NE(region, nullptr);
  EXPECT_EQ(*region, 2048);
}

// Where the frontend's ring fits past the tiles (a 160-row tile ends them at 165888), nothing
// changes: the popped tiles keep buffers of their own, the sum is written over p, its band copied
// into q's.
TEST(AllocateMemoryAddr, PoppedTilesKeepTheirBuffersWhereTheFrontendRingFits) {
  PassManager manager;
  manager.Add(AllocateMemoryAddr());
  auto result = manager.Run(PoppingKernelBesideAFullUb(160), PassContext{});
  ASSERT_TRUE(result) << result.error().str();
  EXPECT_EQ(TileAddresses(**result, "k"), (std::vector<ir::TileMemRef>{
                                              {0, 163840}, {163840, 1024}, {164864, 1024}, {163840, 1024}, {164864, 512}}));
  EXPECT_EQ((*result)->Find("k")->attrs().count("pipe_slot_region"), 0u);
}

}  // namespace
}  // namespace pypto::passes
