// The ops whose PTO instruction needs a scratch tile the IR has no variable for, which backend-ptoas
// places in the Vec scratch past the kernel's tiles: tile.gather (flat indices: one pto.tgather of
// the index form) and tile.gather_dim (torch.gather along the last axis: that form one row at a time
// through pto.subset views) and the gathers it refuses. tile.transpose (pto.ttrans) takes the scratch
// tile the TransposeScratchTiles pass gives it, a tile of the IR.
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

std::string Vec(int rows, int cols, std::string_view dtype) {
  return fmt::format("!pto.tile_buf<loc=vec, dtype={}, rows={}, cols={}, v_row=?, v_col=?, blayout=row_major, "
                     "slayout=none_box, fractal=512, pad=0>",
                     dtype, rows, cols);
}

bool HasLine(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

// def k(x, i, out):                                   # x: [R, 64], i: [R, 32]
//     s = pl.load(x, [0, 0], [R, 64])                  # line 2, at 0
//     j = pl.load(i, [0, 0], [R, 32])                  # line 3, after s
//     g = pl.gather(s, -1, j)                          # line 4, after j
//     pl.store(g, [0, 0], out)                         # line 5
ir::FunctionPtr GatherKernel(int64_t rows, DataType element, DataType index_dtype, int64_t dim = -1,
                             int64_t index_at = 0) {
  auto x = TensorParam("x", {rows, 64}, At(1, 7), element);
  auto i = TensorParam("i", {rows, 32}, At(1, 10), index_dtype);
  auto out = TensorParam("out", {rows, 32}, At(1, 13), element);
  auto load_x = Op("tile.load", {x, Ints({0, 0}), Ints({rows, 64})}, At(2, 9));
  auto s = TileAt("s", load_x, 0);
  const int64_t s_bytes = rows * 64 * ir::DataTypeBytes(element);
  auto load_i = Op("tile.load", {i, Ints({0, 0}), Ints({rows, 32})}, At(3, 9));
  auto j = TileAt("j", load_i, index_at ? index_at : s_bytes);
  auto gather = Op("tile.gather_dim", {s, j}, At(4, 9), {{"dim", dim}});
  auto g = TileAt("g", gather, (index_at ? index_at : s_bytes) + rows * 32 * ir::DataTypeBytes(index_dtype));
  auto store = Op("tile.store", {g, Ints({0, 0}), out}, At(5, 5));
  return Kernel("k", {x, i, out}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out},
                {Assign(s, load_x, At(2, 5)), Assign(j, load_i, At(3, 5)), Assign(g, gather, At(4, 5)),
                 Eval(store, At(5, 5))});
}

std::string Emit(const ir::Function& kernel, std::string_view arch, bool generic = false) {
  auto text = EmitModule(kernel, arch, {.source_locations = false, .generic_form = generic});
  if (!text) throw std::runtime_error(text.error());
  return *text;
}

// One row: a single tgather of the tiles themselves; its tmp ([1, 32] of the index type) at the first
// aligned (128-byte) address past the last Vec tile (g ends at 128 + 128 + 64 = 320).
TEST(EmitModuleScratchTiles, GatherDimOneRowIsOneIndexGather) {
  const std::string text = Emit(*GatherKernel(1, DataType::FP16, DataType::INT32), "a2a3");
  EXPECT_TRUE(HasLine(text, "    %g_tmp = pto.alloc_tile addr = %c384_i64 valid_row = %c1_index valid_col = "
                            "%c32_index : " + Vec(1, 32, "i32")))
      << text;
  EXPECT_TRUE(HasLine(text, "    pto.tgather ins(%s, %j, %g_tmp : " + Vec(1, 64, "f16") + ", " + Vec(1, 32, "i32") +
                                ", " + Vec(1, 32, "i32") + ") outs(%g : " + Vec(1, 32, "f16") + ")"))
      << text;
  EXPECT_EQ(text.find("scf.for"), std::string::npos) << text;
  // PTOAS's groups: src, dst, cdst, indices, tmp, kValue.
  const std::string generic = Emit(*GatherKernel(1, DataType::FP16, DataType::INT32), "a2a3", true);
  EXPECT_TRUE(HasLine(generic, "    \"pto.tgather\"(%s, %g, %j, %g_tmp) {operand_segment_sizes = array<i32: 1, 1, 0, "
                               "1, 1, 0>} : (" + Vec(1, 64, "f16") + ", " + Vec(1, 32, "f16") + ", " +
                                   Vec(1, 32, "i32") + ", " + Vec(1, 32, "i32") + ") -> ()"))
      << generic;
}

