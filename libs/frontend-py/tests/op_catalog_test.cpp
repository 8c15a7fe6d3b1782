// The op catalog through the frontend: each family parsed from DSL source, checked against the
// exact IR text the printer produces (types deduced, unified spellings resolved, attributes kept).
#include <gtest/gtest.h>

#include "frontend_test_util.h"

namespace pypto::frontend::testing {
namespace {

TEST(OpCatalog, TileScalarSpellingsPickTheScalarForms) {
  auto request = Request(R"(@pl.jit
def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 16])
        t = pl.mul(t, -1.0)
        t = pl.add(t, 2)
        t = pl.maximum(t, 0.5)
        t = pl.tile.divs(t, 4.0)
        pl.store(t, [0, 0], c)
    return c
)",
                         {{"a", {16, 16}}, {"c", {16, 16}}});
  EXPECT_EQ(ParseText(request), R"(@pl.program
class _jit_k:
    @pl.function(type=pl.FunctionType.Opaque)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16])
            t_1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.muls(t, -1.0)
            t_2: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(t_1, 2)
            t_3: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.maximums(t_2, 0.5)
            t_4: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.divs(t_3, 4.0)
            pl.tile.store(t_4, [0, 0], c)
        return c
)");
}

TEST(OpCatalog, UnaryMath) {
  auto request = Request(R"(@pl.jit
def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 16])
        e = pl.exp(t)
        l = pl.log(e)
        s = pl.sqrt(l)
        r = pl.rsqrt(s)
        q = pl.recip(r)
        u = pl.relu(q)
        v = pl.abs(u)
        w = pl.neg(v)
        h = pl.cast(w, target_type=pl.FP16, mode="rint")
        f = pl.cast(h, pl.FP32)
        pl.store(f, [0, 0], c)
    return c
)",
                         {{"a", {16, 16}}, {"c", {16, 16}}});
  EXPECT_EQ(ParseText(request), R"(@pl.program
class _jit_k:
    @pl.function(type=pl.FunctionType.Opaque)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16])
            e: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            l: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.log(e)
            s: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.sqrt(l)
            r: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.rsqrt(s)
            q: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.recip(r)
            u: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.relu(q)
            v: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.abs(u)
            w: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.neg(v)
            h: pl.Tile[[16, 16], pl.FP16, pl.Mem.Vec] = pl.tile.cast(w, target_type=pl.FP16, mode="rint")
            f: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.cast(h, target_type=pl.FP32)
            pl.tile.store(f, [0, 0], c)
        return c
)");
}

