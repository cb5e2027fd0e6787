"""The unbounded control of the spill check: the embedding job's own input, read and materialized (every block held
at once), on the job's own cluster and object store. It prints the bytes it materialized as one JSON line."""

from __future__ import annotations

import json
import sys

import ray


def main(address: str, data: str) -> None:
    ray.init(address=address, logging_level="ERROR")
    held = ray.data.read_parquet(data).materialize()
    print("UNBOUNDED " + json.dumps({"bytes": held.size_bytes(), "blocks": held.num_blocks()}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
