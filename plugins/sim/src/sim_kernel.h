// A lowered kernel decoded into a compact instruction list. The decoder walks a kernel Function once
// and resolves everything the executor needs (on-chip byte offsets, argument slots, static regions,
// element types), so that running a kernel never looks at the IR again. Loops become LoopBegin/
// LoopEnd pairs; integer scalar expressions (loop variables, computed offsets) become short runs of
// register instructions attached to the instruction that needs them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/block_gather.h"
#include "kernels/index_moves.h"
#include "pypto-c/runtime.h"
#include "pypto/ir/function.h"
#include "pypto/ir/soc.h"
#include "pypto/runtime/runtime.h"
#include "pypto/support/expected.h"
#include "scalar_ops.h"

struct PyptoSimCore;  // plugins/sim/extern_include/pypto_sim_core.h

namespace pypto::sim {

inline constexpr int kMaxDims = PYPTO_MAX_TENSOR_DIMS;

// LoopBegin/LoopEnd bracket a loop body: LoopBegin computes the trip count and jumps past its
// LoopEnd when it is 0; LoopEnd advances the loop variable and jumps back to the first body
// instruction while iterations remain. Loops nest.
// Compute covers every other tile op; its ComputeInfo says which.
// BranchIfZero/Jump implement if/else: BranchIfZero jumps to its target when its condition is 0
// (past the if branch), Jump always (from the end of the if branch past the else branch).
// ReadScalar loads one element of a tensor argument into a register (pl.read); WriteScalar stores
// Instr::value into one element of a tensor argument (pl.write). ReadTile/WriteTile do the same with
// one element of a tile (src0 / dst), its indices in offsets/offset_regs and its shape in shape.
enum class Opcode : uint8_t {
  Load, Store, Add, Sub, Mul, Div, LoopBegin, LoopEnd, Compute, BranchIfZero, Jump, ReadScalar,
  WriteScalar, ReadTile, WriteTile,
  SyncAll,  // pl.system.syncall: wait for every block of the launch (rt::LaunchBarrier)
  // Cross-core pipes of a mixed task (rt::LaunchBarrier::PipePush/Pop/Free): TPush sends src0,
  // TPop receives into dst, TFree gives a popped tile's slot back; `pipe` names the pipe.
  TPush, TPop, TFree,
  // Cross-core events of a mixed task (rt::LaunchBarrier::EventSet/EventWait): the event id is
  // `value` (a constant or a register), the FFTS mode `event.mode`.
  EventSet, EventWait,
  // Communication between the ranks of a distributed program (`comm` says which op): on the window
  // tensor `tensor_slot`, whose communication domain (rt::FindCommPlace) gives this rank and its peers.
  Comm,
};

// What a Comm instruction does. Rank/Nranks write `scalar_dst`; Notify sets or adds `value` to the
// INT32 cell at `offsets` of the peer's signal window; Wait blocks until this rank's cell compares
// true with `value`; Barrier runs the domain-wide barrier on the one-cell-per-rank signal window.
enum class CommKind : uint8_t { Rank, Nranks, Notify, Wait, Barrier };
enum class WaitCmp : uint8_t { Eq, Ne, Gt, Ge, Lt, Le };
const char* OpcodeName(Opcode op);

// The tile ops a Compute instruction runs (kernels/*.h does the arithmetic).
enum class ComputeKind : uint8_t {
  Binary,        // dst = src0 op src1 (op: BinaryOp)
  BinaryScalar,  // dst = src0 op scalar
  Unary,         // dst = op(src0) (op: UnaryOp)
  LeakyRelu,     // dst = src0 > 0 ? src0 : scalar * src0
  BitNot,        // dst = ~src0, bit by bit (integer tiles of any width)
  IntegerBinary, // dst = src0 op src1 (or op scalar when src1 is empty) over dst's valid region, at the
                 // integer tile's own width and signedness (op: IntegerOp; out_dtype: the element type)
  RowReduce,     // dst[r] = reduce(src0[r][:]) (op: ReduceOp)
  ColReduce,     // dst[c] = reduce(src0[:][c])
  RowArgReduce,  // dst[r] = the column of src0[r][:]'s extremum, INT32 (op: ArgReduceOp; src0: in_dtype)
  ColArgReduce,  // dst[c] = the row of src0[:][c]'s extremum, INT32
  RowExpand,     // dst[r][c] = src0[r][c] op src1[r]
  ColExpand,     // dst[r][c] = src0[r][c] op src1[c]
  RowExpDif,     // dst[r][c] = exp(src0[r][c] - src1[r])
  ColExpDif,     // dst[r][c] = exp(src0[r][c] - src1[c])
  RowBroadcast,  // dst[r][c] = src1[r]
  ColBroadcast,  // dst[r][c] = src1[c]
  Fill,          // dst[i] = scalar
  Copy,          // dst = src0, byte for byte (moves between buffers, reshape copies)
  Matmul,        // dst (+)= src0 [rows x inner] @ src1 [inner x cols]
  MatmulMx,      // dst (+)= MX block-scale src0 [rows x inner] @ src1 [inner x cols], FP8E4M3FN (in_dtype), each
                 // 32 of inner scaled by the E8M0 exponents src2 [rows x inner/32] and src3 [inner/32 x cols]
  Cast,          // dst = convert(src0)
  Sort32,        // dst = each 32-block of src0's rows sorted with its indices src1, as (value, index) pairs
  MergeSort,     // dst = each 4 consecutive runs of block_len lanes of the row src0, merged
  MergeLists,    // dst = the 2-4 sorted lists lying back to back in the row src0 (list_lanes), merged
  GatherMask,    // dst[r][j] = src0[r][j * group + lane] (op: the mask pattern)
  GatherAlong,   // dst = src0 picked along `along` by the indices src1 (checked when it runs)
  ScatterAlong,  // dst (holding the input) written along `along` at the indices src1 with src0
  ScatterLanes,  // dst[r][j * group + lane] = src0[r][j] (op: the mask pattern; src_cols: src0's row length)
  GatherCompare, // per row of src0 (in_dtype), the columns comparing true (op: CompareMode) against scalar, or
                 // with compare_counts their count (inner: out_cols)
  Random,        // the valid region of dst = pto.trandom's words for the key and counter `seeds` (rounds)
  ScatterRows,   // row src1.flat[i] of dst = row i of src0 (rows: dst's, cols: the row length, inner: the indices)
  Slice,         // dst = the window of src0 at (row_offset, col_offset), or at `origin` (tile.slice, tile.extract)
  Insert,        // the window of dst at (row_offset, col_offset) = src0 (tile.assemble, in place)
  Concat,        // dst[r] = src0[r] (src_cols elements) then src1[r] (cols - src_cols)
  Transpose,     // dst[c][r] = src0[r][c] (rows, cols: src0's)
  Arange,        // dst[i] = scalar + i, or scalar - i when op is 1 (descending)
  FillPad,       // dst = src0, then every element outside the valid region set to pad_bits
  FillBits,      // every element of dst set to pad_bits (pl.full of a type without arithmetic)
  FillPadExpand,  // dst [outer_rows, outer_cols] = src0's valid region in its top-left corner, pad_bits elsewhere
  Compare,       // dst = the packed predicate mask of src0 op src1 (or op scalar when src1 is empty); op: CmpOp
  Select,        // dst = mask bit set ? src0 : src1 (or scalar when src1 is empty), element by element (the mask
                 // operand: src2; out_dtype: dst's element type, which the scalar takes)
  Prelu,         // dst = src0 > 0 ? src0 : src0 * src1
  PartialBinary, // dst = src0 op src1 inside `valid` (src1's valid region), src0 outside it (op: BinaryOp)
  Triangle,      // the valid region of dst: pad_bits (a 1) where col <= row + scalar (op 1: col >= row + scalar),
                 // 0 elsewhere
  GatherBlocks,  // dst's 32-byte blocks = those of src0 at the UINT32 byte offsets src1 [rows, cols]
};
const char* ComputeKindName(ComputeKind kind);

// A scalar operand of BinaryScalar/Fill: a constant, or a register holding an integer or the bit
// pattern of an FP32 parameter.
struct ScalarOperand {
  enum class Source : uint8_t { Imm, IntReg, Fp32BitsReg } source = Source::Imm;
  double imm = 0;
  int32_t reg = -1;
};

// An integer scalar operand: a constant, or a slot of the kernel's register file.
struct Operand {
  int64_t imm = 0;
  int32_t reg = -1;  // >= 0: read register `reg` instead of `imm`
  bool is_reg() const { return reg >= 0; }
  static Operand Imm(int64_t value) { return Operand{value, -1}; }
  static Operand Reg(uint32_t reg) { return Operand{0, static_cast<int32_t>(reg)}; }
  bool operator==(const Operand&) const = default;
};

struct CommInfo {
  CommKind kind = CommKind::Rank;
  bool atomic_add = false;  // Notify: add rather than set
  WaitCmp cmp = WaitCmp::Eq;
  Operand peer;
  Operand value;  // Notify: the value set or added; Wait: the value compared with
};

struct ComputeInfo {
  ComputeKind kind = ComputeKind::Copy;
  uint8_t op = 0;  // BinaryOp, UnaryOp or ReduceOp, by kind
  int64_t rows = 0, cols = 0, inner = 0;
  ScalarOperand scalar;
  bool accumulate = false;     // Matmul: add into dst
  bool a_trans = false, b_trans = false;  // Matmul: src0 is [inner, rows] / src1 is [cols, inner]
  // Matmul: the part of `inner` summed (the lhs's valid K; rows of src0 and src1 keep their stored
  // length), and, when its register is set, init_cond: dst is overwritten, not added to, where it
  // is nonzero.
  Operand valid_inner;
  Operand init_cond = Operand::Imm(0);
  // Matmul, Transpose: how many matrices lie one after another in dst; Matmul: elements from one
  // batch's src0 (src1) matrix to the next's, 0 when one matrix serves every batch.
  int64_t batch = 1;
  int64_t src0_step = 0, src1_step = 0;
  ir::DataType in_dtype = ir::DataType::FP32;   // Matmul/Cast/*ArgReduce: element type of src0 (and src1)
  ir::DataType out_dtype = ir::DataType::FP32;  // Cast: element type of dst
  uint8_t round_mode = 0;      // Cast: RoundMode
  Operand block_len;           // MergeSort: lanes per sorted input run (a constant or a loop's register)
  std::array<int64_t, 4> list_lanes{};  // MergeLists: lanes of each list in src0, in order (0: none)
  int64_t src_cols = 0;        // GatherMask, ScatterLanes, Concat: row length of src0 (cols is the result's)
  uint8_t index_bytes = 4;     // GatherAlong, ScatterAlong, ScatterRows: width of the indices in src1
  std::array<ScalarOperand, 6> seeds{};  // Random: key0, key1, counter0..3 (their low 32 bits)
  uint8_t rounds = 10;                    // Random: 7 or 10
  int64_t compare_offset = 0;  // GatherCompare: added to each column written
  bool compare_counts = false;  // GatherCompare: write the counts [1, rows] rather than the columns
  AxisIndex along;             // GatherAlong, ScatterAlong: the index tile and the data tile it reaches into
  // RowExpand: the lanes of each row of src1, repeated across the row when more than 1 (the packed
  // 32-byte carrier of row_expand_add).
  int64_t vec_lanes = 1;
  int64_t mask_row_bytes = 0;  // Compare (dst), Select (the mask): bytes per row of the predicate mask
  // ColReduce Sum of an FP16 tile given a scratch tile (TCOLSUM's binary form): rows added pairwise
  // in a tree; without one, in row order. Each addition is rounded to FP16, as the vector unit's.
  bool pairwise = false;
  // Slice/Insert: the window's origin (a constant or a register: a loop variable) in the larger tile,
  // whose rows and cols are `outer_rows`/`outer_cols`; rows/cols are the window's. FillPadExpand:
  // rows/cols are the source's, outer_rows/outer_cols the result's.
  Operand row_offset, col_offset;
  int64_t outer_rows = 0, outer_cols = 0;
  // Slice of a tile of rank 3 or more whose leading dimensions are not all 1 (window_rank > 0): the
  // window's rows lie apart in the source, so its origin is kept per dimension (each a constant or a
  // register), with the source's extents (outer_dims) and the window's (window_dims).
  uint8_t window_rank = 0;
  std::array<Operand, kMaxDims> origin{};
  std::array<int64_t, kMaxDims> outer_dims{}, window_dims{};
  uint64_t pad_bits = 0;       // FillPad: the pad value's bit pattern (elem_bytes wide)
};

// How the executor treats elements: arithmetic types, or bytes to copy.
enum class ElemKind : uint8_t { F32, I32, Raw };

// How an op computes on tiles of a type its kernels do not take (ElemKind says which they take): the
// operands are widened, the op runs there, and each result is narrowed back. FP16 and BF16 widen to
// FP32 and round back to nearest even; 8- and 16-bit integers widen to INT32 (sign- or zero-extended)
// and keep the low bits, which is exactly the narrow type's own wrap-around arithmetic.
enum class Widen : uint8_t { None, Half, BFloat, I8, U8, I16, U16 };

// A tile's place: a byte range of one of the core's on-chip buffers. A view at a place computed in
// the kernel (a tile.slice of a larger tile at a loop's row, sharing its bytes) starts
// `offset_reg`'s value bytes past `byte_offset`; the executor adds it when the instruction runs.
struct TileRef {
  ir::MemorySpace space = ir::MemorySpace::Vec;
  int64_t byte_offset = 0;
  int64_t bytes = 0;
  int32_t offset_reg = -1;  // >= 0: the register holding the view's byte distance from byte_offset
  int64_t row_pitch = 0;    // > 0: a view of a window narrower than its parent, rows this many bytes apart