TEST(OpCatalog, ReductionsAndBroadcastsWithScratchTiles) {
  auto request = Request(R"(@pl.jit
def softmax(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [8, 32])
        tmp = pl.create_tile([8, 32], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        m: pl.Tile[[8, 1], pl.FP32] = pl.row_max(t, tmp)
        shifted = pl.row_expand_sub(t, m)
        e = pl.exp(shifted)
        s = pl.row_sum(e, tmp)
        p = pl.row_expand_div(e, s)
        col = pl.col_sum(p)
        col_t = pl.reshape(col, [32, 1])
        back = pl.reshape(col_t, [1, 32])
        q = pl.col_expand_mul(p, back)
        full = pl.col_expand(q, back)
        z = pl.full([8, 32], dtype=pl.FP32, value=0.0)
        r = pl.add(full, z)
        pl.store(r, [0, 0], c)
    return c
)",
                         {{"a", {8, 32}}, {"c", {8, 32}}});
  EXPECT_EQ(ParseText(request), R"(@pl.program
class _jit_softmax:
    @pl.function(type=pl.FunctionType.Opaque)
    def softmax(self, a: pl.Tensor[[8, 32], pl.FP32], c: pl.Out[pl.Tensor[[8, 32], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [8, 32])
            tmp: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.create([8, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            m: pl.Tile[[8, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_max(t, tmp)
            shifted: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.row_expand_sub(t, m)
            e: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(shifted)
            s: pl.Tile[[8, 1], pl.FP32, pl.Mem.Vec] = pl.tile.row_sum(e, tmp)
            p: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.row_expand_div(e, s)
            col: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.col_sum(p)
            col_t: pl.Tile[[32, 1], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(col, [32, 1])
            back: pl.Tile[[1, 32], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(col_t, [1, 32])
            q: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand_mul(p, back)
            full: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.col_expand(q, back)
            z: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.full([8, 32], dtype=pl.FP32, value=0.0)
            r: pl.Tile[[8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.add(full, z)
            pl.tile.store(r, [0, 0], c)
        return c
)");
}

TEST(OpCatalog, CubePathThroughExplicitMemorySpaces) {
  auto request = Request(R"(@pl.jit
def mm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a1 = pl.load(a, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat)
        b1 = pl.load(b, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
        a0 = pl.move(a1, target_memory=pl.MemorySpace.Left)
        b0 = pl.move(b1, target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(a0, b0)
        acc = pl.matmul_acc(acc, a0, b0)
        pl.store(acc, [0, 0], c)
    return c
)",
                         {{"a", {16, 32}}, {"b", {32, 16}}, {"c", {16, 16}}});
  EXPECT_EQ(ParseText(request), R"(@pl.program
class _jit_mm:
    @pl.function(type=pl.FunctionType.Opaque)
    def mm(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a1: pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
            b1: pl.Tile[[32, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [32, 16], target_memory=pl.Mem.Mat)
            a0: pl.Tile[[16, 32], pl.FP32, pl.Mem.Left] = pl.tile.move(a1, target_memory=pl.Mem.Left)
            b0: pl.Tile[[32, 16], pl.FP32, pl.Mem.Right] = pl.tile.move(b1, target_memory=pl.Mem.Right)
            acc: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(a0, b0)
            acc_1: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, a0, b0)
            pl.tile.store(acc_1, [0, 0], c)
        return c
)");
}

// b_trans / a_trans: an operand given transposed, its other extent the product's.
TEST(OpCatalog, MatmulOperandsGivenTransposed) {
  auto request = Request(R"(@pl.jit
def mm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.matmul(a, b, b_trans=True)
        acc = pl.matmul_acc(acc, a, b, b_trans=True)
        pl.store(acc, [0, 0], c)
    return c
)",
                         {{"a", {16, 32}}, {"b", {48, 32}}, {"c", {16, 48}}});
  EXPECT_EQ(ParseText(request), R"(@pl.program
class _jit_mm:
    @pl.function(type=pl.FunctionType.Opaque)
    def mm(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[48, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 48], pl.FP32]]) -> pl.Tensor[[16, 48], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            acc: pl.Tile[[16, 48], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(pl.tile.load(a, [0, 0], [16, 32]), pl.tile.load(b, [0, 0], [48, 32]), b_trans=True)
            acc_1: pl.Tile[[16, 48], pl.FP32, pl.Mem.Acc] = pl.tile.matmul_acc(acc, pl.tile.load(a, [0, 0], [16, 32]), pl.tile.load(b, [0, 0], [48, 32]), b_trans=True)
            pl.tile.store(acc_1, [0, 0], c)
        return c
)");
  auto mismatch = Request(R"(@pl.jit
def mm(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.matmul(a, b, b_trans=True), [0, 0], c)
    return c
)",
                          {{"a", {16, 32}}, {"b", {32, 48}}, {"c", {16, 48}}});
  EXPECT_EQ(ParseText(mismatch),
            "/src/kernels.py:4:18: error: pl.matmul: tile.matmul cannot multiply pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] "
            "by pl.Tile[[32, 48], pl.FP32, pl.Mem.Vec] (transposed): the inner dimensions and dtypes must agree");
}

TEST(OpCatalog, IncoreKernelsCalledFromOrchestration) {
  auto request = Request(R"(@pl.jit
def dag(a: pl.Tensor, f: pl.Out[pl.Tensor]):
    c = pl.create_tensor([16, 16], dtype=pl.FP32)
    c = add_scalar(a, 1.0, c)
    f = add_scalar(c, 2.0, f)
    return f
)",
                         {{"a", {16, 16}}, {"f", {16, 16}}});
  request.functions["add_scalar"] = Incore(R"(@pl.jit.incore
def add_scalar(x: pl.Tensor, s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor]):
    t = pl.load(x, [0, 0], [16, 16])
    r = pl.add(t, s)
    pl.store(r, [0, 0], out)
    return out
)",
                                           20);
  EXPECT_EQ(ParseText(request), R"(@pl.program
class _jit_dag:
    @pl.function(type=pl.FunctionType.Opaque)
    def dag(self, a: pl.Tensor[[16, 16], pl.FP32], f: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        c: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.create([16, 16], dtype=pl.FP32)
        c_1: pl.Tensor[[16, 16], pl.FP32] = self.add_scalar(a, 1.0, c)
        f_1: pl.Tensor[[16, 16], pl.FP32] = self.add_scalar(c_1, 2.0, f)
        return f_1

    @pl.function(type=pl.FunctionType.InCore)
    def add_scalar(self, x: pl.Tensor[[16, 16], pl.FP32], s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16])
        r: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.adds(t, s)
        pl.tile.store(r, [0, 0], out)
        return out
)");
}

TEST(OpCatalog, ElementReadsAndWrites) {
  auto request = Request(R"(@pl.jit
def k(a: pl.Tensor, c: pl.InOut[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 16])
        for i in pl.range(4):
            pl.write(t, [i, 0], pl.read(a, [0, i]))
        s = pl.read(t, [1, 2])
        pl.write(c, [0, 0], s)
        pl.tensor.write(c, [1, 1], pl.tile.read(t, [0, 0]))
        pl.store(t, [0, 0], c)
    return c
)",
                         {{"a", {16, 16}}, {"c", {16, 16}}});
  // pl.write into a tile rebinds its name (the loop carries it); into a tensor it is a store.
  EXPECT_EQ(ParseText(request), R"(@pl.program
class _jit_k:
    @pl.function(type=pl.FunctionType.Opaque)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], c: pl.InOut[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16])
            for i, (t_1,) in pl.range(4, init_values=(t,)):
                t_2: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.write(t_1, [i, 0], pl.tensor.read(a, [0, i]))
                t_3: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(t_2)
            s: pl.Scalar[pl.FP32] = pl.tile.read(t_3, [1, 2])
            pl.tensor.write(c, [0, 0], s)
            pl.tensor.write(c, [1, 1], pl.tile.read(t_3, [0, 0]))
            pl.tile.store(t_3, [0, 0], c)
        return c
)");
}

TEST(OpCatalog, CreateTensorWithInitValue) {
  EXPECT_EQ(ParseOrchestration("    acc = pl.create_tensor([16, 32], dtype=pl.INT32, init_value=-1, manual_dep=True)\n"
                               "    return y\n"),
            std::string(kPrintedOrchestrationHeader) +
                "        acc: pl.Tensor[[16, 32], pl.INT32] = pl.tensor.create([16, 32], dtype=pl.INT32, "
                "init_value=-1.0, manual_dep=True)\n"
                "        return y\n");
}

TEST(OpCatalog, TileWindowAssignmentAssemblesInPlace) {
  auto request = Request(R"(@pl.jit
def k(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.full([4, 16], dtype=pl.FP32, value=0.0)
        for i in pl.range(4):
            t[i : i + 1, 0:16] = pl.load(a, [i, 0], [1, 16])
        c[0:2, 0:16] = pl.exp(t)[2:4, :]
    return c
)",
                         {{"a", {4, 16}}, {"c", {2, 16}}});
  // `t[i : i + 1, :] = u` rebinds t to the assembled tile (the loop carries it); a window of an
  // expression is a tile.slice of it.
  EXPECT_EQ(ParseText(request), R"(@pl.program
class _jit_k:
    @pl.function(type=pl.FunctionType.Opaque)
    def k(self, a: pl.Tensor[[4, 16], pl.FP32], c: pl.Out[pl.Tensor[[2, 16], pl.FP32]]) -> pl.Tensor[[2, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec] = pl.tile.full([4, 16], dtype=pl.FP32, value=0.0)
            for i, (t_1,) in pl.range(4, init_values=(t,)):
                t_2: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec] = pl.tile.assemble(t_1, pl.tile.load(a, [i, 0], [1, 16]), [i, 0])
                t_3: pl.Tile[[4, 16], pl.FP32, pl.Mem.Vec] = pl.yield_(t_2)
            pl.tile.store(pl.tile.slice(pl.tile.exp(t_3), [2, 16], [2, 0]), [0, 0], c)
        return c
)");
}

// The matmul family: a bias row, the single-row GEMV forms with their accumulation phase (a string
// literal or a string constant), init_cond, pl.batch_matmul (tile.matmul of batches) and a load
// clamped at the tensor's edge.
TEST(OpCatalog, MatmulFamilyForms) {
  auto request = Request(R"(@pl.jit
def mm(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, x: pl.Tensor, w: pl.Tensor, c: pl.Out[pl.Tensor],
       u: pl.Out[pl.Tensor], v: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat, clamp=True)
        tbias = pl.load(bias, [0, 0], [1, 32], target_memory=pl.Mem.Mat)
        pl.store(pl.tile.matmul_bias(ta, tb, tbias), [0, 0], c)
        row = pl.load(a, [0, 0], [1, 32], target_memory=pl.Mem.Mat)
        g = pl.tile.gemv(row, tb, acc_phase="partial")
        g = pl.tile.gemv_acc(g, row, tb, acc_phase=PHASE)
        g = pl.matmul_acc(g, row, tb, init_cond=False)
        pl.store(pl.tile.gemv_bias(row, tb, tbias), [0, 0], u)
        pl.store(g, [0, 0], v)
        pl.store(pl.batch_matmul(x, w), [0, 0, 0], y)
    return c, u, v, y
)",
                         {{"a", {16, 32}},
                          {"b", {32, 30}},
                          {"bias", {1, 32}},
                          {"x", {2, 16, 8}},
                          {"w", {8, 16}},
                          {"c", {16, 32}},
                          {"u", {1, 32}},
                          {"v", {1, 32}},
                          {"y", {2, 16, 16}}});
  request.constants["PHASE"] = std::string("final");
  // The clamped load and the product keep the tensor's 30 columns; the string constant reads as its
  // literal; pl.batch_matmul is tile.matmul of a batch.
  EXPECT_EQ(ParseText(request), R"(@pl.program
class _jit_mm:
    @pl.function(type=pl.FunctionType.Opaque)
    def mm(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[32, 30], pl.FP32], bias: pl.Tensor[[1, 32], pl.FP32], x: pl.Tensor[[2, 16, 8], pl.FP32], w: pl.Tensor[[8, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]], u: pl.Out[pl.Tensor[[1, 32], pl.FP32]], v: pl.Out[pl.Tensor[[1, 32], pl.FP32]], y: pl.Out[pl.Tensor[[2, 16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 32], pl.FP32], pl.Tensor[[1, 32], pl.FP32], pl.Tensor[[1, 32], pl.FP32], pl.Tensor[[2, 16, 16], pl.FP32]]:
        with pl.at(level=pl.Level.CORE_GROUP):
            ta: pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
            tb: pl.Tile[[32, 32], pl.FP32, pl.Mem.Mat, pl.TileView(valid_shape=[32, 30])] = pl.tile.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat, clamp=True)
            tbias: pl.Tile[[1, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(bias, [0, 0], [1, 32], target_memory=pl.Mem.Mat)
            pl.tile.store(pl.tile.matmul_bias(ta, tb, tbias), [0, 0], c)
            row: pl.Tile[[1, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [1, 32], target_memory=pl.Mem.Mat)
            g: pl.Tile[[1, 32], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[1, 30])] = pl.tile.gemv(row, tb, acc_phase="partial")
            g_1: pl.Tile[[1, 32], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[1, 30])] = pl.tile.gemv_acc(g, row, tb, acc_phase="final")
            g_2: pl.Tile[[1, 32], pl.FP32, pl.Mem.Acc, pl.TileView(valid_shape=[1, 30])] = pl.tile.matmul_acc(g_1, row, tb, init_cond=False)
            pl.tile.store(pl.tile.gemv_bias(row, tb, tbias), [0, 0], u)
            pl.tile.store(g_2, [0, 0], v)
            pl.tile.store(pl.tile.matmul(pl.tile.load(x, [0, 0, 0], [2, 16, 8]), pl.tile.load(w, [0, 0], [8, 16])), [0, 0, 0], y)
        return c, u, v, y
)");
}

}  // namespace
}  // namespace pypto::frontend::testing
