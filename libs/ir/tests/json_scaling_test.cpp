// Reading and writing the JSON of a deep expression takes work linear in its depth. The work is
// measured as the bytes operator new hands out (replaced below for this test binary), not by a
// clock: a chain twice as deep takes about twice the bytes, where a walk that copies each subtree
// or builds each node's path from the root takes four times as many.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "pypto/ir/json.h"
#include "pypto/ir/printer.h"

namespace {

std::atomic<bool> counting{false};
std::atomic<size_t> allocated{0};

}  // namespace

void* operator new(size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocated.fetch_add(size, std::memory_order_relaxed);
  if (void* block = std::malloc(size ? size : 1)) return block;
  throw std::bad_alloc();
}
void operator delete(void* block) noexcept { std::free(block); }
void operator delete(void* block, size_t) noexcept { std::free(block); }

namespace pypto::ir {
namespace {

TypePtr IndexType() { return std::make_shared<ScalarType>(DataType::INDEX); }

// `m = n + n + ... + n` (`depth` additions, each the left operand of the next); returns m.
ProgramPtr ChainProgram(int depth) {
  auto n = std::make_shared<Var>("n", IndexType());
  ExprPtr chain = n;
  for (int i = 0; i < depth; ++i) chain = std::make_shared<BinaryExpr>(BinaryOp::Add, chain, n, IndexType());
  auto m = std::make_shared<Var>("m", IndexType());
  auto body = std::make_shared<SeqStmts>(std::vector<StmtPtr>{
      std::make_shared<AssignStmt>(m, chain), std::make_shared<ReturnStmt>(std::vector<ExprPtr>{m})});
  auto function = std::make_shared<Function>("chain", std::vector<VarPtr>{n},
                                             std::vector<ParamDirection>{ParamDirection::In},
                                             std::vector<TypePtr>{IndexType()}, body, FunctionType::Orchestration);
  return std::make_shared<Program>("chain", std::vector<FunctionPtr>{function}, "chain");
}

// The bytes allocated to write the chain as JSON, read it back and print what was read (each
// nested addition parenthesised: `((n + n) + n) + n`).
size_t BytesToRoundTrip(int depth) {
  auto program = ChainProgram(depth);
  allocated = 0;
  counting = true;
  const std::string json = ProgramToJson(*program);
  const size_t written = allocated;
  auto read = ProgramFromJson(json);
  const size_t was_read = allocated;
  const std::string printed = read ? PrintProgram(**read) : "";
  counting = false;
  // Bytes are in the log when the ratio fails.
  std::fprintf(stderr, "depth %d: write %zu, read %zu, print %zu bytes\n", depth, written, was_read - written,
               allocated - was_read);
  EXPECT_TRUE(read) << read.error().str();
  EXPECT_NE(printed.find(") + n) + n\n        return m\n"), std::string::npos);
  return allocated;
}

TEST(JsonScaling, ATenThousandDeepChainIsWrittenReadAndPrintedInLinearWork) {
  const size_t half = BytesToRoundTrip(5000);
  const size_t full = BytesToRoundTrip(10000);
  EXPECT_LT(static_cast<double>(full), 2.5 * static_cast<double>(half)) << half << " bytes, then " << full;
}

}  // namespace
}  // namespace pypto::ir
