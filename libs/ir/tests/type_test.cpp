#include <gtest/gtest.h>

#include "pypto/ir/dtype.h"
#include "pypto/ir/soc.h"
#include "pypto/ir/type.h"

namespace pypto::ir {
namespace {

TEST(DataType, NamesAndSizes) {
  EXPECT_EQ(DataTypeName(DataType::BF16), "BF16");
  EXPECT_EQ(DataTypeFromName("FP16"), DataType::FP16);
  EXPECT_EQ(DataTypeFromName("FP99"), std::nullopt);
  EXPECT_EQ(DataTypeBytes(DataType::FP32), 4);
  EXPECT_EQ(DataTypeBytes(DataType::INT4), 1);
  EXPECT_EQ(static_cast<int>(DataType::INDEX), 0x15);
  EXPECT_TRUE(IsFloat(DataType::BF16));
  EXPECT_FALSE(IsFloat(DataType::INT32));
}

TEST(Type, EqualityAndBytes) {
  TileType a({128, 128}, DataType::FP32, MemorySpace::Vec);
  TileType b({128, 128}, DataType::FP32, MemorySpace::Vec, TileMemRef{0, 65536});
  EXPECT_EQ(a.num_bytes(), 65536);
  EXPECT_FALSE(a.equals(b));
  EXPECT_TRUE(a.equals(TileType({128, 128}, DataType::FP32, MemorySpace::Vec)));
  EXPECT_EQ(b.str(), "pl.Tile[[128, 128], pl.FP32, pl.MemRef(0, 65536), pl.Mem.Vec]");
  EXPECT_FALSE(TensorType({4}, DataType::FP32).equals(a));
}

TEST(Soc, ArchesAndDescriptionsMapToTheirChips) {
  EXPECT_EQ(SocForArch("a2a3"), &Ascend910B());
  EXPECT_EQ(SocForArch("a5"), &Ascend950());
  EXPECT_EQ(SocForArch("a2a3sim"), nullptr);  // a platform's name, which only the backend registry knows
  EXPECT_EQ(SocFromDesc({.table = "Ascend950"})->name, "Ascend950");
  EXPECT_EQ(SocFromDesc({.table = "TPUv4"}).error(),
            "names SoC table 'TPUv4', which is not one of libs/ir's (Ascend910B, Ascend950)");
  EXPECT_EQ(SocFromDesc({.name = "MyChip", .arch = "a2a3"}).error(), "gives SoC 'MyChip' no cores");
  const auto chip = SocFromDesc({.name = "MyChip", .arch = "a2a3", .aiv_cores = 2, .ub_bytes = 65536});
  ASSERT_TRUE(chip.has_value());
  EXPECT_EQ(chip->capacity(MemorySpace::Vec), 65536);
  EXPECT_EQ(Ascend910B().aiv_cores, 48);
  EXPECT_EQ(Ascend910B().capacity(MemorySpace::Vec), 184 * 1024);
  EXPECT_EQ(Ascend950().capacity(MemorySpace::Acc), 256 * 1024);
}

}  // namespace
}  // namespace pypto::ir
