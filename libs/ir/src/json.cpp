// The JSON form of programs (json.h): one writer that visits every node kind, and one reader that
// rebuilds the nodes, reporting each fault at its JSON path.
#include "pypto/ir/json.h"
#include "pypto/ir/row_merge.h"

#include <fmt/format.h>

#include <cmath>
#include <pthread.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pypto/ir/op_registry.h"

namespace pypto::ir {
namespace {

// Keys keep the order they are written in, so a Var's full definition comes first in the text too.
using Json = nlohmann::ordered_json;

constexpr const char* kFormat = "pypto-ir";
constexpr int kVersion = 1;

// JSON has no infinities or NaN: those floats are written as the strings "inf", "-inf", "nan".
Json FloatJson(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

// An empty object with room for the fields of any node (a ForStmt has the most, 10). ordered_json
// keeps an object's members in a vector, and a pair with a const key cannot be moved without the
// risk of a throw, so each time the vector grows it deep-copies the members already there: adding
// "rhs" and "span" after "lhs" copied the whole left operand, which made writing an expression
// chain quadratic in its depth. So the writer reserves the room first and never builds an object
// from an initializer list holding a subtree (which copies it too).
Json Object() {
  Json json = Json::object();
  json.get_ref<Json::object_t&>().reserve(12);
  return json;
}

Json Object(std::string_view kind) {
  Json json = Object();
  json["kind"] = kind;
  return json;
}

const char* StmtKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::AssignStmt: return "AssignStmt";
    case NodeKind::EvalStmt: return "EvalStmt";
    case NodeKind::SeqStmts: return "SeqStmts";
    case NodeKind::ReturnStmt: return "ReturnStmt";
    case NodeKind::ForStmt: return "ForStmt";
    case NodeKind::WhileStmt: return "WhileStmt";
    case NodeKind::IfStmt: return "IfStmt";
    case NodeKind::YieldStmt: return "YieldStmt";
    case NodeKind::BreakStmt: return "BreakStmt";
    case NodeKind::ContinueStmt: return "ContinueStmt";
    case NodeKind::InCoreScopeStmt: return "InCoreScopeStmt";
    case NodeKind::RuntimeScopeStmt: return "RuntimeScopeStmt";
    default: return "?";
  }
}

// ---------------------------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------------------------

class JsonWriter {
 public:
  Json WriteProgram(const Program& program) {
    Json functions = Json::array();
    for (const auto& function : program.functions()) functions.push_back(WriteFunction(*function));
    Json json = Object();
    json["format"] = kFormat;
    json["version"] = kVersion;
    json["name"] = program.name();
    json["entry"] = program.entry_name();
    json["functions"] = std::move(functions);
    return json;
  }

 private:
  Json WriteFunction(const Function& function) {
    Json json = Object();
    json["name"] = function.name();
    json["type"] = FunctionTypeName(function.type());
    json["params"] = Vars(function.params());
    Json directions = Json::array();
    for (auto direction : function.param_directions()) directions.push_back(ParamDirectionName(direction));
    json["param_directions"] = std::move(directions);
    Json return_types = Json::array();
    for (const auto& type : function.return_types()) return_types.push_back(WriteType(type));
    json["return_types"] = std::move(return_types);
    Json attrs = Json::object();
    for (const auto& [key, value] : function.attrs()) std::visit([&](const auto& v) { attrs[key] = v; }, value);
    json["attrs"] = std::move(attrs);
    json["body"] = function.body() ? WriteStmt(function.body()) : Json(nullptr);
    AddSpan(json, function.span());
    return json;
  }

  static void AddSpan(Json& json, const Span& span) {
    if (span.known()) json["span"] = Json::array({span.file, span.line, span.column});
  }

  Json WriteType(const TypePtr& type) {
    Json json = Object(TypeKindName(type->kind()));
    if (const auto* scalar = type->As<ScalarType>()) {
      json["dtype"] = DataTypeName(scalar->dtype());
    } else if (const auto* array = type->As<ArrayType>()) {
      json["dtype"] = DataTypeName(array->dtype());
      json["extent"] = array->extent();
    } else if (const auto* handle = type->As<HandleType>()) {
      json["handle"] = handle->str().substr(3);  // without "pl."
    } else if (const auto* tensor = type->As<TensorType>()) {
      json["shape"] = tensor->shape();
      json["dtype"] = DataTypeName(tensor->dtype());
      if (tensor->layout() != TensorLayout::ND) json["layout"] = TensorLayoutName(tensor->layout());
    } else if (const auto* tile = type->As<TileType>()) {
      WriteTile(json, *tile);
    } else if (const auto* tuple = type->As<TupleType>()) {
      Json elements = Json::array();
      for (const auto& element : tuple->elements()) elements.push_back(WriteType(element));
      json["elements"] = std::move(elements);
    }
    return json;
  }

  void WriteTile(Json& json, const TileType& tile) {
    json["shape"] = tile.shape();
    json["dtype"] = DataTypeName(tile.dtype());
    json["memory_space"] = MemorySpaceName(tile.memory_space());
    if (const auto& memref = tile.memref())
      json["memref"] = {{"byte_offset", memref->byte_offset}, {"size", memref->size}};
    if (tile.has_partial_valid_shape()) json["valid_shape"] = Exprs(tile.valid_shape());
  }

