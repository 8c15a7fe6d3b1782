// The table of tile ops backend-ptoas lowers (kernel_plan.h): each op's pto instruction and the form
// of its operands. Kept apart from the checks because it is data, and the README's op table follows it.
#include <string_view>
#include <vector>

#include "kernel_plan.h"

namespace pypto::backend_ptoas {

const std::vector<OpLowering>& Lowerings() {
  static const std::vector<OpLowering> table = {
      {"tile.load", "pto.tload", OpForm::Load},
      {"tile.store", "pto.tstore", OpForm::Store},
      {"tile.create", "pto.alloc_tile", OpForm::Alloc},
      {"tile.full", "pto.texpands", OpForm::Fill, true},
      {"tile.expands", "pto.texpands", OpForm::Fill, true},
      {"tile.move", "pto.tmov", OpForm::Move},
      {"tile.reshape", "pto.alloc_tile", OpForm::Reshape},
      {"tile.reinterpret_view", "pto.alloc_tile", OpForm::Reshape},
      {"tile.transpose_view", "pto.alloc_tile", OpForm::TransposeView},
      {"tile.add", "pto.tadd", OpForm::Tiles, true},
      {"tile.sub", "pto.tsub", OpForm::Tiles, true},
      {"tile.mul", "pto.tmul", OpForm::Tiles, true},
      {"tile.div", "pto.tdiv", OpForm::Tiles, true},
      {"tile.maximum", "pto.tmax", OpForm::Tiles, true},
      {"tile.minimum", "pto.tmin", OpForm::Tiles, true},
      {"tile.fmod", "pto.tfmod", OpForm::Tiles, true},
      {"tile.adds", "pto.tadds", OpForm::TileScalar, true},
      {"tile.subs", "pto.tsubs", OpForm::TileScalar, true},
      {"tile.muls", "pto.tmuls", OpForm::TileScalar, true},
      {"tile.divs", "pto.tdivs", OpForm::TileScalar, true},
      {"tile.maximums", "pto.tmaxs", OpForm::TileScalar, true},
      {"tile.minimums", "pto.tmins", OpForm::TileScalar, true},
      {"tile.fmods", "pto.tfmods", OpForm::TileScalar, true},
      {"tile.addc", "pto.taddc", OpForm::Tiles, true},
      {"tile.subc", "pto.tsubc", OpForm::Tiles, true},
      {"tile.addsc", "pto.taddsc", OpForm::TileScalar, true},
      {"tile.subsc", "pto.tsubsc", OpForm::TileScalar, true},
      {"tile.cmp", "pto.tcmp", OpForm::Compare, true},
      {"tile.cmps", "pto.tcmps", OpForm::Compare, true},
      {"tile.sel", "pto.tsel", OpForm::Tiles, true},
      {"tile.sels", "pto.tsels", OpForm::SelectScalar, true},
      {"tile.prelu", "pto.tprelu", OpForm::Tiles, true},
      {"tile.part_add", "pto.tpartadd", OpForm::Tiles, true},
      {"tile.part_mul", "pto.tpartmul", OpForm::Tiles, true},
      {"tile.part_max", "pto.tpartmax", OpForm::Tiles, true},
      {"tile.part_min", "pto.tpartmin", OpForm::Tiles, true},
      {"tile.exp", "pto.texp", OpForm::Tiles, true},
      {"tile.log", "pto.tlog", OpForm::Tiles, true},
      {"tile.sqrt", "pto.tsqrt", OpForm::Tiles, true},
      {"tile.rsqrt", "pto.trsqrt", OpForm::Tiles, true},
      {"tile.recip", "pto.trecip", OpForm::Tiles, true},
      {"tile.relu", "pto.trelu", OpForm::Tiles, true},
      {"tile.abs", "pto.tabs", OpForm::Tiles, true},
      {"tile.neg", "pto.tneg", OpForm::Tiles, true},
      {"tile.lrelu", "pto.tlrelu", OpForm::TileF32, true},
      {"tile.not", "pto.tnot", OpForm::Tiles, true},
      {"tile.and", "pto.tand", OpForm::Tiles, true},
      {"tile.or", "pto.tor", OpForm::Tiles, true},
      {"tile.xor", "pto.txor", OpForm::Tiles, true},
      {"tile.shl", "pto.tshl", OpForm::Tiles, true},
      {"tile.shr", "pto.tshr", OpForm::Tiles, true},
      {"tile.rem", "pto.trem", OpForm::Tiles, true},
      {"tile.ands", "pto.tands", OpForm::TileI32},
      {"tile.ors", "pto.tors", OpForm::TileI32},
      {"tile.xors", "pto.txors", OpForm::TileI32},
      {"tile.shls", "pto.tshls", OpForm::TileI32},
      {"tile.shrs", "pto.tshrs", OpForm::TileI32},
      {"tile.rems", "pto.trems", OpForm::TileScalar},
      {"tile.cast", "pto.tcvt", OpForm::Cast, true},
      {"tile.row_sum", "pto.trowsum", OpForm::Tiles},
      {"tile.row_max", "pto.trowmax", OpForm::Tiles},
      {"tile.row_min", "pto.trowmin", OpForm::Tiles},
      {"tile.row_prod", "pto.trowprod", OpForm::Tiles},
      {"tile.col_sum", "pto.tcolsum", OpForm::ColSum},
      {"tile.col_max", "pto.tcolmax", OpForm::Tiles},
      {"tile.col_min", "pto.tcolmin", OpForm::Tiles},
      {"tile.col_prod", "pto.tcolprod", OpForm::Tiles},
      {"tile.row_argmax", "pto.trowargmax", OpForm::Tiles},
      {"tile.row_argmin", "pto.trowargmin", OpForm::Tiles},
      {"tile.col_argmax", "pto.tcolargmax", OpForm::Tiles},
      {"tile.col_argmin", "pto.tcolargmin", OpForm::Tiles},
      {"tile.row_expand", "pto.trowexpand", OpForm::Broadcast},
      {"tile.col_expand", "pto.tcolexpand", OpForm::Broadcast},
      {"tile.row_expand_add", "pto.trowexpandadd", OpForm::Tiles},
      {"tile.row_expand_sub", "pto.trowexpandsub", OpForm::Tiles},
      {"tile.row_expand_mul", "pto.trowexpandmul", OpForm::Tiles},
      {"tile.row_expand_div", "pto.trowexpanddiv", OpForm::Tiles},
      {"tile.row_expand_max", "pto.trowexpandmax", OpForm::Tiles},
      {"tile.row_expand_min", "pto.trowexpandmin", OpForm::Tiles},
      {"tile.row_expand_expdif", "pto.trowexpandexpdif", OpForm::Tiles},
      {"tile.col_expand_add", "pto.tcolexpandadd", OpForm::Tiles},
      {"tile.col_expand_sub", "pto.tcolexpandsub", OpForm::Tiles},
      {"tile.col_expand_mul", "pto.tcolexpandmul", OpForm::Tiles},
      {"tile.col_expand_div", "pto.tcolexpanddiv", OpForm::Tiles},
      {"tile.col_expand_max", "pto.tcolexpandmax", OpForm::Tiles},
      {"tile.col_expand_min", "pto.tcolexpandmin", OpForm::Tiles},
      {"tile.col_expand_expdif", "pto.tcolexpandexpdif", OpForm::Tiles},
      {"tile.matmul", "pto.tmatmul", OpForm::Tiles},
      {"tile.matmul_acc", "pto.tmatmul.acc", OpForm::MatmulAcc},
      {"tile.matmul_bias", "pto.tmatmul.bias", OpForm::Tiles},
      {"tile.gemv", "pto.tgemv", OpForm::Tiles},
      {"tile.gemv_acc", "pto.tgemv.acc", OpForm::MatmulAcc},
      {"tile.gemv_bias", "pto.tgemv.bias", OpForm::Tiles},
      {"tile.ci", "pto.tci", OpForm::Arange},
      {"tile.tri", "pto.ttri", OpForm::Triangle},
      {"tile.slice", "pto.textract", OpForm::Window},
      {"tile.extract", "pto.textract", OpForm::Extract},
      {"tile.assemble", "pto.tinsert", OpForm::Insert},
      {"tile.concat", "pto.tconcat", OpForm::Tiles},
      {"tile.transpose", "pto.ttrans", OpForm::Transpose},
      {"tile.sort32", "pto.tsort32", OpForm::Tiles},
      {"tile.mrgsort_format1", "pto.tmrgsort", OpForm::MergeSort},
      {"tile.mrgsort_format2", "pto.tmrgsort", OpForm::MergeLists},
      {"tile.gather_mask", "pto.tgather", OpForm::GatherMask},
      {"tile.scatter_mask", "pto.tscatter", OpForm::ScatterMask},
      {"tile.scatter", "pto.tscatter", OpForm::IndexScatter},
      {"tile.scatter_dim", "pto.tscatter", OpForm::IndexScatter},
      {"tile.scatter_update", "pto.tscatter", OpForm::IndexScatter},
      {"tile.gatherb", "pto.tgatherb", OpForm::Tiles},
      {"tile.gather", "pto.tgather", OpForm::Gather},
      {"tile.gather_dim", "pto.tgather", OpForm::GatherDim},
      {"tile.fillpad", "pto.tfillpad", OpForm::FillPad},
      {"tile.fillpad_inplace", "pto.tfillpad", OpForm::FillPad},
      {"tile.fillpad_expand", "pto.tfillpad_expand", OpForm::FillPad},
      {"tile.set_validshape", "pto.alloc_tile", OpForm::ValidShape},
      {"tile.mgather", "pto.mgather", OpForm::MemGather},
      {"tile.mscatter", "pto.mscatter", OpForm::MemScatter},
      {"tile.random", "pto.trandom", OpForm::Random, true},
      {"tile.sin", "expanded", OpForm::SinCos},
      {"tile.cos", "expanded", OpForm::SinCos},
  };
  return table;
}

const OpLowering* FindLowering(std::string_view op_name) {
  for (const auto& lowering : Lowerings()) {
    if (lowering.op == op_name) return &lowering;
  }
  return nullptr;
}

ir::DataType ScalarOperandType(const OpLowering& lowering, const ir::Expr& tile) {
  if (lowering.form == OpForm::TileI32) return ir::DataType::INT32;
  if (lowering.form == OpForm::TileF32) return ir::DataType::FP32;
  return tile.type()->As<ir::TileType>()->dtype();
}

}  // namespace pypto::backend_ptoas
