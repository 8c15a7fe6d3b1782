// Type deduction of the MX block-scale matmuls (tile.matmul_mx, _acc, _bias), the MX scale layouts
// of tensor types (printed, compared, in JSON) and where mx_layout.h puts each scale.
#include <gtest/gtest.h>

#include "pypto/ir/json.h"
#include "pypto/ir/mx_layout.h"
#include "pypto/ir/op_registry.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

ExprPtr Ints(const Shape& values) {
  std::vector<ExprPtr> elements;
  for (int64_t v : values) elements.push_back(std::make_shared<ConstInt>(v, DataType::INDEX));
  return std::make_shared<TupleLiteral>(std::move(elements));
}

Result<CallPtr> Create(std::string_view op, std::vector<ExprPtr> args) {
  return OpRegistry::Get().CreateCall(op, std::move(args), {}, Span{"k.py", 9, 13});
}

std::string TypeOf(const Result<CallPtr>& call) { return call ? (*call)->type()->str() : call.error().str(); }
std::string ErrorOf(const Result<CallPtr>& call) { return call ? "no error" : call.error().message; }
std::string HelpOf(const Result<CallPtr>& call) { return call ? "no error" : call.error().hint; }

ExprPtr Tile(const Shape& shape, DataType dtype, MemorySpace space) {
  return testing::OpWithKwargs("tile.create", {Ints(shape)}, {{"dtype", dtype}, {"target_memory", space}});
}

// The four operands of a [m, k] by [k, n] MX product, each in its cube buffer.
std::vector<ExprPtr> Operands(int64_t m, int64_t k, int64_t n, DataType lhs = DataType::FP8E4M3FN) {
  return {Tile({m, k}, lhs, MemorySpace::Left), Tile({m, k / 32}, DataType::FP8E8M0, MemorySpace::LeftScale),
          Tile({k, n}, DataType::FP8E4M3FN, MemorySpace::Right),
          Tile({k / 32, n}, DataType::FP8E8M0, MemorySpace::RightScale)};
}

TEST(TileMxOps, TheProductIsAnFp32AccTile) {
  EXPECT_EQ(TypeOf(Create("tile.matmul_mx", Operands(64, 128, 32))), "pl.Tile[[64, 32], pl.FP32, pl.Mem.Acc]");
  auto acc_args = Operands(64, 128, 32);
  acc_args.insert(acc_args.begin(), Tile({64, 32}, DataType::FP32, MemorySpace::Acc));
  EXPECT_EQ(TypeOf(Create("tile.matmul_mx_acc", acc_args)), "pl.Tile[[64, 32], pl.FP32, pl.Mem.Acc]");
  // A placed accumulator (a printed program read back) keeps its buffer in the result.
  acc_args[0] = std::make_shared<Var>(
      "acc", std::make_shared<TileType>(Shape{64, 32}, DataType::FP32, MemorySpace::Acc, TileMemRef{0, 8192}));
  EXPECT_EQ(TypeOf(Create("tile.matmul_mx_acc", acc_args)), "pl.Tile[[64, 32], pl.FP32, pl.MemRef(0, 8192), pl.Mem.Acc]");
  acc_args[0] = Tile({64, 16}, DataType::FP32, MemorySpace::Acc);
  EXPECT_EQ(ErrorOf(Create("tile.matmul_mx_acc", acc_args)),
            "tile.matmul_mx_acc adds a pl.Tile[[64, 32], pl.FP32, pl.Mem.Acc] product into pl.Tile[[64, 16], pl.FP32, "
            "pl.Mem.Acc]: the accumulator must be an Acc tile of that shape");
  auto bias_args = Operands(64, 128, 32);
  bias_args.push_back(Tile({1, 32}, DataType::FP32, MemorySpace::Bias));
  EXPECT_EQ(TypeOf(Create("tile.matmul_mx_bias", bias_args)), "pl.Tile[[64, 32], pl.FP32, pl.Mem.Acc]");
  // Operands still in Mat are accepted: InferTileMemorySpace moves them into their buffers.
  auto in_mat = Operands(16, 64, 32);
  in_mat[1] = Tile({16, 2}, DataType::FP8E8M0, MemorySpace::Mat);
  EXPECT_EQ(TypeOf(Create("tile.matmul_mx", in_mat)), "pl.Tile[[16, 32], pl.FP32, pl.Mem.Acc]");
}