  static const char* TypeKindName(TypeKind kind) {
    switch (kind) {
      case TypeKind::Unknown: return "Unknown";
      case TypeKind::Scalar: return "Scalar";
      case TypeKind::Tensor: return "Tensor";
      case TypeKind::Tile: return "Tile";
      case TypeKind::Tuple: return "Tuple";
      case TypeKind::Array: return "Array";
      case TypeKind::Handle: return "Handle";
    }
    return "?";
  }

  // A var in full where it first appears, by id afterwards.
  Json WriteVar(const Var& var) {
    Json json = Object("Var");
    if (auto it = ids_.find(&var); it != ids_.end()) {
      json["id"] = it->second;
      return json;
    }
    const int64_t id = static_cast<int64_t>(ids_.size());
    ids_.emplace(&var, id);
    json["id"] = id;
    json["name"] = var.name_hint();
    json["type"] = WriteType(var.type());
    AddSpan(json, var.span());
    return json;
  }

  Json Vars(const std::vector<VarPtr>& vars) {
    Json json = Json::array();
    for (const auto& var : vars) json.push_back(WriteVar(*var));
    return json;
  }

  Json Exprs(const std::vector<ExprPtr>& exprs) {
    Json json = Json::array();
    for (const auto& expr : exprs) json.push_back(WriteExpr(expr));
    return json;
  }

  Json WriteExpr(const ExprPtr& expr) {
    if (const auto* var = expr->As<Var>()) return WriteVar(*var);
    Json json;
    switch (expr->kind()) {
      case NodeKind::ConstInt:
        json = Object("ConstInt");
        json["value"] = expr->As<ConstInt>()->value();
        json["dtype"] = ScalarDType(*expr);
        break;
      case NodeKind::ConstFloat:
        json = Object("ConstFloat");
        json["value"] = FloatJson(expr->As<ConstFloat>()->value());
        json["dtype"] = ScalarDType(*expr);
        break;
      case NodeKind::ConstBool:
        json = Object("ConstBool");
        json["value"] = expr->As<ConstBool>()->value();
        break;
      case NodeKind::TupleLiteral:
        json = Object("TupleLiteral");
        json["elements"] = Exprs(expr->As<TupleLiteral>()->elements());
        break;
      case NodeKind::BinaryExpr: json = WriteBinary(*expr->As<BinaryExpr>()); break;
      case NodeKind::Call: json = WriteCall(*expr->As<Call>()); break;
      default: throw std::logic_error("ProgramToJson: a statement where an expression belongs");
    }
    AddSpan(json, expr->span());
    return json;
  }

  static std::string ScalarDType(const Expr& expr) {
    return std::string(DataTypeName(expr.type()->As<ScalarType>()->dtype()));
  }

  Json WriteBinary(const BinaryExpr& binary) {
    Json json = Object("BinaryExpr");
    json["op"] = BinaryOpSymbol(binary.op());
    json["lhs"] = WriteExpr(binary.lhs());
    json["rhs"] = WriteExpr(binary.rhs());
    json["type"] = WriteType(binary.type());
    return json;
  }

  Json WriteCall(const Call& call) {
    Json json = Object("Call");
    if (call.is_op_call())
      json["op"] = call.op()->name;
    else
      json["callee"] = call.callee();
    json["args"] = Exprs(call.args());
    if (!call.kwargs().empty()) json["kwargs"] = WriteKwargs(call.kwargs());
    json["type"] = WriteType(call.type());
    if (!call.arg_directions().empty()) {
      Json directions = Json::array();
      for (auto direction : call.arg_directions()) directions.push_back(ArgDirectionName(direction));
      json["arg_directions"] = std::move(directions);
    }
    if (!call.order().empty()) json["order"] = WriteOrder(call.order());
    if (call.core_num()) json["core_num"] = WriteExpr(call.core_num());
    return json;
  }

