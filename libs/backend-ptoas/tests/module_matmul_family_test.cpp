// The matmul family beyond tmatmul / tmatmul.acc: tgemv, tgemv.acc and tgemv.bias with their
// accumulation phase, tmatmul.bias reading a Bias tile, and matmul_acc's init_cond (a branch over
// tmatmul and tmatmul.acc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;
using ::testing::HasSubstr;

std::string Emit(const ir::Function& kernel) {
  auto text = EmitModule(kernel, "a2a3");
  return text ? *text : text.error();
}

// A call built without type deduction (its accumulator already placed), with attributes.
ir::CallPtr PlacedCall(const std::string& name, std::vector<ir::ExprPtr> args, const ir::TypePtr& type,
                       ir::Call::Kwargs kwargs, ir::Span span = {}) {
  return std::make_shared<ir::Call>(ir::OpRegistry::Get().Find(name), std::move(args), std::move(kwargs), type,
                                    std::move(span));
}

// def gemv(a: [1, 128] FP16, b: [128, 64] FP16, bias: [1, 64] FP32, c: [1, 64] FP32):   an AIC kernel
//     a_left, b_right, bias_bt: Mat loads moved into Left, Right and Bias
//     g = pl.tile.gemv(a_left, b_right, acc_phase="partial")            # Acc at 0
//     g2 = pl.tile.gemv_acc(g, a_left, b_right, acc_phase="final")      # Acc at 0, in place
//     gb = pl.tile.gemv_bias(a_left, b_right, bias_bt)                  # Acc at 256
//     mb = pl.tile.matmul_bias(a_left, b_right, bias_bt)                # Acc at 512
//     pl.store(g2, [0, 0], c)
struct GemvKernel {
  ir::VarPtr a = TensorParam("a", {1, 128}, {}, ir::DataType::FP16);
  ir::VarPtr b = TensorParam("b", {128, 64}, {}, ir::DataType::FP16);
  ir::VarPtr bias = TensorParam("bias", {1, 64}, {});
  ir::VarPtr c = TensorParam("c", {1, 64}, {});
  std::vector<ir::StmtPtr> body;
  ir::VarPtr a_left, b_right, bias_bt;

  GemvKernel() {
    a_left = Placed("a", a, {1, 128}, 0, ir::MemorySpace::Left, 0);
    b_right = Placed("b", b, {128, 64}, 256, ir::MemorySpace::Right, 0);
    bias_bt = Placed("bias", bias, {1, 64}, 16640, ir::MemorySpace::Bias, 0);
  }

  // `name`_mat loaded at `mat_offset` in Mat, then moved into `space` at `offset`.
  ir::VarPtr Placed(const std::string& name, const ir::VarPtr& tensor, std::initializer_list<int64_t> shape,
                    int64_t mat_offset, ir::MemorySpace space, int64_t offset) {
    auto load = Op("tile.load", {tensor, Ints({0, 0}), Ints(shape)}, {}, {{"target_memory", ir::MemorySpace::Mat}});
    auto mat = TileAt(name + "_mat", load, mat_offset);
    auto move = Op("tile.move", {mat}, {}, {{"target_memory", space}});
    auto moved = TileAt(name + "_l0", move, offset);
    body.push_back(Assign(mat, load, {}));
    body.push_back(Assign(moved, move, {}));
    return moved;
  }

  ir::VarPtr Compute(const std::string& name, const ir::CallPtr& call, int64_t offset) {
    auto result = TileAt(name, call, offset);
    body.push_back(Assign(result, call, {}));
    return result;
  }

