// The tables transcribe pto-isa's list of supported `tcvt` conversions for each architecture.
#include "pypto/ir/native_casts.h"

#include <algorithm>
#include <map>

namespace pypto::ir {
namespace {

using CastTable = std::map<DataType, std::vector<DataType>>;
using enum DataType;

const CastTable& Ascend910BCasts() {
  static const CastTable table = {
      {BF16, {FP32, INT32}},
      {FP16, {FP32, INT16, INT32, INT4, INT8, UINT8}},
      {FP32, {BF16, FP16, INT16, INT32, INT64}},
      {INT4, {FP16}},
      {INT8, {FP16}},
      {INT16, {FP16, FP32}},
      {INT32, {FP16, FP32, INT16, INT64}},
      {INT64, {FP32, INT32}},
      {UINT8, {FP16}},
  };
  return table;
}

const CastTable& Ascend950Casts() {
  static const CastTable table = {
      {BF16, {FP16, FP32, FP4, INT32}},
      {FP4, {BF16}},
      {FP8E4M3FN, {FP32}},
      {FP8E5M2, {FP32}},
      {HF8, {FP32}},
      {FP16, {FP32, HF8, INT16, INT32, INT8, UINT8}},
      {FP32, {BF16, FP16, FP8E4M3FN, FP8E5M2, HF8, INT16, INT32, INT64}},
      {INT8, {FP16, INT16, INT32}},
      {INT16, {FP16, FP32, INT32, UINT32, UINT8}},
      {INT32, {FP32, INT16, INT64, UINT16, UINT8}},
      {INT64, {FP32, INT32}},
      {UINT8, {FP16, UINT16}},
      {UINT32, {INT16, UINT16, UINT8}},
  };
  return table;
}

}  // namespace

const std::vector<DataType>& NativeCastTargets(const SocSpec& soc, DataType from) {
  static const std::vector<DataType> kNone;
  const CastTable& table = soc.arch == Ascend950().arch ? Ascend950Casts() : Ascend910BCasts();
  auto it = table.find(from);
  return it == table.end() ? kNone : it->second;
}

bool IsNativeCast(const SocSpec& soc, DataType from, DataType to) {
  const auto& targets = NativeCastTargets(soc, from);
  return std::ranges::find(targets, to) != targets.end();
}

}  // namespace pypto::ir