  // The first byte as the instruction reads or writes it.
  int64_t At(const int64_t* regs) const { return offset_reg < 0 ? byte_offset : byte_offset + regs[offset_reg]; }
};


// The valid region of a 2-D tile, [rows, cols], each a constant or a register read when the
// instruction runs (a load's `valid_shape=`, a ragged tail's `min(...)`).
struct ValidRegion {
  Operand rows, cols;
};

// `dst = a op b` on the register file.
struct ScalarInstr {
  ScalarOp op = ScalarOp::Add;
  uint32_t dst = 0;
  Operand a, b;
};

// LoopBegin/LoopEnd operands (the same on both). `start`, `stop` and `step` are read once, by
// LoopBegin; the loop variable, the remaining trip count and, when the step is not a constant, a
// copy of the step live in registers of their own.
struct LoopInfo {
  Operand start, stop, step;  // on LoopEnd, a computed step reads the copy
  uint32_t var = 0;           // register of the loop variable
  uint32_t trips = 0;         // register holding the iterations left (as uint64)
  int32_t step_copy = -1;     // register holding the step, when it is computed
  uint32_t partner = 0;       // LoopBegin: index of its LoopEnd; LoopEnd: of its LoopBegin
  ir::ForKind kind = ir::ForKind::Sequential;
};

// BranchIfZero/Jump operands: the condition (BranchIfZero) and the instruction index to go to.
struct BranchInfo {
  Operand cond;
  uint32_t target = 0;
};

// One instruction. Load/Store move a rectangular region between a tensor argument and a dense
// row-major tile; the element-wise ops combine src0 and src1 into dst (which may alias a source).
// Before an instruction runs, its scalar code (DecodedKernel::scalar_code[scalar_begin, +count))
// updates the registers it reads: computed offsets, loop bounds, scalar assignments before it.
struct Instr {
  Opcode op = Opcode::Load;
  ElemKind kind = ElemKind::Raw;
  uint8_t elem_bytes = 0;
  uint8_t rank = 0;          // Load/Store: region rank (1..kMaxDims)
  uint8_t rt_dtype = 0;      // Load/Store: pypto_rt_dtype the tensor argument must have
  bool dynamic = false;      // Load/Store: some offset is computed (see offset_regs)
  bool atomic_add = false;   // Store: add the tile to the region (in elem_dtype) instead of copying
  // Store: the tile is an FP32 accumulator and the tensor FP16 or BF16 (elem_dtype): each element is
  // rounded to it on the way out, as the fixpipe does.
  bool narrow_to_half = false;
  ir::DataType elem_dtype = ir::DataType::FP32;  // Load/Store: the tensor's element type
  // Store (pl.mscatter): element i of src0 goes to the flat (row-major) index src1[i] (INT32) of the
  // tensor's view; the region is the whole view.
  bool scatter = false;
  // Load (pl.paged_gather): row i of the tile is row block_table[l / block_size] * block_size +
  // l % block_size of the pool (tensor_slot), columns from col_off, for l = indices[i] and i below
  // the indices' run-time length (at most `rows`; the rows past it are left as they are); `indices`
  // and `table` are the tensor slots of the INT32 index and block tables. The region is the whole pool.
  struct PagedRows {
    bool on = false;
    uint32_t indices = 0, table = 0;
    int64_t block_size = 0, col_off = 0, rows = 0, cols = 0;
  } paged;
  // Load (pl.mgather): whole rows (`rows`) or single elements of the tensor's view, picked by INT32
  // indices read from the tile src0 or, with `indices_in_tensor`, the tensor slot `indices`;
  // `oob` decides what an index past the end reads. The region is the whole view; what the tile's
  // valid region (`partial`) covers of its [out_rows, out_cols] is written.
  struct MemGather {
    bool on = false, rows = false, indices_in_tensor = false;
    GatherOob oob = GatherOob::Undefined;
    uint32_t indices = 0;
    int64_t index_cols = 0;  // element mode: the indices' row length
    int64_t out_rows = 0, out_cols = 0;
  } mgather;
  // Element-wise, broadcast and reduction ops on FP16/BF16 (kind F32) and 8- or 16-bit integer
  // tiles (kind I32).
  Widen widen = Widen::None;
  // Load/Store: only the tile's valid region moves (the last two region dimensions are `valid`);
  // RowReduce/ColReduce: only src0's valid region is reduced; FillPad: the region kept.
  bool partial = false;
  ValidRegion valid;
  uint32_t tensor_slot = 0;  // Load/Store: index into the launch's args[]
  uint32_t scalar_begin = 0;
  uint32_t scalar_count = 0;
  TileRef dst;               // Load: the tile written; element-wise: the result
  TileRef src0;              // Store: the tile read; element-wise: the left operand
  TileRef src1;              // element-wise: the right operand
  TileRef src2;              // Select: the packed predicate mask; Matmul: the bias row added to every row
  TileRef src3;              // MatmulMx: the right operand's scales (src2: the left operand's)
  int64_t num_elements = 0;
  std::array<int64_t, kMaxDims> offsets{};  // Load/Store: region origin in the tensor view
  std::array<int64_t, kMaxDims> shape{};    // Load/Store: region extent (== the tile's shape)
  // Load/Store with `dynamic`: the register holding offsets[d], or -1 where offsets[d] is constant.
  std::array<int32_t, kMaxDims> offset_regs = NoRegisters();
  int32_t scalar_dst = -1;  // ReadScalar/ReadTile: the register written
  ScalarOperand value;      // WriteScalar/WriteTile: the element written (an FP32 one as its bits)
  LoopInfo loop;  // LoopBegin/LoopEnd
  BranchInfo branch;  // BranchIfZero/Jump
  rt::PipeRef pipe;   // TPush/TPop/TFree
  rt::EventRef event;  // EventSet/EventWait (the id: `event_id`)
  Operand event_id;
  CommInfo comm;  // Comm; Load/Store with `remote`: the peer is comm.peer
  bool remote = false;  // Load/Store (pld.tile.remote_load/remote_store): the peer's copy of the window region
  ComputeInfo compute;  // Compute