  // Each kwarg is {"name": ..., KIND: value}, KIND one of bool, int, float, string, dtype,
  // memory_space: the kind tells a string from a dtype or a memory space.
  static Json WriteKwargs(const OpAttrs& kwargs) {
    Json json = Json::array();
    for (const auto& [name, value] : kwargs) {
      Json kwarg = Object();
      kwarg["name"] = name;
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, bool>) kwarg["bool"] = v;
            else if constexpr (std::is_same_v<T, int64_t>) kwarg["int"] = v;
            else if constexpr (std::is_same_v<T, double>) kwarg["float"] = FloatJson(v);
            else if constexpr (std::is_same_v<T, std::string>) kwarg["string"] = v;
            else if constexpr (std::is_same_v<T, DataType>) kwarg["dtype"] = DataTypeName(v);
            else kwarg["memory_space"] = MemorySpaceName(v);
          },
          value);
      json.push_back(std::move(kwarg));
    }
    return json;
  }

  Json WriteOrder(const LaunchOrder& order) {
    Json json = Object();
    json["deps"] = Exprs(order.deps);
    if (order.task_id) json["task_id"] = WriteVar(*order.task_id);
    json["allow_early_resolve"] = order.allow_early_resolve;
    return json;
  }

  Json IterArgs(const std::vector<IterArg>& iter_args) {
    Json json = Json::array();
    for (const auto& iter_arg : iter_args) {
      Json item = Object();
      item["init"] = WriteExpr(iter_arg.init);
      item["var"] = WriteVar(*iter_arg.var);
      if (iter_arg.carry != CarryKind::Unclassified) item["carry"] = CarryKindName(iter_arg.carry);
      json.push_back(std::move(item));
    }
    return json;
  }

  Json WriteStmt(const StmtPtr& stmt) {
    Json json = Object(StmtKindName(stmt->kind()));
    switch (stmt->kind()) {
      case NodeKind::AssignStmt: {
        const auto& assign = *stmt->As<AssignStmt>();
        json["value"] = WriteExpr(assign.value());
        json["var"] = WriteVar(*assign.var());
        break;
      }
      case NodeKind::EvalStmt: json["expr"] = WriteExpr(stmt->As<EvalStmt>()->expr()); break;
      case NodeKind::SeqStmts: {
        Json stmts = Json::array();
        for (const auto& child : stmt->As<SeqStmts>()->stmts()) stmts.push_back(WriteStmt(child));
        json["stmts"] = std::move(stmts);
        break;
      }
      case NodeKind::ReturnStmt: json["values"] = Exprs(stmt->As<ReturnStmt>()->values()); break;
      case NodeKind::YieldStmt: json["values"] = Exprs(stmt->As<YieldStmt>()->values()); break;
      case NodeKind::BreakStmt:
      case NodeKind::ContinueStmt: json["values"] = Exprs(AsJump(*stmt)->values()); break;
      case NodeKind::ForStmt: WriteFor(json, *stmt->As<ForStmt>()); break;
      case NodeKind::WhileStmt: WriteWhile(json, *stmt->As<WhileStmt>()); break;
      case NodeKind::IfStmt: WriteIf(json, *stmt->As<IfStmt>()); break;
      case NodeKind::InCoreScopeStmt: WriteInCore(json, *stmt->As<InCoreScopeStmt>()); break;
      case NodeKind::RuntimeScopeStmt:
        json["manual"] = stmt->As<RuntimeScopeStmt>()->manual();
        json["body"] = WriteStmt(stmt->As<RuntimeScopeStmt>()->body());
        break;
      default: throw std::logic_error("ProgramToJson: an expression where a statement belongs");
    }
    AddSpan(json, stmt->span());
    return json;
  }

  void WriteFor(Json& json, const ForStmt& loop) {
    json["for_kind"] = ForKindName(loop.kind());
    json["start"] = WriteExpr(loop.start());
    json["stop"] = WriteExpr(loop.stop());
    json["step"] = WriteExpr(loop.step());
    json["loop_var"] = WriteVar(*loop.loop_var());
    json["iter_args"] = IterArgs(loop.iter_args());
    json["body"] = WriteStmt(loop.body());
    json["return_vars"] = Vars(loop.return_vars());
  }

  void WriteWhile(Json& json, const WhileStmt& loop) {
    json["iter_args"] = IterArgs(loop.iter_args());
    json["condition"] = WriteExpr(loop.condition());
    json["body"] = WriteStmt(loop.body());
    json["return_vars"] = Vars(loop.return_vars());
  }

  void WriteIf(Json& json, const IfStmt& branch) {
    json["condition"] = WriteExpr(branch.condition());
    json["then"] = WriteStmt(branch.then_body());
    if (branch.else_body()) json["else"] = WriteStmt(branch.else_body());
    json["return_vars"] = Vars(branch.return_vars());
  }

  void WriteInCore(Json& json, const InCoreScopeStmt& scope) {
    json["name"] = scope.name_hint();
    if (scope.block_num()) json["block_num"] = WriteExpr(scope.block_num());
    json["sync_start"] = scope.sync_start();
    if (!scope.order().empty()) json["order"] = WriteOrder(scope.order());
    json["body"] = WriteStmt(scope.body());
  }

  std::unordered_map<const Var*, int64_t> ids_;

};

// ---------------------------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------------------------

// The reader looks fields up by name and never writes, so it parses into std::map objects:
// ordered_json's vector-backed objects deep-copy every member each time they grow while parsing,
// which made reading a deep expression quadratic in its depth.
using ReadJson = nlohmann::json;

// Expressions, statements and types nested deeper than this are refused: the reader, the printer,
// the passes and the IR's destructors all recurse once per level, and must stay within the stack
// (the reader runs on a stack of its own, OnReaderStack; the others run on the caller's, and an
// 8 MB stack holds some 10,000 levels of the printer's; pypto-opt gives them a larger one). A
// 10,000-term chain `x + x + ...` fits; the DSL's own parser (Python's ast) stops near 3,000.
constexpr int kMaxNesting = 12000;

// A fault in the input; caught once, at ProgramFromJson, and turned into a diagnostic. An op call
// that its op refuses keeps the op's diagnostic kind and the call's source span.
struct JsonFault {
  std::string message;
  DiagnosticKind kind = DiagnosticKind::Syntax;
  Span span;
};

[[noreturn]] void Fault(std::string message) { throw JsonFault{std::move(message)}; }

