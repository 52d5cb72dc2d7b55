import { Store } from "mppx";
import type { ChannelObject } from "./channel-object.ts";

/**
 * mppx's `Store.AtomicStore` on Durable Objects, for `tempo.session`'s channel state and replay keys: every key is
 * its own `ChannelObject` (`mpp:<scope>:<key>`), so a session channel's record lives in one object per channel.
 *
 * `update(key, fn)` runs `fn` inside that key's object turn (channel-object.ts): updates of one key run one after
 * another, in every isolate, so a voucher's deduction can never be applied twice and a replay key is claimed once.
 * `fn` runs exactly once per call. mppx's own JSON encoding (bigints included) is applied by `Store.cloudflare`,
 * which this adapter feeds with JSON text. `Store.cloudflare` over Workers KV would not be atomic: KV has no
 * conditional write.
 */
export function durableMppStore(namespace: DurableObjectNamespace<ChannelObject>, scope: string): Store.AtomicStore {
  const object = (key: string) => namespace.getByName(`mpp:${scope}:${key}`);
  return Store.cloudflare({
    get: (key) => object(key).read(),
    put: async (key, value) => {
      await object(key).update(async () => ({ kind: "write", value }));
    },
    delete: async (key) => {
      await object(key).update(async () => ({ kind: "write", value: null }));
    },
    update: async <result>(key: string, fn: (current: string | null) => Store.Change<string, result>) => {
      let outcome: { result: result } | undefined;
      await object(key).update(async (current) => {
        const change = fn(current);
        outcome = { result: change.result };
        if (change.op === "noop") return { kind: "unchanged" };
        return { kind: "write", value: change.op === "set" ? change.value : null };
      });
      if (!outcome) throw new Error(`mpp store: the update of ${key} did not run`);
      return outcome.result;
    },
  });
}
