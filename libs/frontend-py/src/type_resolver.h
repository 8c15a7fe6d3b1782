// Parameter annotations -> IR types and directions.
#pragma once

#include <functional>
#include <set>

#include "ast_node.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/function.h"

namespace pypto::frontend {

using Constants = std::map<std::string, Constant>;

struct ResolvedParam {
  ir::TypePtr type;
  ir::ParamDirection direction = ir::ParamDirection::In;
};

// The extent each `pl.dynamic` dimension took from the tensor passed for it, and the parameter that
// bound it first (for the message when another parameter disagrees).
struct DynamicBinding {
  int64_t extent = 0;
  std::string param;
  // Under DynamicPolicy::PerParameter, the first disagreement ("16 for parameter 'c'"); the name then
  // has no single extent.
  std::string conflict;
  // Taken over from the caller of an inline function: the inline's own parameters may bind the name
  // to another extent (each function's annotations are their own scope, as upstream parses them).
  bool inherited = false;
  // A dimension passed unbound (extent ir::kDynamicExtent): the axis of `param` it labels, and the
  // INDEX variable the entry defines as that axis's extent when the program runs.
  int64_t axis = 0;
  ir::VarPtr var;
  // Every (parameter, axis) the dimension labels, passed unbound: `y.shape[0]` reads `var` too.
  std::vector<std::pair<std::string, int64_t>> axes;
};
using DynamicBindings = std::map<std::string, DynamicBinding>;

// What parameters that share a `pl.dynamic` dimension must do. A `@pl.jit` entry's tensors must agree
// on it; in a `@pl.program` each parameter's dimension takes its own tensor's extent (as upstream's
// runtime reads each tensor's shape), and the name has a value only where they agree.
enum class DynamicPolicy { Agree, PerParameter };

// Where a tensor parameter's static extents come from when a tensor is passed for it. A `@pl.jit`
// function is specialised on the tensors it is called with: upstream's JIT reads every extent off the
// tensor (jit/decorator.py, _extract_tensor_meta) and the annotation's integers stand in only when
// compile() gets no tensors, so an entry annotated [16, 40, 128] and called with a [1, 40, 128] tensor
// is a program over [1, 40, 128] (pypto-lib's paged_attention_cce.py at its default batch 1). The rank
// and the dtype must still agree: a body written for another rank or dtype would fail later, far
// from the cause. A `@pl.program` method, an extern's declaration and an inline function's parameter
// are fixed signatures, and a tensor that contradicts one is an error at the annotation.
enum class StaticExtents { Checked, FromTensor };

// `pl.Out[T]` / `pl.InOut[T]`: T, with the direction it declares in `direction` when given; any other
// annotation is itself, an In.
py::handle WithoutDirection(py::handle annotation, ir::ParamDirection* direction = nullptr);

// `pl.Tensor` or `pl.Tensor[...]`, under pl.Out / pl.InOut or not.
bool IsTensorAnnotation(py::handle annotation);

// The names of the `pl.dynamic` dimensions an annotation mentions (the constants that are DynamicDims).
std::set<std::string> DynamicDimsIn(py::handle annotation, const Constants* constants);

// For each axis of a `pl.Tensor[[...], dtype]` annotation (under pl.Out / pl.InOut or not), the name of
// the `pl.dynamic` dimension written there bare (`M`, not `M * 2`), or "" (a number, an expression);
// empty for any other annotation.
std::vector<std::string> BareDynamicNames(py::handle annotation, const SourceMap& map, const Constants* constants);

// `constants` with each dimension of `bindings` that has a single extent read as that extent.
Constants BindConstants(const Constants& constants, const DynamicBindings& bindings);

// Accepts `pl.Tensor`, `pl.Tensor[[d0, d1], pl.DTYPE]` (either wrapped in `pl.Out[...]` or
// `pl.InOut[...]`) and `pl.Scalar[pl.DTYPE]`. A bare `pl.Tensor` takes its shape and dtype from `spec`.
// Shapes may name integer `constants`, and `pl.dynamic` dimensions, which take the extent of `spec`
// and are recorded in (and checked against) `bindings`.
ir::Result<ResolvedParam> ResolveParam(py::handle annotation, const std::string& name, const TensorSpec* spec,
                                       const SourceMap& map, const Constants* constants = nullptr,
                                       DynamicBindings* bindings = nullptr,
                                       DynamicPolicy policy = DynamicPolicy::Agree,
                                       StaticExtents extents = StaticExtents::Checked);

// `pl.FP32`, or the name of a dtype constant (`dt` where `dt = pl.FP32`).
std::optional<ir::DataType> DtypeOf(py::handle node, const Constants* constants = nullptr);
ir::Result<ir::DataType> ResolveDtype(py::handle node, const SourceMap& map, const Constants* constants = nullptr);

// Checks a variable annotation (`x: pl.Tile[[64, 1], pl.FP32] = ...`) against the type of the value
// assigned: shapes and dtypes must agree (and the memory space, when the annotation names one).
ir::Result<bool> CheckDeclaredType(py::handle annotation, const std::string& name, const ir::TypePtr& actual,
                                   const SourceMap& map, const Constants* constants = nullptr);

// The type an annotation spells, in full (the form the printer writes): `pl.Tensor[[d0, d1], pl.DTYPE]`,
// `pl.Tile[[d0, d1], pl.DTYPE(, pl.MemRef(offset, size))(, pl.Mem.SPACE)]` (Vec when no space is named),
// `pl.Scalar[pl.DTYPE]` (or the bare dtype), `tuple[T, ...]` / `pl.Tuple[T, ...]`, and `None` (no value).
// A tile's `pl.TileView(valid_shape=[r, c])` names values of the function (a scalar `vlen`), which
// `exprs` parses; without it only integer literals are accepted there.
using ExprResolver = std::function<ir::Result<ir::ExprPtr>(py::handle)>;
ir::Result<ir::TypePtr> ResolveType(py::handle annotation, const SourceMap& map, const Constants* constants = nullptr,
                                    const ExprResolver* exprs = nullptr);

// A `@pl.program` method's parameter: ResolveType, optionally wrapped in `pl.Out[...]` / `pl.InOut[...]`.
ir::Result<ResolvedParam> ResolveDeclaredParam(py::handle annotation, const std::string& name, const SourceMap& map,
                                               const Constants* constants = nullptr);

// Whether a value of type `actual` may be bound to a name declared `declared`: equal types, except that a
// tile's memref is not compared: the declaration supplies it (ops deduce tiles without one, or with
// their operand's).
bool Assignable(const ir::TypePtr& declared, const ir::TypePtr& actual);

// `t: pl.Tile[[16, 16], pl.FP32] = pl.matmul(a, b)`: an annotation naming no memory space leaves the
// tile where its value is (an Acc product, a Mat load); true when that is all they differ in.
bool TileTakesValueSpace(py::handle annotation, const ir::TypePtr& declared, const ir::TypePtr& actual);

// Whether `actual` is the tile a kernel computes for a value declared a tensor of its shape and
// dtype: inside a kernel, a unified op on whole tensors (`r: pl.Tensor[[32, 1], pl.INT32] =
// pl.row_argmax(a)`) loads them and yields a tile, as upstream's tensor-to-tile conversion does.
bool TileStandsForTensor(const ir::TypePtr& declared, const ir::TypePtr& actual);

// Whether the declared tile is the 2-D form of the N-d tile `actual` whose leading dimensions merge
// into its rows, as FlattenTileNdTo2D types a load of an N-d window (`t: pl.Tile[[32, 64], ...] =
// pl.tile.load(x, [0, 0, 0], [2, 16, 64])`); same dtype and buffer.
bool TileRowMergedFrom(const ir::TypePtr& declared, const ir::TypePtr& actual);

}  // namespace pypto::frontend
