// The kernel decoder's private interface: the Decoder class, which walks one kernel Function once and
// builds its DecodedKernel (sim_kernel.h), and the values it binds IR variables to. It is separate
// from sim_kernel.h because only the decode_*.cpp files, which define the Decoder's members one
// concept each, need it; the executor sees the decoded kernel alone.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "kernels/convert.h"
#include "kernels/elementwise.h"
#include "pypto/ir/stmt.h"
#include "sim_kernel.h"

namespace pypto::sim::decode {

using Error = pypto::unexpected<std::string>;

struct TensorValue {
  uint32_t param = 0;  // index into DecodedKernel::params
};
struct TileValue {
  TileRef ref;
  ir::DataType dtype = ir::DataType::FP32;
  ir::Shape shape;
  int64_t num_elements = 0;
  // The tile as the executor sees it, a row-major matrix: the last dimension is its columns and all
  // the others together its rows (a 1-D tile is one row; [1, 1, M, N] is [M, N]).
  int64_t rows() const { return num_elements / shape.back(); }
  int64_t cols() const { return shape.back(); }
};
// An integer scalar: a constant, or a register (loop variables, computed values, parameters).
struct ScalarValue {
  Operand operand;
};
// A kernel's pl.array: one operand per element. Updates make a new array value (the IR's arrays are
// functional), so an array costs registers only where control flow merges or carries it.
struct ArrayValue {
  std::vector<Operand> elements;
};
using Value = std::variant<TensorValue, TileValue, ScalarValue, ArrayValue>;

// Scalars the simulator computes with: integers of any width, and booleans (comparisons).
bool IsIntScalar(const ir::TypePtr& type);

class Decoder {
 public:
  Decoder(const ir::Function& function, int32_t func_id, rt::CoreType core_type, const ir::SocSpec& soc);

  pypto::expected<DecodedKernel, std::string> Run();

 private:
  struct ElementRead {
    uint32_t reg;
    bool is_float;  // the register holds the bits of an FP32
  };

  // The element types arithmetic runs on: FP32 and INT32 as they are, FP16, BF16 and the 8- and
  // 16-bit integers widened (see Widen). nullopt for the rest (UINT32, 64-bit types).
  struct ComputeType {
    ElemKind kind;
    Widen widen;
  };

  // The element types an op computes on: floating-point only; every type with arithmetic (see
  // ComputeTypeOf); or those and UINT32, for the ops whose two's-complement result bits do not depend
  // on signedness (add, sub, mul, neg, sums, broadcasts), which run on a UINT32 tile as on INT32.
  enum class Domain : uint8_t { Float, Arith, Wrapping };

  struct ComputeSpec {
    ComputeKind kind;
    uint8_t op = 0;
  };

  // The forms of a Matmul (ComputeSpec::op): C = A @ B; C += A @ B on an accumulator (its first
  // argument); C = A @ B + bias (its third).
  enum MatmulForm : uint8_t { kMatmulPlain, kMatmulAcc, kMatmulBias };

  const std::string& Name() const { return function_.name(); }

  // The kernel as a whole: its function type and parameters, and each assignment or call sent to its op's decoder
  // (decode_kernel.cpp).
  pypto::expected<void, std::string> CheckFunctionType();
  pypto::expected<void, std::string> DecodeParams();
  static const ir::Span& SpanOf(const ir::Expr& expr, const ir::Stmt& stmt);
  pypto::expected<void, std::string> DecodeValue(const ir::VarPtr& target, const ir::ExprPtr& value,
                                                 const ir::Stmt& stmt);
  pypto::expected<void, std::string> CheckViewOperands(const std::string& op, const ir::Call& call);
  pypto::expected<void, std::string> CheckStridedViews(const std::string& op, const ir::Call& call);

  // Statements: sequences, for and while loops, ifs, yields and the values they carry (decode_control_flow.cpp).
  pypto::expected<void, std::string> DecodeStmt(const ir::StmtPtr& stmt);
  pypto::expected<void, std::string> DecodeFor(const ir::ForStmt& loop);
  pypto::expected<void, std::string> DecodeLoopBody(const ir::Stmt& loop, const ir::StmtPtr& body,
                                                    size_t computed_scope, size_t scalar_scope);
  pypto::expected<void, std::string> DecodeWhile(const ir::WhileStmt& loop);
  pypto::expected<void, std::string> BindCarried(const ir::LoopView& loop);
  pypto::expected<TileValue, std::string> SharedTile(const ir::Var& var, const ir::ExprPtr& other);
  pypto::expected<TileValue, std::string> TileOf(const ir::Var& var);
  pypto::expected<void, std::string> DecodeYield(const ir::YieldStmt& yield);
  pypto::expected<void, std::string> DecodeIf(const ir::IfStmt& branch);
  pypto::expected<void, std::string> DecodeBranch(const ir::IfStmt& branch, const ir::StmtPtr& body);