// The path from `root` to `target` ("/functions/0/body"), found by a breadth-first search: paths
// are only needed for messages, and building one for every value read made reading a deep
// expression quadratic. A path of more than 40 steps shows its first 20 and last 10.
std::string PathTo(const ReadJson& root, const ReadJson& target) {
  struct Node {
    const ReadJson* json;
    size_t parent;
    std::string step;
  };
  std::vector<Node> nodes{{&root, 0, ""}};
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ReadJson* json = nodes[i].json;
    if (json == &target) {
      std::vector<std::string_view> steps;
      for (size_t at = i; at != 0; at = nodes[at].parent) steps.push_back(nodes[at].step);
      if (steps.empty()) return "/";
      std::string path;
      for (size_t k = steps.size(); k-- > 0;) {
        const size_t from_root = steps.size() - 1 - k;
        if (steps.size() > 40 && from_root == 20) path += fmt::format("/...({} more)...", steps.size() - 30);
        if (steps.size() > 40 && from_root >= 20 && k >= 10) continue;
        path += "/";
        path += steps[k];
      }
      return path;
    }
    if (json->is_object())
      for (auto it = json->begin(); it != json->end(); ++it) nodes.push_back({&*it, i, it.key()});
    else if (json->is_array())
      for (size_t k = 0; k < json->size(); ++k) nodes.push_back({&(*json)[k], i, std::to_string(k)});
  }
  return "?";
}

// A JSON value and the document it is in, whose path (where()) the messages name.
struct At {
  const ReadJson& json;
  const ReadJson* root;

  std::string where() const { return PathTo(*root, json); }
};

std::string Article(std::string_view noun) {
  return std::string(std::string_view("AEIOUaeiou").find(noun.front()) == std::string_view::npos ? "a " : "an ") +
         std::string(noun);
}

// The field `key` of the object `at`, `what` naming the object for the message when it is missing.
At Field(const At& at, std::string_view key, std::string_view what) {
  if (!at.json.is_object()) Fault(fmt::format("expected {} object at {}", Article(what), at.where()));
  auto it = at.json.find(key);
  if (it == at.json.end()) Fault(fmt::format("missing field '{}' in {} at {}", key, Article(what), at.where()));
  return At{*it, at.root};
}

bool Has(const At& at, std::string_view key) { return at.json.is_object() && at.json.contains(key); }

std::vector<At> Items(const At& at) {
  if (!at.json.is_array()) Fault(fmt::format("expected an array at {}", at.where()));
  std::vector<At> items;
  items.reserve(at.json.size());
  for (size_t i = 0; i < at.json.size(); ++i) items.push_back(At{at.json[i], at.root});
  return items;
}

std::string String(const At& at) {
  if (!at.json.is_string()) Fault(fmt::format("expected a string at {}", at.where()));
  return at.json.get<std::string>();
}

int64_t Int(const At& at) {
  if (!at.json.is_number_integer()) Fault(fmt::format("expected an integer at {}", at.where()));
  return at.json.get<int64_t>();
}

bool Bool(const At& at) {
  if (!at.json.is_boolean()) Fault(fmt::format("expected true or false at {}", at.where()));
  return at.json.get<bool>();
}

double Float(const At& at) {
  if (at.json.is_number()) return at.json.get<double>();
  if (at.json == "inf") return std::numeric_limits<double>::infinity();
  if (at.json == "-inf") return -std::numeric_limits<double>::infinity();
  if (at.json == "nan") return std::numeric_limits<double>::quiet_NaN();
  Fault(fmt::format("expected a number at {}", at.where()));
}

// The enum member of E (values 0..last) whose name is the string at `at`.
template <typename E, typename NameOf>
E EnumFromName(const At& at, std::string_view what, E last, NameOf name_of) {
  const std::string name = String(at);
  for (int value = 0; value <= static_cast<int>(last); ++value)
    if (std::string_view(name_of(static_cast<E>(value))) == name) return static_cast<E>(value);
  Fault(fmt::format("unknown {} '{}' at {}", what, name, at.where()));
}

DataType DTypeAt(const At& at) {
  const std::string name = String(at);
  if (auto dtype = DataTypeFromName(name)) return *dtype;
  Fault(fmt::format("unknown dtype '{}' at {}", name, at.where()));
}

MemorySpace MemorySpaceAt(const At& at) {
  const std::string name = String(at);
  if (auto space = MemorySpaceFromName(name)) return *space;
  Fault(fmt::format("unknown memory space '{}' at {}", name, at.where()));
}

// Whether the type a call records is the one its op deduces: equal, except that a tile's memref and
// valid shape are the passes' to set, and a load of an N-d window may be typed as its row-merged
// 2-D tile (FlattenTileNdTo2D). The DSL parser compares declared and deduced types the same way.
bool RecordedTypeAgrees(const Type& recorded, const Type& deduced) {
  const auto* tile = recorded.As<TileType>();
  const auto* deduced_tile = deduced.As<TileType>();
  if (tile && deduced_tile) {
    if (tile->dtype() != deduced_tile->dtype() || tile->memory_space() != deduced_tile->memory_space()) return false;
    return tile->shape() == deduced_tile->shape() || IsRowMergedFrom(tile->shape(), deduced_tile->shape());
  }
  const auto* tuple = recorded.As<TupleType>();
  const auto* deduced_tuple = deduced.As<TupleType>();
  if (tuple && deduced_tuple) {
    if (tuple->elements().size() != deduced_tuple->elements().size()) return false;
    for (size_t i = 0; i < tuple->elements().size(); ++i)
      if (!RecordedTypeAgrees(*tuple->elements()[i], *deduced_tuple->elements()[i])) return false;
    return true;
  }
  return recorded.equals(deduced);
}

