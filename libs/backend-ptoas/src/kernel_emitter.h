// Prints one planned kernel as a func.func of the PTO dialect.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kernel_plan.h"
#include "pypto/backend_ptoas/module.h"
#include "ssa_names.h"

namespace pypto::backend_ptoas {

class KernelEmitter {
 public:
  KernelEmitter(const ir::Function& kernel, const KernelPlan& plan, const ModuleOptions& options);

  // `  func.func @name(...) attributes {...} {` ... `  }`, each line ending in '\n'. Inside, the
  // order ptoas expects: constants, tensor views, tile allocations, the body, return.
  std::string Emit();

 private:
  // kernel_emitter.cpp: names, signature, prologue and assembly.
  void BindNames();
  std::string Signature() const;
  void EmitTensorViews();
  void EmitTileAllocs();
  void Add(std::vector<std::string>& section, const std::string& text, const ir::Span& span) const;

  // tile_ops.cpp: one statement at a time.
  void LowerStmt(const ir::Stmt& stmt);
  void LowerLoad(const ir::AssignStmt& assign, const ir::Call& call, const ir::Span& span);
  void LowerStore(const ir::Call& call, const ir::Span& span);
  void LowerElementwise(const ir::AssignStmt& assign, const ir::Call& call, const ir::Span& span);
  // `%x_pview = pto.partition_view ...` for a window of a tensor parameter; returns its name.
  std::string PartitionView(const ir::Var& tensor, const ir::ExprPtr& offsets, const ir::Shape& sizes,
                            const std::string& partition_type, const ir::Span& span);
  std::string TileOperandType(const ir::Var& tile) const;
  std::string ElementOf(ir::DataType dtype) const;

  const ir::Function& kernel_;
  const KernelPlan& plan_;
  ModuleOptions options_;
  SsaNames names_;
  std::map<const ir::Var*, std::string> values_;  // parameters and tiles -> their SSA names
  std::map<const ir::Var*, std::string> views_;   // tensor parameters -> their tensor_view
  std::vector<std::string> prologue_;
  std::vector<std::string> body_;
};

}  // namespace pypto::backend_ptoas
