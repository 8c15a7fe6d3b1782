// The PTO text of the top-k family: tci (pl.arange), tsort32, tmrgsort formats 1 and 2, the mask
// form of tgather, and a tile slice (textract on a5, a pto.subset view moved by tmov on a2a3).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <optional>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;
using ir::DataType;
using ir::ParamDirection;

std::string Row(int cols, std::string_view dtype) {
  return fmt::format("!pto.tile_buf<loc=vec, dtype={}, rows=1, cols={}, v_row=?, v_col=?, blayout=row_major, "
                     "slayout=none_box, fractal=512, pad=0>",
                     dtype, cols);
}

// def k(x, vals, idxs):                                 # x: [1, 128] FP32
//     v = pl.load(x, [0, 0], [1, 128])                   # at 0
//     i = pl.arange(0, [1, 128], dtype=pl.UINT32)        # at 512
//     s = pl.sort32(v, i)                                # at 1024, [1, 256]
//     m = pl.mrgsort(s, block_len=64)                    # at 2048, [1, 256]
//     p = m[:, 0:32]                                     # at 3072, [1, 32]
//     a = pl.gather(p, mask_pattern=P0101)               # at 3200, [1, 16]
//     b = pl.gather(p, mask_pattern=P1010, output_dtype=pl.INT32)   # at 3264
//     pl.store(a, [0, 0], vals); pl.store(b, [0, 0], idxs)
ir::FunctionPtr TopKKernel() {
  auto x = TensorParam("x", {1, 128}, {});
  auto vals = TensorParam("vals", {1, 16}, {});
  auto idxs = TensorParam("idxs", {1, 16}, {}, DataType::INT32);
  auto load = Op("tile.load", {x, Ints({0, 0}), Ints({1, 128})}, {});
  auto arange = Op("tile.ci", {Index(0), Ints({1, 128})}, {}, {{"dtype", DataType::UINT32}});
  auto v = TileAt("v", load, 0);
  auto i = TileAt("i", arange, 512);
  auto sort = Op("tile.sort32", {v, i}, {});
  auto s = TileAt("s", sort, 1024);
  auto merge = Op("tile.mrgsort_format1", {s, Index(64)}, {});
  auto m = TileAt("m", merge, 2048);
  auto slice = Op("tile.slice", {m, Ints({1, 32}), Ints({0, 0})}, {});
  auto p = TileAt("p", slice, 3072);
  auto even = Op("tile.gather_mask", {p}, {}, {{"mask_pattern", int64_t{1}}});
  auto odd = Op("tile.gather_mask", {p}, {}, {{"mask_pattern", int64_t{2}}, {"output_dtype", DataType::INT32}});
  auto a = TileAt("a", even, 3200);
  auto b = TileAt("b", odd, 3264);
  std::vector<ir::StmtPtr> body = {Assign(v, load, {}),  Assign(i, arange, {}), Assign(s, sort, {}),
                                   Assign(m, merge, {}), Assign(p, slice, {}),  Assign(a, even, {}),
                                   Assign(b, odd, {}),   Eval(Op("tile.store", {a, Ints({0, 0}), vals}, {}), {}),
                                   Eval(Op("tile.store", {b, Ints({0, 0}), idxs}, {}), {})};
  std::vector<ir::VarPtr> params = {x, vals, idxs};
  return Kernel("k", params, std::vector<ParamDirection>(params.size(), ParamDirection::InOut), body);
}

std::string Emit(std::string_view arch) {
  auto text = EmitModule(*TopKKernel(), arch, {.source_locations = false});
  if (!text) throw std::runtime_error(text.error());
  return *text;
}

