"""The CPU peak probe counts what an operator allocates, and nothing that shares a storage made before it."""

from __future__ import annotations

import torch

from ray_gpu.live_bytes import LiveBytes


def test_a_linear_layer_counts_its_output_not_a_view_of_its_weight() -> None:
    weight = torch.randn(4096, 1024, dtype=torch.bfloat16)
    x = torch.randn(8, 1024, dtype=torch.bfloat16)
    with torch.no_grad(), LiveBytes() as probe:
        y = torch.nn.functional.linear(x, weight)  # the weight's t() is a view: no new storage
    assert probe.peak == y.untyped_storage().nbytes() == 8 * 4096 * 2


def test_an_in_place_op_on_an_earlier_tensor_allocates_nothing() -> None:
    x = torch.zeros(1024, 1024)
    with torch.no_grad(), LiveBytes() as probe:
        x.add_(1.0)
        x.t().mul_(2.0)
    assert probe.peak == 0


def test_a_freed_temporary_leaves_the_peak_at_its_size() -> None:
    x = torch.ones(256, 256)
    with torch.no_grad(), LiveBytes() as probe:
        (x * 2).sum()  # the product (256 KiB) is freed once the sum has it
        assert probe.live <= 4 * 8  # at most the scalar sum is alive (its storage may be padded)
    assert probe.peak >= 256 * 256 * 4
    assert probe.peak <= 256 * 256 * 4 + 64
