"""Typed views of the tuning document, one ``TypedDict`` per section. A test checks them against ``tuning.schema.json``
(keys and which are required), so they cannot drift from the contract."""

from typing import Any, NotRequired, TypedDict

#: A parsed JSON Schema node.
JsonSchema = dict[str, Any]
Scalar = str | int | float | bool


class WorkloadSection(TypedDict):
    name: str
    kind: str
    environment: str
    model: str
    modelFamily: str
    modelType: str
    planDigest: str
    runRecordPrefix: str


class Knobs(TypedDict, total=False):
    microBatchSize: int
    gradientAccumulationSteps: int
    globalBatchSize: int
    zeroStage: int
    offload: str
    gradientCheckpointing: bool
    attentionImplementation: str
    loss: str
    lossChunkTokens: int
    optimizerStep: str
    gpus: int
    sequenceLength: int
    loraRank: int
    loraAlpha: float
    loraQuantization: str
    batchSize: int
    gpusPerActor: float
    tensorParallelSize: int
    replicas: int
    gpuMemoryUtilization: float
    maxConcurrentSequences: int
    maxModelLength: int
    maxNewTokens: int
    maxBatchedTokens: int


class ResourcesPerWorker(TypedDict):
    CPU: int
    GPU: int


class TrainSection(TypedDict):
    numWorkers: int
    resourcesPerWorker: ResourcesPerWorker
    dataloaderWorkers: int
    checkpointPrefix: str
    checkpointsToKeep: int
    maxFailures: int
    checkpointEverySteps: int
    stallAfterSeconds: int
    precision: str
    deepspeedConfigFile: NotRequired[str]
    offloadOptimizerClass: NotRequired[str]


class DataSection(TypedDict):
    uri: NotRequired[str]
    format: NotRequired[str]
    sampleFraction: float
    rowsToRead: NotRequired[int]
    blockSizeBytes: int
    rowsPerBlock: int
    workingSetBytes: int
    outputUri: str


class ActorPoolSection(TypedDict):
    actorPoolSize: int
    gpusPerActor: float
    batchSize: int
    preprocessConcurrency: int


class SweepSection(TypedDict):
    parameters: dict[str, list[Scalar]]
    grid: list[dict[str, Scalar]]
    rowsPerPrompt: int


class LoraSection(TypedDict):
    rank: int
    alpha: float
    targetModules: list[str]
    quantization: str
    dropout: float
    unquantizedPrecision: str
    imageTokensPerSample: NotRequired[int]


class TuningDocument(TypedDict):
    apiVersion: str
    kind: str
    workload: WorkloadSection
    knobs: Knobs
    train: NotRequired[TrainSection]
    data: NotRequired[DataSection]
    actorPool: NotRequired[ActorPoolSection]
    sweep: NotRequired[SweepSection]
    lora: NotRequired[LoraSection]


#: Each section of the document and its TypedDict (checked against the schema by the tests).
SECTION_TYPES: dict[str, type] = {
    "workload": WorkloadSection,
    "knobs": Knobs,
    "train": TrainSection,
    "data": DataSection,
    "actorPool": ActorPoolSection,
    "sweep": SweepSection,
    "lora": LoraSection,
}
