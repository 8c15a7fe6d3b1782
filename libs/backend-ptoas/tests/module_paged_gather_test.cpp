// tile.paged_gather as upstream pypto's per-row loop (paged_gather.cpp), exactly: both tables read
// with pto.load_scalar, the physical row computed with arith, and a pto.tload of that row into row i
// of the result, a pto.subset of a Vec result or upstream's pto.subview of a Mat one; and the
// refusals, located and saying what to change.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kernel_builder.h"
#include "pypto/ir/dynamic_extent.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;
using ir::DataType;
using ir::ParamDirection;

// def k(src, idx, bt, y):                 # src [64, 32] FP16, idx [n] INT32, bt [8] INT32
//     g = pl.paged_gather(src, idx, bt, block_size=8, size=32, max_indices=16, space=space)   # at 0
//     pl.store(g, [0, 0], y)              # a Vec result only
ir::FunctionPtr PagedGatherKernel(ir::MemorySpace space, int64_t indices = 16) {
  auto src = TensorParam("src", {64, 32}, At(1, 7), DataType::FP16);
  auto idx = TensorParam("idx", {indices}, At(1, 12), DataType::INT32);
  auto bt = TensorParam("bt", {8}, At(1, 17), DataType::INT32);
  auto y = TensorParam("y", {16, 32}, At(1, 21), DataType::FP16);
  auto gather = Op("tile.paged_gather", {src, idx, bt}, At(2, 9),
                   {{"block_size", int64_t{8}}, {"size", int64_t{32}}, {"max_indices", int64_t{16}}, {"space", space}});
  auto g = TileAt("g", gather, 0);
  std::vector<ir::StmtPtr> body = {Assign(g, gather, At(2, 5))};
  const bool vec = space == ir::MemorySpace::Vec;
  if (vec) body.push_back(Eval(Op("tile.store", {g, Ints({0, 0}), y}, At(3, 5)), At(3, 5)));
  return Kernel("k", {src, idx, bt, y}, {ParamDirection::In, ParamDirection::In, ParamDirection::In, ParamDirection::Out},
                std::move(body), vec ? ir::FunctionType::AIV : ir::FunctionType::AIC);
}

TEST(EmitModulePagedGather, EachRowIsLoadedFromItsPageIntoItsRowOfTheResult) {
  auto text = EmitModule(*PagedGatherKernel(ir::MemorySpace::Vec), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  for (const std::string& line : std::vector<std::string>{
           "scf.for %g_i = %c0_index to %c16_index step %c1_index {",
           "  %0 = pto.load_scalar %arg1[%g_i] : !pto.ptr<i32> -> i32",
           "  %g_logical = arith.index_cast %0 : i32 to index",
           "  %1 = arith.floordivsi %g_logical, %c8_index : index",
           "  %2 = arith.muli %1, %c8_index : index",
           "  %3 = arith.subi %g_logical, %2 : index",
           "  %4 = pto.load_scalar %arg2[%1] : !pto.ptr<i32> -> i32",
           "  %g_page = arith.index_cast %4 : i32 to index",
           "  %5 = arith.muli %g_page, %c8_index : index",
           "  %6 = arith.addi %5, %3 : index",
           "  %src_pview = pto.partition_view %src_view, offsets = [%6, %c0_index], sizes = [%c1_index, %c32_index] : "
           "!pto.tensor_view<?x?xf16> -> !pto.partition_tensor_view<1x32xf16>",
           "  %g_row = pto.subset %g[%g_i, %c0_index] sizes [1, 32] : " + VecTileBuf("f16", 16, 32),
           "  pto.tload ins(%src_pview : !pto.partition_tensor_view<1x32xf16>) outs(%g_row : " +
               VecTileBuf("f16", 1, 32) + ")",
       })
    EXPECT_TRUE(HasBodyLine(*text, line)) << line << "\n" << *text;
}

// A row of a boxed Mat tile is upstream's pto.subview: a box-aligned [16, 32] extent, [1, 32] valid.
TEST(EmitModulePagedGather, AMatResultsRowIsUpstreamsSubview) {
  auto text = EmitModule(*PagedGatherKernel(ir::MemorySpace::Mat), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  const std::string mat = "!pto.tile_buf<loc=mat, dtype=f16, rows=16, cols=32, v_row=?, v_col=?, blayout=col_major, "
                          "slayout=row_major, fractal=512, pad=0>";
  EXPECT_TRUE(HasBodyLine(*text, "  %g_row = pto.subview %g[%g_i, %c0_index] sizes [16, 32] valid [%c1_index, "
                                 "%c32_index] : " + mat + " -> " + mat))
      << *text;
  EXPECT_TRUE(HasBodyLine(*text, "  pto.tload ins(%src_pview : !pto.partition_tensor_view<1x32xf16>) outs(%g_row : " +
                                 mat + ")"))
      << *text;
}

// Indices of a length known only at run time: the loop runs to the kernel's extent argument for it.
TEST(EmitModulePagedGather, ADynamicNumberOfIndicesBoundsTheLoopByItsExtentArgument) {
  auto text = EmitModule(*PagedGatherKernel(ir::MemorySpace::Vec, ir::kDynamicExtent), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_NE(text->find("%arg4: index"), std::string::npos) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "scf.for %g_i = %c0_index to %arg4 step %c1_index {")) << *text;
}

TEST(EmitModulePagedGather, MoreIndicesThanMaxIndicesAreRefused) {
  auto text = EmitModule(*PagedGatherKernel(ir::MemorySpace::Vec, 24), "a2a3");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error(),
            "k.py:2:9: backend-ptoas cannot lower 'tile.paged_gather' in kernel 'k': its 24 indices are more than the "
            "max_indices=16 rows of the result; raise max_indices or pass fewer indices");
}

}  // namespace
}  // namespace pypto::backend_ptoas
