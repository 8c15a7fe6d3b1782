// The MPI transport of distributed programs (comm_mpi.h) between real MPI processes: meson runs this
// under `mpirun -n 2`, and every process runs every test (each test is collective: they open their
// windows together and meet at barriers). What one rank does to another's window is checked by the
// window's owner, reading its own memory.
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "pypto/runtime/comm_domain.h"
#include "pypto/runtime/comm_mpi.h"

namespace pypto::rt {
namespace {

constexpr uint64_t kWindowBytes = 4096;

uint16_t Fp16(float value) { return std::bit_cast<uint16_t>(static_cast<_Float16>(value)); }
float FromFp16(uint16_t bits) { return static_cast<float>(std::bit_cast<_Float16>(bits)); }
uint16_t Bf16(float value) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(value) >> 16); }  // exact values only
float FromBf16(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }

// Every process's window of kWindowBytes, open for the test's length.
class CommMpiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = mpi::OpenWindows(kWindowBytes, mpi::Size());
    ASSERT_TRUE(opened.has_value()) << opened.error();
    window_ = *opened;
    auto place = FindCommPlace(window_.base);
    ASSERT_TRUE(place.has_value());
    transport_ = place->transport();
    ASSERT_NE(transport_, nullptr);
  }
  void TearDown() override { mpi::CloseWindows(window_.handle); }

  // This process's own window as its peers' RMA left it (LoadOwnCell syncs the window's copies).
  template <typename T>
  T Own(uint64_t offset) const {
    transport_->LoadOwnCell(0);
    T value;
    std::memcpy(&value, reinterpret_cast<const std::byte*>(window_.base) + offset, sizeof(T));
    return value;
  }

  void ExpectHalfAddsAreAtomic(ir::DataType dtype, uint16_t (*to)(float), float (*from)(uint16_t));

  int rank_ = mpi::Rank();
  int size_ = mpi::Size();
  mpi::OpenWindow window_;
  CommTransport* transport_ = nullptr;
};

TEST_F(CommMpiTest, PutLandsInThePeersWindowAndGetReadsItBack) {
  const int next = (rank_ + 1) % size_;
  std::vector<int32_t> mine(64);
  for (int i = 0; i < 64; ++i) mine[i] = rank_ * 1000 + i;
  const CommPiece piece{.offset = 256, .data = reinterpret_cast<const std::byte*>(mine.data()), .bytes = 256};
  transport_->Put(next, std::span(&piece, 1));
  mpi::Barrier();
  const int previous = (rank_ + size_ - 1) % size_;
  for (int i = 0; i < 64; ++i) ASSERT_EQ(Own<int32_t>(256 + 4 * i), previous * 1000 + i) << i;
  std::vector<int32_t> fetched(64);
  transport_->Get(next, 256, fetched.data(), 256);
  EXPECT_EQ(fetched, mine);
  mpi::Barrier();
}

TEST_F(CommMpiTest, CellAddsFromEveryRankAllCount) {
  for (int i = 0; i < 100; ++i) transport_->AddCell(0, 8, 1);
  mpi::Barrier();
  if (rank_ == 0) {
    EXPECT_EQ(transport_->LoadOwnCell(8), 100 * size_);
  }
  mpi::Barrier();
}

// Every rank adds 1.0 fifty times into the same 33 half-precision elements of rank 0's window,
// starting in the middle of a 32-bit word: no add is lost, and the halves beside the piece keep
// their values.
void CommMpiTest::ExpectHalfAddsAreAtomic(ir::DataType dtype, uint16_t (*to)(float), float (*from)(uint16_t)) {
  constexpr uint64_t kFirst = 1026;  // 2 bytes into a word
  constexpr size_t kCount = 33;
  auto* own = reinterpret_cast<std::byte*>(window_.base);
  if (rank_ == 0) {
    const uint16_t marker = to(7.0f);
    std::memcpy(own + kFirst - 2, &marker, 2);
    std::memcpy(own + kFirst + 2 * kCount, &marker, 2);
  }
  mpi::Barrier();
  std::vector<uint16_t> ones(kCount, to(1.0f));
  const CommPiece piece{.offset = kFirst, .data = reinterpret_cast<const std::byte*>(ones.data()), .bytes = 2 * kCount};
  for (int i = 0; i < 50; ++i) ASSERT_EQ(transport_->Accumulate(0, std::span(&piece, 1), dtype), "");
  mpi::Barrier();
  if (rank_ == 0) {
    for (size_t i = 0; i < kCount; ++i)
      ASSERT_EQ(from(Own<uint16_t>(kFirst + 2 * i)), 50.0f * static_cast<float>(size_))
          << ir::DataTypeName(dtype) << " element " << i;
    EXPECT_EQ(from(Own<uint16_t>(kFirst - 2)), 7.0f);
    EXPECT_EQ(from(Own<uint16_t>(kFirst + 2 * kCount)), 7.0f);
  }
  mpi::Barrier();
}

