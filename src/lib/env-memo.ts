/**
 * Values built once per env object (one per isolate in production: the Worker's bindings and vars) and name, the
 * least recently used names of an env dropped past `limit`. What a value is built from in the env (its vars, its
 * bindings' settings) needs no place in the name: another env object has a memo of its own.
 */
export class EnvMemo<T> {
  private readonly byEnv = new WeakMap<object, Map<string, T>>();
  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }

  get(env: object, name: string, build: () => T): T {
    let values = this.byEnv.get(env);
    if (!values) {
      values = new Map();
      this.byEnv.set(env, values);
    }
    let value = values.get(name);
    if (value !== undefined) {
      values.delete(name); // re-inserted last: the most recently used
    } else {
      value = build();
      if (values.size >= this.limit) values.delete(values.keys().next().value as string);
    }
    values.set(name, value);
    return value;
  }

  delete(env: object, name: string, value: T): void {
    const values = this.byEnv.get(env);
    if (values?.get(name) === value) values.delete(name);
  }
}
