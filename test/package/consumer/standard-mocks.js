// Runs a compiled program under the mocks Pulumi's unit-testing guide teaches, as they are written there: newResource
// returns the inputs as the state (no output a provider computes), call returns its inputs, not a preview.
//   node standard-mocks.js bin/program.js
// Exits 1 with the error when the program throws or leaves a rejected promise (a failed apply, a failed registration);
// otherwise prints {"resources": N, "types": [...]}.
"use strict";
const path = require("node:path");
const pulumi = require("@pulumi/pulumi");

const failures = [];
process.on("unhandledRejection", (e) => failures.push(e));
process.on("uncaughtException", (e) => failures.push(e));

const types = [];
pulumi.runtime.setMocks(
  {
    newResource: function (args) {
      types.push(args.type);
      return { id: args.inputs.name + "_id", state: args.inputs };
    },
    call: function (args) {
      return args.inputs;
    },
  },
  "project",
  "stack",
  false, // dryRun: not a preview
);

async function main() {
  require(path.resolve(process.argv[2]));
  // Let every registration and apply finish: stop when nothing new registers for 300 ms.
  for (let seen = -1; seen !== types.length;) {
    seen = types.length;
    await new Promise((r) => setTimeout(r, 300));
  }
  if (failures.length > 0) {
    console.error(failures.map((e) => (e && e.stack) || String(e)).join("\n"));
    process.exit(1);
  }
  console.log(JSON.stringify({ resources: types.length, types: [...new Set(types)].sort() }));
}

main().catch((e) => {
  console.error((e && e.stack) || String(e));
  process.exit(1);
});
