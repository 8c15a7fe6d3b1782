// A5's MX block-scale products as upstream pypto writes them: the scale tensors viewed and loaded in
// their MX layout, scale tiles in the layout's 32-byte boxes (Mat and loc=scaling), each product
// after the two pto.tget_scale_addr bindings, tmatmul.mx.acc in place; and the refused move of a scale
// tile that was not loaded from an MX tensor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;
using ::testing::HasSubstr;

std::string Emit(const ir::Function& kernel) {
  auto text = EmitModule(kernel, "a5");
  return text ? *text : text.error();
}

ir::VarPtr MxTensor(const std::string& name, ir::Shape shape, ir::TensorLayout layout) {
  return std::make_shared<ir::Var>(
      name, std::make_shared<ir::TensorType>(std::move(shape), ir::DataType::FP8E8M0, layout), ir::Span{});
}

// def mx(a: [16, 64] FP8E4M3FN, sa: [16, 2] E8M0 MX_A_ZZ, b: [64, 32] FP8E4M3FN, sb: [2, 32] E8M0 MX_B_NN,
//        c: [16, 32] FP32):                                          an AIC kernel
//     a_l0, sa_l0, b_l0, sb_l0: Mat loads moved into Left, LeftScale, Right, RightScale
//     p = pl.matmul_mx(a_l0, sa_l0, b_l0, sb_l0)                      # line 7, Acc at 0
//     q = pl.matmul_mx_acc(p, a_l0, sa_l0, b_l0, sb_l0)               # line 8, in place
//     pl.store(q, [0, 0], c)
struct MxKernel {
  ir::VarPtr a = TensorParam("a", {16, 64}, {}, ir::DataType::FP8E4M3FN);
  ir::VarPtr sa = MxTensor("sa", {16, 2}, ir::TensorLayout::MX_A_ZZ);
  ir::VarPtr b = TensorParam("b", {64, 32}, {}, ir::DataType::FP8E4M3FN);
  ir::VarPtr sb = MxTensor("sb", {2, 32}, ir::TensorLayout::MX_B_NN);
  ir::VarPtr c = TensorParam("c", {16, 32}, {});
  std::vector<ir::StmtPtr> body;

  // `name`_mat loaded from `tensor` into Mat, then moved into `space` (both at offset 0).
  ir::VarPtr Placed(const std::string& name, const ir::VarPtr& tensor, std::initializer_list<int64_t> shape,
                    ir::MemorySpace space, ir::Span span = {}) {
    auto load = Op("tile.load", {tensor, Ints({0, 0}), Ints(shape)}, {}, {{"target_memory", ir::MemorySpace::Mat}});
    auto mat = TileAt(name + "_mat", load, 0);
    auto move = Op("tile.move", {mat}, span, {{"target_memory", space}});
    auto moved = TileAt(name + "_l0", move, 0);
    body.push_back(Assign(mat, load, {}));
    body.push_back(Assign(moved, move, span));
    return moved;
  }

  ir::FunctionPtr Build(const ir::VarPtr& scale_source) {
    auto a_l0 = Placed("a", a, {16, 64}, ir::MemorySpace::Left);
    auto sa_l0 = Placed("sa", scale_source, {16, 2}, ir::MemorySpace::LeftScale, At(4, 5));
    auto b_l0 = Placed("b", b, {64, 32}, ir::MemorySpace::Right);
    auto sb_l0 = Placed("sb", sb, {2, 32}, ir::MemorySpace::RightScale);
    auto product = Op("tile.matmul_mx", {a_l0, sa_l0, b_l0, sb_l0}, At(7, 9));
    auto p = TileAt("p", product, 0);
    body.push_back(Assign(p, product, At(7, 5)));
    auto again = PlacedOp("tile.matmul_mx_acc", {p, a_l0, sa_l0, b_l0, sb_l0}, p->type(), At(8, 9));
    auto q = TileAt("q", again, 0);
    body.push_back(Assign(q, again, At(8, 5)));
    body.push_back(Eval(Op("tile.store", {q, Ints({0, 0}), c}, {}), {}));
    std::vector<ir::VarPtr> params = {a, sa, b, sb, c};
    if (scale_source != sa) params.push_back(scale_source);
    std::vector<ir::ParamDirection> directions(params.size(), ir::ParamDirection::In);
    directions[4] = ir::ParamDirection::Out;
    return Kernel("mx", params, directions, std::move(body), ir::FunctionType::AIC);
  }
};