  ir::FunctionPtr Finish(const ir::VarPtr& stored) {
    body.push_back(Eval(Op("tile.store", {stored, Ints({0, 0}), c}, {}), {}));
    return Kernel("gemv", {a, b, bias, c},
                  {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                  std::move(body), ir::FunctionType::AIC);
  }
};

TEST(EmitMatmulFamily, GemvFormsCarryTheirAccumulationPhase) {
  GemvKernel k;
  auto gemv = Op("tile.gemv", {k.a_left, k.b_right}, {}, {{"acc_phase", std::string("partial")}});
  auto g = k.Compute("g", gemv, 0);
  auto g2 = k.Compute("g2", PlacedCall("tile.gemv_acc", {g, k.a_left, k.b_right}, g->type(),
                                       {{"acc_phase", std::string("final")}}),
                      0);
  k.Compute("gb", Op("tile.gemv_bias", {k.a_left, k.b_right, k.bias_bt}, {}), 256);
  k.Compute("mb", Op("tile.matmul_bias", {k.a_left, k.b_right, k.bias_bt}, {}), 512);
  const std::string text = Emit(*k.Finish(g2));
  const std::string left = "!pto.tile_buf<loc=left, dtype=f16, rows=1, cols=128";
  EXPECT_THAT(text, HasSubstr("pto.tgemv ins(%a_l0, %b_l0 : " + left));
  EXPECT_THAT(text, HasSubstr(") outs(%g : !pto.tile_buf<loc=acc, dtype=f32, rows=1, cols=64"));
  EXPECT_THAT(text, HasSubstr(">) {accPhase = #pto<acc_phase partial>}\n"));
  // The accumulator is the result itself, as for tmatmul.acc.
  EXPECT_THAT(text, HasSubstr("pto.tgemv.acc ins(%g2, %a_l0, %b_l0 : "));
  EXPECT_THAT(text, HasSubstr(">) {accPhase = #pto<acc_phase final>}\n"));
  EXPECT_THAT(text, HasSubstr("pto.tgemv.bias ins(%a_l0, %b_l0, %bias_l0 : "));
  EXPECT_THAT(text, HasSubstr("pto.tmatmul.bias ins(%a_l0, %b_l0, %bias_l0 : "));
  EXPECT_THAT(text, HasSubstr("pto.tmov ins(%bias_mat : !pto.tile_buf<loc=mat, dtype=f32, rows=1, cols=64"));
  EXPECT_THAT(text, HasSubstr("outs(%bias_l0 : !pto.tile_buf<loc=bias, dtype=f32, rows=1, cols=64"));
}

// acc = pl.matmul_acc(g, a_left, b_right, init_cond=cond), stored: the kernel gets k0 as its last parameter.
ir::FunctionPtr InitCondKernel(GemvKernel& k, const ir::VarPtr& k0, const ir::ExprPtr& cond) {
  auto product = k.Compute("g", Op("tile.gemv", {k.a_left, k.b_right}, {}), 0);
  auto acc = PlacedCall("tile.matmul_acc", {product, k.a_left, k.b_right, cond}, product->type(), {}, At(9, 15));
  auto updated = TileAt("acc", acc, 0);
  k.body.push_back(Assign(updated, acc, At(9, 9)));
  k.body.push_back(Eval(Op("tile.store", {updated, Ints({0, 0}), k.c}, {}), {}));
  using ir::ParamDirection;
  return Kernel("gemv", {k.a, k.b, k.bias, k.c, k0},
                {ParamDirection::In, ParamDirection::In, ParamDirection::In, ParamDirection::Out, ParamDirection::In},
                std::move(k.body), ir::FunctionType::AIC);
}

// init_cond=(k0 == 0): where it holds the accumulator is overwritten (tmatmul), elsewhere added to
// (tmatmul.acc); the pto ops have no such flag, so the module branches over the two, as upstream's does.
TEST(EmitMatmulFamily, InitCondBranchesOverTheOverwritingAndTheAccumulatingForm) {
  GemvKernel k;
  auto k0 = ScalarParam("k0", ir::DataType::INDEX, {});
  const std::string text = Emit(*InitCondKernel(k, k0, Bin(ir::BinaryOp::Eq, k0, Index(0))));
  const std::string left = "!pto.tile_buf<loc=left, dtype=f16, rows=1, cols=128, v_row=?, v_col=?, blayout=col_major, "
                           "slayout=row_major, fractal=512, pad=0>";
  const std::string right = "!pto.tile_buf<loc=right, dtype=f16, rows=128, cols=64, v_row=?, v_col=?, "
                            "blayout=row_major, slayout=col_major, fractal=512, pad=0>";
  const std::string acc = "!pto.tile_buf<loc=acc, dtype=f32, rows=1, cols=64, v_row=?, v_col=?, blayout=col_major, "
                          "slayout=row_major, fractal=1024, pad=0>";
  const std::string loc = " loc(\"k.py\":9:15)\n";
  EXPECT_THAT(text, HasSubstr("    %0 = arith.cmpi eq, %arg4, %c0_index : index" + loc +
                              "    scf.if %0 {\n"
                              "      pto.tmatmul ins(%a_l0, %b_l0 : " + left + ", " + right + ") outs(%acc : " + acc +
                              ")" + loc +
                              "    } else {\n"
                              "      pto.tmatmul.acc ins(%acc, %a_l0, %b_l0 : " + acc + ", " + left + ", " + right +
                              ") outs(%acc : " + acc + ")" + loc +
                              "    }\n"));
}

// A literal init_cond picks one form outright.
TEST(EmitMatmulFamily, ALiteralInitCondPicksOneForm) {
  GemvKernel k;
  auto k0 = ScalarParam("k0", ir::DataType::INDEX, {});
  const std::string text = Emit(*InitCondKernel(k, k0, std::make_shared<ir::ConstBool>(true, ir::Span{})));
  EXPECT_THAT(text, HasSubstr("pto.tmatmul ins(%a_l0, %b_l0 : "));
  EXPECT_THAT(text, Not(HasSubstr("scf.if")));
  EXPECT_THAT(text, Not(HasSubstr("pto.tmatmul.acc")));
}

// A condition scf.if cannot test is refused at the op, saying what it lowers.
TEST(EmitMatmulFamily, AnInitCondThatIsNoComparisonIsRefused) {
  GemvKernel k;
  auto k0 = ScalarParam("k0", ir::DataType::INDEX, {});
  EXPECT_EQ(Emit(*InitCondKernel(k, k0, Bin(ir::BinaryOp::Add, k0, Index(1)))),
            "k.py:9:15: backend-ptoas cannot lower the init_cond condition `k0 + 1` in kernel 'gemv': it lowers "
            "comparisons of integers and of floating-point scalars, and boolean scalar parameters");
}

// def mm(a: [16, 32] FP16, w: [64, 32] FP16, c: [16, 64] FP32):         an AIC kernel, c = a @ w.T
//     a_left = pl.move(pl.load(a, .., target_memory=Mat), Left)          # Mat at 0, Left at 0
//     w_mat = pl.load(w, [0, 0], [64, 32], target_memory=Mat)            # Mat at 1024
//     w_right = pl.move(w_mat, target_memory=Right)                      # Right at 0, [64, 32]
//     w_half = pl.tile.extract(w_mat, 0, 16, [64, 16], Right)            # Right at 4096, a K window
//     acc = pl.matmul(a_left, w_right, b_trans=True)                     # Acc at 0
//     acc_half = pl.matmul(<a's K window in Left>, w_half, b_trans=True)   # Acc at 4096
//     pl.store(acc, [0, 0], c)
// The Right operand of b_trans=True is the [K, N] Right tile tmatmul reads; the Mat tile it comes
// from is read through its [K, N] ZN view at the same address (the NZ bytes of [N, K]), and an
// extracted K window is the [k, N] window at (col, row) of that view.
TEST(EmitMatmulFamily, TransposedRhsIsReadThroughTheZnViewOfItsMatTile) {
  auto a = TensorParam("a", {16, 32}, {}, ir::DataType::FP16);
  auto w = TensorParam("w", {64, 32}, {}, ir::DataType::FP16);
  auto c = TensorParam("c", {16, 64}, {});
  const ir::Call::Kwargs to_mat = {{"target_memory", ir::MemorySpace::Mat}};
  auto load_a = Op("tile.load", {a, Ints({0, 0}), Ints({16, 32})}, {}, to_mat);
  auto a_mat = TileAt("a_mat", load_a, 0);
  auto to_left = Op("tile.move", {a_mat}, {}, {{"target_memory", ir::MemorySpace::Left}});
  auto a_left = TileAt("a_left", to_left, 0);
  auto load_w = Op("tile.load", {w, Ints({0, 0}), Ints({64, 32})}, {}, to_mat);
  auto w_mat = TileAt("w_mat", load_w, 1024);
  auto to_right = Op("tile.move", {w_mat}, {}, {{"target_memory", ir::MemorySpace::Right}});
  auto w_right = TileAt("w_right", to_right, 0);
  auto extract = Op("tile.extract", {w_mat, Index(0), Index(16), Ints({64, 16})}, {},
                    {{"target_memory", ir::MemorySpace::Right}});
  auto w_half = TileAt("w_half", extract, 4096);
  auto matmul = Op("tile.matmul", {a_left, w_right}, {}, {{"b_trans", true}});
  auto acc = TileAt("acc", matmul, 0);
  auto extract_a = Op("tile.extract", {a_mat, Index(0), Index(16), Ints({16, 16})}, {},
                      {{"target_memory", ir::MemorySpace::Left}});
  auto a_half = TileAt("a_half", extract_a, 1024);
  auto half_matmul = Op("tile.matmul", {a_half, w_half}, {}, {{"b_trans", true}});
  auto acc_half = TileAt("acc_half", half_matmul, 4096);
  auto kernel = Kernel("mm", {a, w, c}, {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                       {Assign(a_mat, load_a, {}), Assign(a_left, to_left, {}), Assign(w_mat, load_w, {}),
                        Assign(w_right, to_right, {}), Assign(w_half, extract, {}), Assign(acc, matmul, {}),
                        Assign(a_half, extract_a, {}), Assign(acc_half, half_matmul, {}),
                        Eval(Op("tile.store", {acc, Ints({0, 0}), c}, {}), {})},
                       ir::FunctionType::AIC);
  auto text = EmitModule(*kernel, "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  const std::string zn = "!pto.tile_buf<loc=mat, dtype=f16, rows=32, cols=64, v_row=?, v_col=?, blayout=row_major, "
                         "slayout=col_major, fractal=512, pad=0>";
  const std::string right = "!pto.tile_buf<loc=right, dtype=f16, rows=32, cols=64, v_row=?, v_col=?, "
                            "blayout=row_major, slayout=col_major, fractal=512, pad=0>";
  const std::string half = "!pto.tile_buf<loc=right, dtype=f16, rows=16, cols=64, v_row=?, v_col=?, "
                           "blayout=row_major, slayout=col_major, fractal=512, pad=0>";
  EXPECT_THAT(*text, HasSubstr("    %w_mat_t = pto.alloc_tile addr = %c1024_i64 valid_row = %c32_index valid_col = "
                               "%c64_index : " + zn + "\n"));
  EXPECT_THAT(*text, HasSubstr("    %w_right = pto.alloc_tile addr = %c0_i64 valid_row = %c32_index valid_col = "
                               "%c64_index : " + right + "\n"));
  EXPECT_THAT(*text, HasSubstr("    pto.tmov ins(%w_mat_t : " + zn + ") outs(%w_right : " + right + ")\n"));
  EXPECT_THAT(*text, HasSubstr("    pto.textract ins(%w_mat_t, %c16_index, %c0_index : " + zn +
                               ", index, index) outs(%w_half : " + half + ")\n"));
  EXPECT_THAT(*text, HasSubstr("    pto.tmatmul ins(%a_left, %w_right : "));
}

// def mm(a: [16, 32] FP16, w: [64, 32] FP16, c: [16, 64] FP32):         an AIC kernel, c = a @ w.T
//     a_left = pl.move(pl.load(a, .., target_memory=Mat), Left)          # Mat at 0, Left at 0
//     w_mat = pl.load(w, [0, 0], [64, 32], target_memory=Mat)            # Mat at 1024
//     w_t = pl.tile.transpose_view(w_mat)                                # [32, 64], Mat at 8192
//     w_right = pl.move(w_t, target_memory=Right)                        # Right at 0
//     acc = pl.matmul(a_left, w_right)                                   # Acc at 0
// The view is an alloc_tile at w_mat's address (not its own), typed [32, 64] ZN: the NZ bytes of
// w_mat read transposed, which tmov carries into the Right tile.
// With `reload_offset`, a_mat2 = pl.load(a, .., target_memory=Mat) follows the matmul there.
ir::FunctionPtr TransposeViewKernel(int64_t view_offset, int64_t other_mat_offset,
                                    std::optional<int64_t> reload_offset = std::nullopt) {
  auto a = TensorParam("a", {16, 32}, {}, ir::DataType::FP16);
  auto w = TensorParam("w", {64, 32}, {}, ir::DataType::FP16);
  auto c = TensorParam("c", {16, 64}, {});
  const ir::Call::Kwargs to_mat = {{"target_memory", ir::MemorySpace::Mat}};
  auto load_a = Op("tile.load", {a, Ints({0, 0}), Ints({16, 32})}, {}, to_mat);
  auto a_mat = TileAt("a_mat", load_a, other_mat_offset);
  auto to_left = Op("tile.move", {a_mat}, {}, {{"target_memory", ir::MemorySpace::Left}});
  auto a_left = TileAt("a_left", to_left, 0);
  auto load_w = Op("tile.load", {w, Ints({0, 0}), Ints({64, 32})}, {}, to_mat);
  auto w_mat = TileAt("w_mat", load_w, 1024);
  auto view = Op("tile.transpose_view", {w_mat}, At(4, 11));
  auto w_t = TileAt("w_t", view, view_offset);
  auto to_right = Op("tile.move", {w_t}, {}, {{"target_memory", ir::MemorySpace::Right}});
  auto w_right = TileAt("w_right", to_right, 0);
  auto matmul = Op("tile.matmul", {a_left, w_right}, {});
  auto acc = TileAt("acc", matmul, 0);
  std::vector<ir::StmtPtr> body = {Assign(w_mat, load_w, {}),     Assign(w_t, view, At(4, 5)),
                                    Assign(a_mat, load_a, {}),     Assign(a_left, to_left, {}),
                                    Assign(w_right, to_right, {}), Assign(acc, matmul, {}),
                                    Eval(Op("tile.store", {acc, Ints({0, 0}), c}, {}), {})};
  if (reload_offset) body.push_back(Assign(TileAt("a_mat2", load_a, *reload_offset), load_a, {}));
  return Kernel("mm", {a, w, c}, {ir::ParamDirection::In, ir::ParamDirection::In, ir::ParamDirection::Out},
                std::move(body), ir::FunctionType::AIC);
}

TEST(EmitMatmulFamily, TransposeViewIsTheZnViewOfItsSourcesBytes) {
  auto text = EmitModule(*TransposeViewKernel(8192, 0), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  const std::string zn = "!pto.tile_buf<loc=mat, dtype=f16, rows=32, cols=64, v_row=?, v_col=?, blayout=row_major, "
                         "slayout=col_major, fractal=512, pad=0>";
  const std::string right = "!pto.tile_buf<loc=right, dtype=f16, rows=32, cols=64, v_row=?, v_col=?, "
                            "blayout=row_major, slayout=col_major, fractal=512, pad=0>";
  EXPECT_THAT(*text, HasSubstr("    %w_t = pto.alloc_tile addr = %c1024_i64 valid_row = %c32_index valid_col = "
                               "%c64_index : " + zn + "\n"));
  EXPECT_THAT(*text, HasSubstr("    pto.tmov ins(%w_t : " + zn + ") outs(%w_right : " + right + ")\n"));
  EXPECT_THAT(*text, Not(HasSubstr("8192")));
}

// The view reads w_mat's bytes (Mat 1024..5120) for as long as it is used; a tile placed there while
// it is would overwrite them.
TEST(EmitMatmulFamily, TransposeViewOfBytesAnotherMatTileTakesIsRefused) {
  EXPECT_EQ(Emit(*TransposeViewKernel(8192, 2048)),
            "k.py:4:11: backend-ptoas cannot lower 'tile.transpose_view' of 'w_mat' in kernel 'mm': on a device the "
            "view 'w_t' reads the bytes of 'w_mat' (Mat 1024..5120), and memory allocation places 'a_mat' in them "
            "while the view is read (Mat cannot hold both); write the matmul as pl.matmul(a, b, b_trans=True) of "
            "the untransposed tile instead");
}

// Once the view's last read (the move into Right) is done, its source's bytes are free: a tile loaded
// into them after the matmul does not stop the view from being lowered.
TEST(EmitMatmulFamily, TransposeViewSourcesBytesAreFreeAfterTheViewsLastRead) {
  auto text = EmitModule(*TransposeViewKernel(8192, 0, 1024), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_THAT(*text, HasSubstr("    %w_t = pto.alloc_tile addr = %c1024_i64 valid_row"));
  EXPECT_THAT(*text, HasSubstr("    %a_mat2 = pto.alloc_tile addr = %c1024_i64 valid_row"));
}

}  // namespace
}  // namespace pypto::backend_ptoas
