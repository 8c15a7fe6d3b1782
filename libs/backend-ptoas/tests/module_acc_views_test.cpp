// Windows of an Acc tile that memory allocation placed in the tile's own L0C block (acc_views.cpp):
// views of the tile written where the slice stands, never an alloc_tile at the tile's base filled by
// a textract (which would copy the window over the tile's first column blocks, still to be read).
#include <gtest/gtest.h>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;

constexpr const char* kAcc16x128 =
    "!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=128, v_row=?, v_col=?, blayout=col_major, "
    "slayout=row_major, fractal=1024, pad=0>";
constexpr const char* kAcc64x128 =
    "!pto.tile_buf<loc=acc, dtype=f32, rows=64, cols=128, v_row=?, v_col=?, blayout=col_major, "
    "slayout=row_major, fractal=1024, pad=0>";

std::string AccBuf(int rows, int cols, const std::string& valid = "v_row=?, v_col=?") {
  return fmt::format("!pto.tile_buf<loc=acc, dtype=f32, rows={}, cols={}, {}, blayout=col_major, "
                     "slayout=row_major, fractal=1024, pad=0>",
                     rows, cols, valid);
}

// `name`, the result of `call`, placed in `parent`'s block (what AllocateMemoryAddr gives a view).
ir::VarPtr ViewIn(const std::string& name, const ir::CallPtr& call, const ir::VarPtr& parent) {
  const auto* type = call->type()->As<ir::TileType>();
  auto placed = std::make_shared<ir::TileType>(type->shape(), type->dtype(), type->memory_space(),
                                               *parent->type()->As<ir::TileType>()->memref());
  return std::make_shared<ir::Var>(name, placed, call->span());
}

// An AIC kernel's Mat loads moved into Left / Right: [rows, k] x [k, cols] operands of a product.
struct CubeKernel {
  std::vector<ir::VarPtr> params;
  std::vector<ir::StmtPtr> body;
  int64_t mat_offset = 0;

  ir::VarPtr Operand(const std::string& name, const ir::VarPtr& tensor, std::initializer_list<int64_t> origin,
                     std::initializer_list<int64_t> shape, ir::MemorySpace space, int64_t offset) {
    auto load = Op("tile.load", {tensor, Ints(origin), Ints(shape)}, {}, {{"target_memory", ir::MemorySpace::Mat}});
    auto mat = TileAt(name + "_mat", load, mat_offset);
    mat_offset += mat->type()->As<ir::TileType>()->num_bytes();
    auto move = Op("tile.move", {mat}, {}, {{"target_memory", space}});
    auto moved = TileAt(name, move, offset);
    body.push_back(Assign(mat, load, {}));
    body.push_back(Assign(moved, move, {}));
    return moved;
  }

  ir::FunctionPtr Finish() {
    std::vector<ir::ParamDirection> directions(params.size(), ir::ParamDirection::In);
    directions.back() = ir::ParamDirection::Out;
    return Kernel("k", params, directions, std::move(body), ir::FunctionType::AIC);
  }
};

// def k(a: [16, 64], b: [64, 128], c: Out[16, 128]):
//     acc = pl.matmul(a_left, b_right)                       # [16, 128] Acc at 0
//     win = pl.tile.slice(acc, [16, 64], [0, 64])            # line 5: acc's block
//     win = pl.matmul_acc(win, a_left, b2_right)             # line 6: the product lands in acc
//     pl.store(acc, [0, 0], c)
TEST(EmitAccViews, AProductAccumulatesIntoASubsetOfWholeRows) {
  CubeKernel k;
  auto a = TensorParam("a", {16, 64}, {}), b = TensorParam("b", {64, 128}, {}), c = TensorParam("c", {16, 128}, {});
  k.params = {a, b, c};
  auto a_left = k.Operand("a_left", a, {0, 0}, {16, 64}, ir::MemorySpace::Left, 0);
  auto b_right = k.Operand("b_right", b, {0, 0}, {64, 128}, ir::MemorySpace::Right, 0);
  auto b2_right = k.Operand("b2_right", b, {0, 64}, {64, 64}, ir::MemorySpace::Right, 32768);
  auto matmul = Op("tile.matmul", {a_left, b_right}, {});
  auto acc = TileAt("acc", matmul, 0);
  auto slice = Op("tile.slice", {acc, Ints({16, 64}), Ints({0, 64})}, At(5, 11));
  auto win = ViewIn("win", slice, acc);
  auto product = PlacedOp("tile.matmul_acc", {win, a_left, b2_right}, win->type(), At(6, 11));
  auto win2 = ViewIn("win2", product, acc);
  k.body.insert(k.body.end(), {Assign(acc, matmul, {}), Assign(win, slice, At(5, 5)), Assign(win2, product, At(6, 5)),
                               Eval(Op("tile.store", {acc, Ints({0, 0}), c}, {}), {})});
  auto text = EmitModule(*k.Finish(), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  const std::string left = "!pto.tile_buf<loc=left, dtype=f32, rows=16, cols=64, v_row=?, v_col=?, "
                           "blayout=col_major, slayout=row_major, fractal=512, pad=0>";
  const std::string right = "!pto.tile_buf<loc=right, dtype=f32, rows=64, cols=64, v_row=?, v_col=?, "
                            "blayout=row_major, slayout=col_major, fractal=512, pad=0>";
  EXPECT_TRUE(HasBodyLine(*text, fmt::format("%win = pto.subset %acc[%c0_index, %c64_index] sizes [16, 64] : {}",
                                             kAcc16x128)))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, fmt::format("pto.tmatmul.acc ins(%win, %a_left, %b2_right : {}, {}, {}) outs(%win "
                                             ": {})",
                                             AccBuf(16, 64), left, right, AccBuf(16, 64))))
      << *text;
  EXPECT_EQ(text->find("%win = pto.alloc_tile"), std::string::npos) << *text;
  EXPECT_EQ(text->find("%win2"), std::string::npos) << *text;
  EXPECT_EQ(text->find("textract"), std::string::npos) << *text;
}

