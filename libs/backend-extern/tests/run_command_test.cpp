#include "pypto/backend_extern/run_command.h"

#include <gtest/gtest.h>

namespace pypto::backend_extern {
namespace {

using namespace std::chrono_literals;

TEST(RunCommand, CollectsOutputAndExitStatus) {
  auto ran = RunCommand({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(ran) << ran.error();
  EXPECT_EQ(ran->exit_code, 3);
  EXPECT_EQ(ran->output, "out\nerr\n");
  EXPECT_FALSE(ran->timed_out);
}

TEST(RunCommand, MissingProgramIsExitCode127) {
  auto ran = RunCommand({"/nonexistent/pypto-no-such-tool", "--version"});
  ASSERT_TRUE(ran) << ran.error();
  EXPECT_EQ(ran->exit_code, 127);
  EXPECT_NE(ran->output.find("cannot run '/nonexistent/pypto-no-such-tool'"), std::string::npos) << ran->output;
}

TEST(RunCommand, KillsACommandPastItsTimeLimit) {
  auto ran = RunCommand({"sh", "-c", "echo started; exec sleep 30"}, 300ms);
  ASSERT_TRUE(ran) << ran.error();
  EXPECT_TRUE(ran->timed_out);
  EXPECT_EQ(ran->exit_code, 128 + 9);
  EXPECT_EQ(ran->output, "started\n");
}

TEST(RunCommand, EmptyCommandLineIsRefused) {
  auto ran = RunCommand({});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error(), "empty command line");
}

}  // namespace
}  // namespace pypto::backend_extern
