"""Peak bytes of tensors alive at once on CPU: the CPU analog of ``torch.cuda.max_memory_allocated``, to check a memory
plan on a machine without a GPU (``with LiveBytes() as probe: step(); probe.peak``).

Every storage an operator creates inside the mode is counted from its creation until it is freed (storages keep
their Python object for their whole life, so a finalizer sees the free). Tensors created before the mode (weights,
inputs) are not counted.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch.autograd.graph import saved_tensors_hooks
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class LiveBytes(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0
        self._tracked: dict[int, Any] = {}

    def _free(self, key: int, nbytes: int) -> None:
        if self._tracked.pop(key, None) is not None:
            self.live -= nbytes

    # PyTorch's dispatch protocol hands any operator, its arguments and its outputs: untyped by design.
    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        # A view or an in-place result shares an input's storage: it allocates nothing (a weight's ``t()`` in a
        # linear layer would otherwise count the whole weight as new).
        inputs = {
            t.untyped_storage().data_ptr()
            for t in tree_leaves((args, kwargs or {}))
            if isinstance(t, torch.Tensor) and t.device.type != "meta"
        }
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor) or t.device.type == "meta":
                continue
            if t.untyped_storage().data_ptr() in inputs:
                continue
            storage = t.untyped_storage()
            key, nbytes = id(storage), storage.nbytes()
            if key in self._tracked or nbytes == 0:
                continue
            self._tracked[key] = weakref.finalize(storage, self._free, key, nbytes)
            self.live += nbytes
            self.peak = max(self.peak, self.live)
        return out


def saved_tensor_bytes(model: torch.nn.Module, step: Callable[[], torch.Tensor]) -> int:
    """Bytes autograd saves for backward while ``step()`` builds its loss (each storage once, parameters excluded);
    runs the backward too."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in params:
            seen.setdefault(storage.data_ptr(), storage.nbytes())
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        loss = step()
    loss.backward()
    return sum(seen.values())
