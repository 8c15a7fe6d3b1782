#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;

std::string ErrorOf(const ir::Function& kernel, std::string_view arch = "a2a3") {
  auto text = EmitModule(kernel, arch);
  if (text) return "<no error>\n" + *text;
  return text.error();
}

// An op the backend has no lowering for, built directly: every tile op of the registry has one.
const ir::OpDef& OpaqueOp() {
  static const ir::OpDef def{.name = "test.opaque", .params = {ir::Arg("tile")}};
  return def;
}

TEST(EmitModuleErrors, UnsupportedOpNamesTheOpAndItsSpan) {
  auto a = TensorParam("a", {16, 16}, At(1, 10));
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(2, 9));
  auto t = TileAt("t", load, 0);
  auto exp = std::make_shared<ir::Call>(&OpaqueOp(), std::vector<ir::ExprPtr>{t}, ir::Call::Kwargs{}, t->type(), At(3, 9));
  auto e = TileAt("e", load, 1024);
  auto kernel = Kernel("k", {a}, {ir::ParamDirection::InOut}, {Assign(t, load, At(2, 5)), Assign(e, exp, At(3, 5))});
  EXPECT_EQ(ErrorOf(*kernel),
            "k.py:3:9: backend-ptoas cannot lower op 'test.opaque' in kernel 'k' (the ops it lowers are "
            "listed in libs/backend-ptoas/README.md)");
}

// The comm ops are lowered (comm_ops.cpp; tests/python/test_pto_comm_ops.py); a barrier's signal holds
// one cell per rank.
TEST(EmitModuleErrors, ABarrierSignalHoldsOneCellPerRank) {
  auto signal = TensorParam("signal", {4, 2}, At(1, 10), ir::DataType::INT32);
  auto call = PlacedOp("comm.barrier", {signal}, signal->type(), At(3, 9));
  auto kernel = Kernel("k", {signal}, {ir::ParamDirection::InOut}, {Eval(call, At(3, 5))});
  EXPECT_EQ(ErrorOf(*kernel), "k.py:3:9: the barrier's signal 'signal' in kernel 'k' must hold one cell per rank "
                              "([nranks] or [nranks, 1]), got " + signal->type()->str());
}

// On-core arrays are lowered (array_ops.cpp; tests/python/test_pto_local_arrays.py) when their
// elements are signed integers, which is what pto.local_array_get / set move.
TEST(EmitModuleErrors, AnArrayOfFloatsIsRefused) {
  auto a = TensorParam("a", {16, 16}, At(1, 10));
  auto call = PlacedOp("array.create", {Index(4)}, std::make_shared<ir::ArrayType>(ir::DataType::FP32, 4), At(3, 9));
  auto v = std::make_shared<ir::Var>("v", call->type(), At(3, 5));
  auto kernel = Kernel("k", {a}, {ir::ParamDirection::In}, {Assign(v, call, At(3, 5))});
  EXPECT_EQ(ErrorOf(*kernel), "k.py:3:9: backend-ptoas cannot lower the array 'v' " + call->type()->str() +
                                  " in kernel 'k': it lowers arrays of signed integers (pto.declare_local_array)");
}

// The prefetch ops are lowered (prefetch_ops.cpp; tests/python/test_pto_prefetch.py); their handles
// come from the kernel's own prefetch ops.
TEST(EmitModuleErrors, APrefetchSessionNeedsAContextOfTheKernel) {
  auto a = TensorParam("a", {16, 16}, At(1, 10));
  auto call = PlacedOp("prefetch.session", {a}, std::make_shared<ir::HandleType>(ir::HandleKind::AsyncSession),
                       At(3, 9));
  auto s = std::make_shared<ir::Var>("s", call->type(), At(3, 5));
  auto kernel = Kernel("k", {a}, {ir::ParamDirection::In}, {Assign(s, call, At(3, 5))});
  EXPECT_EQ(ErrorOf(*kernel), "k.py:3:9: an operand of 'pl.prefetch.session' is not a handle an earlier prefetch op "
                              "of kernel 'k' gave");
}

