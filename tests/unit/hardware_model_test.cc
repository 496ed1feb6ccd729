#include "compiler/schedule/hardware_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "support/error.h"

namespace tilec::compiler {
namespace {

TEST(HardwareModelTest, DefaultsAreValid) {
  HardwareModel hw;
  EXPECT_NO_THROW(hw.Validate());
}

TEST(HardwareModelTest, SeedExampleValues) {
  HardwareModel hw = SeedExampleHardware();
  EXPECT_EQ(hw.threads, 256);
  EXPECT_EQ(hw.goal_groups, 20);
  EXPECT_EQ(hw.goal_flops_per_byte, 20);
  EXPECT_EQ(hw.max_mem, 16384);
  EXPECT_EQ(hw.max_regs, 16384);
  // 32-byte lines: the cost-model owner derived this from the seed's log.
  EXPECT_EQ(hw.mem_width, 32);
  EXPECT_TRUE(hw.local_memory_managed);
  EXPECT_NO_THROW(hw.Validate());
}

struct BadField {
  std::string field;  // must appear in the error message
  std::function<void(HardwareModel&)> spoil;
};

class HardwareModelRejects : public testing::TestWithParam<BadField> {};

TEST_P(HardwareModelRejects, NamesTheField) {
  HardwareModel hw;
  GetParam().spoil(hw);
  try {
    hw.Validate();
    FAIL() << "Validate accepted a bad " << GetParam().field;
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find(GetParam().field), std::string::npos) << e.message();
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllFields, HardwareModelRejects,
    testing::Values(
        BadField{"name", [](HardwareModel& h) { h.name = ""; }},
        BadField{"threads", [](HardwareModel& h) { h.threads = 0; }},
        BadField{"threads", [](HardwareModel& h) { h.threads = 96; }},
        BadField{"threads", [](HardwareModel& h) { h.threads = 2048; }},
        BadField{"max_work_group_size", [](HardwareModel& h) { h.max_work_group_size = 0; }},
        BadField{"max_work_group_size", [](HardwareModel& h) { h.max_work_group_size = 128; }},
        BadField{"max_work_item_sizes[2]", [](HardwareModel& h) { h.max_work_item_sizes[2] = 0; }},
        BadField{"max_work_item_sizes[0]", [](HardwareModel& h) { h.max_work_item_sizes[0] = 64; }},
        BadField{"compute_units", [](HardwareModel& h) { h.compute_units = 0; }},
        BadField{"mem_width", [](HardwareModel& h) { h.mem_width = 4; }},
        BadField{"mem_width", [](HardwareModel& h) { h.mem_width = 96; }},
        BadField{"mem_width", [](HardwareModel& h) { h.mem_width = 8192; }},
        BadField{"max_mem", [](HardwareModel& h) { h.max_mem = 1023; }},
        BadField{"max_regs", [](HardwareModel& h) { h.max_regs = 0; }},
        BadField{"l1_bytes", [](HardwareModel& h) { h.l1_bytes = 0; }},
        BadField{"l2_bytes", [](HardwareModel& h) { h.l2_bytes = h.l1_bytes - 1; }},
        BadField{"goal_groups", [](HardwareModel& h) { h.goal_groups = 0; }},
        BadField{"goal_flops_per_byte", [](HardwareModel& h) { h.goal_flops_per_byte = 0; }},
        BadField{"goal_flops_per_byte",
                 [](HardwareModel& h) {
                   h.goal_flops_per_byte = std::numeric_limits<double>::quiet_NaN();
                 }},
        BadField{"goal_flops_per_byte",
                 [](HardwareModel& h) {
                   h.goal_flops_per_byte = std::numeric_limits<double>::infinity();
                 }},
        BadField{"vec_size", [](HardwareModel& h) { h.vec_size = 0; }},
        BadField{"vec_size", [](HardwareModel& h) { h.vec_size = 3; }},
        BadField{"vec_size", [](HardwareModel& h) { h.vec_size = 32; }},
        BadField{"vector_registers", [](HardwareModel& h) { h.vector_registers = 0; }},
        BadField{"peak_gflops", [](HardwareModel& h) { h.peak_gflops = 0; }},
        BadField{"mem_bandwidth_gbs", [](HardwareModel& h) { h.mem_bandwidth_gbs = -1; }},
        BadField{"half_vector_rate", [](HardwareModel& h) { h.half_vector_rate = 0; }},
        BadField{"half_vector_rate", [](HardwareModel& h) { h.half_vector_rate = 1.5; }}));

TEST(HardwareModelTest, AcceptsBoundaryValues) {
  HardwareModel hw;
  hw.threads = 1;
  hw.mem_width = 8;
  hw.max_mem = 1024;
  hw.vec_size = 16;
  EXPECT_NO_THROW(hw.Validate());
  hw.threads = 1024;
  hw.mem_width = 4096;
  EXPECT_NO_THROW(hw.Validate());
}

TEST(HardwareModelTest, ToStringIsStable) {
  EXPECT_EQ(ToString(SeedExampleHardware()),
            "name=seed-example\n"
            "threads=256\n"
            "max_work_group_size=1024\n"
            "max_work_item_sizes=1024,1024,1024\n"
            "compute_units=1\n"
            "mem_width=32\n"
            "max_mem=16384\n"
            "max_regs=16384\n"
            "local_memory_managed=true\n"
            "l1_bytes=32768\n"
            "l2_bytes=1048576\n"
            "l3_bytes=0\n"
            "goal_groups=20\n"
            "goal_flops_per_byte=20\n"
            "peak_gflops=100\n"
            "mem_bandwidth_gbs=20\n"
            "vec_size=1\n"
            "vector_registers=16\n"
            "mask_registers=false\n"
            "half_vector_rate=0.5\n"
            "has_fma=true\n"
            "has_fp16=false\n"
            "has_fp64=false\n");
  HardwareModel hw;
  hw.goal_flops_per_byte = 46.5;
  hw.has_fp64 = true;
  std::string text = ToString(hw);
  EXPECT_NE(text.find("goal_flops_per_byte=46.5\n"), std::string::npos) << text;
  EXPECT_NE(text.find("has_fp64=true\n"), std::string::npos) << text;
  EXPECT_EQ(text, ToString(hw));
}

}  // namespace
}  // namespace tilec::compiler
