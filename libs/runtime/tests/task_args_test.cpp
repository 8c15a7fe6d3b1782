#include "pypto/runtime/task_args.h"

#include <gtest/gtest.h>

#include <array>
#include <bit>

#include "pypto/runtime/fatal.h"

namespace pypto::rt {
namespace {

ChipTensor Tensor(float* data) {
  const std::array<uint32_t, 1> shape = {4};
  return MakeExternalTensor(data, shape, PYPTO_RT_FLOAT32);
}

TEST(TaskArgs, KeepsTensorsThenScalars) {
  float a[4], b[4];
  TaskArgs args;
  args.add_input(Tensor(a));
  args.add_output(Tensor(b));
  args.add_inout(Tensor(a));
  args.add_no_dep(Tensor(b));
  args.add_scalar(7);
  args.add_scalar_value(1.5f);
  args.add_scalar_value(int32_t{-1});
  ASSERT_FALSE(args.has_error()) << args.error();
  ASSERT_EQ(args.tensors().size(), 4u);
  EXPECT_EQ(args.tensors()[0].direction, ArgDirection::Input);
  EXPECT_EQ(args.tensors()[1].direction, ArgDirection::OutputExisting);
  EXPECT_EQ(args.tensors()[2].direction, ArgDirection::InOut);
  EXPECT_EQ(args.tensors()[3].direction, ArgDirection::NoDep);
  EXPECT_EQ(args.tensors()[1].tensor.buffer_addr, reinterpret_cast<uint64_t>(b));
  ASSERT_EQ(args.scalars().size(), 3u);
  EXPECT_EQ(args.scalars()[0], 7u);
  // A float occupies the low 32 bits, the rest zero, as upstream's to_u64 does.
  EXPECT_EQ(args.scalars()[1], uint64_t{std::bit_cast<uint32_t>(1.5f)});
  EXPECT_EQ(args.scalars()[2], uint64_t{0xffffffffu});
}

TEST(TaskArgs, RefusesTensorAfterScalar) {
  float a[4];
  TaskArgs args;
  args.add_scalar(1);
  args.add_input(Tensor(a));
  ASSERT_TRUE(args.has_error());
  EXPECT_EQ(args.error(), "tensor argument added after a scalar: all tensors must come first");
  EXPECT_TRUE(args.tensors().empty());
  // The first error is latched: later mistakes do not replace it.
  for (int i = 0; i < 20; ++i) args.add_scalar(i);
  EXPECT_EQ(args.error(), "tensor argument added after a scalar: all tensors must come first");
}

TEST(TaskArgs, RefusesTooManyTensors) {
  float a[4];
  TaskArgs args;
  for (size_t i = 0; i < TaskArgs::kMaxTensors; ++i) args.add_input(Tensor(a));
  EXPECT_FALSE(args.has_error());
  args.add_input(Tensor(a));
  EXPECT_EQ(args.error(), "too many tensor arguments (at most 32)");
  EXPECT_EQ(args.tensors().size(), TaskArgs::kMaxTensors);
}

TEST(TaskArgs, RefusesTooManyScalars) {
  TaskArgs args;
  for (size_t i = 0; i < TaskArgs::kMaxScalars; ++i) args.add_scalar(i);
  EXPECT_FALSE(args.has_error());
  args.add_scalar(0);
  EXPECT_EQ(args.error(), "too many scalar arguments (at most 16)");
}

TEST(TaskArgs, RefusesMalformedDescriptors) {
  float a[4];
  ChipTensor bad_rank = Tensor(a);
  bad_rank.ndims = 0;
  TaskArgs rank;
  rank.add_input(bad_rank);
  EXPECT_EQ(rank.error(), "tensor argument 0 has rank 0, expected 1..5");

  ChipTensor bad_dtype = Tensor(a);
  bad_dtype.dtype = 77;
  TaskArgs dtype;
  dtype.add_input(Tensor(a));
  dtype.add_input(bad_dtype);
  EXPECT_EQ(dtype.error(), "tensor argument 1 has unknown dtype 77");

  TaskArgs scalar_direction;
  scalar_direction.add_tensor(Tensor(a), ArgDirection::Scalar);
  EXPECT_EQ(scalar_direction.error(), "tensor argument 0 has direction Scalar");
}

TEST(TaskArgs, DirectionNames) {
  EXPECT_STREQ(ArgDirectionName(ArgDirection::Input), "Input");
  EXPECT_STREQ(ArgDirectionName(ArgDirection::OutputExisting), "OutputExisting");
  EXPECT_STREQ(ArgDirectionName(ArgDirection::NoDep), "NoDep");
}

TEST(Fatal, Rendering) {
  EXPECT_EQ((FatalError{FatalCode::KernelFailed, "boom"}.str()), "fatal error 203 (KernelFailed): boom");
  EXPECT_EQ((FatalError{FatalCode::InvalidArgs, "bad"}.str()), "fatal error 5 (InvalidArgs): bad");
  EXPECT_STREQ(FatalCodeName(FatalCode::SchedulerTimeout), "SchedulerTimeout");
  EXPECT_STREQ(FatalCodeName(FatalCode::OutOfMemory), "OutOfMemory");
}

}  // namespace
}  // namespace pypto::rt
