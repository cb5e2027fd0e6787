/**
 * Good and bad Ray pods for every control of the Pod Security Standards' Baseline and Restricted profiles that the
 * older cases (`./ray.ts`) do not reach, and KubeRay resources of other `ray.io` versions.
 */
import { edited, type BadCase, type GoodCase } from "./fixtures";
import { objects, podCase, podOf, RAY_RULE_NAMES } from "./ray";

const SECURITY = "ray-pod-security";
const HOST = "ray-pod-host-isolation";
const APPARMOR = "container.apparmor.security.beta.kubernetes.io/ray-head";
const headTemplate = (p: { spec: { rayClusterSpec: { headGroupSpec: { template: unknown } } } }) =>
  p.spec.rayClusterSpec.headGroupSpec.template as { metadata: { annotations: Record<string, string> } };

export const PSS_BAD_CASES: readonly BadCase[] = [
  podCase(
    ["procMount Unmasked", SECURITY],
    ["RayJob", "head"],
    (pod) => (pod.containers[0].securityContext.procMount = "Unmasked"),
    "containers[0].securityContext.procMount",
  ),
  podCase(
    ["unsafe sysctl", SECURITY],
    ["RayCluster", "worker"],
    (pod) =>
      (pod.securityContext.sysctls = [
        { name: "net.ipv4.tcp_syncookies", value: "1" },
        { name: "kernel.msgmax", value: "65536" },
      ]),
    "securityContext.sysctls[1].name",
  ),
  podCase(
    ["AppArmor Unconfined", SECURITY],
    ["RayService", "head"],
    (pod) => (pod.containers[0].securityContext.appArmorProfile = { type: "Unconfined" }),
    "containers[0].securityContext.appArmorProfile.type",
  ),
  podCase(
    ["pod AppArmor Unconfined", SECURITY],
    ["RayJob", "submitter"],
    (pod) => (pod.securityContext.appArmorProfile = { type: "Unconfined" }),
    "securityContext.appArmorProfile.type",
  ),
  {
    variant: "RayJob head: AppArmor annotation unconfined",
    rule: SECURITY,
    input: edited(objects.RayJob, (p) => (headTemplate(p).metadata.annotations[APPARMOR] = "unconfined")),
    path: `spec.rayClusterSpec.headGroupSpec.template.metadata.annotations["${APPARMOR}"]`,
  },
  podCase(
    ["SELinux type spc_t", SECURITY],
    ["RayJob", "worker"],
    (pod) => (pod.securityContext.seLinuxOptions = { type: "spc_t" }),
    "securityContext.seLinuxOptions.type",
  ),
  podCase(
    ["SELinux user", SECURITY],
    ["RayCluster", "head"],
    (pod) => (pod.containers[0].securityContext.seLinuxOptions = { type: "container_t", user: "system_u" }),
    "containers[0].securityContext.seLinuxOptions.user",
  ),
  podCase(
    ["nfs volume", SECURITY],
    ["RayJob", "worker"],
    (pod) => (pod.volumes = [{ name: "data", nfs: { server: "10.0.0.2", path: "/" } }, ...(pod.volumes ?? [])]),
    "volumes[0].nfs",
  ),
  podCase(
    ["Windows hostProcess", SECURITY],
    ["RayService", "worker"],
    (pod) => (pod.containers[0].securityContext.windowsOptions = { hostProcess: true }),
    "containers[0].securityContext.windowsOptions.hostProcess",
  ),
  podCase(
    ["pod seccomp Unconfined", SECURITY],
    ["RayJob", "head"],
    (pod) => (pod.securityContext.seccompProfile = { type: "Unconfined" }),
    "securityContext.seccompProfile.type",
  ),
  podCase(
    ["NET_BIND_SERVICE added", SECURITY],
    ["RayJob", "worker"],
    (pod) => (pod.containers[0].securityContext.capabilities.add = ["NET_BIND_SERVICE"]),
    "containers[0].securityContext.capabilities.add",
  ),
  podCase(
    ["pod runs as root, containers do not", SECURITY],
    ["RayCluster", "worker"],
    (pod) => {
      pod.securityContext.runAsUser = 0;
      pod.containers[0].securityContext.runAsUser = 1000;
    },
    "securityContext.runAsUser",
  ),
  podCase(
    ["pod runAsNonRoot false, containers true", SECURITY],
    ["RayJob", "head"],
    (pod) => (pod.securityContext.runAsNonRoot = false),
    "securityContext.runAsNonRoot",
  ),
  podCase(
    ["shareProcessNamespace", SECURITY],
    ["RayJob", "head"],
    (pod) => (pod.shareProcessNamespace = true),
    "shareProcessNamespace",
  ),
  podCase(
    ["probe to the node", HOST],
    ["RayCluster", "head"],
    (pod) => (pod.containers[0].livenessProbe = { httpGet: { host: "169.254.169.254", path: "/", port: 80 } }),
    "containers[0].livenessProbe.httpGet.host",
  ),
  podCase(
    ["preStop hook to another host", HOST],
    ["RayJob", "worker"],
    (pod) => (pod.containers[0].lifecycle = { preStop: { tcpSocket: { host: "10.0.0.1", port: 22 } } }),
    "containers[0].lifecycle.preStop.tcpSocket.host",
  ),
  {
    variant: "RayJob at ray.io/v1alpha1",
    rule: "ray-api-v1",
    input: { ...objects.RayJob, type: "kubernetes:ray.io/v1alpha1:RayJob" },
    path: "apiVersion",
  },
  {
    variant: "RayCluster at an unserved ray.io/v2",
    rule: "ray-api-v1",
    input: { ...objects.RayCluster, type: "kubernetes:ray.io/v2:RayCluster" },
    path: "apiVersion",
  },
  {
    variant: "RayService at ray.io/v1alpha1 with hostNetwork: checked all the same",
    rule: HOST,
    input: edited(
      { ...objects.RayService, type: "kubernetes:ray.io/v1alpha1:RayService" },
      (p) => (p.spec.rayClusterConfig.headGroupSpec.template.spec.hostNetwork = true),
    ),
    path: "spec.rayClusterConfig.headGroupSpec.template.spec.hostNetwork",
  },
];

