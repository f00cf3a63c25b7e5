// The torch.distributed backend "hcomm" (see ProcessGroupHcomm.hpp).
#include "ProcessGroupHcomm.hpp"

#include <ATen/core/ivalue.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>

namespace hcomm_torch {

using c10d::OpType;
using Issue = std::function<HcclResult(HcclStream)>;

namespace {

// The communicator of the default hcomm group of this process, parent of
// the subgroups (HcclCommCreateGroup).
std::mutex g_world_mu;
HcclComm g_world = nullptr;

const char* kRootKey = "hcomm_root_info";

std::string hccl_text(const char* what, HcclResult rc) {
  return c10::str("hcomm ", what, ": ", HcclGetErrorString(rc), " (HcclResult ", int(rc), ")");
}

void check_hccl(HcclResult rc, const char* what) {
  TORCH_CHECK(rc == HCCL_SUCCESS, hccl_text(what, rc));
}

// A tensor this backend can hand to hcomm: on the CPU, dense.
void check_tensor(const at::Tensor& t, const char* what) {
  TORCH_CHECK(t.defined(), "hcomm ", what, ": undefined tensor");
  TORCH_CHECK(t.device().is_cpu(), "hcomm ", what, ": tensors must be on the CPU, got ",
              t.device());
  TORCH_CHECK(t.layout() == at::kStrided, "hcomm ", what, ": only dense (strided) tensors, got ",
              t.layout());
}

// The hcomm type of a tensor. Reducing operations take the arithmetic
// types; the data-moving ones also move bool (as bytes).
HcclDataType dtype_of(const at::Tensor& t, const char* what, bool reducing) {
  switch (t.scalar_type()) {
    case at::kFloat: return HCCL_DATA_TYPE_FP32;
    case at::kDouble: return HCCL_DATA_TYPE_FP64;
    case at::kHalf: return HCCL_DATA_TYPE_FP16;
    case at::kBFloat16: return HCCL_DATA_TYPE_BFP16;
    case at::kChar: return HCCL_DATA_TYPE_INT8;
    case at::kShort: return HCCL_DATA_TYPE_INT16;
    case at::kInt: return HCCL_DATA_TYPE_INT32;
    case at::kLong: return HCCL_DATA_TYPE_INT64;
    case at::kByte: return HCCL_DATA_TYPE_UINT8;
    case at::kBool:
      if (!reducing) return HCCL_DATA_TYPE_UINT8;
      break;
    default: break;
  }
  TORCH_CHECK(false, "hcomm ", what, ": unsupported tensor type ", t.scalar_type(),
              reducing ? " for a reduction" : "");
}

HcclReduceOp redop_of(const c10d::ReduceOp& op, const at::Tensor& t, const char* what) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM: return HCCL_REDUCE_SUM;
    case c10d::ReduceOp::PRODUCT: return HCCL_REDUCE_PROD;
    case c10d::ReduceOp::MIN: return HCCL_REDUCE_MIN;
    case c10d::ReduceOp::MAX: return HCCL_REDUCE_MAX;
    case c10d::ReduceOp::AVG:
      TORCH_CHECK(at::isFloatingType(t.scalar_type()), "hcomm ", what,
                  ": ReduceOp.AVG needs a floating-point tensor, got ", t.scalar_type());
      return HCCL_REDUCE_AVG;
    default: break;
  }
  TORCH_CHECK(false, "hcomm ", what, ": unsupported reduce op (", int(op.op_),
              "); hcomm has SUM, PRODUCT, MIN, MAX and AVG");
}

// The tensor itself when it is contiguous, else a contiguous copy (the
// caller copies results back).
at::Tensor dense(const at::Tensor& t) { return t.is_contiguous() ? t : t.contiguous(); }

std::function<void()> copy_back(const at::Tensor& user, const at::Tensor& buf) {
  if (user.is_same(buf)) return nullptr;
  return [user, buf]() mutable { user.copy_(buf); };
}

at::Tensor& single(std::vector<at::Tensor>& ts, const char* what) {
  TORCH_CHECK(ts.size() == 1, "hcomm ", what, ": expects one tensor per call, got ", ts.size());
  check_tensor(ts[0], what);
  return ts[0];
}

