#include "pypto/ir/json.h"

#include <gtest/gtest.h>

#include <limits>

#include "pypto-c/ir.h"
#include "pypto/ir/c_api_bridge.h"
#include "pypto/ir/dynamic_extent.h"
#include "pypto/ir/functor.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"
#include "sample_programs.h"

namespace pypto::ir {
namespace {

using testing::Ints;
using testing::Local;
using testing::Op;
using testing::OpWithKwargs;
using testing::Scalar;
using testing::Tensor;

ExprPtr Index(int64_t value) { return std::make_shared<ConstInt>(value, DataType::INDEX); }
TypePtr IndexType() { return std::make_shared<ScalarType>(DataType::INDEX); }
StmtPtr Seq(std::vector<StmtPtr> stmts) { return std::make_shared<SeqStmts>(std::move(stmts)); }
StmtPtr Assign(const VarPtr& var, const ExprPtr& value) { return std::make_shared<AssignStmt>(var, value); }

// A kernel touching every expression and statement kind a kernel holds, every type a kernel value
// has (a tile with a memref and a valid shape naming a parameter), and kwargs of every OpAttr kind
// but float (the orchestration's tensor.create has that), each on an op that takes it: the reader
// checks every op call as OpRegistry::CreateCall does.
FunctionPtr EveryNodeKernel() {
  auto a = Tensor("a", {64, 64}), out = Tensor("out", {64, 64});
  auto rows = Scalar("rows", DataType::INDEX);
  auto load = Op("tile.load", {a, Ints({0, 0}), Ints({64, 64})});
  auto tile_type = std::make_shared<TileType>(Shape{64, 64}, DataType::FP32, MemorySpace::Vec,
                                              TileMemRef{.byte_offset = 256, .size = 16384},
                                              ValidShape{rows, Index(64)});
  auto tile = std::make_shared<Var>("tile", tile_type, Span{"k.py", 7, 5});
  // The load's type as the passes leave it: a memref, and a valid shape the op does not deduce.
  Call::Kwargs kwargs = {{"target_memory", MemorySpace::Vec}, {"clamp", true}};
  auto loaded = std::make_shared<Call>(load->op(), load->args(), kwargs, tile_type, Span{"k.py", 7, 12});
  auto cast = OpWithKwargs("tile.cast", {tile}, {{"target_type", DataType::BF16}, {"mode", std::string("round")}});
  auto narrow = Local("narrow", cast);
  auto transpose = OpWithKwargs("tile.transpose", {tile}, {{"axis1", int64_t{0}}, {"axis2", int64_t{1}}});
  auto flipped = Local("flipped", transpose);

  auto i = std::make_shared<Var>("i", IndexType());
  auto acc = std::make_shared<Var>("acc", IndexType()), acc_out = std::make_shared<Var>("acc_out", IndexType());
  auto next = std::make_shared<Var>("next", IndexType()), picked = std::make_shared<Var>("picked", IndexType());
  auto limit = std::make_shared<BinaryExpr>(BinaryOp::Min, rows, Index(8), IndexType());
  auto too_far = std::make_shared<BinaryExpr>(BinaryOp::Ge, i, limit, std::make_shared<ScalarType>(DataType::BOOL));
  auto sum = std::make_shared<BinaryExpr>(BinaryOp::Add, acc, i, IndexType());
  auto pick = std::make_shared<IfStmt>(std::make_shared<ConstBool>(true),
                                       std::make_shared<YieldStmt>(std::vector<ExprPtr>{sum}),
                                       std::make_shared<YieldStmt>(std::vector<ExprPtr>{acc}),
                                       std::vector<VarPtr>{picked});
  auto jump = std::make_shared<IfStmt>(too_far, std::make_shared<BreakStmt>(std::vector<ExprPtr>{acc}), nullptr,
                                       std::vector<VarPtr>{});
  auto loop = std::make_shared<ForStmt>(i, Index(0), Index(16), Index(1), std::vector<IterArg>{{acc, Index(0)}},
                                        Seq({jump, pick, Assign(next, picked),
                                             std::make_shared<YieldStmt>(std::vector<ExprPtr>{next})}),
                                        std::vector<VarPtr>{acc_out}, ForKind::Parallel);

  auto w = std::make_shared<Var>("w", IndexType()), w_out = std::make_shared<Var>("w_out", IndexType());
  auto skip = std::make_shared<IfStmt>(std::make_shared<ConstBool>(false),
                                       std::make_shared<ContinueStmt>(std::vector<ExprPtr>{w}), nullptr,
                                       std::vector<VarPtr>{});
  auto spin = std::make_shared<WhileStmt>(
      std::make_shared<BinaryExpr>(BinaryOp::Lt, w, acc_out, std::make_shared<ScalarType>(DataType::BOOL)),
      std::vector<IterArg>{{w, Index(0)}},
      Seq({skip, std::make_shared<YieldStmt>(std::vector<ExprPtr>{
                     std::make_shared<BinaryExpr>(BinaryOp::Shl, w, Index(1), IndexType())})}),
      std::vector<VarPtr>{w_out});

  auto inf = std::make_shared<Var>("inf", std::make_shared<ScalarType>(DataType::FP32));
  auto store = Op("tile.store", {tile, Ints({0, 0}), out});
  auto make_context = Op("prefetch.make_context", {});
  auto ctx = std::make_shared<Var>("ctx", make_context->type());
  auto prefetch = Op("prefetch.async_prefetch", {a, ctx});
  auto event = std::make_shared<Var>("event", prefetch->type());
  auto open_session = Op("prefetch.session", {ctx});
  auto session = std::make_shared<Var>("session", open_session->type());
  std::vector<StmtPtr> body = {
      Assign(tile, loaded), loop, spin,
      Assign(inf, std::make_shared<ConstFloat>(std::numeric_limits<double>::infinity(), DataType::FP32)),
      std::make_shared<EvalStmt>(store),
      Assign(ctx, make_context), Assign(event, prefetch), Assign(session, open_session),
      std::make_shared<EvalStmt>(Op("prefetch.wait", {event, session})),
      Assign(narrow, cast), Assign(flipped, transpose),
      std::make_shared<ReturnStmt>(std::vector<ExprPtr>{out})};
  return std::make_shared<Function>(
      "kernel", std::vector<VarPtr>{a, rows, out},
      std::vector<ParamDirection>{ParamDirection::In, ParamDirection::In, ParamDirection::Out},
      std::vector<TypePtr>{out->type()}, Seq(std::move(body)), FunctionType::AIV,
      std::map<std::string, AttrValue>{
          {"dual_aiv_dispatch", true}, {"priority", int64_t{2}}, {"note", std::string("x")}},
      Span{"k.py", 3, 1});
}

// An orchestration that launches `kernel` in every way: from a manual runtime scope, through an
// SPMD pl.at scope with deps and a TaskId, and as a direct call with directions, kwargs and a core_num.
FunctionPtr EveryLaunchOrchestration(const FunctionPtr& kernel) {
  auto a = Tensor("a", {64, 64}), out = Tensor("out", {64, 64});
  auto rows = Scalar("rows", DataType::INDEX);
  auto first = std::make_shared<Var>("first", std::make_shared<ScalarType>(DataType::TASK_ID));
  auto second = std::make_shared<Var>("second", std::make_shared<ScalarType>(DataType::TASK_ID));
  auto tids = std::make_shared<Var>("tids", std::make_shared<ArrayType>(DataType::TASK_ID, 4));
  auto nothing = std::make_shared<Var>("nothing", std::make_shared<UnknownType>());
  auto launched = std::make_shared<Call>(
      kernel->name(), std::vector<ExprPtr>{a, rows, out}, out->type(), Span{},
      std::vector<ArgDirection>{ArgDirection::Input, ArgDirection::Scalar, ArgDirection::OutputExisting},
      Call::Kwargs{{kSyncStartKwarg, true}},
      LaunchOrder{.deps = {first}, .task_id = second, .allow_early_resolve = true},
      Index(4));
  auto result = Local("result", launched);
  auto scope = std::make_shared<InCoreScopeStmt>(
      "spmd_part", Seq({Assign(result, launched)}), Span{"o.py", 12, 5}, Index(2), true,
      LaunchOrder{.deps = {first}, .task_id = nullptr, .allow_early_resolve = false});
  auto pair = std::make_shared<TupleLiteral>(std::vector<ExprPtr>{result, rows});
  auto create = OpWithKwargs("tensor.create", {Ints({4, 4})},
                             {{"dtype", DataType::FP32}, {"init_value", 0.5}, {"manual_dep", true}});
  auto body = Seq({std::make_shared<RuntimeScopeStmt>(true, scope), Assign(Local("buffer", create), create),
                   Assign(nothing, Index(0)),
                   std::make_shared<EvalStmt>(tids), std::make_shared<ReturnStmt>(std::vector<ExprPtr>{pair})});
  return std::make_shared<Function>("main", std::vector<VarPtr>{a, rows, out, first, tids},
                                    std::vector<ParamDirection>{ParamDirection::In, ParamDirection::In,
                                                                ParamDirection::InOut, ParamDirection::In,
                                                                ParamDirection::In},
                                    std::vector<TypePtr>{pair->type()}, body, FunctionType::Orchestration);
}

ProgramPtr EveryNodeProgram() {
  auto kernel = EveryNodeKernel();
  // A body-less declaration, as a hand-written kernel is.
  auto external = std::make_shared<Function>("external", std::vector<VarPtr>{Tensor("x", {8})},
                                             std::vector<ParamDirection>{ParamDirection::InOut},
                                             std::vector<TypePtr>{}, nullptr, FunctionType::AIC,
                                             std::map<std::string, AttrValue>{
                                                 {kExternalSourceAttr, std::string("/k.cpp")}});
  std::vector<FunctionPtr> functions = {kernel, external, EveryLaunchOrchestration(kernel)};
  return std::make_shared<Program>("every_node", std::move(functions), "main");
}

TEST(Json, RoundTripKeepsEveryNodeKind) {
  auto program = EveryNodeProgram();
  const std::string json = ProgramToJson(*program);
  auto read = ProgramFromJson(json);
  ASSERT_TRUE(read) << read.error().str();
  EXPECT_EQ(StructuralDiff(*program, **read), std::nullopt);
  EXPECT_EQ(ProgramToJson(**read), json);
  EXPECT_EQ(PrintProgram(**read), PrintProgram(*program));
  EXPECT_EQ(ProgramToJson(**read, 2), ProgramToJson(*program, 2));
}

TEST(Json, RoundTripOfSamplePrograms) {
  for (const auto& program : {testing::TileAddProgram(), testing::VectorDagProgram(), testing::HelloWorldProgram(),
                              testing::TwoStageLoopProgram(), testing::SpmdComputedBlocksProgram()}) {
    auto read = ProgramFromJson(ProgramToJson(*program, 1));
    ASSERT_TRUE(read) << read.error().str();
    EXPECT_EQ(StructuralDiff(*program, **read), std::nullopt);
    EXPECT_EQ(PrintProgram(**read), PrintProgram(*program));
  }
}

// A program compiled for every extent of a pl.dynamic dimension: its entry's tensor has a dynamic
// axis (printed pl.DYN) and reads its extent with tensor.extent. JSON keeps both exactly, and the
// type differs from any static one.
TEST(Json, KeepsADynamicAxisAndTheReadOfItsExtent) {
  auto x = std::make_shared<Var>("x", std::make_shared<TensorType>(Shape{kDynamicExtent, 64}, DataType::FP32));
  EXPECT_EQ(x->type()->str(), "pl.Tensor[[pl.DYN, 64], pl.FP32]");
  EXPECT_FALSE(x->type()->equals(TensorType({64, 64}, DataType::FP32)));
  auto extent = OpWithKwargs("tensor.extent", {x}, {{"axis", int64_t{0}}});
  EXPECT_EQ(extent->type()->str(), IndexType()->str());
  auto rows = Local("M", extent);
  auto body = Seq({Assign(rows, extent), std::make_shared<ReturnStmt>(std::vector<ExprPtr>{x})});
  auto entry = std::make_shared<Function>("main", std::vector<VarPtr>{x}, std::vector<ParamDirection>{ParamDirection::In},
                                          std::vector<TypePtr>{x->type()}, body, FunctionType::Orchestration);
  Program program("dynamic", {entry}, "main");
  auto read = ProgramFromJson(ProgramToJson(program));
  ASSERT_TRUE(read) << read.error().str();
  EXPECT_EQ(StructuralDiff(program, **read), std::nullopt);
  const std::string printed = PrintProgram(**read);
  EXPECT_NE(printed.find("M: pl.Scalar[pl.INDEX] = pl.tensor.extent(x, axis=0)"), std::string::npos) << printed;
  auto outside = OpRegistry::Get().CreateCall("tensor.extent", {x}, {{"axis", int64_t{2}}}, {});
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().message, "tensor.extent of pl.Tensor[[pl.DYN, 64], pl.FP32] reads an axis in [0, 2), got 2");
}

// RebindingLoopProgram with its loop's values stamped as carried `carry` (what ClassifyIterArgCarry does).
ProgramPtr StampedRebindingLoop(CarryKind cur, CarryKind acc) {
  auto program = testing::RebindingLoopProgram();
  auto entry = program->entry();
  auto stmts = FlattenStmts(entry->body());
  const auto* loop = stmts[3]->As<ForStmt>();
  std::vector<IterArg> iter_args = loop->iter_args();
  iter_args[0].carry = cur;
  iter_args[1].carry = CarryKind::Rebind;
  iter_args[2].carry = acc;
  stmts[3] = std::make_shared<ForStmt>(loop->loop_var(), loop->start(), loop->stop(), loop->step(), iter_args,
                                       loop->body(), loop->return_vars(), loop->kind(), loop->span());
  return std::make_shared<Program>(program->name(),
                                   std::vector<FunctionPtr>{program->functions()[0], entry->WithBody(Seq(stmts))},
                                   program->entry_name());
}

TEST(Json, KeepsHowALoopCarriesEachValue) {
  auto program = StampedRebindingLoop(CarryKind::Rebind, CarryKind::Alias);
  const std::string json = ProgramToJson(*program);
  EXPECT_NE(json.find(R"("carry":"rebind")"), std::string::npos) << json;
  auto read = ProgramFromJson(json);
  ASSERT_TRUE(read) << read.error().str();
  EXPECT_EQ(StructuralDiff(*program, **read), std::nullopt);
  const std::string printed = PrintProgram(**read);
  EXPECT_NE(printed.find("for i, (cur, other, acc) in pl.range(3, init_values=(c_1, spare, y), "
                         "carry=(\"rebind\", \"rebind\", \"alias\")):\n"),
            std::string::npos)
      << printed;
  EXPECT_EQ(StructuralDiff(*program, *StampedRebindingLoop(CarryKind::Alias, CarryKind::Alias)),
            "function 'rebind': statement 3: loop-carried value 0 is carried as rebind vs alias");
}

TEST(Json, KeepsKwargsTileTypesAndLaunchOrdersExactly) {
  auto read = ProgramFromJson(ProgramToJson(*EveryNodeProgram()));
  ASSERT_TRUE(read);
  const auto& kernel_body = FlattenStmts((*read)->functions()[0]->body());
  const auto* load = kernel_body[0]->As<AssignStmt>()->value()->As<Call>();
  ASSERT_EQ(load->kwargs().size(), 2u);
  EXPECT_EQ(FindAttr<MemorySpace>(load->kwargs(), "target_memory"), MemorySpace::Vec);
  EXPECT_EQ(FindAttr<bool>(load->kwargs(), "clamp"), true);
  const auto* cast = kernel_body[9]->As<AssignStmt>()->value()->As<Call>();
  EXPECT_EQ(FindAttr<DataType>(cast->kwargs(), "target_type"), DataType::BF16);
  EXPECT_EQ(FindAttr<std::string>(cast->kwargs(), "mode"), "round");
  const auto* transpose = kernel_body[10]->As<AssignStmt>()->value()->As<Call>();
  EXPECT_EQ(FindAttr<int64_t>(transpose->kwargs(), "axis2"), 1);
  const auto* tile = load->type()->As<TileType>();
  ASSERT_TRUE(tile && tile->memref());
  EXPECT_EQ(*tile->memref(), (TileMemRef{256, 16384}));
  const auto& orchestration = *(*read)->functions()[2];
  const auto* scope = FlattenStmts(orchestration.body())[0]->As<RuntimeScopeStmt>()->body()->As<InCoreScopeStmt>();
  ASSERT_TRUE(scope);
  EXPECT_TRUE(scope->sync_start());
  const auto* call = FlattenStmts(scope->body())[0]->As<AssignStmt>()->value()->As<Call>();
  EXPECT_EQ(call->arg_directions().back(), ArgDirection::OutputExisting);
  EXPECT_TRUE(call->order().allow_early_resolve);
  EXPECT_EQ(AsConstInt(call->core_num()), 4);
  const auto* create = FlattenStmts(orchestration.body())[1]->As<AssignStmt>()->value()->As<Call>();
  EXPECT_EQ(FindAttr<double>(create->kwargs(), "init_value"), 0.5);
  EXPECT_EQ((*read)->functions()[1]->body(), nullptr);
}

TEST(Json, AVarUsedInSeveralPlacesComesBackAsOneObject) {
  auto read = ProgramFromJson(ProgramToJson(*EveryNodeProgram()));
  ASSERT_TRUE(read);
  const auto& kernel = *(*read)->functions()[0];
  const auto& rows = kernel.params()[1];
  const auto* load = FlattenStmts(kernel.body())[0]->As<AssignStmt>();
  // The tile's valid shape names the `rows` parameter itself, as does the loop's bound.
  EXPECT_EQ(load->var()->type()->As<TileType>()->valid_shape()[0], rows);
  const auto* loop = FlattenStmts(kernel.body())[1]->As<ForStmt>();
  const auto& loop_body = FlattenStmts(loop->body());
  const auto* too_far = loop_body[0]->As<IfStmt>()->condition()->As<BinaryExpr>();
  EXPECT_EQ(too_far->lhs(), loop->loop_var());
  EXPECT_EQ(too_far->rhs()->As<BinaryExpr>()->lhs(), rows);
  // The store writes the `out` parameter that the function returns.
  const auto& out = kernel.params()[2];
  const auto* store = FlattenStmts(kernel.body())[4]->As<EvalStmt>()->expr()->As<Call>();
  EXPECT_EQ(store->args()[2], out);
  // Two reads of the same text give unrelated vars.
  auto again = ProgramFromJson(ProgramToJson(*EveryNodeProgram()));
  EXPECT_NE((*again)->functions()[0]->params()[1], rows);
}

// The error ProgramFromJson gives for `json`, or "" when it reads it.
std::string ReadError(const std::string& json) {
  auto read = ProgramFromJson(json);
  return read ? "" : read.error().message;
}

// The JSON of TileAddProgram with the first `from` replaced by `to`.
std::string EditedTileAdd(const std::string& from, const std::string& to) {
  std::string json = ProgramToJson(*testing::TileAddProgram());
  auto at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? json : json.replace(at, from.size(), to);
}

TEST(Json, MalformedInputNamesTheFault) {
  EXPECT_EQ(ReadError("{\"format\": "),
            "invalid JSON: parse error at line 1, column 12: syntax error while parsing value - unexpected end of "
            "input; expected '[', '{', or a literal");
  EXPECT_EQ(ReadError("[]"), "invalid PyPTO IR JSON: expected a program object at /");
  EXPECT_EQ(ReadError(EditedTileAdd("\"format\":\"pypto-ir\"", "\"format\":\"other\"")),
            "invalid PyPTO IR JSON: not a PyPTO IR document: format is 'other', expected 'pypto-ir'");
  EXPECT_EQ(ReadError(EditedTileAdd("\"name\":\"tile_a\"", "\"nom\":\"tile_a\"")),
            "invalid PyPTO IR JSON: missing field 'name' in a Var at /functions/0/body/stmts/0/body/stmts/0/var");
  EXPECT_EQ(ReadError(EditedTileAdd("\"op\":\"tile.add\"", "\"op\":\"tile.nope\"")),
            "invalid PyPTO IR JSON: unknown op 'tile.nope' at /functions/0/body/stmts/0/body/stmts/2/value/op");
  EXPECT_EQ(ReadError(EditedTileAdd("\"kind\":\"EvalStmt\"", "\"kind\":\"PrintStmt\"")),
            "invalid PyPTO IR JSON: unknown statement kind 'PrintStmt' at /functions/0/body/stmts/0/body/stmts/3");
  EXPECT_EQ(ReadError(EditedTileAdd("\"kind\":\"Tensor\"", "\"kind\":\"Matrix\"")),
            "invalid PyPTO IR JSON: unknown type kind 'Matrix' at /functions/0/params/0/type");
  EXPECT_EQ(ReadError(EditedTileAdd("\"dtype\":\"FP32\"", "\"dtype\":\"FP33\"")),
            "invalid PyPTO IR JSON: unknown dtype 'FP33' at /functions/0/params/0/type/dtype");
}

TEST(Json, ALoopMissingAFieldIsNamedWithItsPath) {
  auto program = testing::TwoStageLoopProgram();
  std::string json = ProgramToJson(*program);
  auto at = json.find("\"step\":");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, 7, "\"stride\":");
  EXPECT_EQ(ReadError(json), "invalid PyPTO IR JSON: missing field 'step' in a ForStmt at /functions/0/body/stmts/0");
}

