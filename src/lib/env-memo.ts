import { BoundedCache } from "./bounded-cache.ts";

/**
 * Values built once per env object (one per isolate in production: the Worker's bindings and vars) and name, the
 * least recently used names of an env dropped past `limit`. What a value is built from in the env (its vars, its
 * bindings' settings) needs no place in the name: another env object has a memo of its own.
 */
export class EnvMemo<T> {
  private readonly byEnv = new WeakMap<object, BoundedCache<T>>();
  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }

  get(env: object, name: string, build: () => T): T {
    let values = this.byEnv.get(env);
    if (!values) {
      values = new BoundedCache<T>(this.limit, () => 1);
      this.byEnv.set(env, values);
    }
    let value = values.get(name);
    if (value === undefined) {
      value = build();
      values.set(name, value);
    }
    return value;
  }

  /** Forgets `name`'s value if it is still `value` (a failed build's cleanup never drops a value built since). */
  delete(env: object, name: string, value: T): void {
    const values = this.byEnv.get(env);
    if (values?.get(name) === value) values.delete(name);
  }
}