TEST(EmitModuleSortOps, TopKFamily) {
  const std::string text = Emit("a5");
  EXPECT_TRUE(HasBodyLine(text, "pto.tci ins(%c0_ui32 : ui32) outs(%i : " + Row(128, "ui32") + ")")) << text;
  EXPECT_TRUE(HasBodyLine(text, "pto.tsort32 ins(%v, %i : " + Row(128, "f32") + ", " + Row(128, "ui32") +
                                ") outs(%s : " + Row(256, "f32") + ")"))
      << text;
  EXPECT_TRUE(HasBodyLine(text, "pto.tmrgsort ins(%s, %c64_i32 : " + Row(256, "f32") + ", i32) outs(%m : " +
                                Row(256, "f32") + ")"))
      << text;
  EXPECT_TRUE(HasBodyLine(text, "pto.textract ins(%m, %c0_index, %c0_index : " + Row(256, "f32") +
                                ", index, index) outs(%p : " + Row(32, "f32") + ")"))
      << text;
  EXPECT_TRUE(HasBodyLine(text, "pto.tgather ins(%p, {maskPattern = #pto.mask_pattern<P0101>} : " + Row(32, "f32") +
                                ") outs(%a : " + Row(16, "f32") + ")"))
      << text;
  EXPECT_TRUE(HasBodyLine(text, "pto.tgather ins(%p, {maskPattern = #pto.mask_pattern<P1010>} : " + Row(32, "f32") +
                                ") outs(%b : " + Row(16, "i32") + ")"))
      << text;
  // The unsigned start is declared signless and cast, as arith.constant requires.
  EXPECT_NE(text.find("%c0_ui32 = builtin.unrealized_conversion_cast"), std::string::npos) << text;
}

// Format 1's generic form names PTOAS's five groups: srcs, blockLen, dsts, and no tmp or excuted.
TEST(EmitModuleSortOps, MergeSortFormat1GenericFormSizesPtoasGroups) {
  auto text = EmitModule(*TopKKernel(), "a5", {.source_locations = false, .generic_form = true});
  ASSERT_TRUE(text) << text.error();
  EXPECT_TRUE(HasBodyLine(*text, "\"pto.tmrgsort\"(%s, %c64_i32, %m) {operand_segment_sizes = array<i32: 1, 1, 1, 0, 0>} : (" +
                                 Row(256, "f32") + ", i32, " + Row(256, "f32") + ") -> ()"))
      << *text;
}

