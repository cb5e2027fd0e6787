/**
 * Pod and container security of every Ray pod (RayJob, RayCluster, RayService; head, workers, submitter; init,
 * regular and ephemeral containers): every control of the Pod Security Standards' Baseline and Restricted profiles
 * (`./pss-controls.ts`), reported by two rules: the pod's own security, and its isolation from the node. Pure.
 */
import { violation, type PolicyInput, type ResourceRule } from "./inputs";
import { PSS_CONTROLS, type PodRule } from "./pss-controls";
import { RAY_TYPE_LIST, rayPods } from "./ray-pods";

const CONTROLS = Object.values(PSS_CONTROLS);

/** The violations of every control a rule reports, pod by pod, in the table's order. */
const problemsOf =
  (rule: PodRule) =>
  (r: PolicyInput): string[] =>
    rayPods(r).flatMap((pod) =>
      CONTROLS.filter((c) => c.rule === rule).flatMap((c) =>
        c.check(pod).map((f) => violation(r, f.path, f.problem, c.fix)),
      ),
    );

/** The names of the controls a rule reports. */
const controlsOf = (rule: PodRule) =>
  (Object.keys(PSS_CONTROLS) as (keyof typeof PSS_CONTROLS)[]).filter((n) => PSS_CONTROLS[n].rule === rule);

/** Pod and container security rules of Ray pods. */
export const POD_SECURITY_RULES: readonly ResourceRule[] = [
  {
    name: "ray-pod-security",
    description:
      "Every Ray pod and container meets the Pod Security Standards' Restricted profile, control by control " +
      `(${controlsOf("ray-pod-security").join(", ")}), adding no capability and sharing no process namespace.`,
    types: RAY_TYPE_LIST,
    check: problemsOf("ray-pod-security"),
  },
  {
    name: "ray-pod-host-isolation",
    description: `No Ray pod reaches the node: ${controlsOf("ray-pod-host-isolation").join(", ")} (Baseline controls).`,
    types: RAY_TYPE_LIST,
    check: problemsOf("ray-pod-host-isolation"),
  },
];