  static constexpr std::array<int32_t, kMaxDims> NoRegisters() {
    std::array<int32_t, kMaxDims> regs{};
    regs.fill(-1);
    return regs;
  }
};

// Where a register's value comes from, for listings.
struct RegisterInfo {
  std::string name;  // the variable or expression: "i", "i * 128", "n"
  std::string role;  // "loop variable", "iterations left", "step", "scalar parameter", the scalar
                     // variable a computed value was assigned to, or "" for other temporaries
};

// A scalar parameter, read from args[slot] into a register when the kernel starts (an FP32 one as
// its bit pattern: bits = 32, unsigned; an FP16 or BF16 one, whose bits are the slot's low 16,
// widened to FP32 first, as the tile-scalar ops read an FP32 register).
struct ScalarParamInit {
  uint32_t reg = 0;
  uint32_t slot = 0;
  uint8_t bits = 64;      // width of the value in the 64-bit pattern the runtime passes
  bool is_signed = true;  // sign- or zero-extend it
  Widen widen = Widen::None;  // Half or BFloat: a 16-bit float to widen to FP32 bits
};

// Where an instruction came from, for listings and error messages.
struct InstrSource {
  std::string text;      // "t0 = pl.tile.load(a, [0, 0], [16, 16])"
  std::string location;  // Span::str() of the call
};

// Which field of the launch contexts a register starts with (pl.tile.get_block_idx() and kin).
enum class LaunchValue : uint8_t { BlockIdx, BlockNum, SubBlockIdx };
struct LaunchValueInit {
  uint32_t reg = 0;
  LaunchValue value = LaunchValue::BlockIdx;
};

struct KernelParam {
  std::string name;
  uint32_t slot = 0;  // index into args[]: tensors first, then scalars
  bool is_tensor = true;
  ir::DataType dtype = ir::DataType::FP32;
  uint8_t rt_dtype = 0;  // tensors only
  ir::Shape shape;       // tensors only (the kernel's static view of it; FP4: in bytes, two elements each)
  ir::TensorLayout layout = ir::TensorLayout::ND;  // tensors only
};

struct DecodedKernel {
  std::string name;
  int32_t func_id = -1;
  rt::CoreType core_type = rt::CoreType::AIV;
  std::vector<KernelParam> params;
  uint32_t tensor_count = 0;
  uint32_t scalar_count = 0;
  std::vector<Instr> code;
  std::vector<InstrSource> sources;  // parallel to code
  std::vector<ScalarInstr> scalar_code;
  std::vector<std::string> scalar_text;  // parallel to scalar_code: the expression computed
  std::vector<RegisterInfo> registers;   // one per register; registers.size() is the file's size
  std::vector<ScalarParamInit> scalar_params;
  std::vector<LaunchValueInit> launch_values;  // read from args[48]/args[49] when the kernel starts
  std::array<int64_t, 10> high_water{};  // bytes used per MemorySpace (indexed by its value)
  // A hand-written kernel (extern_kernel.h): `code` is empty, and the executor calls this entry with
  // args[] exactly as the runtime laid them out; `external_library` keeps its shared object loaded.
  void (*external_entry)(int64_t* args) = nullptr;
  // Called before each entry when the library defines pypto_sim_bind_core (pypto_sim_core.h).
  void (*external_bind)(const PyptoSimCore* core) = nullptr;
  std::shared_ptr<const void> external_library;
  bool dual_lanes = false;  // an AIV kernel dispatched on both lanes (attr dual_aiv_dispatch)
  // A member of the mixed tasks of the plan (mixed_race.h): how many members a block of its task has
  // (0: none known, or two of its tasks disagree) and the args[] slots some member stores into.
  int mixed_members = 0;
  std::vector<uint32_t> mixed_stores;

  // "kernel 'k' instruction #2 `c = pl.tile.store(...)` at file:3:5"
  std::string Describe(size_t index) const;
};

// Decodes one kernel for `core_type` on `soc`. An error names the kernel, the construct and its
// source location.
pypto::expected<DecodedKernel, std::string> DecodeKernel(const ir::Function& function, int32_t func_id,
                                                         rt::CoreType core_type, const ir::SocSpec& soc);

// A readable listing: parameters, one line per instruction with its resolved operands, and the
// buffer usage.
std::string FormatListing(const DecodedKernel& kernel, const ir::SocSpec& soc);

}  // namespace pypto::sim
