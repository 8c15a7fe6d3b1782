// The cross-core pipes of a mixed kernel: one module holding both members, each setting its end of
// the pipes up (pto.reserve_buffer, pto.import_reserved_buffer, pto.aic/aiv_initialize_pipe) and
// handing tiles over with pto.tpush_to_aiv / tpush_to_aic, pto.tpop_from_aic / tpop_from_aiv and
// pto.tfree_from_aic / tfree_from_aiv, as PTOAS's frontend pipe ops spell them.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kernel_builder.h"
#include "pypto/backend_ptoas/kernel_wrapper.h"
#include "pypto/backend_ptoas/module.h"

namespace pypto::backend_ptoas {
namespace {

using namespace testing;
using ir::DataType;
using ir::MemorySpace;
using ir::ParamDirection;

std::string Tile(std::string_view loc, std::string_view layout, int fractal = 512) {
  return fmt::format("!pto.tile_buf<loc={}, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, {}, fractal={}, pad=0>",
                     loc, layout, fractal);
}
const std::string kVec = Tile("vec", "blayout=row_major, slayout=none_box");
const std::string kMat = Tile("mat", "blayout=col_major, slayout=row_major");
const std::string kAcc = Tile("acc", "blayout=col_major, slayout=row_major", 1024);

bool HasLine(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

const ir::Call::Kwargs kWhole = {{"split", int64_t{0}}};

ir::CallPtr Pop(const std::string& op, ir::Span span, ir::Call::Kwargs kwargs = kWhole) {
  kwargs.insert(kwargs.begin(), {"dtype", DataType::FP32});
  return Op(op, {Ints({16, 16})}, span, kwargs);
}

// def g_aic(a, out):                                      # the cube member
//     a_mat = pl.load(a, [0, 0], [16, 16], target_memory=Mat)   # line 2, Mat at 0
//     a_left = pl.move(a_mat, target_memory=Left)              # line 3
//     w_mat = pl.tpop_from_aiv([16, 16], dtype=FP32)            # line 4, Mat at 1024
//     pl.tfree_to_aiv(w_mat)                                   # line 5: the IR frees at once
//     w_right = pl.move(w_mat, target_memory=Right)            # line 6
//     c = pl.matmul(a_left, w_right)                           # line 7
//     pl.tpush_to_aiv(c)                                       # line 8
ir::FunctionPtr CubeMember(bool pops = true, const ir::Call::Kwargs& v2c = kWhole, const ir::Call::Kwargs& mm = {}) {
  auto a = TensorParam("a", {16, 16}, At(1, 11));
  auto out = TensorParam("out", {16, 16}, At(1, 14));
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(2, 13), {{"target_memory", MemorySpace::Mat}});
  auto a_mat = TileAt("a_mat", load, 0);
  auto to_left = Op("tile.move", {a_mat}, At(3, 14), {{"target_memory", MemorySpace::Left}});
  auto a_left = TileAt("a_left", to_left, 0);
  std::vector<ir::StmtPtr> body = {Assign(a_mat, load, At(2, 5)), Assign(a_left, to_left, At(3, 5))};
  ir::VarPtr right = a_left;
  if (pops) {
    auto pop = Pop("tile.tpop_from_aiv", At(4, 13), v2c);
    auto w_mat = TileAt("w_mat", pop, 1024);
    auto to_right = Op("tile.move", {w_mat}, At(6, 15), {{"target_memory", MemorySpace::Right}});
    right = TileAt("w_right", to_right, 0);
    body.push_back(Assign(w_mat, pop, At(4, 5)));
    body.push_back(Eval(Op("system.tfree_to_aiv", {w_mat}, At(5, 5), v2c), At(5, 5)));
    body.push_back(Assign(right, to_right, At(6, 5)));
  } else {
    auto load_b = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(4, 13), {{"target_memory", MemorySpace::Mat}});
    auto b_mat = TileAt("b_mat", load_b, 1024);
    auto to_right = Op("tile.move", {b_mat}, At(6, 15), {{"target_memory", MemorySpace::Right}});
    right = TileAt("b_right", to_right, 0);
    body.push_back(Assign(b_mat, load_b, At(4, 5)));
    body.push_back(Assign(right, to_right, At(6, 5)));
  }
  auto matmul = Op("tile.matmul", {a_left, right}, At(7, 9), mm);
  auto c = TileAt("c", matmul, 0);
  body.push_back(Assign(c, matmul, At(7, 5)));
  body.push_back(Eval(Op("tile.tpush_to_aiv", {c}, At(8, 5), kWhole), At(8, 5)));
  return Kernel("g_aic", {a, out}, {ParamDirection::In, ParamDirection::Out}, std::move(body), ir::FunctionType::AIC);
}

// def g_aiv(a, out):                                      # the vector member
//     x = pl.load(a, [0, 0], [16, 16])                     # line 12, Vec at 0
//     pl.tpush_to_aic(x)                                   # line 13
//     c = pl.tpop_from_aic([16, 16], dtype=FP32)            # line 14, Vec at pop_at (1024)
//     pl.tfree_to_aic(c)                                   # line 15
//     pl.store(c, [0, 0], out)                             # line 16
ir::FunctionPtr VectorMember(bool pushes = true, int64_t pop_at = 1024, const ir::Call::Kwargs& v2c = kWhole) {
  auto a = TensorParam("a", {16, 16}, At(11, 11));
  auto out = TensorParam("out", {16, 16}, At(11, 14));
  std::vector<ir::StmtPtr> body;
  if (pushes) {
    auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(12, 9));
    auto x = TileAt("x", load, 0);
    body.push_back(Assign(x, load, At(12, 5)));
    body.push_back(Eval(Op("tile.tpush_to_aic", {x}, At(13, 5), v2c), At(13, 5)));
  }
  auto pop = Pop("tile.tpop_from_aic", At(14, 9));
  auto c = TileAt("c", pop, pop_at);
  body.push_back(Assign(c, pop, At(14, 5)));
  body.push_back(Eval(Op("system.tfree_to_aic", {c}, At(15, 5), kWhole), At(15, 5)));
  body.push_back(Eval(Op("tile.store", {c, Ints({0, 0}), out}, At(16, 5)), At(16, 5)));
  return Kernel("g_aiv", {a, out}, {ParamDirection::In, ParamDirection::Out}, std::move(body));
}