class JsonReader {
 public:
  ProgramPtr ReadProgram(const At& at) {
    const std::string format = String(Field(at, "format", "program"));
    if (format != kFormat)
      Fault(fmt::format("not a PyPTO IR document: format is '{}', expected '{}'", format, kFormat));
    const int64_t version = Int(Field(at, "version", "program"));
    if (version != kVersion)
      Fault(fmt::format("unsupported version {} of the PyPTO IR JSON format (this reader knows {})", version,
                        kVersion));
    std::vector<FunctionPtr> functions;
    for (const At& function : Items(Field(at, "functions", "program"))) functions.push_back(ReadFunction(function));
    return std::make_shared<Program>(String(Field(at, "name", "program")), std::move(functions),
                                     String(Field(at, "entry", "program")));
  }

 private:
  static constexpr const char* kFunction = "function";

  // One level of expression, statement or type being read; refused past kMaxNesting before the
  // reader recurses further.
  class Nested {
   public:
    Nested(JsonReader& reader, const At& at) : reader_(reader) {
      if (reader_.depth_ == kMaxNesting)
        Fault(fmt::format("expressions, statements and types nest more than {} deep at {}", kMaxNesting, at.where()));
      ++reader_.depth_;
    }
    ~Nested() { --reader_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    JsonReader& reader_;
  };

  FunctionPtr ReadFunction(const At& at) {
    std::string name = String(Field(at, "name", kFunction));
    auto type = EnumFromName(Field(at, "type", kFunction), "function type", FunctionType::Inline, FunctionTypeName);
    std::vector<VarPtr> params = ReadVars(Field(at, "params", kFunction));
    std::vector<ParamDirection> directions;
    for (const At& item : Items(Field(at, "param_directions", kFunction)))
      directions.push_back(EnumFromName(item, "param direction", ParamDirection::InOut, ParamDirectionName));
    std::vector<TypePtr> return_types;
    for (const At& item : Items(Field(at, "return_types", kFunction))) return_types.push_back(ReadType(item));
    std::map<std::string, AttrValue> attrs = ReadFunctionAttrs(Field(at, "attrs", kFunction));
    const At body = Field(at, "body", kFunction);
    StmtPtr body_stmt = body.json.is_null() ? nullptr : ReadStmt(body);
    return std::make_shared<Function>(std::move(name), std::move(params), std::move(directions),
                                      std::move(return_types), std::move(body_stmt), type, std::move(attrs),
                                      ReadSpan(at));
  }

  static std::map<std::string, AttrValue> ReadFunctionAttrs(const At& at) {
    if (!at.json.is_object()) Fault(fmt::format("expected an object at {}", at.where()));
    std::map<std::string, AttrValue> attrs;
    for (const auto& [key, value] : at.json.items()) {
      const At item{value, at.root};
      if (value.is_boolean()) attrs.emplace(key, Bool(item));
      else if (value.is_number_integer()) attrs.emplace(key, Int(item));
      else if (value.is_string()) attrs.emplace(key, String(item));
      else Fault(fmt::format("expected a bool, an integer or a string at {}", item.where()));
    }
    return attrs;
  }

  static Span ReadSpan(const At& at) {
    if (!Has(at, "span")) return {};
    const auto items = Items(Field(at, "span", "node"));
    if (items.size() != 3) Fault(fmt::format("expected [file, line, column] at {}", Field(at, "span", "node").where()));
    return Span{String(items[0]), static_cast<int>(Int(items[1])), static_cast<int>(Int(items[2]))};
  }

  static std::string KindOf(const At& at, std::string_view what) {
    if (!at.json.is_object()) Fault(fmt::format("expected {} object at {}", Article(what), at.where()));
    return String(Field(at, "kind", what));
  }

  // A tensor type; "layout" only where it is not ND.
  TypePtr ReadTensor(const At& at) {
    auto layout = TensorLayout::ND;
    if (Has(at, "layout")) {
      const At field = Field(at, "layout", "Tensor");
      auto named = TensorLayoutFromName(String(field));
      if (!named) Fault(fmt::format("unknown tensor layout '{}' at {}", String(field), field.where()));
      layout = *named;
    }
    return std::make_shared<TensorType>(ReadShape(Field(at, "shape", "Tensor")), DTypeAt(Field(at, "dtype", "Tensor")),
                                        layout);
  }

  TypePtr ReadType(const At& at) {
    const Nested nested(*this, at);
    const std::string kind = KindOf(at, "type");
    if (kind == "Unknown") return std::make_shared<UnknownType>();
    if (kind == "Scalar") return std::make_shared<ScalarType>(DTypeAt(Field(at, "dtype", kind)));
    if (kind == "Array")
      return std::make_shared<ArrayType>(DTypeAt(Field(at, "dtype", kind)), Int(Field(at, "extent", kind)));
    if (kind == "Handle") {
      const At field = Field(at, "handle", kind);
      auto handle = HandleKindFromName(String(field));
      if (!handle) Fault(fmt::format("unknown handle type '{}' at {}", String(field), field.where()));
      return std::make_shared<HandleType>(*handle);
    }
    if (kind == "Tensor") return ReadTensor(at);
    if (kind == "Tile") return ReadTile(at);
    if (kind == "Tuple") {
      std::vector<TypePtr> elements;
      for (const At& item : Items(Field(at, "elements", kind))) elements.push_back(ReadType(item));
      return std::make_shared<TupleType>(std::move(elements));
    }
    Fault(fmt::format("unknown type kind '{}' at {}", kind, at.where()));
  }

  static Shape ReadShape(const At& at) {
    Shape shape;
    for (const At& item : Items(at)) shape.push_back(Int(item));
    return shape;
  }

