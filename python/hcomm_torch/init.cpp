// hcomm_torch._C: the Python binding of the "hcomm" process group.
#include <torch/csrc/utils/pybind.h>

#include "ProcessGroupHcomm.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_C, m) {
  // c10d's ProcessGroup and Store classes must be registered first
  py::module::import("torch.distributed");
  m.doc() = "hcomm as a torch.distributed backend (docs/TORCH.md)";

  py::class_<hcomm_torch::HcommOptions>(m, "Options")
      .def(py::init<>())
      .def_readwrite("async_collectives", &hcomm_torch::HcommOptions::async_collectives);

  py::class_<hcomm_torch::ProcessGroupHcomm, c10d::ProcessGroup,
             c10::intrusive_ptr<hcomm_torch::ProcessGroupHcomm>>(m, "ProcessGroupHcomm")
      .def(py::init([](const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                       double timeout_s, const std::vector<int64_t>& global_ranks,
                       const hcomm_torch::HcommOptions& opts) {
             return c10::make_intrusive<hcomm_torch::ProcessGroupHcomm>(store, rank, size,
                                                                        timeout_s, global_ranks,
                                                                        opts);
           }),
           py::arg("store"), py::arg("rank"), py::arg("size"), py::arg("timeout_s"),
           py::arg("global_ranks"), py::arg("options"),
           py::call_guard<py::gil_scoped_release>());
}
