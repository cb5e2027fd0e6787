"""TrainingJob example: multi-node causal-LM training with Ray Train, DDP or DeepSpeed ZeRO as planned,
checkpoints in the stack's bucket, resume from the last checkpoint.

    python -m ray_gpu.examples.train --data s3://bucket/tokenized/      # on the cluster
    python -m ray_gpu.examples.train --smoke                             # CPU, tiny model
"""

from __future__ import annotations

import ray_gpu
from ray_gpu.examples import common, driver, precision


def main() -> None:
    args = driver.finish_arguments(common.arguments(__doc__.splitlines()[0], driver.add_training_arguments))
    tuning = ray_gpu.load(args.tuning)
    model, family, smoke = tuning.model, tuning.model_family, args.smoke
    attn = common.attention(tuning)
    weights = precision.weights_dtype(tuning.weights_precision())
    driver.run(
        args,
        tuning,
        build_model=lambda: common.causal_lm(model, family, smoke, attn=attn, dtype=weights),
        prepare_batch=lambda _model, batch: batch,
        save_all=True,
    )


if __name__ == "__main__":
    main()