  TypePtr ReadTile(const At& at) {
    Shape shape = ReadShape(Field(at, "shape", "Tile"));
    const DataType dtype = DTypeAt(Field(at, "dtype", "Tile"));
    const MemorySpace space = MemorySpaceAt(Field(at, "memory_space", "Tile"));
    std::optional<TileMemRef> memref;
    if (Has(at, "memref")) {
      const At ref = Field(at, "memref", "Tile");
      memref = TileMemRef{Int(Field(ref, "byte_offset", "memref")), Int(Field(ref, "size", "memref"))};
    }
    ValidShape valid_shape;
    if (Has(at, "valid_shape")) valid_shape = ReadExprs(Field(at, "valid_shape", "Tile"));
    return std::make_shared<TileType>(std::move(shape), dtype, space, memref, std::move(valid_shape));
  }

  // A var's full definition where it first appears; afterwards {"kind": "Var", "id": N}.
  VarPtr ReadVar(const At& at) {
    const std::string kind = KindOf(at, "Var");
    if (kind != "Var") Fault(fmt::format("expected a Var at {}, got {}", at.where(), Article(kind)));
    const int64_t id = Int(Field(at, "id", "Var"));
    if (auto it = vars_.find(id); it != vars_.end()) return it->second;
    if (!Has(at, "name") && !Has(at, "type"))
      Fault(fmt::format("var {} at {} is used before its definition", id, at.where()));
    std::string name = String(Field(at, "name", "Var"));
    TypePtr type = ReadType(Field(at, "type", "Var"));
    auto var = std::make_shared<Var>(std::move(name), std::move(type), ReadSpan(at));
    vars_.emplace(id, var);
    return var;
  }

  std::vector<VarPtr> ReadVars(const At& at) {
    std::vector<VarPtr> vars;
    for (const At& item : Items(at)) vars.push_back(ReadVar(item));
    return vars;
  }

  std::vector<ExprPtr> ReadExprs(const At& at) {
    std::vector<ExprPtr> exprs;
    for (const At& item : Items(at)) exprs.push_back(ReadExpr(item));
    return exprs;
  }

  ExprPtr ReadExpr(const At& at) {
    const Nested nested(*this, at);
    const std::string kind = KindOf(at, "expression");
    if (kind == "Var") return ReadVar(at);
    if (kind == "ConstInt")
      return std::make_shared<ConstInt>(Int(Field(at, "value", kind)), DTypeAt(Field(at, "dtype", kind)), ReadSpan(at));
    if (kind == "ConstFloat")
      return std::make_shared<ConstFloat>(Float(Field(at, "value", kind)), DTypeAt(Field(at, "dtype", kind)),
                                          ReadSpan(at));
    if (kind == "ConstBool") return std::make_shared<ConstBool>(Bool(Field(at, "value", kind)), ReadSpan(at));
    if (kind == "TupleLiteral")
      return std::make_shared<TupleLiteral>(ReadExprs(Field(at, "elements", kind)), ReadSpan(at));
    if (kind == "BinaryExpr") return ReadBinary(at);
    if (kind == "Call") return ReadCall(at);
    Fault(fmt::format("unknown expression kind '{}' at {}", kind, at.where()));
  }

  ExprPtr ReadBinary(const At& at) {
    const auto op = EnumFromName(Field(at, "op", "BinaryExpr"), "binary operator", BinaryOp::Ge, BinaryOpSymbol);
    ExprPtr lhs = ReadExpr(Field(at, "lhs", "BinaryExpr"));
    ExprPtr rhs = ReadExpr(Field(at, "rhs", "BinaryExpr"));
    TypePtr type = ReadType(Field(at, "type", "BinaryExpr"));
    return std::make_shared<BinaryExpr>(op, std::move(lhs), std::move(rhs), std::move(type), ReadSpan(at));
  }

  ExprPtr ReadCall(const At& at) {
    if (Has(at, "op")) return ReadOpCall(at);
    if (!Has(at, "callee")) Fault(fmt::format("missing field 'op' or 'callee' in a Call at {}", at.where()));
    std::string callee = String(Field(at, "callee", "Call"));
    std::vector<ExprPtr> args = ReadExprs(Field(at, "args", "Call"));
    Call::Kwargs kwargs = Has(at, "kwargs") ? ReadKwargs(Field(at, "kwargs", "Call")) : Call::Kwargs{};
    TypePtr type = ReadType(Field(at, "type", "Call"));
    std::vector<ArgDirection> directions;
    if (Has(at, "arg_directions"))
      for (const At& item : Items(Field(at, "arg_directions", "Call")))
        directions.push_back(EnumFromName(item, "arg direction", ArgDirection::Scalar, ArgDirectionName));
    LaunchOrder order = Has(at, "order") ? ReadOrder(Field(at, "order", "Call")) : LaunchOrder{};
    ExprPtr core_num = Has(at, "core_num") ? ReadExpr(Field(at, "core_num", "Call")) : nullptr;
    return std::make_shared<Call>(std::move(callee), std::move(args), std::move(type), ReadSpan(at),
                                  std::move(directions), std::move(kwargs), std::move(order), std::move(core_num));
  }

