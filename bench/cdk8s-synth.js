// cdk8s synthesizing the very same Kubernetes objects `ray-gpu render` writes: reads them (JSON, prepared before the
// timing), defines one ApiObject each in a Chart, and synthesizes the YAML into an output folder.
//   node bench/cdk8s-synth.js <objects.json> <outdir>
"use strict";
const { readFileSync } = require("node:fs");
const { App, Chart, ApiObject, YamlOutputType } = require("cdk8s");

const [objectsFile, outdir] = process.argv.slice(2);
const objects = JSON.parse(readFileSync(objectsFile, "utf8"));
const app = new App({ outdir, outputFileExtension: ".yaml", yamlOutputType: YamlOutputType.FILE_PER_RESOURCE });
const chart = new Chart(app, "ray-gpu");
objects.forEach((o, i) => new ApiObject(chart, `o${i}`, o));
app.synth();
