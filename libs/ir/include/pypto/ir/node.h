// The base of every IR node. Nodes are immutable and shared (std::shared_ptr<const T>);
// passes build new nodes instead of editing old ones. Casting compares the exact kind, no RTTI.
#pragma once

#include <memory>

#include "pypto/ir/span.h"

namespace pypto::ir {

enum class NodeKind {
  // expressions
  Var,
  ConstInt,
  ConstFloat,
  ConstBool,
  TupleLiteral,
  BinaryExpr,
  Call,
  // statements
  AssignStmt,
  EvalStmt,
  SeqStmts,
  ReturnStmt,
  ForStmt,
  WhileStmt,
  IfStmt,
  YieldStmt,
  BreakStmt,
  ContinueStmt,
  InCoreScopeStmt,
  RuntimeScopeStmt,
};

class Node {
 public:
  Node(NodeKind kind, Span span) : kind_(kind), span_(std::move(span)) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  NodeKind kind() const { return kind_; }
  const Span& span() const { return span_; }

  template <typename T>
  bool Is() const {
    return kind_ == T::kKind;
  }
  template <typename T>
  const T* As() const {
    return Is<T>() ? static_cast<const T*>(this) : nullptr;
  }

 private:
  NodeKind kind_;
  Span span_;
};

// Downcast a shared node pointer when its kind matches; null otherwise.
template <typename T, typename U>
std::shared_ptr<const T> As(const std::shared_ptr<const U>& node) {
  if (node && node->template Is<T>()) return std::static_pointer_cast<const T>(node);
  return nullptr;
}

}  // namespace pypto::ir
