// A step budget for one validation. ajv's generated code cannot be interrupted, and a
// hostile schema can make it do exponential work on a tiny value (a chain of
// `allOf: [{$ref: next}, {$ref: next}]`) or quadratic work (`required` with 100,000
// names applied to 100,000 items). Every subschema application charges the meter for
// what it is about to do (its own keywords, plus the size of the data it scans);
// past the budget the validation stops at once.

/** Thrown through ajv's generated code; caught by the validator wrapper, never escapes it. */
export class WorkBudgetExceeded extends Error {
  constructor(readonly limit: number) {
    super(`validation needs more than ${limit} steps`);
  }
}

export class WorkMeter {
  #used = 0;
  // Unbounded outside run(): ajv checking a schema against its meta-schema at compile time.
  #limit = Infinity;

  /** Runs one validation under `limit` steps; validations never nest (ajv is synchronous). */
  run<T>(limit: number, validate: () => T): T {
    this.#used = 0;
    this.#limit = limit;
    try {
      return validate();
    } finally {
      this.#limit = Infinity;
    }
  }

  /** Charges `steps`; throws once the budget is spent. */
  charge(steps: number): void {
    this.#used += steps;
    if (this.#used > this.#limit) throw new WorkBudgetExceeded(this.#limit);
  }

  /**
   * One subschema application: its own weight, plus the immediate size of the value
   * times how many of its keywords scan that kind of value.
   */
  apply(data: unknown, weight: number, perChar: number, perItem: number, perKey: number, perKeyChar: number): void {
    let steps = weight;
    if (typeof data === 'string') steps += perChar * data.length;
    else if (Array.isArray(data)) steps += perItem * data.length;
    else if ((perKey > 0 || perKeyChar > 0) && typeof data === 'object' && data !== null) {
      const keys = Object.keys(data);
      steps += perKey * keys.length;
      if (perKeyChar > 0) for (const key of keys) steps += perKeyChar * key.length;
    }
    this.charge(steps);
  }

  get used(): number {
    return this.#used;
  }
}

export const meter = new WorkMeter();
