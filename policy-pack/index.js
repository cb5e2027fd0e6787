// The pulumi-ray-gpu policy pack: `pulumi preview --policy-pack <this folder>` (docs/security.md).
// eslint-disable-next-line @typescript-eslint/no-require-imports, no-undef -- a CommonJS entry point Pulumi loads
require("pulumi-ray-gpu/policy").createPolicyPack();