TEST(TileMxOps, PackedFp4IsCastFirst) {
  auto fp4 = Create("tile.matmul_mx", Operands(64, 128, 32, DataType::FP4));
  EXPECT_EQ(ErrorOf(fp4),
            "the left operand of tile.matmul_mx must be FP8E4M3FN, got pl.Tile[[64, 128], pl.FP4, pl.Mem.Left] (packed "
            "FP4 is not multiplied natively)");
  EXPECT_EQ(HelpOf(fp4), "cast it first: pl.cast(tile, pl.FP8E4M3FN)");
  EXPECT_EQ(fp4.error().span.str(), "k.py:9:13");
}

TEST(TileMxOps, ScalesHoldOneExponentPer32OfK) {
  auto args = Operands(64, 128, 32);
  args[3] = Tile({2, 32}, DataType::FP8E8M0, MemorySpace::RightScale);
  EXPECT_EQ(ErrorOf(Create("tile.matmul_mx", args)),
            "the right scale of tile.matmul_mx must be an FP8E8M0 [4, 32] tile (one exponent per 32 elements of K), "
            "got pl.Tile[[2, 32], pl.FP8E8M0, pl.Mem.RightScale]");
  args = Operands(64, 128, 32);
  args[1] = Tile({64, 4}, DataType::UINT8, MemorySpace::LeftScale);
  EXPECT_EQ(ErrorOf(Create("tile.matmul_mx", args)),
            "the left scale of tile.matmul_mx must be an FP8E8M0 [64, 4] tile (one exponent per 32 elements of K), "
            "got pl.Tile[[64, 4], pl.UINT8, pl.Mem.LeftScale]");
}

TEST(TileMxOps, TheCubeReadsWholeFractals) {
  auto ragged = Create("tile.matmul_mx", Operands(24, 128, 32));
  EXPECT_EQ(ErrorOf(ragged), "tile.matmul_mx of [24, 128] by [128, 32] needs M a multiple of 16, K of 64 and N of 32");
  EXPECT_EQ(HelpOf(ragged), "pad the operands to whole fractals");
  auto args = Operands(64, 128, 32);
  args[1] = Tile({64, 4}, DataType::FP8E8M0, MemorySpace::Acc);
  EXPECT_EQ(ErrorOf(Create("tile.matmul_mx", args)),
            "the left scale of tile.matmul_mx must be in LeftScale, got pl.Tile[[64, 4], pl.FP8E8M0, pl.Mem.Acc]");
}

TEST(TileMxOps, ScaleTilesMoveFromMatOnly) {
  auto mat = Tile({64, 4}, DataType::FP8E8M0, MemorySpace::Mat);
  auto moved = OpRegistry::Get().CreateCall("tile.move", {mat}, {{"target_memory", MemorySpace::LeftScale}}, Span{});
  EXPECT_EQ(TypeOf(moved), "pl.Tile[[64, 4], pl.FP8E8M0, pl.Mem.LeftScale]");
  auto vec = Tile({64, 4}, DataType::FP8E8M0, MemorySpace::Vec);
  EXPECT_EQ(ErrorOf(OpRegistry::Get().CreateCall("tile.move", {vec}, {{"target_memory", MemorySpace::RightScale}},
                                                  Span{})),
            "cannot move a tile from Vec to RightScale");
}

