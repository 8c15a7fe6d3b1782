// Builders for the simulator tests: lowered kernels written by hand (as the compiler would emit
// them after memory allocation), task plans, tensor descriptors and the plugin itself.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pypto-c/backend_plugin.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/ir/op_registry.h"
#include "pypto/runtime/backend_registry.h"
#include "pypto/runtime/c_api_bridge.h"
#include "pypto/runtime/chip_tensor.h"
#include "sim_executor.h"

namespace simtest {

namespace ir = pypto::ir;
namespace rt = pypto::rt;

inline constexpr const char* kFile = "kernels.py";

inline ir::ExprPtr Idx(int64_t value) { return std::make_shared<ir::ConstInt>(value, ir::DataType::INDEX); }

inline ir::ExprPtr Ints(const std::vector<int64_t>& values) {
  std::vector<ir::ExprPtr> elements;
  for (int64_t v : values) elements.push_back(Idx(v));
  return std::make_shared<ir::TupleLiteral>(std::move(elements));
}

// `lhs op rhs` as the frontend builds it (constants folded).
inline ir::ExprPtr Bin(ir::BinaryOp op, const ir::ExprPtr& lhs, const ir::ExprPtr& rhs) {
  auto expr = ir::MakeBinary(op, lhs, rhs, ir::Span{});
  EXPECT_TRUE(expr.has_value()) << (expr ? "" : expr.error().str());
  return expr ? *expr : Idx(0);
}
inline ir::ExprPtr Mul(const ir::ExprPtr& lhs, int64_t rhs) { return Bin(ir::BinaryOp::Mul, lhs, Idx(rhs)); }

// Offsets that may be computed: any integer scalar expressions.
using Exprs = std::vector<ir::ExprPtr>;
inline ir::ExprPtr Tuple(Exprs elements) { return std::make_shared<ir::TupleLiteral>(std::move(elements)); }

// Builds one kernel: parameters, then statements in order; every statement sits on its own line of
// kernels.py so that error messages can be checked for the location.
class KernelBuilder {
 public:
  explicit KernelBuilder(std::string name, ir::FunctionType type = ir::FunctionType::AIV)
      : name_(std::move(name)), type_(type) {}

  ir::Span NextSpan() { return ir::Span{kFile, ++line_, 5}; }
  int line() const { return line_; }

  ir::VarPtr Tensor(const std::string& name, ir::Shape shape, ir::DataType dtype = ir::DataType::FP32,
                    ir::ParamDirection direction = ir::ParamDirection::In) {
    auto var = std::make_shared<ir::Var>(name, std::make_shared<ir::TensorType>(std::move(shape), dtype));
    params_.push_back(var);
    directions_.push_back(direction);
    return var;
  }

  static ir::TypePtr TileAt(const ir::Shape& shape, ir::DataType dtype, int64_t byte_offset) {
    auto probe = ir::TileType(shape, dtype, ir::MemorySpace::Vec);
    return std::make_shared<ir::TileType>(shape, dtype, ir::MemorySpace::Vec,
                                          ir::TileMemRef{byte_offset, probe.num_bytes()});
  }

  ir::VarPtr Load(const std::string& name, const ir::VarPtr& tensor, const std::vector<int64_t>& offsets,
                  const ir::Shape& shape, int64_t byte_offset) {
    return LoadAt(name, tensor, Ints(offsets), shape, byte_offset);
  }

  // Load/Store with offsets given as an expression (a TupleLiteral of integer scalars).
  ir::VarPtr LoadAt(const std::string& name, const ir::VarPtr& tensor, const ir::ExprPtr& offsets,
                  const ir::Shape& shape, int64_t byte_offset) {
    auto span = NextSpan();
    auto call = ir::OpRegistry::Get().CreateCall("tile.load", {tensor, offsets, Ints(shape)}, {}, span);
    EXPECT_TRUE(call.has_value()) << (call ? "" : call.error().str());
    const auto* tensor_type = tensor->type()->As<ir::TensorType>();
    auto var = std::make_shared<ir::Var>(name, TileAt(shape, tensor_type->dtype(), byte_offset), span);
    stmts_.push_back(std::make_shared<ir::AssignStmt>(var, *call, span));
    return var;
  }