TEST(Json, AVarReferencedBeforeItsDefinitionIsRefused) {
  // Give tile_a's definition another id: the add's first operand then names an id nothing defined.
  EXPECT_EQ(ReadError(EditedTileAdd("\"id\":3,\"name\":\"tile_a\"", "\"id\":99,\"name\":\"tile_a\"")),
            "invalid PyPTO IR JSON: var 3 at /functions/0/body/stmts/0/body/stmts/2/value/args/0 is used before its "
            "definition");
}

TEST(Json, CApiRoundTripsAndReportsParseErrors) {
  pypto_ir_program* program = c_api::Wrap(testing::VectorDagProgram());
  char* json = nullptr;
  ASSERT_EQ(pypto_ir_program_to_json(program, -1, &json), PYPTO_OK);
  pypto_ir_program* read = nullptr;
  ASSERT_EQ(pypto_ir_program_from_json(json, &read), PYPTO_OK);
  EXPECT_EQ(StructuralDiff(*program->program, *read->program), std::nullopt);
  pypto_string_free(json);
  pypto_ir_program_destroy(read);
  pypto_ir_program_destroy(program);
  EXPECT_EQ(pypto_ir_program_from_json("{}", &read), PYPTO_ERR_PARSE);
  EXPECT_STREQ(pypto_last_error_message(), "invalid PyPTO IR JSON: missing field 'format' in a program at /");
  EXPECT_EQ(pypto_ir_program_from_json(nullptr, &read), PYPTO_ERR_INVALID_ARGUMENT);
}

// Found by fuzz/json_reader_fuzzer (fuzz/regressions/json_reader): a number beyond a double is
// nlohmann's out_of_range, not a parse_error, and escaped the reader.
TEST(Json, ANumberBeyondADoubleIsAJsonError) {
  EXPECT_EQ(ReadError("{\"format\": 61e308}"), "invalid JSON: number overflow parsing '61e308'");
}

}  // namespace
}  // namespace pypto::ir