std::string EmitGroup(const ir::Function& aic, const ir::Function& aiv, std::string_view arch, bool generic = false) {
  auto text = EmitGroupModule("g", aic, aiv, arch, {.source_locations = false, .generic_form = generic});
  if (!text) throw std::runtime_error(text.error());
  return *text;
}

std::string GroupError(const ir::Function& aic, const ir::Function& aiv, std::string_view arch) {
  auto text = EmitGroupModule("g", aic, aiv, arch);
  return text ? "" : text.error();
}

TEST(EmitModuleCrossCorePipes, BothMembersShareOneModule) {
  const std::string text = EmitGroup(*CubeMember(), *VectorMember(), "a2a3");
  EXPECT_TRUE(text.starts_with("module attributes {pto.target_arch = \"a2a3\"} {\n  func.func @g_aic(")) << text;
  EXPECT_NE(text.find("  }\n\n  func.func @g_aiv("), std::string::npos) << text;
  // The GM slot buffer follows the tensors.
  EXPECT_TRUE(HasLine(text, "  func.func @g_aic(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>) "
                            "attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {"))
      << text;
}

// Each member reserves the slot buffer of the pipe it pops from past its tiles (the cube's in Mat
// past w_mat, the vector core's in UB past c), imports its peer's, and names both: one pipe for both
// directions (dir_mask 3, 4 slots each) whose slots hold a whole [16, 16] FP32 tile (1024 bytes).
TEST(EmitModuleCrossCorePipes, EachMemberSetsUpItsEndOfThePipe) {
  const std::string text = EmitGroup(*CubeMember(), *VectorMember(), "a2a3");
  EXPECT_TRUE(HasLine(text, "    %g_v2c_slot_buffer = pto.reserve_buffer {name = \"g_v2c_slot_buffer\", size = 4096, "
                            "location = #pto.address_space<mat>, auto = false, base = 2048} -> i32"))
      << text;
  EXPECT_TRUE(HasLine(text, "    %g_c2v_slot_buffer_import = pto.import_reserved_buffer {name = \"g_c2v_slot_buffer\", "
                            "peer_func = @g_aiv} -> i32"))
      << text;
  EXPECT_TRUE(HasLine(text, "    pto.aic_initialize_pipe {dir_mask = 3, slot_size = 1024} (gm_slot_buffer = %arg2 : "
                            "!pto.ptr<f32>, c2v_consumer_buf = %g_c2v_slot_buffer_import : i32, v2c_consumer_buf = "
                            "%g_v2c_slot_buffer : i32)"))
      << text;
  EXPECT_TRUE(HasLine(text, "    %g_c2v_slot_buffer = pto.reserve_buffer {name = \"g_c2v_slot_buffer\", size = 4096, "
                            "location = #pto.address_space<vec>, auto = false, base = 2048} -> i32"))
      << text;
  EXPECT_TRUE(HasLine(text, "    %g_v2c_slot_buffer_import = pto.import_reserved_buffer {name = \"g_v2c_slot_buffer\", "
                            "peer_func = @g_aic} -> i32"))
      << text;
  EXPECT_TRUE(HasLine(text, "    pto.aiv_initialize_pipe {dir_mask = 3, slot_size = 1024} (gm_slot_buffer = %arg2 : "
                            "!pto.ptr<f32>, c2v_consumer_buf = %g_c2v_slot_buffer : i32, v2c_consumer_buf = "
                            "%g_v2c_slot_buffer_import : i32)"))
      << text;
}

TEST(EmitModuleCrossCorePipes, PushesNameTheirTile) {
  const std::string text = EmitGroup(*CubeMember(), *VectorMember(), "a2a3");
  EXPECT_TRUE(HasLine(text, "    pto.tpush_to_aiv(%c : " + kAcc + ") {split = 0}")) << text;
  EXPECT_TRUE(HasLine(text, "    pto.tpush_to_aic(%x : " + kVec + ") {split = 0}")) << text;
}