// Several rows: an scf.for over the index's rows gathers each source row into the result's row,
// the three rows pto.subset views at (row, 0); the tmp is allocated once, before the loop.
TEST(EmitModuleScratchTiles, GatherDimRowsAreGatheredOneByOne) {
  const std::string text = Emit(*GatherKernel(8, DataType::FP32, DataType::INT32), "a2a3");
  const std::string expected =
      "    %g_tmp = pto.alloc_tile addr = %c4096_i64 valid_row = %c1_index valid_col = %c32_index : " +
      Vec(1, 32, "i32") +
      "\n"
      "    scf.for %g_row = %c0_index to %c8_index step %c1_index {\n"
      "      %s_r = pto.subset %s[%g_row, %c0_index] sizes [1, 64] : " +
      Vec(8, 64, "f32") +
      "\n"
      "      %j_r = pto.subset %j[%g_row, %c0_index] sizes [1, 32] : " +
      Vec(8, 32, "i32") +
      "\n"
      "      %g_r = pto.subset %g[%g_row, %c0_index] sizes [1, 32] : " +
      Vec(8, 32, "f32") +
      "\n"
      "      pto.tgather ins(%s_r, %j_r, %g_tmp : " +
      Vec(1, 64, "f32") + ", " + Vec(1, 32, "i32") + ", " + Vec(1, 32, "i32") + ") outs(%g_r : " + Vec(1, 32, "f32") +
      ")\n"
      "    }\n";
  EXPECT_NE(text.find(expected), std::string::npos) << text;
}

// a5's tgather also takes INT16 indices (a2a3's only INT32).
TEST(EmitModuleScratchTiles, GatherDimA5TakesInt16Indices) {
  const std::string text = Emit(*GatherKernel(1, DataType::FP16, DataType::INT16), "a5");
  EXPECT_TRUE(HasLine(text, "    pto.tgather ins(%s, %j, %g_tmp : " + Vec(1, 64, "f16") + ", " + Vec(1, 32, "i16") +
                                ", " + Vec(1, 32, "i16") + ") outs(%g : " + Vec(1, 32, "f16") + ")"))
      << text;
}

std::string ErrorOf(const ir::Function& kernel, std::string_view arch = "a2a3") {
  auto text = EmitModule(kernel, arch);
  return text ? "<no error>\n" + *text : text.error();
}

TEST(EmitModuleScratchTiles, GatherDimRefusesWhatTgatherCannotDo) {
  EXPECT_EQ(ErrorOf(*GatherKernel(1, DataType::FP16, DataType::INT16)),
            "k.py:4:9: backend-ptoas cannot lower 'tile.gather_dim' in kernel 'k': pto.tgather on a2a3 takes INT32 "
            "indices, not INT16 (a5 also takes INT16)");
  EXPECT_EQ(ErrorOf(*GatherKernel(2, DataType::BF16, DataType::INT32)),
            "k.py:4:9: backend-ptoas cannot lower 'tile.gather_dim' in kernel 'k': pto.tgather on a2a3 gathers 16- "
            "and 32-bit integers, FP16 and FP32 elements, not BF16");
}

TEST(EmitModuleScratchTiles, GatherDimRefusesAGatherAlongRows) {
  // Indices [32, 32] into [32, 64] along dim 0: every index picks a row.
  auto x = TensorParam("x", {32, 64}, At(1, 7));
  auto i = TensorParam("i", {32, 32}, At(1, 10), DataType::INT32);
  auto load_x = Op("tile.load", {x, Ints({0, 0}), Ints({32, 64})}, At(2, 9));
  auto s = TileAt("s", load_x, 0);
  auto load_i = Op("tile.load", {i, Ints({0, 0}), Ints({32, 32})}, At(3, 9));
  auto j = TileAt("j", load_i, 8192);
  auto gather = Op("tile.gather_dim", {s, j}, At(4, 9), {{"dim", int64_t{0}}});
  auto g = TileAt("g", gather, 12288);
  auto kernel = Kernel("k", {x, i}, {ParamDirection::In, ParamDirection::In},
                       {Assign(s, load_x, At(2, 5)), Assign(j, load_i, At(3, 5)), Assign(g, gather, At(4, 5))});
  EXPECT_EQ(ErrorOf(*kernel),
            "k.py:4:9: backend-ptoas cannot lower 'tile.gather_dim' in kernel 'k': it gathers along dim=0 of a rank-2 "
            "tile, but pto.tgather gathers within rows (along the last axis) only");
}

// The scratch goes past every Vec tile; a kernel whose tiles reach the end of UB leaves no room.
TEST(EmitModuleScratchTiles, GatherDimScratchNeedsRoomPastTheTiles) {
  // Ascend910B's UB: 188416 usable bytes; j at 188160 and g after it fill it.
  EXPECT_EQ(ErrorOf(*GatherKernel(1, DataType::FP32, DataType::INT32, -1, 188160)),
            "k.py:4:9: backend-ptoas cannot place the 128-byte scratch tile of 'tile.gather_dim' in kernel 'k': its "
            "Vec tiles use UB up to byte 188416, and Ascend910B's UB holds 188416 bytes; free 128 bytes of UB "
            "(smaller tiles, or fewer alive at once)");
}