uint32_t root_of(int64_t root, int size, const char* what) {
  TORCH_CHECK(root >= 0 && root < size, "hcomm ", what, ": root ", root, " out of range [0, ",
              size, ")");
  return uint32_t(root);
}

void same_shape(const at::Tensor& a, const at::Tensor& b, const char* what) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), "hcomm ", what, ": tensor types differ (",
              a.scalar_type(), ", ", b.scalar_type(), ")");
  TORCH_CHECK(a.numel() == b.numel(), "hcomm ", what, ": tensor sizes differ (", a.numel(),
              " and ", b.numel(), " elements)");
}

// Flatten a list of same-typed tensors into one new contiguous tensor.
at::Tensor flat_of(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> v;
  v.reserve(ts.size());
  for (const auto& t : ts) v.push_back(t.reshape({-1}));
  return at::cat(v);
}

// Copy consecutive pieces of `flat` into `outs`.
void unflatten(const at::Tensor& flat, std::vector<at::Tensor>& outs) {
  int64_t off = 0;
  for (auto& o : outs) {
    o.copy_(flat.narrow(0, off, o.numel()).view(o.sizes()));
    off += o.numel();
  }
}

}  // namespace

// ------------------------------------------------------------------ Queue

Queue::Queue() { check_hccl(HcclStreamCreate(&stream_), "HcclStreamCreate"); }

Queue::~Queue() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (watcher_.joinable()) {
    if (watcher_.get_id() == std::this_thread::get_id())
      watcher_.detach();
    else
      watcher_.join();
  }
  HcclStreamDestroy(stream_);  // waits for what is still queued
}

uint64_t Queue::push(const Issue& issue, std::function<void()> after,
                     std::vector<at::Tensor> keep, const char* what) {
  std::lock_guard<std::mutex> g(mu_);
  // A bad argument enqueues nothing (docs/STREAMS.md)
  check_hccl(issue(stream_), what);
  uint64_t seq = ++issued_;
  pending_.push_back(Pending{seq, std::move(after), std::move(keep), {}});
  return seq;
}

// With sync_mu_ held (`sync`): the operations up to `upto` have finished
// with `rc`. Copies results back (on success), publishes the new state,
// then completes the futures without any lock held (their callbacks may
// issue or wait on operations).
void Queue::retire(uint64_t upto, HcclResult rc, std::unique_lock<std::mutex>& sync) {
  std::vector<Pending> out;
  {
    std::lock_guard<std::mutex> g(mu_);
    while (!pending_.empty() && pending_.front().seq <= upto) {
      out.push_back(std::move(pending_.front()));
      pending_.pop_front();
    }
  }
  std::string err;
  if (rc == HCCL_SUCCESS) {
    for (auto& p : out)
      if (p.after) p.after();
  } else {
    // The stream reports its first error once; it fails everything queued
    // behind that operation, and we cannot tell which one failed first.
    err = hccl_text("operation on the group's stream", rc);
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!err.empty()) failed_.emplace_back(upto, err);
    if (upto > done_) done_ = upto;
  }
  sync.unlock();
  for (auto& p : out)
    for (auto& f : p.futures) {
      if (err.empty())
        f.first->markCompleted(f.second);
      else
        f.first->setError(std::make_exception_ptr(std::runtime_error(err)));
    }
}

bool Queue::idle() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (done_ == issued_) return true;
  }
  std::unique_lock<std::mutex> s(sync_mu_, std::try_to_lock);
  if (!s.owns_lock()) return false;
  uint64_t upto;
  {
    std::lock_guard<std::mutex> g(mu_);
    upto = issued_;
  }
  HcclResult rc = HcclStreamQuery(stream_);
  if (rc == HCCL_E_AGAIN) return false;
  if (rc != HCCL_SUCCESS) rc = HcclStreamSynchronize(stream_);  // all finished: returns and clears the error
  retire(upto, rc, s);
  return true;
}

bool Queue::finished(uint64_t seq) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (done_ >= seq) return true;
  }
  idle();
  std::lock_guard<std::mutex> g(mu_);
  return done_ >= seq;
}