TEST(TensorLayouts, PrintCompareAndRoundTripThroughJson) {
  const TensorType zz({64, 4}, DataType::FP8E8M0, TensorLayout::MX_A_ZZ);
  EXPECT_EQ(zz.str(), "pl.Tensor[[64, 4], pl.FP8E8M0, pl.MX_A_ZZ]");
  EXPECT_EQ(TensorType({64, 4}, DataType::FP8E8M0).str(), "pl.Tensor[[64, 4], pl.FP8E8M0]");
  EXPECT_FALSE(zz.equals(TensorType({64, 4}, DataType::FP8E8M0)));
  EXPECT_FALSE(zz.equals(TensorType({64, 4}, DataType::FP8E8M0, TensorLayout::MX_B_NN)));
  EXPECT_EQ(TensorLayoutFromName("MX_B_NN"), TensorLayout::MX_B_NN);
  EXPECT_EQ(TensorLayoutFromName("NZ"), std::nullopt);
  EXPECT_EQ(MemorySpaceFromName("RightScale"), MemorySpace::RightScale);

  auto scales = std::make_shared<Var>("s", std::make_shared<TensorType>(Shape{4, 32}, DataType::FP8E8M0,
                                                                          TensorLayout::MX_B_NN));
  auto body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{std::make_shared<ReturnStmt>(std::vector<ExprPtr>{scales})});
  auto entry = std::make_shared<Function>("main", std::vector<VarPtr>{scales},
                                          std::vector<ParamDirection>{ParamDirection::In},
                                          std::vector<TypePtr>{scales->type()}, body, FunctionType::Orchestration);
  const Program program("mx", {entry}, "main");
  const std::string json = ProgramToJson(program);
  EXPECT_NE(json.find("\"layout\":\"MX_B_NN\""), std::string::npos) << json;
  auto back = ProgramFromJson(json);
  ASSERT_TRUE(back.has_value()) << back.error().str();
  EXPECT_EQ((*back)->functions()[0]->params()[0]->type()->str(), "pl.Tensor[[4, 32], pl.FP8E8M0, pl.MX_B_NN]");
}

TEST(MxLayout, BlocksOfTheLeftScalesAreRowMajorAndTheRightOnesColumnMajor) {
  // MX_A_ZZ [32, 4]: 16x2 blocks; (17, 3) lies in block (1, 1), the fourth, at row 1, column 1.
  EXPECT_EQ(MxElementIndex(TensorLayout::MX_A_ZZ, 32, 4, 0, 1), 1);
  EXPECT_EQ(MxElementIndex(TensorLayout::MX_A_ZZ, 32, 4, 1, 0), 2);
  EXPECT_EQ(MxElementIndex(TensorLayout::MX_A_ZZ, 32, 4, 0, 2), 32);
  EXPECT_EQ(MxElementIndex(TensorLayout::MX_A_ZZ, 32, 4, 17, 3), 3 * 32 + 1 * 2 + 1);
  // MX_B_NN [4, 32]: each 2x16 block column by column, the blocks down the groups first.
  EXPECT_EQ(MxElementIndex(TensorLayout::MX_B_NN, 4, 32, 1, 0), 1);
  EXPECT_EQ(MxElementIndex(TensorLayout::MX_B_NN, 4, 32, 0, 1), 2);
  EXPECT_EQ(MxElementIndex(TensorLayout::MX_B_NN, 4, 32, 2, 0), 32);
  EXPECT_EQ(MxElementIndex(TensorLayout::MX_B_NN, 4, 32, 0, 16), 64);
  EXPECT_EQ(MxElementIndex(TensorLayout::ND, 4, 32, 1, 2), 34);
  EXPECT_TRUE(MxWholeBlocks(TensorLayout::MX_A_ZZ, 32, 4));
  EXPECT_FALSE(MxWholeBlocks(TensorLayout::MX_B_NN, 3, 32));
}

}  // namespace
}  // namespace pypto::ir