  ExprPtr ReadOpCall(const At& at) {
    const At op_at = Field(at, "op", "Call");
    const std::string name = String(op_at);
    const OpDef* op = OpRegistry::Get().Find(name);
    if (!op) Fault(fmt::format("unknown op '{}' at {}", name, op_at.where()));
    std::vector<ExprPtr> args = ReadExprs(Field(at, "args", "Call"));
    Call::Kwargs kwargs = Has(at, "kwargs") ? ReadKwargs(Field(at, "kwargs", "Call")) : Call::Kwargs{};
    const At type_at = Field(at, "type", "Call");
    TypePtr type = ReadType(type_at);
    Span span = ReadSpan(at);
    CheckOpCall(*op, args, kwargs, *type, span, at, type_at);
    return std::make_shared<Call>(op, std::move(args), std::move(kwargs), std::move(type), std::move(span));
  }

  // The checks the DSL parser's calls get (OpRegistry::CreateCall: arity, attributes, the op's type
  // deduction), and the recorded type agreeing with the deduced one.
  static void CheckOpCall(const OpDef& op, const std::vector<ExprPtr>& args, const Call::Kwargs& kwargs,
                          const Type& recorded, const Span& span, const At& at, const At& type_at) {
    auto checked = OpRegistry::Get().CreateCall(op.name, args, kwargs, span);
    if (!checked) throw JsonFault{fmt::format("{}, at {}", checked.error().message, at.where()), checked.error().kind, span};
    const Type& deduced = *(*checked)->type();
    if (!RecordedTypeAgrees(recorded, deduced))
      throw JsonFault{fmt::format("'{}' is recorded as {} but its arguments make it {}, at {}", op.name, recorded.str(),
                                  deduced.str(), type_at.where()),
                      DiagnosticKind::Type, span};
  }

  static Call::Kwargs ReadKwargs(const At& at) {
    Call::Kwargs kwargs;
    for (const At& item : Items(at)) kwargs.emplace_back(String(Field(item, "name", "kwarg")), ReadOpAttr(item));
    return kwargs;
  }

  static OpAttr ReadOpAttr(const At& at) {
    if (Has(at, "bool")) return Bool(Field(at, "bool", "kwarg"));
    if (Has(at, "int")) return Int(Field(at, "int", "kwarg"));
    if (Has(at, "float")) return Float(Field(at, "float", "kwarg"));
    if (Has(at, "string")) return String(Field(at, "string", "kwarg"));
    if (Has(at, "dtype")) return DTypeAt(Field(at, "dtype", "kwarg"));
    if (Has(at, "memory_space")) return MemorySpaceAt(Field(at, "memory_space", "kwarg"));
    Fault(fmt::format("missing the value of a kwarg at {} (one of bool, int, float, string, dtype, memory_space)",
                      at.where()));
  }

  LaunchOrder ReadOrder(const At& at) {
    LaunchOrder order;
    order.deps = ReadExprs(Field(at, "deps", "launch order"));
    if (Has(at, "task_id")) order.task_id = ReadVar(Field(at, "task_id", "launch order"));
    order.allow_early_resolve = Bool(Field(at, "allow_early_resolve", "launch order"));
    return order;
  }

  std::vector<IterArg> ReadIterArgs(const At& at) {
    std::vector<IterArg> iter_args;
    for (const At& item : Items(at)) {
      ExprPtr init = ReadExpr(Field(item, "init", "iter arg"));
      iter_args.push_back(IterArg{ReadVar(Field(item, "var", "iter arg")), std::move(init)});
      if (Has(item, "carry"))
        iter_args.back().carry =
            EnumFromName(Field(item, "carry", "iter arg"), "carry kind", CarryKind::Rebind, CarryKindName);
    }
    return iter_args;
  }

  StmtPtr ReadStmt(const At& at) {
    const Nested nested(*this, at);
    const std::string kind = KindOf(at, "statement");
    const Span span = ReadSpan(at);
    if (kind == "AssignStmt") {
      ExprPtr value = ReadExpr(Field(at, "value", kind));
      return std::make_shared<AssignStmt>(ReadVar(Field(at, "var", kind)), std::move(value), span);
    }
    if (kind == "EvalStmt") return std::make_shared<EvalStmt>(ReadExpr(Field(at, "expr", kind)), span);
    if (kind == "SeqStmts") {
      std::vector<StmtPtr> stmts;
      for (const At& item : Items(Field(at, "stmts", kind))) stmts.push_back(ReadStmt(item));
      return std::make_shared<SeqStmts>(std::move(stmts), span);
    }
    if (kind == "ReturnStmt") return std::make_shared<ReturnStmt>(ReadExprs(Field(at, "values", kind)), span);
    if (kind == "YieldStmt") return std::make_shared<YieldStmt>(ReadExprs(Field(at, "values", kind)), span);
    if (kind == "BreakStmt") return std::make_shared<BreakStmt>(ReadExprs(Field(at, "values", kind)), span);
    if (kind == "ContinueStmt") return std::make_shared<ContinueStmt>(ReadExprs(Field(at, "values", kind)), span);
    if (kind == "ForStmt") return ReadFor(at, span);
    if (kind == "WhileStmt") return ReadWhile(at, span);
    if (kind == "IfStmt") return ReadIf(at, span);
    if (kind == "InCoreScopeStmt") return ReadInCore(at, span);
    if (kind == "RuntimeScopeStmt") {
      const bool manual = Bool(Field(at, "manual", kind));
      return std::make_shared<RuntimeScopeStmt>(manual, ReadStmt(Field(at, "body", kind)), span);
    }
    Fault(fmt::format("unknown statement kind '{}' at {}", kind, at.where()));
  }

