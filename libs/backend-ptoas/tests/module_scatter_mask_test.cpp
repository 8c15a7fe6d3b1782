// tile.scatter_mask as the mask form of pto.tscatter, in upstream pypto's spelling: into a tile.full
// of zero (what ScatterMaskBlend leaves), exactly; into any other tile, refused, naming the pass.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;
using ir::DataType;
using ir::ParamDirection;

// def k(x, z, y):                                    # x: [8, 16], z: [8, 8] FP32
//     d = pl.load(x, [0, 0], [8, 16])                 # at 0       (into_zeros: pl.full(.., 0.0))
//     s = pl.load(z, [0, 0], [8, 8])                  # at 512
//     r = pl.tile.scatter_mask(d, s, mask_pattern=p)  # at 768
//     pl.store(r, [0, 0], y)
ir::FunctionPtr ScatterKernel(bool into_zeros, int64_t pattern = 1) {
  auto x = TensorParam("x", {8, 16}, At(1, 7)), z = TensorParam("z", {8, 8}, At(1, 10));
  auto y = TensorParam("y", {8, 16}, At(1, 13));
  auto first = into_zeros ? Op("tile.full", {Ints({8, 16}), Float(0.0)}, At(2, 9), {{"dtype", DataType::FP32}})
                          : Op("tile.load", {x, Ints({0, 0}), Ints({8, 16})}, At(2, 9));
  auto d = TileAt("d", first, 0);
  auto load = Op("tile.load", {z, Ints({0, 0}), Ints({8, 8})}, At(3, 9));
  auto s = TileAt("s", load, 512);
  auto scatter = Op("tile.scatter_mask", {d, s}, At(4, 9), {{"mask_pattern", pattern}});
  auto r = TileAt("r", scatter, 768);
  return Kernel("k", {x, z, y}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out},
                {Assign(d, first, At(2, 5)), Assign(s, load, At(3, 5)), Assign(r, scatter, At(4, 5)),
                 Eval(Op("tile.store", {r, Ints({0, 0}), y}, At(5, 5)), At(5, 5))});
}

TEST(EmitModuleScatterMask, IntoZerosIsTscattersMaskForm) {
  auto text = EmitModule(*ScatterKernel(true), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_TRUE(HasBodyLine(*text, "pto.texpands ins(%cst : f32) outs(%d : " + VecTileBuf("f32", 8, 16) + ")")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tscatter ins(%s, {maskPattern = #pto.mask_pattern<P0101>} : " + VecTileBuf("f32", 8, 8) +
                                 ", \"row\") outs(%r : " + VecTileBuf("f32", 8, 16) + ")"))
      << *text;
}

TEST(EmitModuleScatterMask, TheGenericFormNamesTheAxis) {
  auto text = EmitModule(*ScatterKernel(true, 2), "a5", {.source_locations = false, .generic_form = true});
  ASSERT_TRUE(text) << text.error();
  EXPECT_TRUE(HasBodyLine(*text, "\"pto.tscatter\"(%s, %r) {maskPattern = #pto.mask_pattern<P1010>, axis = \"row\"} : (" +
                                 VecTileBuf("f32", 8, 8) + ", " + VecTileBuf("f32", 8, 16) + ") -> ()"))
      << *text;
}

TEST(EmitModuleScatterMask, IntoAnyOtherTileIsRefusedNamingThePass) {
  auto text = EmitModule(*ScatterKernel(false), "a2a3");
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error(),
            "k.py:4:9: backend-ptoas lowers 'tile.scatter_mask' in kernel 'k' only into a tile.full of zero: "
            "pto.tscatter's mask form zeroes the lanes it does not write, where the IR keeps the destination's; "
            "lower the program through the ScatterMaskBlend pass, which blends the scatter with its destination");
}

}  // namespace
}  // namespace pypto::backend_ptoas
