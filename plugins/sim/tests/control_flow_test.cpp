// Loop-carried tiles and if/else: a kernel doubling a tile in every iteration but the first, its
// carried tile and branch results placed in one buffer as AllocateMemoryAddr places them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core_memory.h"
#include "sim_executor.h"
#include "sim_kernel.h"
#include "sim_test_util.h"

namespace simtest {
namespace {

namespace sim = pypto::sim;
using ::testing::HasSubstr;

ir::ExprPtr Index(int64_t v) { return std::make_shared<ir::ConstInt>(v, ir::DataType::INDEX); }

// acc = a; for i in range(trips) carrying acc: if i == 0: keep it, else: acc = acc + acc; c = acc
ir::FunctionPtr DoublingKernel(int64_t trips) {
  auto tensor = std::make_shared<ir::TensorType>(ir::Shape{16, 16}, ir::DataType::FP32);
  auto a = std::make_shared<ir::Var>("a", tensor), c = std::make_shared<ir::Var>("c", tensor);
  auto tile = KernelBuilder::TileAt({16, 16}, ir::DataType::FP32, 0);
  auto tile_var = [&](const char* name) { return std::make_shared<ir::Var>(name, tile); };
  auto& registry = ir::OpRegistry::Get();
  auto offsets = std::make_shared<ir::TupleLiteral>(std::vector<ir::ExprPtr>{Index(0), Index(0)});
  auto shape = std::make_shared<ir::TupleLiteral>(std::vector<ir::ExprPtr>{Index(16), Index(16)});
  auto acc = tile_var("acc"), carried = tile_var("acc_i"), doubled = tile_var("doubled"), picked = tile_var("picked"),
       result = tile_var("result");
  auto i = std::make_shared<ir::Var>("i", std::make_shared<ir::ScalarType>(ir::DataType::INDEX));
  auto branch = std::make_shared<ir::IfStmt>(
      *ir::MakeBinary(ir::BinaryOp::Eq, i, Index(0), {}),
      std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{carried}),
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
          std::make_shared<ir::AssignStmt>(doubled, *registry.CreateCall("tile.add", {carried, carried}, {}, {})),
          std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{doubled})}),
      std::vector<ir::VarPtr>{picked});
  auto loop = std::make_shared<ir::ForStmt>(
      i, Index(0), Index(trips), Index(1), std::vector<ir::IterArg>{{carried, acc}},
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
          branch, std::make_shared<ir::YieldStmt>(std::vector<ir::ExprPtr>{picked})}),
      std::vector<ir::VarPtr>{result}, ir::ForKind::Sequential);
  auto body = std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
      std::make_shared<ir::AssignStmt>(acc, *registry.CreateCall("tile.load", {a, offsets, shape}, {}, {})), loop,
      std::make_shared<ir::EvalStmt>(*registry.CreateCall("tile.store", {result, offsets, c}, {}, {})),
      std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{c})});
  return std::make_shared<ir::Function>("doubling", std::vector<ir::VarPtr>{a, c},
                                        std::vector<ir::ParamDirection>{ir::ParamDirection::In,
                                                                        ir::ParamDirection::Out},
                                        std::vector<ir::TypePtr>{tensor}, body, ir::FunctionType::AIV);
}

TEST(ControlFlow, CarriedTileAndBranchesRunInPlace) {
  for (int64_t trips : {0, 1, 4}) {
    auto kernel = sim::DecodeKernel(*DoublingKernel(trips), 0, rt::CoreType::AIV, ir::Ascend910B());
    ASSERT_TRUE(kernel) << kernel.error();
    std::vector<float> av(256, 1.5f), cv(256, 0.0f);
    auto ad = Dense(av, {16, 16}), cd = Dense(cv, {16, 16});
    sim::CoreMemory memory(ir::Ascend910B());
    ASSERT_TRUE(RunDirect(*kernel, {&ad, &cd}, memory));
    const float expected = trips <= 1 ? 1.5f : 1.5f * static_cast<float>(1 << (trips - 1));
    EXPECT_EQ(cv[0], expected) << trips << " iterations";
    EXPECT_EQ(cv[255], expected) << trips << " iterations";
  }
}