  ir::VarPtr Op(const std::string& op, const std::string& name, const ir::VarPtr& lhs, const ir::VarPtr& rhs,
                int64_t byte_offset) {
    auto span = NextSpan();
    auto call = ir::OpRegistry::Get().CreateCall(op, {lhs, rhs}, {}, span);
    EXPECT_TRUE(call.has_value()) << (call ? "" : call.error().str());
    const auto* tile = lhs->type()->As<ir::TileType>();
    auto var = std::make_shared<ir::Var>(name, TileAt(tile->shape(), tile->dtype(), byte_offset), span);
    stmts_.push_back(std::make_shared<ir::AssignStmt>(var, *call, span));
    return var;
  }

  // A call to an op the simulator may not know (built directly, bypassing the registry).
  ir::VarPtr Custom(const ir::OpDef* op, const std::string& name, std::vector<ir::ExprPtr> args, ir::TypePtr type) {
    auto span = NextSpan();
    auto call = std::make_shared<ir::Call>(op, std::move(args), ir::Call::Kwargs{}, type, span);
    auto var = std::make_shared<ir::Var>(name, type, span);
    stmts_.push_back(std::make_shared<ir::AssignStmt>(var, call, span));
    return var;
  }

  void Store(const ir::VarPtr& tile, const std::vector<int64_t>& offsets, const ir::VarPtr& tensor,
             bool as_eval = false) {
    StoreAt(tile, Ints(offsets), tensor, as_eval);
  }

  void StoreAt(const ir::VarPtr& tile, const ir::ExprPtr& offsets, const ir::VarPtr& tensor, bool as_eval = false) {
    auto span = NextSpan();
    auto call = ir::OpRegistry::Get().CreateCall("tile.store", {tile, offsets, tensor}, {}, span);
    EXPECT_TRUE(call.has_value()) << (call ? "" : call.error().str());
    if (as_eval) {
      stmts_.push_back(std::make_shared<ir::EvalStmt>(*call, span));
    } else {
      auto var = std::make_shared<ir::Var>(tensor->name_hint() + "_out", tensor->type(), span);
      stmts_.push_back(std::make_shared<ir::AssignStmt>(var, *call, span));
      last_store_ = var;
    }
  }

