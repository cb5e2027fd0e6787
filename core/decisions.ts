/** Every tuned value a plan emits comes with the reason it was chosen; `ray-gpu plan` prints them. */
export interface Decision {
  /** Dotted name of the value, e.g. `worker.objectStoreGiB`. */
  readonly key: string;
  readonly value: string | number | boolean;
  readonly reason: string;
}

/** Collects decisions in the order they are made. */
export class DecisionLog {
  private readonly items: Decision[] = [];

  /** Records `value` under `key` with its reason and returns the value, so it reads inline. */
  decide<T extends string | number | boolean>(key: string, value: T, reason: string): T {
    this.items.push({ key, value, reason });
    return value;
  }

  get decisions(): readonly Decision[] {
    return this.items;
  }
}