void Queue::synchronize(uint64_t seq) {
  std::unique_lock<std::mutex> s(sync_mu_);
  uint64_t upto;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (done_ >= seq) return;
    upto = issued_;
  }
  HcclResult rc = HcclStreamSynchronize(stream_);
  retire(upto, rc, s);
}

std::string Queue::error(uint64_t seq) {
  std::lock_guard<std::mutex> g(mu_);
  uint64_t prev = 0;
  for (const auto& f : failed_) {
    if (seq > prev && seq <= f.first) return f.second;
    prev = f.first;
  }
  return "";
}

c10::intrusive_ptr<c10::ivalue::Future> Queue::future(uint64_t seq, c10::IValue value) {
  auto fut = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
  {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& p : pending_)
      if (p.seq == seq) {
        p.futures.emplace_back(fut, std::move(value));
        if (!watching_) {
          watching_ = true;
          watcher_ = std::thread([this] { watcher(); });
        }
        cv_.notify_one();
        return fut;
      }
  }
  // already finished
  std::string err = error(seq);
  if (err.empty())
    fut->markCompleted(std::move(value));
  else
    fut->setError(std::make_exception_ptr(std::runtime_error(err)));
  return fut;
}

// Completes the futures that were asked for: synchronizes the stream while
// some future waits on it, sleeps otherwise.
void Queue::watcher() {
  for (;;) {
    uint64_t target = 0;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] {
        if (stop_) return true;
        for (const auto& p : pending_)
          if (!p.futures.empty()) return true;
        return false;
      });
      if (stop_) return;
      for (const auto& p : pending_)
        if (!p.futures.empty()) target = p.seq;
    }
    synchronize(target);
  }
}

// ------------------------------------------------------------------ Work

WorkHcomm::WorkHcomm(OpType op, std::vector<at::Tensor> result)
    : c10d::Work(-1, op), result_(std::move(result)) {
  completed_ = true;
}

WorkHcomm::WorkHcomm(OpType op, std::vector<at::Tensor> result, std::shared_ptr<Queue> q,
                     uint64_t seq)
    : c10d::Work(-1, op), result_(std::move(result)), q_(std::move(q)), seq_(seq) {}

void WorkHcomm::settle() {
  std::lock_guard<std::mutex> g(mutex_);
  if (completed_) return;
  completed_ = true;
  std::string err = q_->error(seq_);
  if (!err.empty()) exception_ = std::make_exception_ptr(std::runtime_error(err));
}

bool WorkHcomm::isCompleted() {
  if (!q_) return true;
  if (!q_->finished(seq_)) return false;
  settle();
  return true;
}

bool WorkHcomm::isSuccess() const {
  std::lock_guard<std::mutex> g(mutex_);
  return completed_ && !exception_;
}

std::exception_ptr WorkHcomm::exception() const {
  std::lock_guard<std::mutex> g(mutex_);
  return exception_;
}

