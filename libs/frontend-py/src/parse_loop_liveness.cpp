// FunctionParser: whether a name a loop or an if rebinds may be read after it, so it must hand its
// value on. A loop carries a name only when its body reads the value a previous iteration (or the
// code before the loop) gave it, or when something after the loop may read it; an if merges a name
// its branches assign only when something after it may read it. A name every iteration rebinds
// before reading and nothing reads afterwards is not carried at all.
#include "function_parser.h"

namespace pypto::frontend {
namespace {

// One statement on the way from the function's body down to a loop: the block holding it, its
// index there and the statement owning the block (none for the function's own body).
struct Enclosing {
  py::list block;
  size_t index;
  py::handle owner;
};

bool IsLoop(py::handle stmt) { return IsNode(stmt, "For") || IsNode(stmt, "While"); }

// Fills `path` (innermost first) with the statements enclosing `target` in `block`; false when it
// is not there (a statement the parser made up itself).
bool FindEnclosing(py::handle block, py::handle owner, py::handle target, std::vector<Enclosing>& path) {
  py::list statements = py::reinterpret_borrow<py::list>(block);
  for (size_t i = 0; i < py::len(statements); ++i) {
    py::handle stmt = statements[i];
    bool found = stmt.is(target);
    for (const char* field : {"body", "orelse", "finalbody"})
      if (!found && !IsNode(stmt, "FunctionDef") && py::hasattr(stmt, field) &&
          py::isinstance<py::list>(stmt.attr(field)))
        found = FindEnclosing(stmt.attr(field), stmt, target, path);
    if (found) {
      path.push_back(Enclosing{statements, i, owner});
      return true;
    }
  }
  return false;
}

py::list Slice(const py::list& block, size_t begin, size_t end) {
  py::list part;
  for (size_t i = begin; i < end; ++i) part.append(block[i]);
  return part;
}

// A shallow copy of `owner` whose `block` field holds `before` then `after`.
py::object WithBlock(py::handle owner, const py::list& block, const py::list& before, const py::list& after) {
  py::object copy = py::module_::import("copy").attr("copy")(owner);
  py::list joined;
  for (auto stmt : before) joined.append(stmt);
  for (auto stmt : after) joined.append(stmt);
  for (const char* field : {"body", "orelse", "finalbody"})
    if (py::hasattr(owner, field) && block.is(owner.attr(field))) copy.attr(field) = joined;
  return copy;
}

bool HasJump(const py::list& statements) {
  for (auto stmt : statements)
    for (auto node : py::module_::import("ast").attr("walk")(stmt))
      if (IsNode(node, "Break") || IsNode(node, "Continue")) return true;
  return false;
}

}  // namespace

// Walks outwards from `stmt`. In each enclosing block the statements after it run next: a read
// there keeps the name live, a rebinding on every path ends it (unless a break / continue may jump
// past the rebinding). Where the block is an enclosing loop's body, the next iteration runs the
// block again up to and into the statement holding `stmt` (a while loop's condition first): a read
// there keeps it live too. Reads inside a loop `stmt` are left out of that: whether a loop reads the
// value its previous iteration left is the caller's question (it asks the parsed body). A statement
// not found in the function's source (one the parser made up) keeps every name live.
bool FunctionParser::ReadAfter(py::handle stmt, const std::string& name) const {
  py::handle def = function_def_ ? function_def_ : source_.def;
  std::vector<Enclosing> path;
  if (!def || def.is_none() || !FindEnclosing(def.attr("body"), py::handle(), stmt, path)) return true;
  // The statement at the current level holding `stmt`, without a loop `stmt` in it.
  py::object held = IsLoop(stmt) ? py::object(py::none()) : py::reinterpret_borrow<py::object>(stmt);
  for (const auto& [block, index, owner] : path) {
    py::list rest = Slice(block, index + 1, py::len(block));
    const NameUse use = FirstUse(rest, name);
    if (IsRead(use)) return true;
    if (use == NameUse::kRebound && !HasJump(rest)) return false;
    py::list again = Slice(block, 0, index);
    if (!held.is_none()) again.append(held);
    if (owner && IsLoop(owner) && block.is(owner.attr("body"))) {
      if (IsNode(owner, "While") && ReadsName(owner.attr("test"), name)) return true;
      if (IsRead(FirstUse(again, name))) return true;
    }
    if (owner) held = WithBlock(owner, block, again, rest);
  }
  return false;
}

}  // namespace pypto::frontend
