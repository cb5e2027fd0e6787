/** Pure plans of the platform components. */
export * from "./addons";
export * from "./iam";
export * from "./network";
export * from "./node-groups";
export * from "./storage";