TEST(EmitModuleSortOps, DescendingArangeCarriesItsAttribute) {
  auto arange = Op("tile.ci", {Index(7), Ints({1, 32})}, {}, {{"dtype", DataType::INT32}, {"descending", true}});
  auto out = TensorParam("out", {1, 32}, {}, DataType::INT32);
  auto i = TileAt("i", arange, 0);
  auto kernel = Kernel("k", {out}, {ParamDirection::Out},
                       {Assign(i, arange, {}), Eval(Op("tile.store", {i, Ints({0, 0}), out}, {}), {})});
  auto text = EmitModule(*kernel, "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_TRUE(HasBodyLine(*text, "pto.tci ins(%c7_i32 : i32) outs(%i : " + Row(32, "i32") + ") {descending = true}"))
      << *text;
}

// def k(x, out):                                    # x: [1, 384] FP32, three sorted lists
//     a = pl.load(x, [0, 0], [1, 128])               # at 0
//     b = pl.load(x, [0, 128], [1, 128])             # at 512
//     c = pl.load(x, [0, 256], [1, 128])             # at 1024
//     t = pl.tile.create([1, 384], dtype=pl.FP32)    # at 1536
//     m = pl.tile.mrgsort(a, b, c, tmp=t, exhausted=E)   # at 3072
//     pl.store(m, [0, 0], out)
ir::FunctionPtr MergeListsKernel(std::optional<bool> exhausted) {
  auto x = TensorParam("x", {1, 384}, {});
  auto out = TensorParam("out", {1, 384}, {});
  std::vector<ir::StmtPtr> body;
  std::vector<ir::ExprPtr> lists;
  for (int i = 0; i < 3; ++i) {
    auto load = Op("tile.load", {x, Ints({0, 128 * i}), Ints({1, 128})}, {});
    auto list = TileAt(std::string(1, static_cast<char>('a' + i)), load, 512 * i);
    body.push_back(Assign(list, load, {}));
    lists.push_back(list);
  }
  auto create = Op("tile.create", {Ints({1, 384})}, {}, {{"dtype", DataType::FP32}});
  auto t = TileAt("t", create, 1536);
  body.push_back(Assign(t, create, {}));
  lists.push_back(t);
  ir::Call::Kwargs kwargs;
  if (exhausted) kwargs.emplace_back("exhausted", *exhausted);
  auto merge = Op("tile.mrgsort_format2", lists, {}, kwargs);
  auto m = TileAt("m", merge, 3072);
  body.push_back(Assign(m, merge, {}));
  body.push_back(Eval(Op("tile.store", {m, Ints({0, 0}), out}, {}), {}));
  return Kernel("k", {x, out}, {ParamDirection::In, ParamDirection::Out}, body);
}

// Format 2: the lists and the scratch tile (carrying {exhausted}) go in; the result and a vector of
// the counts taken from each list come out.
TEST(EmitModuleSortOps, MergeOfSeparateListsWritesTheCountsVector) {
  auto text = EmitModule(*MergeListsKernel(std::nullopt), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_TRUE(HasBodyLine(*text, "%executed = arith.constant dense<0> : vector<4xi16>")) << *text;
  EXPECT_TRUE(HasBodyLine(*text, "pto.tmrgsort ins(%a, %b, %c, %t {exhausted = false} : " + Row(128, "f32") + ", " +
                                 Row(128, "f32") + ", " + Row(128, "f32") + ", " + Row(384, "f32") +
                                 ") outs(%m, %executed : " + Row(384, "f32") + ", vector<4xi16>)"))
      << *text;
}

TEST(EmitModuleSortOps, MergeOfSeparateListsCarriesExhausted) {
  auto text = EmitModule(*MergeListsKernel(true), "a5", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_NE(text->find("pto.tmrgsort ins(%a, %b, %c, %t {exhausted = true} : "), std::string::npos) << *text;
  auto generic = EmitModule(*MergeListsKernel(true), "a5", {.source_locations = false, .generic_form = true});
  ASSERT_TRUE(generic) << generic.error();
  // The generic form follows PTOAS's groups (srcs, blockLen, dsts, tmp, excuted), sized by attribute.
  EXPECT_NE(generic->find("\"pto.tmrgsort\"(%a, %b, %c, %m, %t, %executed) {exhausted = true, "
                          "operand_segment_sizes = array<i32: 3, 0, 1, 1, 1>} : (" +
                          Row(128, "f32") + ", " + Row(128, "f32") + ", " + Row(128, "f32") + ", " + Row(384, "f32") +
                          ", " + Row(384, "f32") + ", vector<4xi16>) -> ()"),
            std::string::npos)
      << *generic;
}

// a2a3's textract copies into Left/Right only: a Vec tile slice there is a pto.subset view of the
// source (its layout, the window's shape) that tmov copies into the result.
TEST(EmitModuleSortOps, TileSliceOnA2A3IsASubsetViewMovedIntoTheResult) {
  const std::string text = Emit("a2a3");
  EXPECT_TRUE(HasBodyLine(text, "%m_window = pto.subset %m[%c0_index, %c0_index] sizes [1, 32] : " + Row(256, "f32")))
      << text;
  EXPECT_TRUE(HasBodyLine(text, "pto.tmov ins(%m_window : " + Row(32, "f32") + ") outs(%p : " + Row(32, "f32") + ")"))
      << text;
  EXPECT_EQ(text.find("pto.textract"), std::string::npos) << text;
  auto generic = EmitModule(*TopKKernel(), "a2a3", {.source_locations = false, .generic_form = true});
  ASSERT_TRUE(generic) << generic.error();
  EXPECT_TRUE(HasBodyLine(*generic, "%m_window = \"pto.subset\"(%m, %c0_index, %c0_index) {sizes = [1, 32]} : (" +
                                    Row(256, "f32") + ", index, index) -> " + Row(32, "f32")))
      << *generic;
}

}  // namespace
}  // namespace pypto::backend_ptoas
