// PlanThreads: how a work group's threads and loops cover one tile of a flat
// kernel (with schedule/read_plan.h); part of the pipeline's "plan" stage
// (docs/architecture.md, "The pipeline").
//
// Output indices (those the kernel's output moves along) are tiled across
// work groups and split within a group into a thread part and a loop part:
//     idx = gid + lid * threads + tid,   0 <= lid < loops, 0 <= tid < threads
// (threads interleaved, so neighbouring threads touch neighbouring elements
// of the lowest-stride index). Each thread holds loops-product accumulators.
// Reduction indices are looped over by every thread, tile by tile. Work-group
// ids are packed into at most three hardware dimensions and unpacked in the
// kernel with divisions and remainders.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/flat.h"
#include "compiler/schedule/hardware_model.h"

namespace tilec::compiler {

struct ThreadPlan {
  struct OutDim {
    int index = 0;
    int64_t tile = 1;
    int64_t threads = 1;        // threads along this index
    int64_t thread_stride = 1;  // tid of this index = (local id / thread_stride) % threads
    int64_t loops = 1;          // ceil(tile / threads)
    int64_t groups = 1;         // ceil(range / tile)
    int64_t acc_stride = 1;     // accumulator number = sum lid * acc_stride
  };
  std::vector<OutDim> outputs;      // fastest-varying thread index first
  std::vector<int> reductions;      // loop order, outermost first
  int64_t threads = 1;              // work-group size (product of output threads)
  int64_t accumulators = 1;         // per thread
  // Hardware dimension d unpacks its group id into these outputs (positions
  // in `outputs`), slowest first.
  std::array<std::vector<int>, 3> group_dims;
  std::array<int64_t, 3> num_groups = {1, 1, 1};
};

// Pre: Verify(flat); tile has one entry per index with 1 <= tile <= range;
// `work_group` empty or passing CheckWorkGroup.
// Post: a plan whose work-group size is at most hw.threads, or with
// `work_group` (the work-group shape: threads along each flat index, 1 for
// reductions; a tuning knob, CodegenOptions::work_group) exactly those
// threads.
ThreadPlan PlanThreads(const FlatContraction& flat, const std::vector<int64_t>& tile,
                       const HardwareModel& hw, const std::vector<int64_t>& work_group = {});

// "" if `work_group` is a shape PlanThreads takes for `tile`: one entry per
// index, 1 for reduction indices, between 1 and the tile rounded up to a
// power of two along output indices (threads past the tile's edge idle, as
// AssignOutputThreads makes them), at most hw.max_work_group_size threads in
// all; else why not.
std::string CheckWorkGroup(const FlatContraction& flat, const std::vector<int64_t>& tile,
                           const HardwareModel& hw, const std::vector<int64_t>& work_group);

// One line per output dim and the group packing, for `--emit plan`.
std::string ToString(const ThreadPlan& plan, const FlatContraction& flat);

}  // namespace tilec::compiler