TEST(EmitModuleErrors, CallToAnotherFunction) {
  auto a = TensorParam("a", {16, 16}, {});
  auto call = std::make_shared<ir::Call>("helper", std::vector<ir::ExprPtr>{a}, a->type(), At(4, 7));
  auto kernel = Kernel("k", {a}, {ir::ParamDirection::In}, {Eval(call, At(4, 5))});
  EXPECT_EQ(ErrorOf(*kernel),
            "k.py:4:5: backend-ptoas cannot lower an expression statement other than tile.store or tile.mscatter in "
            "kernel 'k'");
  auto r = std::make_shared<ir::Var>("r", a->type());
  auto assigned = Kernel("k", {a}, {ir::ParamDirection::In}, {Assign(r, call, At(4, 5))});
  EXPECT_EQ(ErrorOf(*assigned), "k.py:4:7: backend-ptoas cannot lower the call to function 'helper' in kernel 'k'");
}

TEST(EmitModuleErrors, OnlyAivAndAicKernels) {
  auto kernel = Kernel("k", {}, {}, {}, ir::FunctionType::InCore);
  EXPECT_EQ(ErrorOf(*kernel), "k.py:1:1: kernel 'k' has type InCore; backend-ptoas emits only AIV and AIC kernels");
}

TEST(EmitModuleErrors, UnknownArch) {
  EXPECT_EQ(ErrorOf(*VectorAddKernel(), "a3"), "unknown target arch 'a3' (expected \"a2a3\" or \"a5\")");
}

TEST(EmitModuleErrors, TileWithoutAddress) {
  auto a = TensorParam("a", {16, 16}, {});
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(2, 9));
  auto t = std::make_shared<ir::Var>("t", load->type());
  auto kernel = Kernel("k", {a}, {ir::ParamDirection::In}, {Assign(t, load, At(2, 5))});
  EXPECT_EQ(ErrorOf(*kernel),
            "k.py:2:9: tile 't' has no memory address; run memory allocation before backend-ptoas");
}

TEST(EmitModuleErrors, CubeBufferTileInAVectorKernel) {
  auto a = TensorParam("a", {16, 16}, {});
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(2, 9));
  auto t = TileAt("t", load, 0, ir::MemorySpace::Mat);
  auto kernel = Kernel("k", {a}, {ir::ParamDirection::In}, {Assign(t, load, At(2, 5))});
  EXPECT_EQ(ErrorOf(*kernel),
            "k.py:2:9: tile 't' lives in Mat, a cube-core buffer, but kernel 'k' is an AIV (vector) kernel");
}

TEST(EmitModuleErrors, ThreeDimensionalTile) {
  auto x = TensorParam("x", {4, 8, 16}, {});
  auto load = Op("tile.load", {x, Ints({1, 0, 0}), Ints({1, 8, 16})}, At(2, 9));
  auto kernel = Kernel("k", {x}, {ir::ParamDirection::In}, {Assign(TileAt("t", load, 0), load, At(2, 5))});
  EXPECT_EQ(ErrorOf(*kernel),
            "k.py:2:9: tile 't' pl.Tile[[1, 8, 16], pl.FP32, pl.MemRef(0, 512), pl.Mem.Vec] has rank 3, but "
            "backend-ptoas prints 1-D and 2-D PTO tiles only (pl.reshape it to its last two dimensions)");
}

// A [64, 1] tensor is column-major (DN) in ptoas: a [1, 1] tile, which is row-major, cannot be
// loaded from it.
TEST(EmitModuleErrors, RowMajorTileOfAColumnVectorTensor) {
  auto x = TensorParam("x", {64, 1}, At(1, 12));
  auto load = Op("tile.load", {x, Ints({3, 0}), Ints({1, 1})}, At(2, 9));
  auto kernel = Kernel("k", {x}, {ir::ParamDirection::In}, {Assign(TileAt("t", load, 0), load, At(2, 5))});
  EXPECT_EQ(ErrorOf(*kernel),
            "k.py:2:9: backend-ptoas cannot load the tile pl.Tile[[1, 1], pl.FP32, pl.Mem.Vec] "
            "from tensor 'x' pl.Tensor[[64, 1], pl.FP32] in kernel 'k': ptoas lays a tensor whose last dimension is "
            "1 out column-major (DN), which only a [N, 1] Vec tile (N > 1) matches");
}