  StmtPtr ReadFor(const At& at, const Span& span) {
    constexpr const char* kFor = "ForStmt";
    const auto kind = EnumFromName(Field(at, "for_kind", kFor), "loop kind", ForKind::Pipeline, ForKindName);
    ExprPtr start = ReadExpr(Field(at, "start", kFor));
    ExprPtr stop = ReadExpr(Field(at, "stop", kFor));
    ExprPtr step = ReadExpr(Field(at, "step", kFor));
    VarPtr loop_var = ReadVar(Field(at, "loop_var", kFor));
    std::vector<IterArg> iter_args = ReadIterArgs(Field(at, "iter_args", kFor));
    StmtPtr body = ReadStmt(Field(at, "body", kFor));
    std::vector<VarPtr> return_vars = ReadVars(Field(at, "return_vars", kFor));
    return std::make_shared<ForStmt>(std::move(loop_var), std::move(start), std::move(stop), std::move(step),
                                     std::move(iter_args), std::move(body), std::move(return_vars), kind, span);
  }

  StmtPtr ReadWhile(const At& at, const Span& span) {
    std::vector<IterArg> iter_args = ReadIterArgs(Field(at, "iter_args", "WhileStmt"));
    ExprPtr condition = ReadExpr(Field(at, "condition", "WhileStmt"));
    StmtPtr body = ReadStmt(Field(at, "body", "WhileStmt"));
    std::vector<VarPtr> return_vars = ReadVars(Field(at, "return_vars", "WhileStmt"));
    return std::make_shared<WhileStmt>(std::move(condition), std::move(iter_args), std::move(body),
                                       std::move(return_vars), span);
  }

  StmtPtr ReadIf(const At& at, const Span& span) {
    ExprPtr condition = ReadExpr(Field(at, "condition", "IfStmt"));
    StmtPtr then_body = ReadStmt(Field(at, "then", "IfStmt"));
    StmtPtr else_body = Has(at, "else") ? ReadStmt(Field(at, "else", "IfStmt")) : nullptr;
    std::vector<VarPtr> return_vars = ReadVars(Field(at, "return_vars", "IfStmt"));
    return std::make_shared<IfStmt>(std::move(condition), std::move(then_body), std::move(else_body),
                                    std::move(return_vars), span);
  }

  StmtPtr ReadInCore(const At& at, const Span& span) {
    constexpr const char* kScope = "InCoreScopeStmt";
    std::string name = String(Field(at, "name", kScope));
    ExprPtr block_num = Has(at, "block_num") ? ReadExpr(Field(at, "block_num", kScope)) : nullptr;
    const bool sync_start = Bool(Field(at, "sync_start", kScope));
    LaunchOrder order = Has(at, "order") ? ReadOrder(Field(at, "order", kScope)) : LaunchOrder{};
    StmtPtr body = ReadStmt(Field(at, "body", kScope));
    return std::make_shared<InCoreScopeStmt>(std::move(name), std::move(body), span, std::move(block_num),
                                             sync_start, std::move(order));
  }

  // Vars by their id in the document; every reference gets the same object.
  std::unordered_map<int64_t, VarPtr> vars_;
  int depth_ = 0;  // expressions, statements and types being read (Nested)
};

// nlohmann's messages start with "[json.exception.parse_error.101] "; users need only the rest.
std::string ParseErrorText(const nlohmann::json::exception& error) {
  std::string_view text = error.what();
  if (auto end = text.find("] "); text.starts_with("[json.exception") && end != std::string_view::npos)
    text.remove_prefix(end + 2);
  return std::string(text);
}

// Runs `read` (which must not throw) on a thread with a stack for kMaxNesting levels of the
// reader's recursion, some 700 bytes a level: the caller's own stack may be 8 MB or less (a
// Python thread's), and a document is read whole before its depth is known.
Result<ProgramPtr> OnReaderStack(const std::function<Result<ProgramPtr>()>& read) {
  constexpr size_t kStackBytes = size_t{32} << 20;
  struct Job {
    const std::function<Result<ProgramPtr>()>* read;
    std::optional<Result<ProgramPtr>> result;
  } job{&read, std::nullopt};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kStackBytes);
  pthread_t thread;
  const int started = pthread_create(
      &thread, &attr,
      [](void* arg) -> void* {
        auto* job = static_cast<Job*>(arg);
        job->result.emplace((*job->read)());
        return nullptr;
      },
      &job);
  pthread_attr_destroy(&attr);
  if (started != 0) return read();  // no thread to be had: read on the caller's stack
  pthread_join(thread, nullptr);
  return std::move(*job.result);
}

}  // namespace

std::string ProgramToJson(const Program& program, int indent) {
  return JsonWriter().WriteProgram(program).dump(indent);
}

Result<ProgramPtr> ProgramFromJson(std::string_view text) {
  ReadJson document;
  try {
    document = ReadJson::parse(text);
  } catch (const nlohmann::json::exception& error) {
    // A parse error, or a number beyond a double (out_of_range 406: "number overflow parsing '1e999'").
    return MakeError(DiagnosticKind::Syntax, "invalid JSON: " + ParseErrorText(error));
  }
  return OnReaderStack([&]() -> Result<ProgramPtr> {
    try {
      return JsonReader().ReadProgram(At{document, &document});
    } catch (const JsonFault& fault) {
      return MakeError(fault.kind, "invalid PyPTO IR JSON: " + fault.message, fault.span);
    }
  });
}

}  // namespace pypto::ir