// def k(x, i, out):                                   # x: [8, 64] FP32, i: [8, 32]
//     s = pl.load(x, [0, 0], [8, 64])                  # line 2, at 0
//     j = pl.load(i, [0, 0], [8, 32])                  # line 3, at 2048
//     [w = pl.tile.create(tmp_shape, dtype=tmp_dtype)] # line 4, at 3072 when given
//     g = pl.tile.gather(s, j[, w])                    # line 5, at 8192
//     pl.store(g, [0, 0], out)                         # line 6
ir::FunctionPtr FlatGatherKernel(DataType index_dtype, std::optional<DataType> tmp_dtype = std::nullopt,
                                 std::initializer_list<int64_t> tmp_shape = {8, 32},
                                 DataType element = DataType::FP32) {
  auto x = TensorParam("x", {8, 64}, At(1, 7), element);
  auto i = TensorParam("i", {8, 32}, At(1, 10), index_dtype);
  auto out = TensorParam("out", {8, 32}, At(1, 13), element);
  auto load_x = Op("tile.load", {x, Ints({0, 0}), Ints({8, 64})}, At(2, 9));
  auto s = TileAt("s", load_x, 0);
  auto load_i = Op("tile.load", {i, Ints({0, 0}), Ints({8, 32})}, At(3, 9));
  auto j = TileAt("j", load_i, 2048);
  std::vector<ir::StmtPtr> body = {Assign(s, load_x, At(2, 5)), Assign(j, load_i, At(3, 5))};
  std::vector<ir::ExprPtr> args = {s, j};
  if (tmp_dtype) {
    auto create = Op("tile.create", {Ints(tmp_shape)}, At(4, 9), {{"dtype", *tmp_dtype}});
    auto w = TileAt("w", create, 3072);
    body.push_back(Assign(w, create, At(4, 5)));
    args.push_back(w);
  }
  auto gather = Op("tile.gather", args, At(5, 9));
  auto g = TileAt("g", gather, 8192);
  body.push_back(Assign(g, gather, At(5, 5)));
  body.push_back(Eval(Op("tile.store", {g, Ints({0, 0}), out}, At(6, 5)), At(6, 5)));
  return Kernel("k", {x, i, out}, {ParamDirection::In, ParamDirection::In, ParamDirection::Out}, body);
}

// Flat indices are what TGATHER reads: one tgather of the whole tiles, whatever their rows. The
// program's tmp, with the indices' type and shape, is the one a2a3's ptoas asks for.
TEST(EmitModuleScratchTiles, GatherIsOneIndexGatherWithTheProgramsTmp) {
  const std::string text = Emit(*FlatGatherKernel(DataType::INT32, DataType::INT32), "a2a3");
  EXPECT_TRUE(HasLine(text, "    pto.tgather ins(%s, %j, %w : " + Vec(8, 64, "f32") + ", " + Vec(8, 32, "i32") +
                                ", " + Vec(8, 32, "i32") + ") outs(%g : " + Vec(8, 32, "f32") + ")"))
      << text;
  EXPECT_EQ(text.find("scf.for"), std::string::npos) << text;
  EXPECT_EQ(text.find("_tmp"), std::string::npos) << text;
  const std::string generic = Emit(*FlatGatherKernel(DataType::INT32, DataType::INT32), "a2a3", true);
  EXPECT_TRUE(HasLine(generic, "    \"pto.tgather\"(%s, %g, %j, %w) {operand_segment_sizes = array<i32: 1, 1, 0, "
                               "1, 1, 0>} : (" + Vec(8, 64, "f32") + ", " + Vec(8, 32, "f32") + ", " +
                                   Vec(8, 32, "i32") + ", " + Vec(8, 32, "i32") + ") -> ()"))
      << generic;
}