TEST(EmitModuleErrors, NestedScopeIsNotLowered) {
  auto scope = std::make_shared<ir::InCoreScopeStmt>("s", std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{}),
                                                     At(5, 5));
  auto kernel = Kernel("k", {}, {}, {scope});
  EXPECT_EQ(ErrorOf(*kernel), "k.py:5:5: backend-ptoas cannot lower InCoreScopeStmt in kernel 'k'");
}

// for i in pl.<kind>(0, stop, step):               # line 2
//     t = pl.load(a, [row(i), 0], [16, 16])         # line 3, row(i) = i * 16 unless given
//     return a                                      # line 4, with return_inside
ir::FunctionPtr LoopKernel(ir::ForKind kind, ir::ExprPtr stop = Index(4), ir::ExprPtr step = Index(1),
                           std::function<ir::ExprPtr(const ir::VarPtr&)> row = nullptr,
                           std::vector<ir::VarPtr> scalars = {}, bool return_inside = false) {
  auto a = TensorParam("a", {64, 16}, {});
  auto i = LoopVar("i");
  ir::ExprPtr offset = row ? row(i) : Bin(ir::BinaryOp::Mul, i, Index(16));
  auto load = Op("tile.load", {a, Tuple({offset, Index(0)}), Ints({16, 16})}, At(3, 13));
  std::vector<ir::StmtPtr> body = {Assign(TileAt("t", load, 0), load, At(3, 9))};
  if (return_inside) body.push_back(Return({a}, At(4, 9)));
  std::vector<ir::VarPtr> params = {a};
  std::vector<ir::ParamDirection> directions = {ir::ParamDirection::InOut};
  for (const auto& scalar : scalars) {
    params.push_back(scalar);
    directions.push_back(ir::ParamDirection::In);
  }
  return Kernel("k", params, directions, {For(i, Index(0), std::move(stop), std::move(step), body, At(2, 5), kind)});
}

TEST(EmitModuleErrors, UnrollLoopsAreNotLowered) {
  EXPECT_EQ(ErrorOf(*LoopKernel(ir::ForKind::Unroll)),
            "k.py:2:5: backend-ptoas cannot lower the pl.unroll loop over 'i' in kernel 'k' (supported: pl.range, "
            "pl.parallel, pl.pipeline)");
  EXPECT_TRUE(EmitModule(*LoopKernel(ir::ForKind::Parallel), "a2a3"));
}

// A pipelined loop computes what the sequential loop computes; the module is the same scf.for.
TEST(EmitModuleErrors, PipelineLoopIsLoweredAsASequentialLoop) {
  auto pipelined = EmitModule(*LoopKernel(ir::ForKind::Pipeline), "a2a3");
  auto sequential = EmitModule(*LoopKernel(ir::ForKind::Sequential), "a2a3");
  ASSERT_TRUE(pipelined && sequential);
  EXPECT_EQ(*pipelined, *sequential);
}

TEST(EmitModuleErrors, LoopStepMustBePositive) {
  EXPECT_EQ(ErrorOf(*LoopKernel(ir::ForKind::Sequential, Index(4), Index(-1))),
            "k.py:2:5: the loop over 'i' has step -1; backend-ptoas lowers loops to scf.for, whose step must be "
            "positive");
}

TEST(EmitModuleErrors, OffsetWithAComparison) {
  auto row = [](const ir::VarPtr& i) {
    return Bin(ir::BinaryOp::Mul, Index(16), Bin(ir::BinaryOp::Lt, i, Index(2)));
  };
  EXPECT_EQ(ErrorOf(*LoopKernel(ir::ForKind::Sequential, Index(4), Index(1), row)),
            "k.py:3:13: an offset of 'tile.load' uses the comparison '<', whose result is a boolean; backend-ptoas "
            "lowers only + - * // % min max << >> of integers there");
}