  // `name = op(args, kwargs)` through the registry, the result placed as `type` says (with its memref).
  ir::VarPtr Call(const std::string& op, const std::string& name, std::vector<ir::ExprPtr> args,
                  ir::Call::Kwargs kwargs, ir::TypePtr type) {
    auto span = NextSpan();
    auto call = ir::OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), span);
    EXPECT_TRUE(call.has_value()) << (call ? "" : call.error().str());
    auto var = std::make_shared<ir::Var>(name, type, span);
    if (call) stmts_.push_back(std::make_shared<ir::AssignStmt>(var, *call, span));
    return var;
  }

  // `op(args, kwargs)` as a statement.
  void Eval(const std::string& op, std::vector<ir::ExprPtr> args, ir::Call::Kwargs kwargs = {}) {
    auto span = NextSpan();
    auto call = ir::OpRegistry::Get().CreateCall(op, std::move(args), std::move(kwargs), span);
    EXPECT_TRUE(call.has_value()) << (call ? "" : call.error().str());
    if (call) stmts_.push_back(std::make_shared<ir::EvalStmt>(*call, span));
  }

  // `pl.system.syncall(...)`, a statement.
  void Syncall(std::vector<ir::ExprPtr> args = {}, ir::Call::Kwargs kwargs = {}) {
    auto span = NextSpan();
    auto call = ir::OpRegistry::Get().CreateCall("system.syncall", std::move(args), std::move(kwargs), span);
    EXPECT_TRUE(call.has_value()) << (call ? "" : call.error().str());
    if (call) stmts_.push_back(std::make_shared<ir::EvalStmt>(*call, span));
  }

  ir::VarPtr Scalar(const std::string& name, ir::DataType dtype = ir::DataType::INDEX) {
    auto var = std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(dtype));
    params_.push_back(var);
    directions_.push_back(ir::ParamDirection::In);
    return var;
  }

  // `name = value` for a scalar.
  ir::VarPtr Let(const std::string& name, const ir::ExprPtr& value) {
    auto span = NextSpan();
    auto var = std::make_shared<ir::Var>(name, value->type(), span);
    stmts_.push_back(std::make_shared<ir::AssignStmt>(var, value, span));
    return var;
  }

  // `for name in pl.<kind>(start, stop, step):` ... EndFor(). Statements in between form the body.
  ir::VarPtr For(const std::string& name, ir::ExprPtr start, ir::ExprPtr stop, ir::ExprPtr step = Idx(1),
                 ir::ForKind kind = ir::ForKind::Sequential) {
    auto span = NextSpan();
    auto var = std::make_shared<ir::Var>(name, std::make_shared<ir::ScalarType>(ir::DataType::INDEX), span);
    loops_.push_back(OpenLoop{var, std::move(start), std::move(stop), std::move(step), kind, span, std::move(stmts_)});
    stmts_.clear();
    return var;
  }
  ir::VarPtr For(const std::string& name, int64_t stop) { return For(name, Idx(0), Idx(stop)); }

  void EndFor() {
    OpenLoop loop = std::move(loops_.back());
    loops_.pop_back();
    auto body = std::make_shared<ir::SeqStmts>(std::move(stmts_));
    stmts_ = std::move(loop.outer);
    stmts_.push_back(std::make_shared<ir::ForStmt>(loop.var, loop.start, loop.stop, loop.step, body, loop.kind,
                                                   loop.span));
  }

  ir::FunctionPtr Build() {
    EXPECT_TRUE(loops_.empty()) << "a loop is still open";
    std::vector<ir::ExprPtr> returns;
    if (last_store_) returns.push_back(last_store_);
    stmts_.push_back(std::make_shared<ir::ReturnStmt>(returns, NextSpan()));
    std::vector<ir::TypePtr> return_types;
    if (last_store_) return_types.push_back(last_store_->type());
    return std::make_shared<ir::Function>(name_, params_, directions_, return_types,
                                          std::make_shared<ir::SeqStmts>(stmts_), type_,
                                          std::map<std::string, ir::AttrValue>{}, ir::Span{kFile, 1, 1});
  }

 private:
  std::string name_;
  ir::FunctionType type_;
  std::vector<ir::VarPtr> params_;
  std::vector<ir::ParamDirection> directions_;
  std::vector<ir::StmtPtr> stmts_;
  ir::VarPtr last_store_;
  int line_ = 1;
  struct OpenLoop {
    ir::VarPtr var;
    ir::ExprPtr start, stop, step;
    ir::ForKind kind;
    ir::Span span;
    std::vector<ir::StmtPtr> outer;  // the enclosing block's statements so far
  };
  std::vector<OpenLoop> loops_;
};

inline std::shared_ptr<pypto_ir_program> MakeProgram(std::vector<ir::FunctionPtr> kernels) {
  auto program = std::make_shared<ir::Program>("prog", std::move(kernels), "orch");
  return std::make_shared<pypto_ir_program>(pypto_ir_program{program});
}

inline rt::PlanTaskArg Arg(rt::ArgDirection direction, uint32_t index,
                           rt::PlanTensorRef::Kind kind = rt::PlanTensorRef::Kind::Param) {
  return rt::PlanTaskArg{.direction = direction, .tensor = {.kind = kind, .index = index}};
}

// A plan with one kernel (func_id 0) and one submit passing params 0..n-1 with `directions`.
inline pypto_rt_plan SingleTaskPlan(const std::string& kernel, const std::vector<rt::PlanTensor>& params,
                                    const std::vector<rt::ArgDirection>& directions) {
  pypto_rt_plan plan;
  plan.plan.orchestration_name = "orch";
  plan.plan.params = params;
  plan.plan.kernels = {rt::PlanKernel{.func_id = 0, .name = kernel, .core_type = rt::CoreType::AIV}};
  rt::PlanSubmit submit{.func_id = 0, .core_type = rt::CoreType::AIV};
  for (size_t i = 0; i < directions.size(); ++i) submit.args.push_back(Arg(directions[i], static_cast<uint32_t>(i)));
  plan.plan.submits = {submit};
  return plan;
}

