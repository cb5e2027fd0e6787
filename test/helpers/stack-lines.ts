/** Stack files written by the tests of the CLI's input readers. */

/** A valid dev stack file's lines, with `extra` lines appended under `config:`. */
export const stackLines = (...extra: string[]) => [
  "config:",
  "  ray-gpu:environment: dev",
  "  ray-gpu:region: us-east-1",
  "  ray-gpu:platform:",
  "    cluster: { mode: create, name: t }",
  "    gpuNodeGroups: [{ name: a10g-4x, instanceType: g5.12xlarge, maxNodes: 2 }]",
  ...extra,
];