TEST(EmitModuleErrors, OffsetReadingAVariableOutsideItsLoop) {
  auto j = LoopVar("j");
  auto row = [&](const ir::VarPtr&) { return ir::ExprPtr(j); };
  EXPECT_EQ(ErrorOf(*LoopKernel(ir::ForKind::Sequential, Index(4), Index(1), row)),
            "k.py:3:13: an offset of 'tile.load' reads 'j', which is neither an enclosing loop variable nor a scalar "
            "parameter of kernel 'k'");
}

TEST(EmitModuleErrors, LoopBoundFromAnUnsignedOrFloatScalar) {
  auto n = ScalarParam("n", ir::DataType::UINT32, {});
  EXPECT_EQ(ErrorOf(*LoopKernel(ir::ForKind::Sequential, n, Index(1), nullptr, {n})),
            "k.py:2:5: the stop of the loop over 'i' reads the UINT32 parameter 'n'; backend-ptoas computes offsets "
            "and loop bounds only from signed integer or INDEX scalars");
  auto m = ScalarParam("m", ir::DataType::INT32, {});
  EXPECT_EQ(ErrorOf(*LoopKernel(ir::ForKind::Sequential, Bin(ir::BinaryOp::FloatDiv, m, Index(2)), Index(1),
                                nullptr, {m})),
            "k.py:2:5: the stop of the loop over 'i' uses '/' with a non-integer result; use '//' for integer "
            "division");
}

TEST(EmitModuleErrors, ReturnInsideALoop) {
  EXPECT_EQ(ErrorOf(*LoopKernel(ir::ForKind::Sequential, Index(4), Index(1), nullptr, {}, true)),
            "k.py:4:9: backend-ptoas cannot lower a return inside a loop in kernel 'k'");
}

TEST(EmitModuleErrors, UnsupportedOpInsideALoop) {
  auto a = TensorParam("a", {16, 16}, {});
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(3, 13));
  auto t = TileAt("t", load, 0);
  auto exp =
      std::make_shared<ir::Call>(&OpaqueOp(), std::vector<ir::ExprPtr>{t}, ir::Call::Kwargs{}, t->type(), At(4, 13));
  auto loop = For(LoopVar("i"), Index(0), Index(2), Index(1),
                  {Assign(t, load, At(3, 9)), Assign(TileAt("e", load, 1024), exp, At(4, 9))}, At(2, 5));
  auto kernel = Kernel("k", {a}, {ir::ParamDirection::InOut}, {loop});
  EXPECT_EQ(ErrorOf(*kernel),
            "k.py:4:13: backend-ptoas cannot lower op 'test.opaque' in kernel 'k' (the ops it lowers are "
            "listed in libs/backend-ptoas/README.md)");
}

// A PTO function runs on one core type; a vector op in a cube kernel (or the reverse) has no lowering.
TEST(EmitModuleErrors, OpOfTheOtherCoreType) {
  auto a = TensorParam("a", {16, 16}, {});
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(2, 9));
  auto cube = Kernel("k", {a}, {ir::ParamDirection::In}, {Assign(TileAt("t", load, 0), load, At(2, 5))},
                     ir::FunctionType::AIC);
  EXPECT_EQ(ErrorOf(*cube),
            "k.py:2:9: backend-ptoas cannot lower 'tile.load' in kernel 'k': the op runs on the vector core, but the "
            "kernel is an AIC (cube) kernel");
  auto to_mat = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(2, 9), {{"target_memory", ir::MemorySpace::Mat}});
  auto vector = Kernel("k", {a}, {ir::ParamDirection::In}, {Assign(TileAt("t", to_mat, 0), to_mat, At(2, 5))});
  EXPECT_EQ(ErrorOf(*vector),
            "k.py:2:9: backend-ptoas cannot lower 'tile.load' in kernel 'k': the op runs on the cube core, but the "
            "kernel is an AIV (vector) kernel");
}