TEST_F(CommMpiTest, Fp16AddsFromEveryRankAreAtomic) { ExpectHalfAddsAreAtomic(ir::DataType::FP16, Fp16, FromFp16); }

TEST_F(CommMpiTest, Bf16AddsFromEveryRankAreAtomic) { ExpectHalfAddsAreAtomic(ir::DataType::BF16, Bf16, FromBf16); }

// Each FP16 sum is rounded to nearest even once: 2048 + 1 is a tie that stays at 2048, 2048 + 3 a
// tie that goes up to 2052.
TEST_F(CommMpiTest, Fp16SumsRoundToNearestEven) {
  if (rank_ == 0) {
    const uint16_t start[2] = {Fp16(2048.0f), Fp16(2048.0f)};
    std::memcpy(reinterpret_cast<std::byte*>(window_.base) + 512, start, 4);
    const uint16_t parts[2] = {Fp16(1.0f), Fp16(3.0f)};
    const CommPiece piece{.offset = 512, .data = reinterpret_cast<const std::byte*>(parts), .bytes = 4};
    ASSERT_EQ(transport_->Accumulate(0, std::span(&piece, 1), ir::DataType::FP16), "");
    EXPECT_EQ(FromFp16(Own<uint16_t>(512)), 2048.0f);
    EXPECT_EQ(FromFp16(Own<uint16_t>(514)), 2052.0f);
  }
  mpi::Barrier();
}

TEST_F(CommMpiTest, Fp32AddsFromEveryRankAllCount) {
  std::vector<float> halves(16, 0.5f);
  const CommPiece piece{.offset = 2048, .data = reinterpret_cast<const std::byte*>(halves.data()), .bytes = 64};
  for (int i = 0; i < 20; ++i) ASSERT_EQ(transport_->Accumulate(0, std::span(&piece, 1), ir::DataType::FP32), "");
  mpi::Barrier();
  if (rank_ == 0) {
    for (int i = 0; i < 16; ++i) EXPECT_EQ(Own<float>(2048 + 4 * i), 10.0f * static_cast<float>(size_)) << i;
  }
  mpi::Barrier();
}

// A broadcast whose root takes its time (rank 0 compiling a program while the others wait for
// it): the waiting processes get the root's bytes, and sleep meanwhile rather than spin on a core.
TEST(CommMpiBroadcast, WaitersSleepUntilASlowRootSends) {
  constexpr auto kRootDelay = std::chrono::milliseconds(400);
  std::vector<int64_t> values(1000);
  if (mpi::Rank() == 0) {
    std::this_thread::sleep_for(kRootDelay);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i * i);
  }
  const std::clock_t cpu_before = std::clock();
  const auto wall_before = std::chrono::steady_clock::now();
  mpi::Broadcast(values.data(), values.size() * sizeof(int64_t), 0, mpi::Waiting::Asleep);
  const double cpu_s = static_cast<double>(std::clock() - cpu_before) / CLOCKS_PER_SEC;
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_before).count();
  for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], static_cast<int64_t>(i * i)) << i;
  if (mpi::Rank() != 0) {
    EXPECT_GT(wall_s, 0.2);  // it did wait for the root
    EXPECT_LT(cpu_s, wall_s / 4) << "a waiting process spent " << cpu_s << " s of CPU in " << wall_s << " s";
  }
  mpi::Barrier();
}

}  // namespace
}  // namespace pypto::rt

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (auto ready = pypto::rt::mpi::Init(); !ready) {
    fprintf(stderr, "%s\n", ready.error().c_str());
    return 1;
  }
  const int failed = RUN_ALL_TESTS();
  pypto::rt::mpi::Finalize();
  return failed;
}