// def k(a: [64, 64], b: [64, 128], c: Out[64, 128]):
//     acc = pl.matmul(a_left, b_right)                       # [64, 128] Acc at 0
//     for r in pl.range(0, 64, 16):
//         band = pl.tile.slice(acc, [16, 128], [r, 0])       # acc's block, strided in L0C
//         pl.store(band, [r, 0], c)
TEST(EmitAccViews, ABandOfRowsIsUpstreamsSubviewWithStaticValidExtents) {
  CubeKernel k;
  auto a = TensorParam("a", {64, 64}, {}), b = TensorParam("b", {64, 128}, {}), c = TensorParam("c", {64, 128}, {});
  k.params = {a, b, c};
  auto a_left = k.Operand("a_left", a, {0, 0}, {64, 64}, ir::MemorySpace::Left, 0);
  auto b_right = k.Operand("b_right", b, {0, 0}, {64, 128}, ir::MemorySpace::Right, 0);
  auto matmul = Op("tile.matmul", {a_left, b_right}, {});
  auto acc = TileAt("acc", matmul, 0);
  auto r = LoopVar("r");
  auto slice = Op("tile.slice", {acc, Ints({16, 128}), Tuple({r, Index(0)})}, {});
  auto band = ViewIn("band", slice, acc);
  k.body.push_back(Assign(acc, matmul, {}));
  k.body.push_back(For(r, Index(0), Index(64), Index(16),
                       {Assign(band, slice, {}), Eval(Op("tile.store", {band, Tuple({r, Index(0)}), c}, {}), {})}, {}));
  auto text = EmitModule(*k.Finish(), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  const std::string view = AccBuf(16, 128, "v_row=16, v_col=128");
  EXPECT_TRUE(HasBodyLine(*text, fmt::format("%band = pto.subview %acc[%r, %c0_index] sizes [16, 128] : {} -> {}",
                                             kAcc64x128, view)))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, fmt::format("pto.tstore ins(%band : {}) outs(%c_pview : "
                                             "!pto.partition_tensor_view<16x128xf32>)",
                                             view)))
      << *text;
  EXPECT_EQ(text->find("%band = pto.alloc_tile"), std::string::npos) << *text;
  EXPECT_EQ(text->find("textract"), std::string::npos) << *text;
}

// A product into a band of rows would need a destination stride the MAD does not have.
TEST(EmitAccViews, AProductIntoABandOfRowsIsRefused) {
  CubeKernel k;
  auto a = TensorParam("a", {16, 64}, {}), b = TensorParam("b", {64, 128}, {}), c = TensorParam("c", {32, 128}, {});
  k.params = {a, b, c};
  auto a_left = k.Operand("a_left", a, {0, 0}, {16, 64}, ir::MemorySpace::Left, 0);
  auto b_right = k.Operand("b_right", b, {0, 0}, {64, 128}, ir::MemorySpace::Right, 0);
  auto create = Op("tile.create", {Ints({32, 128})}, {}, {{"dtype", ir::DataType::FP32},
                                                         {"target_memory", ir::MemorySpace::Acc}});
  auto acc = TileAt("acc", create, 0);
  auto slice = Op("tile.slice", {acc, Ints({16, 128}), Ints({16, 0})}, At(5, 11));
  auto band = ViewIn("band", slice, acc);
  auto product = PlacedOp("tile.matmul_acc", {band, a_left, b_right}, band->type(), At(6, 12));
  auto band2 = ViewIn("band2", product, acc);
  k.body.insert(k.body.end(), {Assign(acc, create, {}), Assign(band, slice, At(5, 5)),
                               Assign(band2, product, At(6, 5)), Eval(Op("tile.store", {acc, Ints({0, 0}), c}, {}), {})});
  auto text = EmitModule(*k.Finish(), "a2a3");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error(), "k.py:6:12: backend-ptoas cannot lower 'tile.matmul_acc' in kernel 'k': it accumulates into "
                          "'band', a band of rows of the Acc tile 'acc', which is strided in L0C, and a product has no "
                          "destination stride; accumulate into a window of whole rows (all 32 rows)");
}

}  // namespace
}  // namespace pypto::backend_ptoas
