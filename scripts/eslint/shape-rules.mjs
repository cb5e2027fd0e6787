// The shape rules of docs/testing.md ("How we write code"), as one local ESLint plugin.
//
// `max-lines-per-function` is ESLint's own rule, with one exception: the callback of a test suite's `describe(...)` is a
// container of tests, not a function anyone reads at once, so it is not counted (the `it(...)` bodies inside it are).
import { builtinRules } from "eslint/use-at-your-own-risk";

const core = builtinRules.get("max-lines-per-function");

/** `describe`, `describe.each(...)`, `describe.skipIf(...)`, `describe.sequential` and the like. */
function isDescribe(callee) {
  if (!callee) return false;
  if (callee.type === "Identifier") return callee.name === "describe";
  if (callee.type === "MemberExpression") return isDescribe(callee.object);
  if (callee.type === "CallExpression") return isDescribe(callee.callee);
  return false;
}

const isSuiteCallback = (node) =>
  node?.parent?.type === "CallExpression" && node.parent.arguments.includes(node) && isDescribe(node.parent.callee);

const maxLinesPerFunction = {
  meta: { ...core.meta, docs: { description: "max-lines-per-function, except a describe(...) callback" } },
  create(context) {
    const filtered = Object.create(context, {
      report: { value: (descriptor) => (isSuiteCallback(descriptor.node) ? undefined : context.report(descriptor)) },
    });
    return core.create(filtered);
  },
};

export default { meta: { name: "ray-gpu-shape" }, rules: { "max-lines-per-function": maxLinesPerFunction } };