// A descriptor over caller memory with an explicit view (shape, element strides, start offset).
inline pypto_chip_tensor View(void* data, uint64_t buffer_bytes, std::vector<uint32_t> shape,
                              std::vector<uint32_t> strides, uint64_t start_offset,
                              uint8_t dtype = PYPTO_RT_FLOAT32) {
  pypto_chip_tensor t{};
  t.buffer_addr = reinterpret_cast<uint64_t>(data);
  t.buffer_size = buffer_bytes;
  t.owner_task_id = PYPTO_INVALID_TASK_ID;
  t.start_offset = start_offset;
  t.ndims = static_cast<uint32_t>(shape.size());
  t.dtype = dtype;
  uint64_t extent = 1;
  bool contiguous = true;
  uint64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    t.shapes[d] = shape[d];
    t.strides[d] = strides[d];
    extent += static_cast<uint64_t>(shape[d] - 1) * strides[d];
    if (strides[d] != expected) contiguous = false;
    expected *= shape[d];
  }
  t.extent_elem_cache = extent;
  t.is_contiguous = contiguous ? 1 : 0;
  return t;
}

// A contiguous row-major descriptor over a vector.
template <typename T>
pypto_chip_tensor Dense(std::vector<T>& data, std::vector<uint32_t> shape, uint8_t dtype = PYPTO_RT_FLOAT32) {
  return rt::MakeExternalTensor(data.data(), shape, dtype);
}

// Runs a decoded kernel once on `memory`, without the runtime: args[] holds the descriptors in order.
inline pypto::expected<void, rt::FatalError> RunDirect(const pypto::sim::DecodedKernel& kernel,
                                                       std::initializer_list<const pypto_chip_tensor*> tensors,
                                                       pypto::sim::CoreMemory& memory) {
  int64_t args[rt::kArgSlots] = {};
  size_t slot = 0;
  for (const auto* tensor : tensors) args[slot++] = reinterpret_cast<int64_t>(tensor);
  return pypto::sim::SimExecutor::Run(kernel, args, memory);
}

// The plugin, loaded through the registry from the path meson passes.
inline const pypto_backend_plugin* Plugin() {
  static const pypto_backend_plugin* plugin = []() -> const pypto_backend_plugin* {
    auto& registry = rt::BackendRegistry::Get();
    auto info = registry.LoadFile(PYPTO_SIM_PLUGIN_PATH);
    if (!info) {
      ADD_FAILURE() << "cannot load " << PYPTO_SIM_PLUGIN_PATH << ": " << info.error();
      return nullptr;
    }
    auto plugin = registry.ForPlatform("a2a3sim");
    if (!plugin) {
      ADD_FAILURE() << plugin.error();
      return nullptr;
    }
    if (std::string((*plugin)->name) != "sim") {
      ADD_FAILURE() << "a2a3sim is served by plugin '" << (*plugin)->name << "', not by " << PYPTO_SIM_PLUGIN_PATH;
      return nullptr;
    }
    return *plugin;
  }();
  return plugin;
}

struct RunResult {
  pypto_status status = PYPTO_OK;
  std::string message;
};

inline RunResult Execute(const pypto_ir_program& program, const pypto_rt_plan& plan,
                         const std::vector<pypto_chip_tensor>& params, const char* platform = "a2a3sim") {
  const auto* plugin = Plugin();
  if (!plugin) return {PYPTO_ERR_NOT_FOUND, "plugin not loaded"};
  RunResult result;
  result.status = plugin->execute(platform, &program, &plan, params.data(), params.size());
  if (result.status != PYPTO_OK) result.message = pypto_last_error_message();
  return result;
}

}  // namespace simtest
