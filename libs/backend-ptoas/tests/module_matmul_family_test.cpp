// The matmul family beyond tmatmul / tmatmul.acc: tgemv, tgemv.acc and tgemv.bias with their
// accumulation phase, tmatmul.bias reading a Bias tile, and the refusal of matmul_acc's init_cond.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

TEST(EmitMatmulFamily, InitCondIsRefusedWithTheWayAround) {
  GemvKernel k;
  auto product = k.Compute("g", Op("tile.gemv", {k.a_left, k.b_right}, {}), 0);
  auto k0 = ScalarParam("k0", ir::DataType::INDEX, {});
  auto first = Bin(ir::BinaryOp::Eq, k0, Index(0));
  auto acc = PlacedCall("tile.matmul_acc", {product, k.a_left, k.b_right, first}, product->type(), {}, At(9, 15));
  auto updated = TileAt("acc", acc, 0);
  k.body.push_back(Assign(updated, acc, At(9, 9)));
  EXPECT_EQ(Emit(*k.Finish(updated)),
            "k.py:9:15: backend-ptoas cannot lower 'tile.matmul_acc' with init_cond= in kernel 'gemv' yet; peel the "
            "first K step into a tile.matmul instead");
}

}  // namespace
}  // namespace pypto::backend_ptoas
