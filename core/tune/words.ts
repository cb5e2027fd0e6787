/** How `ray-gpu tune`'s evidence and reasons write numbers: one form for shares, MiB and GiB across its rules. */
import { GIB, MIB } from "../quantity";

/** A share as a whole percentage: `0.674` -> `67%`. */
export const pct = (x: number) => `${Math.round(x * 100)}%`;
/** Bytes in MiB, one decimal: `17.2 MiB`. */
export const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;
/** Bytes in GiB, two decimals: `0.08 GiB`. */
export const gib = (bytes: number) => `${(bytes / GIB).toFixed(2)} GiB`;