TEST(ControlFlow, ListingShowsTheBranch) {
  auto kernel = sim::DecodeKernel(*DoublingKernel(4), 0, rt::CoreType::AIV, ir::Ascend910B());
  ASSERT_TRUE(kernel) << kernel.error();
  const std::string listing = sim::FormatListing(*kernel, ir::Ascend910B());
  EXPECT_THAT(listing, HasSubstr("ifnot r"));
  EXPECT_THAT(listing, HasSubstr("jump -> #"));
}

// acc = a; k = 1; while k < limit carrying acc and k: acc = acc + acc; k = k * 2; c = acc
ir::FunctionPtr WhileDoublingKernel(int64_t limit) {
  auto tensor = std::make_shared<ir::TensorType>(ir::Shape{16, 16}, ir::DataType::FP32);
  auto a = std::make_shared<ir::Var>("a", tensor), c = std::make_shared<ir::Var>("c", tensor);
  auto tile = KernelBuilder::TileAt({16, 16}, ir::DataType::FP32, 0);
  auto tile_var = [&](const char* name) { return std::make_shared<ir::Var>(name, tile); };
  auto& registry = ir::OpRegistry::Get();
  auto offsets = std::make_shared<ir::TupleLiteral>(std::vector<ir::ExprPtr>{Index(0), Index(0)});
  auto shape = std::make_shared<ir::TupleLiteral>(std::vector<ir::ExprPtr>{Index(16), Index(16)});
  auto acc = tile_var("acc"), carried = tile_var("acc_i"), doubled = tile_var("doubled"), result = tile_var("result");
  auto index = std::make_shared<ir::ScalarType>(ir::DataType::INDEX);
  auto k = std::make_shared<ir::Var>("k", index), k_result = std::make_shared<ir::Var>("k_r", index);
  auto loop = std::make_shared<ir::WhileStmt>(
      *ir::MakeBinary(ir::BinaryOp::Lt, k, Index(limit), {}), std::vector<ir::IterArg>{{carried, acc}, {k, Index(1)}},
      std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
          std::make_shared<ir::AssignStmt>(doubled, *registry.CreateCall("tile.add", {carried, carried}, {}, {})),
          std::make_shared<ir::YieldStmt>(
              std::vector<ir::ExprPtr>{doubled, *ir::MakeBinary(ir::BinaryOp::Mul, k, Index(2), {})})}),
      std::vector<ir::VarPtr>{result, k_result});
  auto body = std::make_shared<ir::SeqStmts>(std::vector<ir::StmtPtr>{
      std::make_shared<ir::AssignStmt>(acc, *registry.CreateCall("tile.load", {a, offsets, shape}, {}, {})), loop,
      std::make_shared<ir::EvalStmt>(*registry.CreateCall("tile.store", {result, offsets, c}, {}, {})),
      std::make_shared<ir::ReturnStmt>(std::vector<ir::ExprPtr>{c})});
  return std::make_shared<ir::Function>("while_doubling", std::vector<ir::VarPtr>{a, c},
                                        std::vector<ir::ParamDirection>{ir::ParamDirection::In,
                                                                        ir::ParamDirection::Out},
                                        std::vector<ir::TypePtr>{tensor}, body, ir::FunctionType::AIV);
}

// The condition is evaluated again after each iteration with the values it yielded: k = 1, 2, 4, ...
TEST(ControlFlow, WhileLoopRunsUntilItsConditionFails) {
  for (auto [limit, iterations] : {std::pair{1, 0}, {2, 1}, {20, 5}}) {
    auto kernel = sim::DecodeKernel(*WhileDoublingKernel(limit), 0, rt::CoreType::AIV, ir::Ascend910B());
    ASSERT_TRUE(kernel) << kernel.error();
    std::vector<float> av(256, 1.5f), cv(256, 0.0f);
    auto ad = Dense(av, {16, 16}), cd = Dense(cv, {16, 16});
    sim::CoreMemory memory(ir::Ascend910B());
    ASSERT_TRUE(RunDirect(*kernel, {&ad, &cd}, memory));
    const float expected = 1.5f * static_cast<float>(1 << iterations);
    EXPECT_EQ(cv[0], expected) << "while k < " << limit;
    EXPECT_EQ(cv[255], expected) << "while k < " << limit;
  }
}

}  // namespace
}  // namespace simtest