  // Scalar expressions: integer and FP32 operands, casts, launch values and kernel arrays (decode_scalars.cpp).
  pypto::expected<void, std::string> DecodeArrayOp(const std::string& op, const ir::VarPtr& target,
                                                   const ir::Call& call);
  pypto::expected<void, std::string> IndexedArrayOp(const std::string& op, const ir::VarPtr& target,
                                                    const ir::Call& call, const ArrayValue& array, Operand index);
  pypto::expected<ArrayValue, std::string> ArrayOf(const ir::ExprPtr& expr);
  ArrayValue ArrayRegisters(const ir::Var& var, const char* role);
  pypto::expected<void, std::string> CopyArray(const ir::ExprPtr& from, const ArrayValue& to);
  pypto::expected<Operand, std::string> Scalar(const ir::ExprPtr& expr);
  static bool IsFp32Scalar(const ir::ExprPtr& expr);
  pypto::expected<Operand, std::string> Fp32Operand(const ir::ExprPtr& expr);
  pypto::expected<Operand, std::string> Fp32Comparison(const ir::BinaryExpr& binary, const std::string& text);
  static std::optional<LaunchValue> LaunchValueOf(const std::string& op);
  pypto::expected<void, std::string> DecodeLaunchValue(LaunchValue value, const ir::VarPtr& target);
  pypto::expected<void, std::string> DecodeScalarCast(const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<void, std::string> DecodeFloatCast(const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<Operand, std::string> CastOperand(const ir::Call& call, const std::string& name);

  // Synchronization and communication: prefetch, comm.*, syncall, cross-core events and pipes (decode_sync.cpp).
  pypto::expected<void, std::string> DecodePrefetch(std::string_view op, const ir::VarPtr& target);
  pypto::expected<void, std::string> DecodeComm(const std::string& op, const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<void, std::string> DecodeRemoteTransfer(bool load, const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<void, std::string> DecodeSyncAll();
  pypto::expected<void, std::string> DecodeEvent(bool set, const ir::Call& call);
  static bool RunsInProgramOrderHere(std::string_view op);
  pypto::expected<void, std::string> DecodeInitPipe(const ir::Call& call);
  pypto::expected<void, std::string> DecodePipeOp(const std::string& op, const ir::VarPtr& target,
                                                  const ir::Call& call);

  // Operands and emission: registers, errors, tensors, tiles, regions and valid regions (decode_operands.cpp).
  uint32_t NewRegister(std::string name, std::string role);
  Error Fail(const std::string& what) const;
  pypto::expected<std::optional<ValidRegion>, std::string> ValidRegionOf(const ir::TypePtr& type);
  pypto::expected<void, std::string> NarrowTo(const ir::TypePtr& type, Instr& instr);
  size_t Emit(Instr instr);
  pypto::expected<const KernelParam*, std::string> Tensor(const ir::ExprPtr& expr, const char* role) const;
  pypto::expected<TileValue, std::string> Tile(const ir::ExprPtr& expr, const char* role) const;
  pypto::expected<ir::Shape, std::string> Ints(const ir::ExprPtr& expr, const char* role) const;
  pypto::expected<std::vector<Operand>, std::string> Offsets(const ir::ExprPtr& expr, const char* role);
  pypto::expected<TileValue, std::string> ResultTile(const ir::VarPtr& target, const char* op) const;
  pypto::expected<void, std::string> CheckRegion(const KernelParam& tensor, const std::vector<Operand>& offsets,
                                                 const ir::ExprPtr& offsets_expr, const ir::Shape& shape,
                                                 Instr& instr, bool valid_only = false) const;
  static ElemKind KindOf(ir::DataType dtype);
  static bool Overlap(const TileRef& a, const TileRef& b);
  pypto::expected<void, std::string> SameSize(const TileValue& src, const TileValue& out) const;
  pypto::expected<ScalarOperand, std::string> ScalarArg(const ir::ExprPtr& expr);

  // Moves between tensors and tiles: loads, gathers from memory, stores and scatters (decode_load_store.cpp).
  pypto::expected<void, std::string> DecodeLoad(const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<void, std::string> DecodePagedGather(const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<void, std::string> DecodeMemGather(const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<void, std::string> DecodeStore(const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<void, std::string> DecodeScatterStore(const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<ir::Shape, std::string> StoredWindow(const ir::Call& call, const ir::Shape& tile_shape,
                                                       size_t rank);
  pypto::expected<void, std::string> NarrowToStoredPart(const ir::Call& call, const ir::Shape& tile_shape,
                                                        Instr& instr);

  // Single elements: pl.read and pl.write of tensors and tiles (decode_element_access.cpp).
  pypto::expected<void, std::string> DecodeRead(const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<ElementRead, std::string> EmitRead(const ir::Call& call, const std::string& name);
  std::optional<pypto::expected<Operand, std::string>> NestedReadOperand(const ir::ExprPtr& expr);
  void BindRead(const ir::VarPtr& target, uint32_t reg, bool is_float);
  uint32_t NewReadRegister(std::string name, bool is_float);
  pypto::expected<void, std::string> CheckElementDtype(ir::DataType dtype, const char* op, const char* what) const;
  static ElemKind ElementKind(ir::DataType dtype);
  pypto::expected<ScalarOperand, std::string> WrittenValue(const ir::ExprPtr& value, ir::DataType dtype);
  pypto::expected<void, std::string> DecodeTensorWrite(const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<void, std::string> DecodeTileElement(bool write, const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<ElementRead, std::string> EmitTileRead(const ir::Call& call, const std::string& name);
  pypto::expected<void, std::string> TileElement(const TileValue& tile_value, const ir::ExprPtr& indices_expr,
                                                 const char* op, Instr& instr);

  // Compute instructions: the op table, element types computed on, and each kind's operands (decode_compute.cpp).
  static std::optional<ComputeType> ComputeTypeOf(ir::DataType dtype);
  pypto::expected<void, std::string> SetComputeType(const std::string& op, ir::DataType dtype, Domain domain,
                                                    Instr& instr) const;
  // Whether an integer BinaryOp's two's-complement result is the same for signed and unsigned operands.
  static bool Wraps(BinaryOp op) { return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul; }
  static const ComputeSpec* FindComputeSpec(const std::string& name);
  std::optional<pypto::expected<void, std::string>> DecodeCompute(const std::string& op, const ir::VarPtr& target,
                                                                  const ir::Call& call);
  pypto::expected<void, std::string> RequireArithmetic(const std::string& op, const TileValue& tile,
                                                       bool float_only) const;
  static Domain ElementwiseDomain(const ComputeInfo& info);
  static Domain ExpandDomain(const ComputeInfo& info);
  pypto::expected<void, std::string> DecodeComputeOperands(const std::string& op, const TileValue& out,
                                                           const ir::Call& call, Instr& instr);

  // Element-wise ops: arithmetic, comparisons, selects, fills, generators and casts (decode_elementwise.cpp).
  pypto::expected<void, std::string> DecodeBinary(Opcode op, const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<void, std::string> DecodeThreeOperand(const std::string& op, const ir::VarPtr& target,
                                                        const ir::Call& call);
  pypto::expected<void, std::string> DecodeFillPad(const ir::Call& call, Instr& instr);
  pypto::expected<void, std::string> DecodeFillPadExpand(const TileValue& out, const ir::Call& call, Instr& instr);
  pypto::expected<void, std::string> DecodeCompare(const std::string& op, const TileValue& out, const ir::Call& call,
                                                   Instr& instr);
  pypto::expected<void, std::string> DecodeFillBits(const std::string& op, const TileValue& out,
                                                    const ir::ExprPtr& value, Instr& instr) const;
  pypto::expected<void, std::string> DecodeIntegerBinary(const std::string& op, const TileValue& out,
                                                         const ir::Call& call, Instr& instr);
  pypto::expected<void, std::string> DecodeSelectScalar(const TileValue& out, const ir::Call& call, Instr& instr);
  pypto::expected<void, std::string> DecodePartialBinary(const std::string& op, const TileValue& out,
                                                         const ir::Call& call, Instr& instr);
  pypto::expected<void, std::string> DecodeTriangle(const TileValue& out, const ir::Call& call, Instr& instr);
  pypto::expected<void, std::string> DecodeCast(const std::string& op, const TileValue& out, const ir::Call& call,
                                                Instr& instr);
  pypto::expected<void, std::string> DecodeRandom(const TileValue& out, const ir::Call& call, Instr& instr);
  static std::optional<ElemType> ToElemType(ir::DataType dtype);

  // Matrix products on the cube unit (decode_matmul.cpp).
  static bool MatmulSupported(ir::DataType lhs, ir::DataType rhs, ir::DataType acc);
  pypto::expected<void, std::string> DecodeMatmulBatch(const std::string& op, const TileValue& lhs,
                                                       const TileValue& rhs, const TileValue& out, ComputeInfo& info);
  pypto::expected<Operand, std::string> ValidInner(const ir::ExprPtr& lhs, bool a_trans, int64_t inner);
  pypto::expected<void, std::string> DecodeMatmulMx(const std::string& op, const TileValue& out,
                                                   const ir::Call& call, Instr& instr);  // decode_matmul_mx.cpp
  pypto::expected<void, std::string> DecodeMatmul(const std::string& op, const TileValue& out, const ir::Call& call,
                                                  Instr& instr);

  // Ops that rearrange tiles: sorts and merges, windows, concat, transposes, gathers and scatters
  // (decode_data_moves.cpp).
  pypto::expected<void, std::string> DecodeMergeLists(const TileValue& out, const ir::Call& call, Instr& instr);
  static bool IsSliceView(const ir::VarPtr& target, const ir::Call& call);
  pypto::expected<void, std::string> DecodeSliceView(const ir::VarPtr& target, const ir::Call& call);
  void AdoptAliasedView(const ir::VarPtr& target, const ir::Call& call, TileValue& out) const;
  pypto::expected<void, std::string> DecodeWindow(const std::string& op, const TileValue& out, const ir::Call& call,
                                                  Instr& instr);
  static bool IsMatrixShape(const ir::Shape& shape);
  pypto::expected<void, std::string> DecodeNdSlice(const TileValue& source, const TileValue& out,
                                                   const std::vector<Operand>& offsets, Instr& instr);
  pypto::expected<void, std::string> DecodeTopKFamily(const std::string& op, const TileValue& out,
                                                      const ir::Call& call, Instr& instr);
  pypto::expected<void, std::string> DecodeIndexMove(const std::string& op, const TileValue& out,
                                                     const ir::Call& call, Instr& instr);
  pypto::expected<void, std::string> DecodeGatherBlocks(const TileValue& out, const ir::Call& call, Instr& instr);
  pypto::expected<void, std::string> DecodeGatherCompare(const std::string& op, const ir::Call& call, Instr& instr);
  pypto::expected<void, std::string> CopyInto(const TileValue& input, const TileValue& out, const Instr& instr);

  const ir::Function& function_;
  const ir::SocSpec& soc_;
  DecodedKernel kernel_;
  std::unordered_map<const ir::Var*, Value> values_;
  std::unordered_map<const ir::Var*, uint32_t> float_regs_;  // FP32 scalar (parameter or pl.read) -> its register
  InstrSource source_;
  const ir::Span* span_ = nullptr;
  bool done_ = false;
  int loop_depth_ = 0;
  std::map<int64_t, int64_t> pipe_slots_;  // slots of each pipe id, from its initialize_pipe
  // The ring depth of a pipe no initialize_pipe sized (the compiler's default slot count).
  static constexpr int64_t kDefaultPipeSlots = 2;
  // Scalar code waiting for the next instruction, which runs it first.
  std::vector<ScalarInstr> pending_;
  std::vector<std::string> pending_text_;
  // Expressions computed so far in the current loop scope, and the registers holding them.
  struct Computed {
    ScalarOp op;
    Operand a, b;
    uint32_t reg;
  };
  std::vector<Computed> computed_;
  // Scalar variables defined inside the loops being decoded, innermost last.
  std::vector<const ir::Var*> loop_scalars_;
  // The loops and ifs around the statement being decoded, innermost last (whose results a yield sets).
  std::vector<const ir::Stmt*> flow_;
};

}  // namespace pypto::sim::decode
