// A lowered kernel decoded into a compact instruction list. The decoder walks a kernel Function once
// and resolves everything the executor needs (on-chip byte offsets, argument slots, static regions,
// element types), so that running a kernel never looks at the IR again.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pypto-c/runtime.h"
#include "pypto/ir/function.h"
#include "pypto/ir/soc.h"
#include "pypto/runtime/runtime.h"
#include "pypto/support/expected.h"

namespace pypto::sim {

inline constexpr int kMaxDims = PYPTO_MAX_TENSOR_DIMS;

enum class Opcode : uint8_t { Load, Store, Add, Sub, Mul, Div };
const char* OpcodeName(Opcode op);

// How the executor treats elements: arithmetic types, or bytes to copy.
enum class ElemKind : uint8_t { F32, I32, Raw };

// A tile's place: a byte range of one of the core's on-chip buffers.
struct TileRef {
  ir::MemorySpace space = ir::MemorySpace::Vec;
  int64_t byte_offset = 0;
  int64_t bytes = 0;
};

// One instruction. Load/Store move a rectangular region between a tensor argument and a dense
// row-major tile; the element-wise ops combine src0 and src1 into dst (which may alias a source).
struct Instr {
  Opcode op = Opcode::Load;
  ElemKind kind = ElemKind::Raw;
  uint8_t elem_bytes = 0;
  uint8_t rank = 0;          // Load/Store: region rank (1..kMaxDims)
  uint8_t rt_dtype = 0;      // Load/Store: pypto_rt_dtype the tensor argument must have
  uint32_t tensor_slot = 0;  // Load/Store: index into the launch's args[]
  TileRef dst;               // Load: the tile written; element-wise: the result
  TileRef src0;              // Store: the tile read; element-wise: the left operand
  TileRef src1;              // element-wise: the right operand
  int64_t num_elements = 0;
  std::array<int64_t, kMaxDims> offsets{};  // Load/Store: region origin in the tensor view
  std::array<int64_t, kMaxDims> shape{};    // Load/Store: region extent (== the tile's shape)
};

// Where an instruction came from, for listings and error messages.
struct InstrSource {
  std::string text;      // "t0 = pl.tile.load(a, [0, 0], [16, 16])"
  std::string location;  // Span::str() of the call
};

struct KernelParam {
  std::string name;
  uint32_t slot = 0;  // index into args[]: tensors first, then scalars
  bool is_tensor = true;
  ir::DataType dtype = ir::DataType::FP32;
  uint8_t rt_dtype = 0;  // tensors only
  ir::Shape shape;       // tensors only (the kernel's static view of it)
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
  std::array<int64_t, 8> high_water{};  // bytes used per MemorySpace (indexed by its value)

  // "kernel 'k' instruction #2 `c = pl.tile.store(...)` at file:3:5"
  std::string Describe(size_t index) const;
};

// The runtime's dtype code for an IR dtype, or -1 when the runtime has none.
int RuntimeDtype(ir::DataType dtype);

// Decodes one kernel for `core_type` on `soc`. An error names the kernel, the construct and its
// source location.
pypto::expected<DecodedKernel, std::string> DecodeKernel(const ir::Function& function, int32_t func_id,
                                                         rt::CoreType core_type, const ir::SocSpec& soc);

// A readable listing: parameters, one line per instruction with its resolved operands, and the
// buffer usage.
std::string FormatListing(const DecodedKernel& kernel, const ir::SocSpec& soc);

}  // namespace pypto::sim
