"""hcomm as a torch.distributed backend.

    import hcomm_torch                     # registers the backend "hcomm"
    torch.distributed.init_process_group("hcomm", ...)

See docs/TORCH.md for what is supported.
"""
import torch.distributed as dist

from ._C import Options, ProcessGroupHcomm

__all__ = ["Options", "ProcessGroupHcomm"]


def _create(backend_opts, pg_options=None):
    """The creator that torch.distributed calls (extended API): the group's
    store, rank, size, timeout and, for a subgroup, its global ranks."""
    opts = Options()
    if pg_options is not None:
        if not isinstance(pg_options, Options):
            raise TypeError("hcomm: pg_options must be hcomm_torch.Options, got "
                            f"{type(pg_options).__name__}")
        opts = pg_options
    return ProcessGroupHcomm(backend_opts.store, backend_opts.group_rank,
                             backend_opts.group_size,
                             backend_opts.timeout.total_seconds(),
                             list(backend_opts.global_ranks_in_group), opts)


if "HCOMM" not in dist.Backend._plugins:
    dist.Backend.register_backend("hcomm", _create, extended_api=True)
