#include "pypto/ir/function.h"

#include "pypto/ir/program.h"

namespace pypto::ir {

std::string_view FunctionTypeName(FunctionType type) {
  switch (type) {
    case FunctionType::Opaque: return "Opaque";
    case FunctionType::Orchestration: return "Orchestration";
    case FunctionType::InCore: return "InCore";
    case FunctionType::AIC: return "AIC";
    case FunctionType::AIV: return "AIV";
    case FunctionType::Group: return "Group";
    case FunctionType::Spmd: return "Spmd";
    case FunctionType::Inline: return "Inline";
  }
  return "?";
}

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::AIV: return "AIV";
    case Level::AIC: return "AIC";
    case Level::CORE_GROUP: return "CORE_GROUP";
    case Level::CHIP_DIE: return "CHIP_DIE";
    case Level::CHIP: return "CHIP";
    case Level::HOST: return "HOST";
  }
  return "?";
}

std::string_view ParamDirectionName(ParamDirection direction) {
  switch (direction) {
    case ParamDirection::In: return "In";
    case ParamDirection::Out: return "Out";
    case ParamDirection::InOut: return "InOut";
  }
  return "?";
}

Function::Function(std::string name, std::vector<VarPtr> params, std::vector<ParamDirection> directions,
                   std::vector<TypePtr> return_types, StmtPtr body, FunctionType type,
                   std::map<std::string, AttrValue> attrs, Span span)
    : name_(std::move(name)),
      params_(std::move(params)),
      directions_(std::move(directions)),
      return_types_(std::move(return_types)),
      body_(std::move(body)),
      type_(type),
      attrs_(std::move(attrs)),
      span_(std::move(span)) {
  directions_.resize(params_.size(), ParamDirection::In);
}

FunctionPtr Function::WithBody(StmtPtr body) const {
  return std::make_shared<Function>(name_, params_, directions_, return_types_, std::move(body), type_, attrs_, span_);
}

FunctionPtr Function::WithType(FunctionType type) const {
  return std::make_shared<Function>(name_, params_, directions_, return_types_, body_, type, attrs_, span_);
}

FunctionPtr Function::WithParams(std::vector<VarPtr> params, StmtPtr body) const {
  return std::make_shared<Function>(name_, std::move(params), directions_, return_types_, std::move(body), type_,
                                    attrs_, span_);
}

Program::Program(std::string name, std::vector<FunctionPtr> functions, std::string entry)
    : name_(std::move(name)), functions_(std::move(functions)), entry_(std::move(entry)) {}

FunctionPtr Program::Find(const std::string& name) const {
  for (const auto& function : functions_)
    if (function->name() == name) return function;
  return nullptr;
}

std::string DeclaredInAttr(std::string_view param) { return std::string(kDeclaredInAttrPrefix) + std::string(param); }

std::optional<size_t> FirstOutputParam(const std::vector<ParamDirection>& directions) {
  for (size_t i = 0; i < directions.size(); ++i)
    if (directions[i] != ParamDirection::In) return i;
  return std::nullopt;
}

FunctionPtr MakeGroupFunction(const std::string& name, const FunctionPtr& aic, const FunctionPtr& aiv,
                              const Span& span) {
  std::vector<VarPtr> params;
  std::vector<ExprPtr> args;
  for (const auto& member_param : aiv->params()) {
    params.push_back(std::make_shared<Var>(member_param->name_hint(), member_param->type(), span));
    args.push_back(params.back());
  }
  const auto& returns = aiv->return_types();
  auto call_type = [&]() -> TypePtr {
    return returns.size() == 1 ? returns[0] : TypePtr(std::make_shared<UnknownType>());
  };
  std::vector<StmtPtr> body;
  body.push_back(std::make_shared<EvalStmt>(std::make_shared<Call>(aic->name(), args, call_type(), span), span));
  auto aiv_call = std::make_shared<Call>(aiv->name(), args, call_type(), span);
  if (returns.size() == 1) {
    auto result = std::make_shared<Var>("result", returns[0], span);
    body.push_back(std::make_shared<AssignStmt>(result, aiv_call, span));
    body.push_back(std::make_shared<ReturnStmt>(std::vector<ExprPtr>{result}, span));
  } else {
    body.push_back(std::make_shared<EvalStmt>(aiv_call, span));
  }
  return std::make_shared<Function>(name, params, aiv->param_directions(), returns,
                                    std::make_shared<SeqStmts>(std::move(body), span), FunctionType::Group,
                                    std::map<std::string, AttrValue>{}, span);
}

}  // namespace pypto::ir