// def k(a):
//     t = pl.load(a, [0, 0], [16, 16], target_memory=<space>)   # line 2, at 0
//     m = pl.move(t, target_memory=<to>)                         # line 3, at `to_offset`
ir::FunctionPtr MoveKernel(ir::MemorySpace space, ir::MemorySpace to, int64_t to_offset) {
  auto a = TensorParam("a", {16, 16}, {});
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(2, 9), {{"target_memory", space}});
  auto t = TileAt("t", load, 0);
  auto move = Op("tile.move", {t}, At(3, 9), {{"target_memory", to}});
  return Kernel("k", {a}, {ir::ParamDirection::In},
                {Assign(t, load, At(2, 5)), Assign(TileAt("m", move, to_offset), move, At(3, 5))},
                space == ir::MemorySpace::Vec ? ir::FunctionType::AIV : ir::FunctionType::AIC);
}

TEST(EmitModuleErrors, MovesPtoasHasNoPathFor) {
  EXPECT_EQ(ErrorOf(*MoveKernel(ir::MemorySpace::Mat, ir::MemorySpace::Mat, 1024)),
            "k.py:3:9: backend-ptoas cannot lower the tile.move of 't' from Mat to Mat in kernel 'k': pto.tmov on "
            "a2a3 moves Mat -> Left/Right/Bias, Acc -> Mat/Vec and Vec -> Vec");
  EXPECT_EQ(ErrorOf(*MoveKernel(ir::MemorySpace::Vec, ir::MemorySpace::Vec, 0)),
            "k.py:3:9: tile.move copies 't' onto itself (both at byte offset 0 in Vec); pto.tmov needs distinct "
            "source and destination buffers");
  EXPECT_TRUE(EmitModule(*MoveKernel(ir::MemorySpace::Vec, ir::MemorySpace::Vec, 1024), "a2a3"));
}

// A reshape's result and an accumulating matmul's result are their operand's storage: each variable
// has its own alloc_tile, so memory allocation must have put the two at the same address.
TEST(EmitModuleErrors, AliasingResultInAnotherBuffer) {
  auto a = TensorParam("a", {16, 16}, {});
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(2, 9));
  auto t = TileAt("t", load, 0);
  auto reshape = Op("tile.reshape", {t, Ints({1, 256})}, At(3, 12));
  auto reshaped = Kernel("k", {a}, {ir::ParamDirection::In},
                         {Assign(t, load, At(2, 5)), Assign(TileAt("flat", reshape, 1024), reshape, At(3, 5))});
  EXPECT_EQ(ErrorOf(*reshaped),
            "k.py:3:12: the result 'flat' of 'tile.reshape' is at byte offset 1024 but its source 't' is at 0; the "
            "result must share the source's buffer");

  auto create = [](const std::string& name, ir::Shape shape, ir::MemorySpace space, int64_t offset) {
    auto call = Op("tile.create", {Tuple({Index(shape[0]), Index(shape[1])})}, {},
                   {{"dtype", space == ir::MemorySpace::Acc ? ir::DataType::FP32 : ir::DataType::FP16},
                    {"target_memory", space}});
    return std::pair{TileAt(name, call, offset), call};
  };
  auto [lhs, lhs_call] = create("lhs", {16, 16}, ir::MemorySpace::Left, 0);
  auto [rhs, rhs_call] = create("rhs", {16, 16}, ir::MemorySpace::Right, 0);
  auto [acc, acc_call] = create("acc", {16, 16}, ir::MemorySpace::Acc, 0);
  auto matmul_acc = PlacedOp("tile.matmul_acc", {acc, lhs, rhs}, acc_call->type(), At(4, 11));
  auto accumulated = Kernel("k", {}, {},
                            {Assign(lhs, lhs_call, {}), Assign(rhs, rhs_call, {}), Assign(acc, acc_call, {}),
                             Assign(TileAt("acc2", matmul_acc, 1024), matmul_acc, At(4, 5))},
                            ir::FunctionType::AIC);
  EXPECT_EQ(ErrorOf(*accumulated),
            "k.py:4:11: the result 'acc2' of 'tile.matmul_acc' is at byte offset 1024 but its accumulator 'acc' is at "
            "0; the result must share the accumulator's buffer");
}