std::string Tile(std::string_view loc, std::string_view dtype, int rows, int cols, std::string_view blayout,
                 std::string_view slayout, int fractal) {
  return fmt::format("!pto.tile_buf<loc={}, dtype={}, rows={}, cols={}, v_row=?, v_col=?, blayout={}, slayout={}, "
                     "fractal={}, pad=0>",
                     loc, dtype, rows, cols, blayout, slayout, fractal);
}

TEST(EmitMatmulMx, ScaleTensorsAreViewedAndLoadedInTheirLayout) {
  MxKernel k;
  const std::string text = Emit(*k.Build(k.sa));
  EXPECT_THAT(text, HasSubstr("%sa_view = pto.make_tensor_view %arg1, shape = [%c16_index, %c2_index], strides = "
                              "[%c2_index, %c1_index] {layout = #pto.layout<mx_a_zz>} : "
                              "!pto.tensor_view<?x?x!pto.f8E8M0>"));
  EXPECT_THAT(text, HasSubstr("{layout = #pto.layout<mx_b_nn>} : !pto.tensor_view<?x?x!pto.f8E8M0>"));
  const std::string mat = Tile("mat", "!pto.f8E8M0", 16, 2, "row_major", "row_major", 32);
  EXPECT_THAT(text, HasSubstr("pto.tload ins(%sa_pview : !pto.partition_tensor_view<16x2x!pto.f8E8M0>) outs(%sa_mat : " +
                              mat + ") {layout = #pto.layout<mx_a_zz>}"));
  EXPECT_THAT(text, HasSubstr("pto.tmov ins(%sa_mat : " + mat + ") outs(%sa_l0 : " +
                              Tile("scaling", "!pto.f8E8M0", 16, 2, "row_major", "row_major", 32) + ")"));
  EXPECT_THAT(text, HasSubstr("outs(%sb_l0 : " + Tile("scaling", "!pto.f8E8M0", 2, 32, "col_major", "col_major", 32) +
                              ")"));
}

TEST(EmitMatmulMx, EachProductBindsBothScaleTilesFirst) {
  MxKernel k;
  const std::string text = Emit(*k.Build(k.sa));
  const std::string left = Tile("left", "f8E4M3FN", 16, 64, "col_major", "row_major", 512);
  const std::string right = Tile("right", "f8E4M3FN", 64, 32, "row_major", "col_major", 512);
  const std::string left_scale = Tile("scaling", "!pto.f8E8M0", 16, 2, "row_major", "row_major", 32);
  const std::string right_scale = Tile("scaling", "!pto.f8E8M0", 2, 32, "col_major", "col_major", 32);
  const std::string acc = Tile("acc", "f32", 16, 32, "col_major", "row_major", 1024);
  auto binds = [&](std::string_view loc) {
    return fmt::format("    pto.tget_scale_addr ins(%a_l0 : {}) outs(%sa_l0 : {}) {}\n"
                       "    pto.tget_scale_addr ins(%b_l0 : {}) outs(%sb_l0 : {}) {}\n",
                       left, left_scale, loc, right, right_scale, loc);
  };
  const std::string types = left + ", " + left_scale + ", " + right + ", " + right_scale;
  const std::string operands = "%a_l0, %sa_l0, %b_l0, %sb_l0 : " + types;
  EXPECT_THAT(text, HasSubstr(binds("loc(\"k.py\":7:9)") + "    pto.tmatmul.mx ins(" + operands + ") outs(%p : " +
                              acc + ") loc(\"k.py\":7:9)\n"));
  EXPECT_THAT(text, HasSubstr(binds("loc(\"k.py\":8:9)") + "    pto.tmatmul.mx.acc ins(%q, %a_l0, %sa_l0, %b_l0, %sb_l0 : " +
                              acc + ", " + types + ") outs(%q : " + acc +
                              ") loc(\"k.py\":8:9)\n"));
}

TEST(EmitMatmulMx, AScaleTileNotLoadedFromAnMxTensorIsRefused) {
  MxKernel k;
  auto plain = TensorParam("plain", {16, 2}, {}, ir::DataType::FP8E8M0);
  EXPECT_EQ(Emit(*k.Build(plain)),
            "k.py:4:5: backend-ptoas cannot move 'sa_mat' into LeftScale in kernel 'mx': ptoas fills a scale buffer "
            "from a Mat tile in its scale layout, so load 'sa_mat' straight into Mat from a MX_A_ZZ tensor "
            "(pl.load(t, ..., target_memory=pl.Mem.Mat))");
}

}  // namespace
}  // namespace pypto::backend_ptoas