// The vector core copies a popped tile into its own buffer and frees the slot where the IR does.
TEST(EmitModuleCrossCorePipes, AVectorPopIsCopiedOutOfItsSlot) {
  const std::string text = EmitGroup(*CubeMember(), *VectorMember(), "a2a3");
  EXPECT_NE(text.find("    %c_slot = pto.tpop_from_aic(%c16_index, %c16_index) {split = 0} -> " + kVec + "\n" +
                      "    pto.tmov ins(%c_slot : " + kVec + ") outs(%c : " + kVec + ")\n" +
                      "    pto.tfree_from_aic {split = 0}\n"),
            std::string::npos)
      << text;
}

// The cube core has no Mat -> Mat copy: the popped tile is read in its slot, freed after its reader.
TEST(EmitModuleCrossCorePipes, ACubePopIsReadInItsSlotAndFreedAfterItsLastReader) {
  const std::string text = EmitGroup(*CubeMember(), *VectorMember(), "a2a3");
  const std::string right = Tile("right", "blayout=row_major, slayout=col_major");
  EXPECT_NE(text.find("    %w_mat = pto.tpop_from_aiv(%c16_index, %c16_index) {split = 0} -> " + kMat + "\n" +
                      "    pto.tmov ins(%w_mat : " + kMat + ") outs(%w_right : " + right + ")\n" +
                      "    pto.tfree_from_aiv {split = 0}\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("%w_mat = pto.alloc_tile"), std::string::npos) << text;
}

TEST(EmitModuleCrossCorePipes, GenericForm) {
  const std::string text = EmitGroup(*CubeMember(), *VectorMember(), "a2a3", true);
  EXPECT_TRUE(HasLine(text, "    %g_v2c_slot_buffer = \"pto.reserve_buffer\"() {name = \"g_v2c_slot_buffer\", size = "
                            "4096 : i32, location = #pto.address_space<mat>, autoAlloc = false, base = 2048 : i32} : "
                            "() -> i32"))
      << text;
  EXPECT_TRUE(HasLine(text, "    %g_c2v_slot_buffer_import = \"pto.import_reserved_buffer\"() {name = "
                            "\"g_c2v_slot_buffer\", peer_func = @g_aiv} : () -> i32"))
      << text;
  EXPECT_TRUE(HasLine(text, "    \"pto.aic_initialize_pipe\"(%arg2, %g_c2v_slot_buffer_import, %g_v2c_slot_buffer) "
                            "{dir_mask = 3 : i8, slot_size = 1024 : i32} : (!pto.ptr<f32>, i32, i32) -> ()"))
      << text;
  EXPECT_TRUE(HasLine(text, "    \"pto.tpush_to_aiv\"(%c) {split = 0 : i8} : (" + kAcc + ") -> ()")) << text;
  EXPECT_TRUE(HasLine(text, "    %c_slot = \"pto.tpop_from_aic\"(%c16_index, %c16_index) {split = 0 : i8, "
                            "operand_segment_sizes = array<i32: 1, 1>} : (index, index) -> " + kVec))
      << text;
  EXPECT_TRUE(HasLine(text, "    \"pto.tfree_from_aic\"() {split = 0 : i8} : () -> ()")) << text;
}

// One direction: 8 slots; on a5 the slots go from core to core, without a GM buffer.
TEST(EmitModuleCrossCorePipes, OneDirectionOnA5) {
  const std::string text = EmitGroup(*CubeMember(false), *VectorMember(false), "a5");
  EXPECT_TRUE(HasLine(text, "    pto.aic_initialize_pipe {dir_mask = 1, slot_size = 1024} (c2v_consumer_buf = "
                            "%g_c2v_slot_buffer_import : i32, v2c_consumer_buf = %c0_i32 : i32)"))
      << text;
  EXPECT_TRUE(HasLine(text, "    %g_c2v_slot_buffer = pto.reserve_buffer {name = \"g_c2v_slot_buffer\", size = 8192, "
                            "location = #pto.address_space<vec>, auto = false, base = 2048} -> i32"))
      << text;
  EXPECT_TRUE(HasLine(text, "  func.func @g_aiv(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) attributes "
                            "{pto.kernel_kind = #pto.kernel_kind<vector>} {"))
      << text;
}

// On a5 the vector core writes into the cube's L1 slot, which holds NZ tiles: the pushed tile is
// moved into an NZ tile in the Vec scratch (past x and c, which end at 2048) and that is pushed. The
// vector core's own slot buffer goes past the scratch.
TEST(EmitModuleCrossCorePipes, OnA5APushToTheCubeGoesThroughAnNzTile) {
  const std::string text = EmitGroup(*CubeMember(), *VectorMember(), "a5");
  const std::string nz = Tile("vec", "blayout=col_major, slayout=row_major");
  EXPECT_NE(text.find("    %x_nz = pto.alloc_tile addr = %c2048_i64 valid_row = %c16_index valid_col = %c16_index : " +
                      nz + "\n" + "    pto.tmov ins(%x : " + kVec + ") outs(%x_nz : " + nz + ")\n" +
                      "    pto.tpush_to_aic(%x_nz : " + nz + ") {split = 0}\n"),
            std::string::npos)
      << text;
  EXPECT_TRUE(HasLine(text, "    %g_c2v_slot_buffer = pto.reserve_buffer {name = \"g_c2v_slot_buffer\", size = 4096, "
                            "location = #pto.address_space<vec>, auto = false, base = 3072} -> i32"))
      << text;
  // On a2a3 the slots pass through GM, which takes the row-major tile.
  EXPECT_EQ(EmitGroup(*CubeMember(), *VectorMember(), "a2a3").find("_nz"), std::string::npos);
}

// The slot buffer a member pops from lives for the whole kernel, so it needs room past every tile;
// where the tiles leave none the device could not hold both, and the group gets no module: an error
// at the vector member, with the bytes to free (on a simulator platform a warning; on a device
// platform the compile stops). Memory allocation places such a member around a pipe slot region
// where that fits (below).
TEST(EmitModuleCrossCorePipes, ASlotBufferWithNoRoomPastTheTilesIsRefused) {
  EXPECT_EQ(GroupError(*CubeMember(false), *VectorMember(false, 188416 - 1024), "a2a3"),
            "k.py:1:1: backend-ptoas cannot place the 8192-byte slot buffer of the cube-to-vector pipe of mixed "
            "kernel 'g' in UB: PTOAS keeps 8 slots of its largest crossing tile (1024 bytes), and the tiles of 'g_aiv' "
            "use UB up to byte 188416 of the 188416 Ascend910B has; cross smaller tiles, or free 8192 bytes of UB");
}

// def g_aiv(a, out):              # a vector member placed around a pipe slot region of 2 slots
//     x = pl.load(a, [0, 0], [16, 16])          # line 12, Vec at 2048 (past the ring)
//     pl.tpush_to_aic(x)                        # line 13
//     c = pl.tpop_from_aic([16, 16], dtype=FP32)  # line 14, in the ring at 0
//     pl.tfree_to_aic(c)                        # line 15: the IR frees at once
//     d = pl.tpop_from_aic([16, 16], dtype=FP32)  # line 16, in the ring at 1024
//     pl.tfree_to_aic(d)                        # line 17
//     e = pl.add(c, d)                          # line 18, Vec at 3072
//     e_low = e[8:16, :]                        # line 19, a view of e's rows 8-15 (e's block)
//     pl.store(e_low, [0, 0], out)              # line 20
ir::FunctionPtr VectorMemberAroundASlotRegion() {
  auto a = TensorParam("a", {16, 16}, At(11, 11));
  auto out = TensorParam("out", {16, 16}, At(11, 14));
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(12, 9));
  auto x = TileAt("x", load, 2048);
  auto pop_c = Pop("tile.tpop_from_aic", At(14, 9));
  auto c = TileAt("c", pop_c, 0);
  auto pop_d = Pop("tile.tpop_from_aic", At(16, 9));
  auto d = TileAt("d", pop_d, 1024);
  auto add = Op("tile.add", {c, d}, At(18, 9));
  auto e = TileAt("e", add, 3072);
  auto slice = Op("tile.slice", {e, Ints({8, 16}), Ints({8, 0})}, At(19, 13));
  auto band = std::make_shared<ir::TileType>(std::vector<int64_t>{8, 16}, DataType::FP32, MemorySpace::Vec,
                                             ir::TileMemRef{3072, 1024});
  auto e_low = std::make_shared<ir::Var>("e_low", band, At(19, 5));
  std::vector<ir::StmtPtr> body = {
      Assign(x, load, At(12, 5)),
      Eval(Op("tile.tpush_to_aic", {x}, At(13, 5), kWhole), At(13, 5)),
      Assign(c, pop_c, At(14, 5)),
      Eval(Op("system.tfree_to_aic", {c}, At(15, 5), kWhole), At(15, 5)),
      Assign(d, pop_d, At(16, 5)),
      Eval(Op("system.tfree_to_aic", {d}, At(17, 5), kWhole), At(17, 5)),
      Assign(e, add, At(18, 5)),
      Assign(e_low, slice, At(19, 5)),
      Eval(Op("tile.store", {e_low, Ints({0, 0}), out}, At(20, 5)), At(20, 5))};
  auto kernel = Kernel("g_aiv", {a, out}, {ParamDirection::In, ParamDirection::Out}, std::move(body));
  return std::make_shared<ir::Function>(kernel->name(), kernel->params(), kernel->param_directions(),
                                        kernel->return_types(), kernel->body(), kernel->type(),
                                        std::map<std::string, ir::AttrValue>{{"pipe_slot_region", int64_t{2048}}},
                                        kernel->span());
}

// Its ring is the region at the bottom of UB, two slots of 1024 bytes, which its end of the pipe
// consumes: PTOAS's a2a3 pipe with local_slot_num = 2 (the GM ring keeps 4 slots), which its pushes,
// pops and frees name. The popped tiles are read in their slots, freed in pop order after their
// last reader; the band of e is a view at e + 512 bytes, with no copy.
TEST(EmitModuleCrossCorePipes, AMemberAroundAPipeSlotRegionConsumesOnlyThatRing) {
  const std::string text = EmitGroup(*CubeMember(), *VectorMemberAroundASlotRegion(), "a2a3");
  EXPECT_TRUE(HasLine(text, "    %g_c2v_slot_buffer = pto.reserve_buffer {name = \"g_c2v_slot_buffer\", size = 2048, "
                            "location = #pto.address_space<vec>, auto = false, base = 0} -> i32"))
      << text;
  EXPECT_TRUE(HasLine(text, "    %g_pipe = pto.initialize_l2g2l_pipe {dir_mask = 3, slot_size = 1024, slot_num = 4, "
                            "local_slot_num = 2}(%arg2 : !pto.ptr<f32>, %g_c2v_slot_buffer : i32, "
                            "%g_v2c_slot_buffer_import : i32) -> !pto.pipe"))
      << text;
  EXPECT_NE(text.find("    pto.tpush(%x, %g_pipe : " + kVec + ", !pto.pipe) {split = 0}\n" +
                      "    %c = pto.declare_tile -> " + kVec + "\n" +
                      "    pto.set_validshape %c, %c16_index, %c16_index : " + kVec + "\n" +
                      "    pto.tpop(%c, %g_pipe : " + kVec + ", !pto.pipe) {split = 0}\n" +
                      "    %d = pto.declare_tile -> " + kVec + "\n" +
                      "    pto.set_validshape %d, %c16_index, %c16_index : " + kVec + "\n" +
                      "    pto.tpop(%d, %g_pipe : " + kVec + ", !pto.pipe) {split = 0}\n" +
                      "    pto.tadd ins(%c, %d : " + kVec + ", " + kVec + ") outs(%e : " + kVec + ")\n" +
                      "    pto.tfree(%g_pipe : !pto.pipe) {split = 0}\n" +
                      "    pto.tfree(%g_pipe : !pto.pipe) {split = 0}\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    %e_low = pto.alloc_tile addr = %c3584_i64 valid_row = %c8_index valid_col = %c16_index"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("pto.subset"), std::string::npos) << text;
  // The cube's end is unchanged: PTOAS's frontend pipe, 4 slots in L1.
  EXPECT_TRUE(HasLine(text, "    pto.aic_initialize_pipe {dir_mask = 3, slot_size = 1024} (gm_slot_buffer = %arg2 : "
                            "!pto.ptr<f32>, c2v_consumer_buf = %g_c2v_slot_buffer_import : i32, v2c_consumer_buf = "
                            "%g_v2c_slot_buffer : i32)"))
      << text;
}

// A ring shallower than the popped tiles read at once would be overwritten under them.
TEST(EmitModuleCrossCorePipes, ASlotRegionTooShallowForItsPopsIsRefused) {
  auto member = VectorMemberAroundASlotRegion();
  auto attrs = member->attrs();
  attrs["pipe_slot_region"] = int64_t{1024};
  auto shallow = std::make_shared<ir::Function>(member->name(), member->params(), member->param_directions(),
                                                member->return_types(), member->body(), member->type(), attrs,
                                                member->span());
  EXPECT_EQ(GroupError(*CubeMember(), *shallow, "a2a3"),
            "k.py:1:1: backend-ptoas cannot place the pipe slot region of mixed kernel 'g' in UB: memory allocation "
            "reserved 1024 bytes for 'g_aiv', which hold 1 slots of 1024 bytes; its popped tiles hold 2 at once, "
            "PTOAS's ring has 4");
}

// On a5 the cube writes straight into the region: both members' frontend pipe setup carries its
// depth as upstream pypto's slot_num (PTOAS a56b18c's a5 pipe takes 4 or 8 slots only), the cube's
// ring in L1 as deep; the vector member's pops are read in their slots.
TEST(EmitModuleCrossCorePipes, OnA5BothMembersRingsAreTheRegionsDepth) {
  const std::string text = EmitGroup(*CubeMember(), *VectorMemberAroundASlotRegion(), "a5");
  EXPECT_TRUE(HasLine(text, "    %g_c2v_slot_buffer = pto.reserve_buffer {name = \"g_c2v_slot_buffer\", size = 2048, "
                            "location = #pto.address_space<vec>, auto = false, base = 0} -> i32"))
      << text;
  EXPECT_TRUE(HasLine(text, "    pto.aiv_initialize_pipe {dir_mask = 3, slot_size = 1024, slot_num = 2} "
                            "(c2v_consumer_buf = %g_c2v_slot_buffer : i32, v2c_consumer_buf = "
                            "%g_v2c_slot_buffer_import : i32)"))
      << text;
  EXPECT_TRUE(HasLine(text, "    pto.aic_initialize_pipe {dir_mask = 3, slot_size = 1024, slot_num = 2} "
                            "(c2v_consumer_buf = %g_c2v_slot_buffer_import : i32, v2c_consumer_buf = "
                            "%g_v2c_slot_buffer : i32)"))
      << text;
  EXPECT_NE(text.find("    %c = pto.tpop_from_aic(%c16_index, %c16_index) {split = 0} -> " + kVec + "\n" +
                      "    %d = pto.tpop_from_aic(%c16_index, %c16_index) {split = 0} -> " + kVec + "\n" +
                      "    pto.tadd ins(%c, %d : " + kVec + ", " + kVec + ") outs(%e : " + kVec + ")\n" +
                      "    pto.tfree_from_aic {split = 0}\n" + "    pto.tfree_from_aic {split = 0}\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("initialize_l2g2l_pipe"), std::string::npos) << text;
}

TEST(EmitModuleCrossCorePipes, APipeOnlyOneMemberUsesIsRefused) {
  EXPECT_EQ(GroupError(*CubeMember(false), *VectorMember(), "a2a3"),
            "k.py:1:1: backend-ptoas cannot lower the vector-to-cube pipe of mixed kernel 'g': 'g_aiv' uses it and "
            "its peer 'g_aic' never does");
}

// `member` with a program's own pipe setup before its body, as the cross-core tests write it:
//     buf = pl.reserve_buffer(name="g_buf", size=8192, base=0x2000)     # line 30 (the vector member)
//     peer = pl.import_peer_buffer(name="g_buf", peer_func="g_aiv")      # line 30 (the cube member)
//     pl.aiv_initialize_pipe(dir_mask=3, slot_size=1024, c2v_consumer_buf=buf, **ring)   # line 31
ir::FunctionPtr WithPipeSetup(const ir::Function& member, ir::Call::Kwargs ring = {}) {
  const bool cube = member.type() == ir::FunctionType::AIC;
  auto buffer = cube ? Op("system.import_peer_buffer", {}, At(30, 12), {{"name", std::string("g_buf")},
                                                                        {"peer_func", std::string("g_aiv")}})
                     : Op("system.reserve_buffer", {}, At(30, 11), {{"name", std::string("g_buf")},
                                                                    {"size", int64_t{8192}},
                                                                    {"base", int64_t{0x2000}}});
  auto buf = std::make_shared<ir::Var>(cube ? "peer" : "buf", buffer->type(), At(30, 5));
  ring.insert(ring.begin(), {{"dir_mask", int64_t{3}}, {"slot_size", int64_t{1024}}});
  auto init = Op(cube ? "system.aic_initialize_pipe" : "system.aiv_initialize_pipe", {buf}, At(31, 5), ring);
  std::vector<ir::StmtPtr> body = {Assign(buf, buffer, At(30, 5)), Eval(init, At(31, 5))};
  for (const auto& stmt : member.body()->As<ir::SeqStmts>()->stmts()) body.push_back(stmt);
  return Kernel(member.name(), member.params(), member.param_directions(), std::move(body), member.type());
}

// The setup a program writes is the one the backend writes for its pushes and pops: the module is
// the same with it as without it.
TEST(EmitModuleCrossCorePipes, AProgramsOwnPipeSetupIsTheOneTheModuleHas) {
  EXPECT_EQ(EmitGroup(*WithPipeSetup(*CubeMember()), *WithPipeSetup(*VectorMember()), "a2a3"),
            EmitGroup(*CubeMember(), *VectorMember(), "a2a3"));
}

// A b_trans matmul of a tile popped from the vector core reads the slot transposed: the pop's
// [K, N] ZN view is a pto.treshape of it (no alloc_tile can be placed at a slot), moved into Right,
// the slot freed after that move.
TEST(EmitModuleCrossCorePipes, ATransposedReadOfAPoppedTileIsATreshapeOfItsSlot) {
  const std::string text = EmitGroup(*CubeMember(true, kWhole, {{"b_trans", true}}), *VectorMember(), "a2a3");
  const std::string view = "!pto.tile_buf<loc=mat, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, "
                           "blayout=row_major, slayout=col_major, fractal=512, pad=0>";
  EXPECT_NE(text.find("    %w_mat = pto.tpop_from_aiv(%c16_index, %c16_index) {split = 0} -> " + kMat + "\n" +
                      "    %w_mat_t = pto.treshape %w_mat : " + kMat + " -> " + view + "\n" +
                      "    pto.tmov ins(%w_mat_t : " + view + ") outs(%w_right : " +
                      Tile("right", "blayout=row_major, slayout=col_major") + ")\n" +
                      "    pto.tfree_from_aiv {split = 0}\n"),
            std::string::npos)
      << text;
}

// A setup of a pipe no push or pop uses describes nothing to set up: the module is the one without it.
TEST(EmitModuleCrossCorePipes, ASetupOfAPipeNoOpUsesWritesNothing) {
  EXPECT_EQ(EmitGroup(*WithPipeSetup(*CubeMember(), {{"id", int64_t{1}}}), *VectorMember(), "a2a3"),
            EmitGroup(*CubeMember(), *VectorMember(), "a2a3"));
}

const ir::Call::Kwargs kPipe1 = {{"split", int64_t{0}}, {"id", int64_t{1}}};

// The vector-to-cube crossing on pipe 1, the cube-to-vector one on pipe 0: two pipes of one direction
// each (8 slots), each with its own slot buffer and, past pipe 0's 8 KiB of rings, its own region of
// the GM slot buffer (2048 f32 elements in); every pipe op names its pipe, as upstream pypto writes
// them for a later PTOAS.
TEST(EmitModuleCrossCorePipes, ASecondPipeIsSetUpOnItsOwnAndItsOpsNameIt) {
  const std::string text = EmitGroup(*CubeMember(true, kPipe1), *VectorMember(true, 1024, kPipe1), "a2a3");
  EXPECT_TRUE(HasLine(text, "    pto.aic_initialize_pipe {id = 0, dir_mask = 1, slot_size = 1024} (gm_slot_buffer = "
                            "%arg2 : !pto.ptr<f32>, c2v_consumer_buf = %g_c2v_slot_buffer_import : i32, "
                            "v2c_consumer_buf = %c0_i32 : i32)"))
      << text;
  EXPECT_TRUE(HasLine(text, "    %g_v2c_slot_buffer_1 = pto.reserve_buffer {name = \"g_v2c_slot_buffer_1\", size = "
                            "8192, location = #pto.address_space<mat>, auto = false, base = 2048} -> i32"))
      << text;
  EXPECT_TRUE(HasLine(text, "    %g_gm_slot_buffer_1 = pto.addptr %arg2, %c2048_index : !pto.ptr<f32> -> "
                            "!pto.ptr<f32>"))
      << text;
  EXPECT_TRUE(HasLine(text, "    pto.aic_initialize_pipe {id = 1, dir_mask = 2, slot_size = 1024} (gm_slot_buffer = "
                            "%g_gm_slot_buffer_1 : !pto.ptr<f32>, c2v_consumer_buf = %c0_i32 : i32, v2c_consumer_buf "
                            "= %g_v2c_slot_buffer_1 : i32)"))
      << text;
  EXPECT_TRUE(HasLine(text, "    %w_mat = pto.tpop_from_aiv(%c16_index, %c16_index) {id = 1, split = 0} -> " + kMat))
      << text;
  EXPECT_TRUE(HasLine(text, "    pto.tfree_from_aiv {id = 1, split = 0}")) << text;
  EXPECT_TRUE(HasLine(text, "    pto.tpush_to_aiv(%c : " + kAcc + ") {id = 0, split = 0}")) << text;
  // The vector member: pipe 0's buffer is its own, pipe 1's its peer's.
  EXPECT_TRUE(HasLine(text, "    %g_v2c_slot_buffer_1_import = pto.import_reserved_buffer {name = "
                            "\"g_v2c_slot_buffer_1\", peer_func = @g_aic} -> i32"))
      << text;
  EXPECT_TRUE(HasLine(text, "    pto.tpush_to_aic(%x : " + kVec + ") {id = 1, split = 0}")) << text;
  EXPECT_TRUE(HasLine(text, "    pto.tfree_from_aic {id = 0, split = 0}")) << text;
}

// The ring a program's setup asks for (slot_num, local_slot_num) is the pipe's: both members' setups
// carry it, and each consumer reserves the local ring (here the vector's 2 slots, the cube's 4).
TEST(EmitModuleCrossCorePipes, ARingTheSetupAsksForIsThePipes) {
  const std::string text =
      EmitGroup(*WithPipeSetup(*CubeMember(), {{"slot_num", int64_t{4}}}),
                *WithPipeSetup(*VectorMember(), {{"slot_num", int64_t{4}}, {"local_slot_num", int64_t{2}}}), "a2a3");
  EXPECT_TRUE(HasLine(text, "    %g_v2c_slot_buffer = pto.reserve_buffer {name = \"g_v2c_slot_buffer\", size = 2048, "
                            "location = #pto.address_space<mat>, auto = false, base = 2048} -> i32"))
      << text;
  EXPECT_TRUE(HasLine(text, "    pto.aic_initialize_pipe {dir_mask = 3, slot_size = 1024, slot_num = 4, "
                            "local_slot_num = 2} (gm_slot_buffer = %arg2 : !pto.ptr<f32>, c2v_consumer_buf = "
                            "%g_c2v_slot_buffer_import : i32, v2c_consumer_buf = %g_v2c_slot_buffer : i32)"))
      << text;
  EXPECT_TRUE(HasLine(text, "    pto.aiv_initialize_pipe {dir_mask = 3, slot_size = 1024, slot_num = 4, "
                            "local_slot_num = 2} (gm_slot_buffer = %arg2 : !pto.ptr<f32>, c2v_consumer_buf = "
                            "%g_c2v_slot_buffer : i32, v2c_consumer_buf = %g_v2c_slot_buffer_import : i32)"))
      << text;
}

TEST(EmitModuleCrossCorePipes, MembersAskingForDifferentRingsAreRefused) {
  EXPECT_EQ(GroupError(*WithPipeSetup(*CubeMember(), {{"slot_num", int64_t{4}}}),
                       *WithPipeSetup(*VectorMember(), {{"slot_num", int64_t{8}}}), "a2a3"),
            "k.py:1:1: backend-ptoas cannot lower the pipe with id=0 of mixed kernel 'g': 'g_aic' sets it up with "
            "slot_num=4 and 'g_aiv' with slot_num=8; give both the same");
}

// def lane(a, ws: pl.Tensor[[256], pl.INT64], out, e: pl.Scalar[pl.INDEX]):   # line 40
//     pl.system.set_ffts(ws)                                       # line 41
//     x = pl.load(a, [0, 0], [16, 16])                             # line 42, Vec at 0
//     pl.store(x, [0, 0], out)                                     # line 43
//     pl.system.sync_set(4, pipe=pl.PipeType.MTE3, ffts_mode=2)    # line 44
//     pl.system.sync_wait(e, pipe=pl.PipeType.MTE2)                # line 45
ir::FunctionPtr EventLane(bool reads_workspace = false) {
  auto a = TensorParam("a", {16, 16}, At(40, 10));
  auto ws = TensorParam("ws", {256}, At(40, 13), DataType::INT64);
  auto out = TensorParam("out", {16, 16}, At(40, 45));
  auto e = ScalarParam("e", DataType::INDEX, At(40, 50));
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({16, 16})}, At(42, 9));
  auto x = TileAt("x", load, 0);
  std::vector<ir::StmtPtr> body = {Eval(Op("system.set_ffts", {ws}, At(41, 5)), At(41, 5)), Assign(x, load, At(42, 5)),
                                   Eval(Op("tile.store", {x, Ints({0, 0}), out}, At(43, 5)), At(43, 5))};
  if (reads_workspace) {
    auto peek = Op("tile.load", {ws, Ints({0}), Ints({16})}, At(46, 12));
    body.push_back(Assign(TileAt("w", peek, 1024), peek, At(46, 5)));
  }
  body.push_back(Eval(Op("system.sync_set", {Index(4)}, At(44, 5),
                         {{"pipe", std::string("MTE3")}, {"ffts_mode", int64_t{2}}}),
                      At(44, 5)));
  body.push_back(Eval(Op("system.sync_wait", {e}, At(45, 5), {{"pipe", std::string("MTE2")}}), At(45, 5)));
  return Kernel("lane", {a, ws, out, e},
                {ParamDirection::In, ParamDirection::In, ParamDirection::Out, ParamDirection::In}, std::move(body));
}

// The events are PTOAS's pto.sync.set / pto.sync.wait (a constant id an attribute, a computed one an
// index operand), and set_ffts takes the workspace as the memref PTOAS a56b18c defines it on.
TEST(EmitModuleCrossCoreEvents, SetFftsSyncSetAndSyncWait) {
  auto text = EmitModule(*EventLane(), "a2a3", {.source_locations = false});
  ASSERT_TRUE(text) << text.error();
  EXPECT_TRUE(HasLine(*text, "  func.func @lane(%arg0: !pto.ptr<f32>, %arg1: memref<256xi64>, %arg2: !pto.ptr<f32>, "
                             "%arg3: index) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {"))
      << *text;
  EXPECT_TRUE(HasLine(*text, "    pto.set_ffts %arg1 : memref<256xi64>")) << *text;
  EXPECT_TRUE(HasLine(*text, "    pto.sync.set <PIPE_MTE3>, 4 {ffts_mode = 2 : i32}")) << *text;
  EXPECT_TRUE(HasLine(*text, "    pto.sync.wait <PIPE_MTE2>, %arg3")) << *text;
  EXPECT_EQ(text->find("%ws_view"), std::string::npos) << *text;  // no tensor view of the workspace
  auto generic = EmitModule(*EventLane(), "a2a3", {.source_locations = false, .generic_form = true});
  ASSERT_TRUE(generic) << generic.error();
  EXPECT_TRUE(HasLine(*generic, "    \"pto.set_ffts\"(%arg1) : (memref<256xi64>) -> ()")) << *generic;
  EXPECT_TRUE(HasLine(*generic, "    \"pto.sync.set\"() {pipe = #pto.pipe<PIPE_MTE3>, event_id = 4 : i32, ffts_mode = 2 "
                                ": i32} : () -> ()"))
      << *generic;
  EXPECT_TRUE(HasLine(*generic, "    \"pto.sync.wait\"(%arg3) {pipe = #pto.pipe<PIPE_MTE2>} : (index) -> ()"))
      << *generic;
}

TEST(EmitModuleCrossCoreEvents, AKernelReadingItsFftsWorkspaceIsRefused) {
  auto text = EmitModule(*EventLane(true), "a2a3");
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error(), "k.py:40:13: backend-ptoas cannot lower kernel 'lane': it reads the FFTS workspace 'ws' it "
                          "hands pl.system.set_ffts; pass the tensor it reads separately");
}

// Alone, a member's module could not name its peer's slot buffer.
TEST(EmitModuleCrossCorePipes, AMemberAloneIsRefused) {
  auto text = EmitModule(*VectorMember(), "a2a3");
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error(), "k.py:1:1: kernel 'g_aiv' hands tiles to its peer through cross-core pipes; its module "
                          "holds both members of its mixed kernel (EmitGroupModule)");
}

// The runtime does not allocate the GM slot buffer yet, so there is nothing kernel_entry could pass.
TEST(EmitModuleCrossCorePipes, KernelEntryOfAMemberIsRefused) {
  auto wrapper = EmitKernelWrapper(*VectorMember());
  ASSERT_FALSE(wrapper.has_value());
  EXPECT_EQ(wrapper.error(), "k.py:1:1: kernel_entry cannot call kernel 'g_aiv' yet: it hands tiles to its peer "
                             "through cross-core pipes, whose GM slot buffer (its last argument on a2a3) the runtime "
                             "does not allocate yet");
}

}  // namespace
}  // namespace pypto::backend_ptoas
