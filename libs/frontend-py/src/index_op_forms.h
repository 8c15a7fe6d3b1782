// The argument forms of the gathers and scatters by index, as upstream spells them, rewritten into
// one call of the op each form is: the calls keep the user's argument nodes, so the op's checks point
// at them. The rewritten spellings are unified (`pl.gather_dim`), so that inside a kernel a whole
// tensor given to them is loaded as a tile first, as upstream's tensor-to-tile conversion does.
#pragma once

#include "ast_node.h"
#include "pypto/ir/diagnostic.h"

namespace pypto::frontend {

// `pl.gather(input, dim, index)` (torch.gather, the index form of the tensor-level gather) is
// `pl.gather_dim(input, index, dim=dim)`.
ir::Result<py::object> GatherAlongDim(py::handle call, const SourceMap& map);

// Whether `node` is the compare form of the gather: `pl.tile.gather_compare(src, kvalue, tmp, ...)`,
// or `pl.gather(src, kvalue=..., cmp_mode=..., out_cols=...)` (also spelled pl.tensor.gather).
bool IsCompareGather(py::handle node);

// The compare form of the gather, whose two results (the matching columns and their count per row)
// are two ops: the tuple `(pl.gather_compare(...), pl.gather_compare_count(...))`, each given every
// argument of the call.
ir::Result<py::object> GatherCompare(py::handle call, const SourceMap& map);

// `pl.scatter(input, dim, index, src)` (Tensor.scatter_) is `pl.scatter_dim(input, index, src, dim=dim)`;
// the mask form `pl.scatter(input, mask_pattern=p, dst=d)` is `pl.scatter_mask(d, input, mask_pattern=p)`.
ir::Result<py::object> ScatterForm(py::handle call, const SourceMap& map);

// `scatter_update(input, dim, index, src)`, `scatter_update(input, index, src, dim=-2)` or
// `scatter_update(input, dim, index=..., src=...)` is `<spelling>(input, index, src, dim=dim)`, where
// `spelling` is `pl.tile.scatter_update` for the tile spelling and `pl.scatter_update` for the others.
// None when the call is written that way already.
ir::Result<py::object> ScatterUpdateForm(py::handle call, const SourceMap& map);

}  // namespace pypto::frontend