export const PSS_GOOD_CASES: readonly GoodCase[] = [
  {
    name: "what Restricted allows: safe sysctls, RuntimeDefault and localhost AppArmor, container SELinux types, every allowed volume type",
    rules: [SECURITY, HOST],
    input: edited(objects.RayJob, (p) => {
      const head = podOf(p, "RayJob", "head");
      head.securityContext.sysctls = [{ name: "net.ipv4.ip_unprivileged_port_start", value: "0" }];
      head.securityContext.appArmorProfile = { type: "RuntimeDefault" };
      head.securityContext.seLinuxOptions = { type: "container_init_t", level: "s0:c123,c456" };
      head.containers[0].securityContext.appArmorProfile = { type: "Localhost", localhostProfile: "ray" };
      head.containers[0].securityContext.procMount = "Default";
      head.containers[0].readinessProbe = { httpGet: { path: "/", port: 8265 } };
      headTemplate(p).metadata.annotations[APPARMOR] = "localhost/ray";
      for (const type of ["csi", "downwardAPI", "ephemeral", "persistentVolumeClaim", "projected", "secret"])
        head.volumes.push({ name: type.toLowerCase(), [type]: {} });
      head.shareProcessNamespace = false;
    }),
  },
  {
    name: "the prod stack's RayJob at ray.io/v1alpha1 passes every rule but ray-api-v1",
    rules: RAY_RULE_NAMES.filter((r) => r !== "ray-api-v1"),
    input: { ...objects.RayJob, type: "kubernetes:ray.io/v1alpha1:RayJob" },
  },
];