// def k(a, *scalars):
//     t = pl.load(a, [0, 0], [16, 16], dtype)         # line 2
//     r = <op>(t, scalar)                             # line 3
ir::FunctionPtr ScalarKernel(const std::string& op, const ir::ExprPtr& scalar, std::vector<ir::VarPtr> scalars = {},
                             ir::DataType dtype = ir::DataType::FP32) {
  auto a = TensorParam("a", {16, 16}, {}, dtype);
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(2, 9));
  auto t = TileAt("t", load, 0);
  auto call = Op(op, {t, scalar}, At(3, 9));
  std::vector<ir::VarPtr> params = {a};
  params.insert(params.end(), scalars.begin(), scalars.end());
  return Kernel("k", params, std::vector<ir::ParamDirection>(params.size(), ir::ParamDirection::In),
                {Assign(t, load, At(2, 5)), Assign(TileAt("r", call, 1024), call, At(3, 5))});
}

TEST(EmitModuleErrors, ScalarOperands) {
  auto n = ScalarParam("n", ir::DataType::UINT32, {});
  EXPECT_EQ(ErrorOf(*ScalarKernel("tile.adds", n, {n})),
            "k.py:3:9: the scalar operand of 'tile.adds' is the UINT32 parameter 'n', but the tile is FP32; "
            "backend-ptoas converts only floating-point and signed integer scalars");
  auto b = ScalarParam("b", ir::DataType::BF16, {});
  EXPECT_EQ(ErrorOf(*ScalarKernel("tile.muls", b, {b}, ir::DataType::FP16)),
            "k.py:3:9: the scalar operand of 'tile.muls' is the BF16 parameter 'b', but the tile is FP16; "
            "backend-ptoas converts only floating-point and signed integer scalars");
  // A scalar computed in the kernel (here a variable of no parameter) has no SSA value to pass.
  auto local = std::make_shared<ir::Var>("s", std::make_shared<ir::ScalarType>(ir::DataType::FP32));
  EXPECT_EQ(ErrorOf(*ScalarKernel("tile.expands", local)),
            "k.py:3:9: the scalar operand of 'tile.expands' must be a literal, a scalar parameter of kernel 'k' or a "
            "floating-point element read with pl.read");
  auto full = Op("tile.full", {Ints({16, 32}), Float(std::numeric_limits<double>::infinity())}, At(2, 9),
                 {{"dtype", ir::DataType::FP8E4M3FN}});
  auto kernel = Kernel("k", {}, {}, {Assign(TileAt("t", full, 0), full, At(2, 5))});
  EXPECT_EQ(ErrorOf(*kernel), "k.py:2:9: the constant inf has no FP8E4M3FN spelling in backend-ptoas");
}

TEST(EmitModuleErrors, UnsupportedElementType) {
  auto x = TensorParam("x", {16, 16}, At(1, 9), ir::DataType::INT4);
  auto kernel = Kernel("k", {x}, {ir::ParamDirection::In}, {});
  EXPECT_EQ(ErrorOf(*kernel), "k.py:1:9: element type INT4 is not supported by backend-ptoas");
}