// Without a tmp, or on a2a3 with one ptoas would reject (another type or shape than the indices'),
// the tmp is a tile like the indices in the scratch, past g (which ends at 9216).
TEST(EmitModuleScratchTiles, GatherWithoutAFittingTmpUsesTheScratch) {
  const std::string scratch = "    %g_tmp = pto.alloc_tile addr = %c9216_i64 valid_row = %c8_index valid_col = "
                              "%c32_index : " + Vec(8, 32, "i32") + "\n"
                              "    pto.tgather ins(%s, %j, %g_tmp : " + Vec(8, 64, "f32") + ", " + Vec(8, 32, "i32") +
                              ", " + Vec(8, 32, "i32") + ") outs(%g : " + Vec(8, 32, "f32") + ")";
  for (const auto& kernel : {FlatGatherKernel(DataType::INT32), FlatGatherKernel(DataType::INT32, DataType::FP32),
                             FlatGatherKernel(DataType::INT32, DataType::INT32, {1, 32})}) {
    const std::string text = Emit(*kernel, "a2a3");
    EXPECT_TRUE(HasLine(text, scratch)) << text;
  }
  // a5's tgather does not read the tmp of its index form: the program's is passed as it is.
  const std::string a5 = Emit(*FlatGatherKernel(DataType::INT32, DataType::FP32), "a5");
  EXPECT_TRUE(HasLine(a5, "    pto.tgather ins(%s, %j, %w : " + Vec(8, 64, "f32") + ", " + Vec(8, 32, "i32") + ", " +
                              Vec(8, 32, "f32") + ") outs(%g : " + Vec(8, 32, "f32") + ")"))
      << a5;
}

TEST(EmitModuleScratchTiles, GatherRefusesWhatTgatherCannotDo) {
  EXPECT_EQ(ErrorOf(*FlatGatherKernel(DataType::INT16, DataType::INT16, {8, 32}, DataType::FP16)),
            "k.py:5:9: backend-ptoas cannot lower 'tile.gather' in kernel 'k': pto.tgather on a2a3 takes INT32 "
            "indices, not INT16 (a5 also takes INT16)");
}

// def k(x, out):
//     s = pl.load(x, [0, 0], [16, 32])                 # line 2, at 0
//     [w = pl.tile.create([16, 32], pl.FP32)]          # line 3, at 4096 when given
//     t = pl.transpose(s[, w])                         # line 4, at 2048
ir::FunctionPtr TransposeKernel(bool with_tmp) {
  auto x = TensorParam("x", {16, 32}, At(1, 7));
  auto out = TensorParam("out", {32, 16}, At(1, 10));
  auto load = Op("tile.load", {x, Ints({0, 0}), Ints({16, 32})}, At(2, 9));
  auto s = TileAt("s", load, 0);
  std::vector<ir::StmtPtr> body = {Assign(s, load, At(2, 5))};
  std::vector<ir::ExprPtr> args = {s};
  if (with_tmp) {
    auto create = Op("tile.create", {Ints({16, 32})}, At(3, 9), {{"dtype", DataType::FP32}});
    auto w = TileAt("w", create, 4096);
    body.push_back(Assign(w, create, At(3, 5)));
    args.push_back(w);
  }
  auto transpose = Op("tile.transpose", args, At(4, 9), {{"axis1", int64_t{0}}, {"axis2", int64_t{1}}});
  auto t = TileAt("t", transpose, 2048);
  body.push_back(Assign(t, transpose, At(4, 5)));
  body.push_back(Eval(Op("tile.store", {t, Ints({0, 0}), out}, At(5, 5)), At(5, 5)));
  return Kernel("k", {x, out}, {ParamDirection::In, ParamDirection::Out}, body);
}

// ptoas's ttrans always takes a scratch tile between source and result: one the pipeline's
// TransposeScratchTiles pass did not give is refused at the transpose, naming the pass.
TEST(EmitModuleScratchTiles, TransposeWithoutATmpTileIsRefused) {
  EXPECT_EQ(ErrorOf(*TransposeKernel(false)),
            "k.py:4:9: backend-ptoas cannot lower 'tile.transpose' in kernel 'k' without its scratch tile "
            "(pto.ttrans's tmp); lower the program through the TransposeScratchTiles pass, which gives it one");
}

// The tmp tile, the program's or the pass's, is a tile of the kernel at its own address.
TEST(EmitModuleScratchTiles, TransposeWithATmpTileUsesIt) {
  const std::string text = Emit(*TransposeKernel(true), "a2a3");
  EXPECT_TRUE(HasLine(text, "    %w = pto.alloc_tile addr = %c4096_i64 valid_row = %c16_index valid_col = %c32_index : " +
                                Vec(16, 32, "f32")))
      << text;
  EXPECT_TRUE(HasLine(text, "    pto.ttrans ins(%s, %w : " + Vec(16, 32, "f32") + ", " + Vec(16, 32, "f32") +
                                ") outs(%t : " + Vec(32, 16, "f32") + ")"))
      << text;
  const std::string generic = Emit(*TransposeKernel(true), "a2a3", true);
  EXPECT_TRUE(HasLine(generic, "    \"pto.ttrans\"(%s, %w, %t) : (" + Vec(16, 32, "f32") + ", " +
                                   Vec(16, 32, "f32") + ", " + Vec(32, 16, "f32") + ") -> ()"))
      << generic;
}

}  // namespace
}  // namespace pypto::backend_ptoas