// The timeout of the group (HCCL_EXEC_TIMEOUT, from init_process_group)
// bounds every operation; `timeout` is not used.
bool WorkHcomm::wait(std::chrono::milliseconds /*timeout*/) {
  if (q_) {
    q_->synchronize(seq_);
    settle();
  }
  std::lock_guard<std::mutex> g(mutex_);
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

void WorkHcomm::synchronize() {}

std::vector<at::Tensor> WorkHcomm::result() { return result_; }

c10::intrusive_ptr<c10::ivalue::Future> WorkHcomm::getFuture() {
  if (q_) return q_->future(seq_, c10::IValue(result_));
  auto fut = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
  fut->markCompleted(c10::IValue(result_));
  return fut;
}

// ------------------------------------------------------------------ group

ProcessGroupHcomm::ProcessGroupHcomm(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                     int size, double timeout_s,
                                     const std::vector<int64_t>& global_ranks, const HcommOptions& opts)
    : c10d::ProcessGroup(rank, size), opts_(opts) {
  HcclComm world;
  {
    std::lock_guard<std::mutex> g(g_world_mu);
    world = g_world;
  }
  if (!global_ranks.empty() && world != nullptr) {
    std::vector<uint32_t> ids(global_ranks.begin(), global_ranks.end());
    check_hccl(HcclCommCreateGroup(&comm_, world, uint32_t(size), ids.data()),
               "new_group (HcclCommCreateGroup)");
  } else {
    HcclRootInfo root;
    if (rank == 0) {
      check_hccl(HcclGetRootInfo(&root), "init (HcclGetRootInfo)");
      const uint8_t* b = reinterpret_cast<const uint8_t*>(&root);
      store->set(kRootKey, std::vector<uint8_t>(b, b + sizeof root));
    } else {
      std::vector<uint8_t> v = store->get(kRootKey);
      TORCH_CHECK(v.size() == sizeof root, "hcomm init: the root info in the store has ", v.size(),
                  " bytes, not ", sizeof root);
      std::memcpy(&root, v.data(), sizeof root);
    }
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    // the group's timeout bounds every operation (a dead or hung peer)
    double t = std::ceil(timeout_s);
    cfg.hcclExecTimeOut = t < 1 ? 1 : (t > 2147483647.0 ? 2147483647 : int32_t(t));
    check_hccl(HcclCommInitRootInfoConfig(uint32_t(size), &root, uint32_t(rank), &cfg, &comm_),
               "init (HcclCommInitRootInfoConfig)");
    if (global_ranks.empty()) {
      std::lock_guard<std::mutex> g(g_world_mu);
      if (g_world == nullptr) {
        g_world = comm_;
        world_ = true;
      }
    }
  }
  q_ = std::make_shared<Queue>();
}

ProcessGroupHcomm::~ProcessGroupHcomm() {
  if (world_) {
    std::lock_guard<std::mutex> g(g_world_mu);
    g_world = nullptr;
  }
  HcclCommDestroy(comm_);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::run(OpType op, const char* what,
    const Issue& issue, std::function<void()> after, std::vector<at::Tensor> keep,
    std::vector<at::Tensor> result, bool must_queue) {
  if (!must_queue && !opts_.async_collectives && q_->idle()) {
    check_hccl(issue(nullptr), what);
    if (after) after();
    return c10::make_intrusive<WorkHcomm>(op, std::move(result));
  }
  uint64_t seq = q_->push(issue, std::move(after), std::move(keep), what);
  return c10::make_intrusive<WorkHcomm>(op, std::move(result), q_, seq);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::allreduce(std::vector<at::Tensor>& tensors,
                                                            const c10d::AllreduceOptions& opts) {
  at::Tensor& t = single(tensors, "allreduce");
  HcclDataType dt = dtype_of(t, "allreduce", true);
  HcclReduceOp op = redop_of(opts.reduceOp, t, "allreduce");
  at::Tensor b = dense(t);
  void* p = b.data_ptr();
  uint64_t n = uint64_t(b.numel());
  HcclComm c = comm_;
  return run(OpType::ALLREDUCE, "allreduce",
             [=](HcclStream s) { return HcclAllReduce(p, p, n, dt, op, c, s); },
             copy_back(t, b), {t, b}, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "hcomm allreduce_coalesced: no tensors");
  for (const auto& t : tensors) {
    check_tensor(t, "allreduce_coalesced");
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(),
                "hcomm allreduce_coalesced: all tensors must have one type");
  }
  HcclDataType dt = dtype_of(tensors[0], "allreduce_coalesced", true);
  HcclReduceOp op = redop_of(opts.reduceOp, tensors[0], "allreduce_coalesced");
  std::vector<at::Tensor> bufs;
  std::vector<void*> ptrs;
  std::vector<uint64_t> counts;
  std::vector<std::function<void()>> backs;
  for (auto& t : tensors) {
    bufs.push_back(dense(t));
    ptrs.push_back(bufs.back().data_ptr());
    counts.push_back(uint64_t(t.numel()));
    if (auto f = copy_back(t, bufs.back())) backs.push_back(f);
  }
  std::vector<at::Tensor> keep(tensors);
  keep.insert(keep.end(), bufs.begin(), bufs.end());
  HcclComm c = comm_;
  std::function<void()> after;
  if (!backs.empty())
    after = [backs]() {
      for (const auto& f : backs) f();
    };
  return run(OpType::ALLREDUCE_COALESCED, "allreduce_coalesced",
             [=](HcclStream s) {
               return HcclAllReduceMulti(const_cast<const void**>(ptrs.data()),
                                         const_cast<void**>(ptrs.data()), counts.data(),
                                         ptrs.size(), dt, op, c, s);
             },
             after, keep, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::broadcast(std::vector<at::Tensor>& tensors,
                                                            const c10d::BroadcastOptions& opts) {
  at::Tensor& t = single(tensors, "broadcast");
  TORCH_CHECK(opts.rootTensor == 0, "hcomm broadcast: rootTensor must be 0");
  HcclDataType dt = dtype_of(t, "broadcast", false);
  uint32_t root = root_of(opts.rootRank, size_, "broadcast");
  at::Tensor b = dense(t);
  void* p = b.data_ptr();
  uint64_t n = uint64_t(b.numel());
  HcclComm c = comm_;
  return run(OpType::BROADCAST, "broadcast",
             [=](HcclStream s) { return HcclBroadcast(p, n, dt, root, c, s); },
             copy_back(t, b), {t, b}, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::reduce(std::vector<at::Tensor>& tensors,
                                                         const c10d::ReduceOptions& opts) {
  at::Tensor& t = single(tensors, "reduce");
  TORCH_CHECK(opts.rootTensor == 0, "hcomm reduce: rootTensor must be 0");
  HcclDataType dt = dtype_of(t, "reduce", true);
  HcclReduceOp op = redop_of(opts.reduceOp, t, "reduce");
  uint32_t root = root_of(opts.rootRank, size_, "reduce");
  at::Tensor b = dense(t);
  void* p = b.data_ptr();
  uint64_t n = uint64_t(b.numel());
  HcclComm c = comm_;
  return run(OpType::REDUCE, "reduce",
             [=](HcclStream s) { return HcclReduce(p, p, n, dt, op, root, c, s); },
             rank_ == int(root) ? copy_back(t, b) : nullptr, {t, b}, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions&) {
  at::Tensor& in = single(inputs, "allgather");
  TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == size_t(size_),
              "hcomm allgather: expects one list of ", size_, " output tensors");
  for (const auto& o : outputs[0]) {
    check_tensor(o, "allgather");
    same_shape(o, in, "allgather");
  }
  HcclDataType dt = dtype_of(in, "allgather", false);
  at::Tensor b = dense(in);
  at::Tensor flat = at::empty({int64_t(size_) * in.numel()}, in.options());
  void* sp = b.data_ptr();
  void* rp = flat.data_ptr();
  uint64_t n = uint64_t(in.numel());
  HcclComm c = comm_;
  std::vector<at::Tensor> outs = outputs[0];
  std::vector<at::Tensor> keep = outs;
  keep.push_back(b);
  keep.push_back(flat);
  return run(OpType::ALLGATHER, "allgather",
             [=](HcclStream s) { return HcclAllGather(sp, rp, n, dt, c, s); },
             [flat, outs]() mutable { unflatten(flat, outs); }, keep, outs);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::_allgather_base(at::Tensor& output,
    at::Tensor& input, const c10d::AllgatherOptions&) {
  check_tensor(input, "_allgather_base");
  check_tensor(output, "_allgather_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "hcomm _allgather_base: types differ");
  TORCH_CHECK(output.numel() == int64_t(size_) * input.numel(), "hcomm _allgather_base: output has ",
              output.numel(), " elements, expected ", size_, " x ", input.numel());
  HcclDataType dt = dtype_of(input, "_allgather_base", false);
  at::Tensor bi = dense(input), bo = dense(output);
  void* sp = bi.data_ptr();
  void* rp = bo.data_ptr();
  uint64_t n = uint64_t(input.numel());
  HcclComm c = comm_;
  return run(OpType::_ALLGATHER_BASE, "_allgather_base",
             [=](HcclStream s) { return HcclAllGather(sp, rp, n, dt, c, s); },
             copy_back(output, bo), {input, output, bi, bo}, {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::gather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  at::Tensor& in = single(inputs, "gather");
  uint32_t root = root_of(opts.rootRank, size_, "gather");
  bool is_root = rank_ == int(root);
  if (is_root) {
    TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == size_t(size_),
                "hcomm gather: the root expects one list of ", size_, " output tensors");
    for (const auto& o : outputs[0]) {
      check_tensor(o, "gather");
      same_shape(o, in, "gather");
    }
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "hcomm gather: only the root passes output tensors");
  }
  HcclDataType dt = dtype_of(in, "gather", false);
  at::Tensor b = dense(in);
  uint64_t n = uint64_t(in.numel());
  HcclComm c = comm_;
  int size = size_;
  std::vector<at::Tensor> keep{in, b};
  std::vector<at::Tensor> outs = is_root ? outputs[0] : std::vector<at::Tensor>{};
  at::Tensor flat;
  if (is_root) {
    flat = at::empty({int64_t(size_) * in.numel()}, in.options());
    keep.push_back(flat);
    keep.insert(keep.end(), outs.begin(), outs.end());
  }
  void* sp = b.data_ptr();
  char* rp = is_root ? static_cast<char*>(flat.data_ptr()) : nullptr;
  size_t blk = size_t(in.numel()) * in.element_size();
  // one group of point-to-point calls: the root receives a block from
  // every other rank, the others send theirs
  Issue issue = [=](HcclStream s) {
    HcclResult rc = HcclGroupStart();
    if (rc != HCCL_SUCCESS) return rc;
    HcclResult first = HCCL_SUCCESS;
    if (is_root) {
      for (int r = 0; r < size; r++)
        if (r != int(root)) {
          rc = HcclRecv(rp + size_t(r) * blk, n, dt, uint32_t(r), c, s);
          if (first == HCCL_SUCCESS) first = rc;
        }
    } else {
      first = HcclSend(sp, n, dt, root, c, s);
    }
    rc = HcclGroupEnd();
    return first != HCCL_SUCCESS ? first : rc;
  };
  std::function<void()> after;
  if (is_root)
    after = [flat, outs, b, root, blk]() mutable {
      std::memcpy(static_cast<char*>(flat.data_ptr()) + size_t(root) * blk, b.data_ptr(), blk);
      unflatten(flat, outs);
    };
  return run(OpType::GATHER, "gather", issue, after, keep, outs);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::scatter(std::vector<at::Tensor>& outputs,
    std::vector<std::vector<at::Tensor>>& inputs, const c10d::ScatterOptions& opts) {
  at::Tensor& out = single(outputs, "scatter");
  uint32_t root = root_of(opts.rootRank, size_, "scatter");
  bool is_root = rank_ == int(root);
  at::Tensor flat;
  if (is_root) {
    TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == size_t(size_),
                "hcomm scatter: the root expects one list of ", size_, " input tensors");
    for (const auto& i : inputs[0]) {
      check_tensor(i, "scatter");
      same_shape(i, out, "scatter");
    }
    flat = flat_of(inputs[0]);
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "hcomm scatter: only the root passes input tensors");
  }
  HcclDataType dt = dtype_of(out, "scatter", false);
  at::Tensor bo = dense(out);
  void* sp = is_root ? flat.data_ptr() : nullptr;
  void* rp = bo.data_ptr();
  uint64_t n = uint64_t(out.numel());
  HcclComm c = comm_;
  std::vector<at::Tensor> keep{out, bo};
  if (is_root) keep.push_back(flat);
  return run(OpType::SCATTER, "scatter",
             [=](HcclStream s) { return HcclScatter(sp, rp, n, dt, root, c, s); },
             copy_back(out, bo), keep, outputs);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  at::Tensor& out = single(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == size_t(size_),
              "hcomm reduce_scatter: expects one list of ", size_, " input tensors");
  for (const auto& i : inputs[0]) {
    check_tensor(i, "reduce_scatter");
    same_shape(i, out, "reduce_scatter");
  }
  HcclDataType dt = dtype_of(out, "reduce_scatter", true);
  HcclReduceOp op = redop_of(opts.reduceOp, out, "reduce_scatter");
  at::Tensor flat = flat_of(inputs[0]);
  at::Tensor bo = dense(out);
  void* sp = flat.data_ptr();
  void* rp = bo.data_ptr();
  uint64_t n = uint64_t(out.numel());
  HcclComm c = comm_;
  return run(OpType::REDUCE_SCATTER, "reduce_scatter",
             [=](HcclStream s) { return HcclReduceScatter(sp, rp, n, dt, op, c, s); },
             copy_back(out, bo), {out, bo, flat}, outputs);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::_reduce_scatter_base(at::Tensor& output,
    at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  check_tensor(input, "_reduce_scatter_base");
  check_tensor(output, "_reduce_scatter_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(),
              "hcomm _reduce_scatter_base: types differ");
  TORCH_CHECK(input.numel() == int64_t(size_) * output.numel(), "hcomm _reduce_scatter_base: input has ",
              input.numel(), " elements, expected ", size_, " x ", output.numel());
  HcclDataType dt = dtype_of(output, "_reduce_scatter_base", true);
  HcclReduceOp op = redop_of(opts.reduceOp, output, "_reduce_scatter_base");
  at::Tensor bi = dense(input), bo = dense(output);
  void* sp = bi.data_ptr();
  void* rp = bo.data_ptr();
  uint64_t n = uint64_t(output.numel());
  HcclComm c = comm_;
  return run(OpType::_REDUCE_SCATTER_BASE, "_reduce_scatter_base",
             [=](HcclStream s) { return HcclReduceScatter(sp, rp, n, dt, op, c, s); },
             copy_back(output, bo), {input, output, bi, bo}, {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::alltoall_base(at::Tensor& output,
    at::Tensor& input, std::vector<int64_t>& outputSplits, std::vector<int64_t>& inputSplits,
    const c10d::AllToAllOptions&) {
  check_tensor(input, "alltoall_base");
  check_tensor(output, "alltoall_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "hcomm alltoall_base: types differ");
  HcclDataType dt = dtype_of(input, "alltoall_base", false);
  at::Tensor bi = dense(input), bo = dense(output);
  void* sp = bi.data_ptr();
  void* rp = bo.data_ptr();
  HcclComm c = comm_;
  std::vector<at::Tensor> keep{input, output, bi, bo};
  if (outputSplits.empty() && inputSplits.empty()) {
    TORCH_CHECK(input.numel() % size_ == 0 && output.numel() == input.numel(),
                "hcomm alltoall_base: without split sizes, input and output must have equal "
                "sizes divisible by the group size (", input.numel(), ", ", output.numel(), ")");
    uint64_t n = uint64_t(input.numel() / size_);
    return run(OpType::ALLTOALL_BASE, "alltoall_base",
               [=](HcclStream s) { return HcclAlltoAll(sp, n, dt, rp, n, dt, c, s); },
               copy_back(output, bo), keep, {output});
  }
  // split sizes count rows of dimension 0; an empty list splits evenly
  auto counts = [&](const at::Tensor& t, const std::vector<int64_t>& splits, const char* which) {
    TORCH_CHECK(t.dim() > 0, "hcomm alltoall_base: the ", which, " tensor has no dimension 0");
    int64_t rows = t.size(0);
    int64_t row = rows == 0 ? 0 : t.numel() / rows;
    std::vector<uint64_t> cnt(size_), dsp(size_);
    if (splits.empty()) {
      TORCH_CHECK(rows % size_ == 0, "hcomm alltoall_base: ", which, " has ", rows,
                  " rows, not divisible by the group size");
      for (int r = 0; r < size_; r++) cnt[r] = uint64_t(rows / size_ * row);
    } else {
      TORCH_CHECK(splits.size() == size_t(size_), "hcomm alltoall_base: ", which, " split sizes have ",
                  splits.size(), " entries, expected ", size_);
      int64_t sum = 0;
      for (int r = 0; r < size_; r++) {
        TORCH_CHECK(splits[r] >= 0, "hcomm alltoall_base: negative split size");
        sum += splits[r];
        cnt[r] = uint64_t(splits[r] * row);
      }
      TORCH_CHECK(sum == rows, "hcomm alltoall_base: ", which, " split sizes sum to ", sum,
                  ", the tensor has ", rows, " rows");
    }
    uint64_t off = 0;
    for (int r = 0; r < size_; r++) {
      dsp[r] = off;
      off += cnt[r];
    }
    return std::make_pair(cnt, dsp);
  };
  auto si = counts(input, inputSplits, "input");
  auto so = counts(output, outputSplits, "output");
  return run(OpType::ALLTOALL_BASE, "alltoall_base",
             [=](HcclStream s) {
               return HcclAlltoAllV(sp, si.first.data(), si.second.data(), dt, rp, so.first.data(),
                                    so.second.data(), dt, c, s);
             },
             copy_back(output, bo), keep, {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::alltoall(std::vector<at::Tensor>& outputs,
    std::vector<at::Tensor>& inputs, const c10d::AllToAllOptions&) {
  TORCH_CHECK(outputs.size() == size_t(size_) && inputs.size() == size_t(size_),
              "hcomm alltoall: expects ", size_, " input and ", size_, " output tensors");
  for (size_t i = 0; i < inputs.size(); i++) {
    check_tensor(inputs[i], "alltoall");
    check_tensor(outputs[i], "alltoall");
    TORCH_CHECK(inputs[i].scalar_type() == inputs[0].scalar_type() &&
                    outputs[i].scalar_type() == inputs[0].scalar_type(),
                "hcomm alltoall: all tensors must have one type");
  }
  HcclDataType dt = dtype_of(inputs[0], "alltoall", false);
  std::vector<uint64_t> sc(size_), sd(size_), rc(size_), rd(size_);
  uint64_t so = 0, ro = 0;
  for (int r = 0; r < size_; r++) {
    sc[r] = uint64_t(inputs[r].numel());
    sd[r] = so;
    so += sc[r];
    rc[r] = uint64_t(outputs[r].numel());
    rd[r] = ro;
    ro += rc[r];
  }
  at::Tensor fi = flat_of(inputs);
  at::Tensor fo = at::empty({int64_t(ro)}, inputs[0].options());
  void* sp = fi.data_ptr();
  void* rp = fo.data_ptr();
  HcclComm c = comm_;
  std::vector<at::Tensor> outs = outputs;
  std::vector<at::Tensor> keep = outs;
  keep.push_back(fi);
  keep.push_back(fo);
  return run(OpType::ALLTOALL, "alltoall",
             [=](HcclStream s) {
               return HcclAlltoAllV(sp, sc.data(), sd.data(), dt, rp, rc.data(), rd.data(), dt, c, s);
             },
             [fo, outs]() mutable { unflatten(fo, outs); }, keep, outs);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::send(std::vector<at::Tensor>& tensors, int dst,
                                                       int tag) {
  at::Tensor& t = single(tensors, "send");
  TORCH_CHECK(tag == 0, "hcomm send: tags are not supported (messages between two ranks match "
              "in the order they were sent); got tag ", tag);
  HcclDataType dt = dtype_of(t, "send", false);
  uint32_t peer = root_of(dst, size_, "send");
  at::Tensor b = dense(t);
  void* p = b.data_ptr();
  uint64_t n = uint64_t(b.numel());
  HcclComm c = comm_;
  return run(OpType::SEND, "send", [=](HcclStream s) { return HcclSend(p, n, dt, peer, c, s); },
             nullptr, {t, b}, tensors, true);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::recv(std::vector<at::Tensor>& tensors, int src,
                                                       int tag) {
  at::Tensor& t = single(tensors, "recv");
  TORCH_CHECK(tag == 0, "hcomm recv: tags are not supported (messages between two ranks match "
              "in the order they were sent); got tag ", tag);
  HcclDataType dt = dtype_of(t, "recv", false);
  uint32_t peer = root_of(src, size_, "recv");
  at::Tensor b = dense(t);
  void* p = b.data_ptr();
  uint64_t n = uint64_t(b.numel());
  HcclComm c = comm_;
  return run(OpType::RECV, "recv", [=](HcclStream s) { return HcclRecv(p, n, dt, peer, c, s); },
             copy_back(t, b), {t, b}, tensors, true);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHcomm::barrier(const c10d::BarrierOptions&) {
  HcclComm c = comm_;
  return run(OpType::BARRIER, "barrier", [=](HcclStream s) { return HcclBarrier(c, s); },
             nullptr, {}, {});
}

}  // namespace hcomm_torch
