// The torch.distributed backend "hcomm": a c10d::ProcessGroup (PyTorch 1.13)
// whose operations are hcomm calls on CPU tensors (docs/TORCH.md).
//
// How an operation runs. Each torch operation becomes a small "plan": the
// hcomm call(s) to issue, given a stream (NULL = blocking), and what to do
// once they have finished (copy a staging tensor back into the user's
// tensors). A plan runs one of two ways:
//   - in the caller's thread, blocking (stream NULL), when nothing of this
//     group is in flight and the group is not in async mode: the Work is
//     complete when the call returns. This is the lean path: no thread hop,
//     no copy for contiguous tensors, the hcomm call on the tensor's memory.
//   - queued on the group's HcclStream otherwise (always for send and recv,
//     which must not block: isend/irecv pairs would deadlock): the Work
//     completes when the stream has run it; wait() synchronizes the stream.
// Operations of one group therefore run in the order they were issued,
// whichever way each one runs.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <hccl/hccl.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace hcomm_torch {

// The group's stream and what is queued on it. Shared by the group and its
// Works (a Work may outlive its group).
class Queue {
 public:
  Queue();
  ~Queue();
  // Issue `issue` on the stream; `after` runs once it has finished (in
  // issue order, in whichever thread learns of it first). Returns the
  // operation's sequence number. `keep` holds tensors alive until then.
  uint64_t push(const std::function<HcclResult(HcclStream)>& issue,
                std::function<void()> after, std::vector<at::Tensor> keep,
                const char* what);
  // True when nothing queued is unfinished (runs one engine pass).
  bool idle();
  // Has operation `seq` finished? (never blocks)
  bool finished(uint64_t seq);
  // Block until operation `seq` has finished (and everything before it).
  void synchronize(uint64_t seq);
  // The error of operation `seq` ("" when it succeeded); valid once finished.
  std::string error(uint64_t seq);
  // A future completed (with `value`) when operation `seq` has finished;
  // started on demand, finished by a helper thread that synchronizes.
  c10::intrusive_ptr<c10::ivalue::Future> future(uint64_t seq, c10::IValue value);

 private:
  struct Pending {
    uint64_t seq;
    std::function<void()> after;
    std::vector<at::Tensor> keep;
    std::vector<std::pair<c10::intrusive_ptr<c10::ivalue::Future>, c10::IValue>> futures;
  };
  // With mu_ held: operations up to `upto` have finished with `rc`.
  void retire(uint64_t upto, HcclResult rc, std::unique_lock<std::mutex>& lk);
  void watcher();

  HcclStream stream_ = nullptr;
  std::mutex sync_mu_;  // one HcclStreamSynchronize/Query at a time
  std::mutex mu_;       // the fields below
  uint64_t issued_ = 0;
  uint64_t done_ = 0;
  std::deque<Pending> pending_;
  // failed ranges: operations (prev, last] finished with error text
  std::deque<std::pair<uint64_t, std::string>> failed_;
  std::thread watcher_;
  std::condition_variable cv_;
  bool watching_ = false;
  bool stop_ = false;
};

class WorkHcomm : public c10d::Work {
 public:
  // A Work complete at construction (blocking path).
  WorkHcomm(c10d::OpType op, std::vector<at::Tensor> result);
  // A Work on the group's stream.
  WorkHcomm(c10d::OpType op, std::vector<at::Tensor> result, std::shared_ptr<Queue> q,
            uint64_t seq);
  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  void synchronize() override;
  std::vector<at::Tensor> result() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

 private:
  void settle();
  std::vector<at::Tensor> result_;
  std::shared_ptr<Queue> q_;
  uint64_t seq_ = 0;
};

struct HcommOptions {
  // Every collective goes through the stream (overlap with computation);
  // otherwise only send/recv and operations issued behind them do.
  bool async_collectives = false;
};

class ProcessGroupHcomm : public c10d::ProcessGroup {
 public:
  // The default group (global_ranks empty): bootstrap through `store`.
  // A subgroup: a communicator made from the default hcomm group's
  // (HcclCommCreateGroup, no new bootstrap), or, when the default group is
  // not hcomm, through `store` as well.
  ProcessGroupHcomm(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                    double timeout_s, const std::vector<int64_t>& global_ranks,
                    const HcommOptions& opts);
  ~ProcessGroupHcomm() override;

  const std::string getBackendName() const override { return "hcomm"; }
  HcclComm comm() const { return comm_; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
      const c10d::BroadcastOptions& opts = c10d::BroadcastOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
      const c10d::AllreduceOptions& opts = c10d::AllreduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
      const c10d::AllreduceCoalescedOptions& opts = c10d::AllreduceCoalescedOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
      const c10d::ReduceOptions& opts = c10d::ReduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
      const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::GatherOptions& opts = c10d::GatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
      std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ScatterOptions& opts = c10d::ScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
      std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
      std::vector<int64_t>& outputSplits, std::vector<int64_t>& inputSplits,
      const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
      std::vector<at::Tensor>& inputs,
      const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(
      const c10d::BarrierOptions& opts = c10d::BarrierOptions()) override;

 private:
  // Run a plan: blocking in this thread, or on the stream (see the top).
  c10::intrusive_ptr<c10d::Work> run(c10d::OpType op, const char* what,
      const std::function<HcclResult(HcclStream)>& issue, std::function<void()> after,
      std::vector<at::Tensor> keep, std::vector<at::Tensor> result, bool must_queue = false);

  HcclComm comm_ = nullptr;
  bool world_ = false;
  HcommOptions opts_;
  std::shared_ptr<Queue> q_;
};

}  // namespace hcomm_torch