// A carried tile stays in its buffer: scf.for needs no iter_args for it. A carried floating-point
// scalar, a carried tile moved to another buffer and a merged floating-point scalar have no
// lowering: a clear refusal. (Integer scalars are scf results: module_loops_test.)
TEST(EmitModuleErrors, CarriedFloatScalarsAndMovedTilesAreRefused) {
  auto a = TensorParam("a", {16, 16}, At(1, 10));
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(2, 9));
  auto t = TileAt("t", load, 0);
  auto i = LoopVar("i");
  auto loop_carrying = [&](const ir::VarPtr& carried, const ir::ExprPtr& init, const ir::VarPtr& result) {
    auto body = std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{carried});
    auto loop = std::make_shared<ir::ForStmt>(i, Index(0), Index(4), Index(1), std::vector<ir::IterArg>{{carried, init}},
                                              body, std::vector<ir::VarPtr>{result}, ir::ForKind::Sequential,
                                              At(3, 5));
    return Kernel("k", {a}, {ir::ParamDirection::InOut}, {Assign(t, load, At(2, 5)), loop});
  };
  auto fp32 = std::make_shared<ir::ScalarType>(ir::DataType::FP32);
  auto x = std::make_shared<ir::Var>("x", fp32), x_out = std::make_shared<ir::Var>("x_out", fp32);
  EXPECT_EQ(ErrorOf(*loop_carrying(x, Float(0.0), x_out)),
            "k.py:3:5: backend-ptoas cannot lower the loop over 'i' in kernel 'k': it carries 'x' of type "
            "pl.Scalar[pl.FP32] from one iteration to the next (carried tiles and integer scalars are emitted)");
  auto moved = TileAt("acc", load, 1024), result = TileAt("result", load, 1024);
  EXPECT_EQ(ErrorOf(*loop_carrying(moved, t, result)),
            "k.py:3:5: 'acc' and 't' must be one buffer to be carried or merged in place "
            "(pl.Tile[[16, 16], pl.FP32, pl.MemRef(1024, 1024), pl.Mem.Vec] vs "
            "pl.Tile[[16, 16], pl.FP32, pl.MemRef(0, 1024), pl.Mem.Vec])");
  auto in_place = TileAt("acc", load, 0), out = TileAt("result", load, 0);
  EXPECT_TRUE(EmitModule(*loop_carrying(in_place, t, out), "a2a3"));
  auto branch = std::make_shared<ir::IfStmt>(
      Bin(ir::BinaryOp::Lt, Index(1), Index(2)), std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{Float(1.0)}),
      std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{Float(2.0)}), std::vector<ir::VarPtr>{x}, At(4, 5));
  auto with_if = Kernel("k", {a}, {ir::ParamDirection::InOut}, {Assign(t, load, At(2, 5)), branch});
  EXPECT_EQ(ErrorOf(*with_if),
            "k.py:4:5: backend-ptoas cannot lower this if in kernel 'k': it merges 'x' of type pl.Scalar[pl.FP32] "
            "(merged tiles and integer scalars are emitted)");
}

// A floating-point element is read at its type (module_loops_test), but nothing computes with it, and
// a floating-point element is written only from a scalar operand.
TEST(EmitModuleErrors, FloatScalarArithmeticAndComputedFloatWritesAreNotLoweredYet) {
  auto a = TensorParam("a", {16, 16}, At(1, 10));
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(2, 9));
  auto t = TileAt("t", load, 0);
  auto read = Op("tile.read", {t, Ints({0, 1})}, At(3, 9));
  auto s = std::make_shared<ir::Var>("s", read->type(), At(3, 5));
  auto twice = Bin(ir::BinaryOp::Mul, s, Float(2.0));
  auto u = std::make_shared<ir::Var>("u", twice->type(), At(4, 5));
  auto kernel = Kernel("k", {a}, {ir::ParamDirection::InOut},
                       {Assign(t, load, At(2, 5)), Assign(s, read, At(3, 5)), Assign(u, twice, At(4, 5))});
  EXPECT_EQ(ErrorOf(*kernel), "k.py:4:5: backend-ptoas cannot lower the FP32 scalar 'u' in kernel 'k'; it computes "
                              "integer index values, and floating-point scalars only by reading elements (pl.read) "
                              "and casting (pl.cast of a literal, an integer or such a scalar)");
  // A floating-point element is written from a literal, a scalar parameter or an element read; not
  // from a value computed in the kernel (here a variable of no definition the backend knows).
  auto v = std::make_shared<ir::Var>("v", read->type(), At(4, 5));
  auto write = Op("tensor.write", {a, Ints({0, 1}), v}, At(4, 9));
  auto writes = Kernel("k", {a}, {ir::ParamDirection::InOut},
                       {Assign(t, load, At(2, 5)), std::make_shared<ir::EvalStmt>(write, At(4, 9))});
  EXPECT_EQ(ErrorOf(*writes), "k.py:4:9: backend-ptoas does not lower the single-element access 'tensor.write' of "
                              "a FP32 tensor yet in kernel 'k'; it writes integer elements, and floating-point ones "
                              "from a literal, a scalar parameter or an element read");
}

}  // namespace
}  // namespace pypto::backend_ptoas
