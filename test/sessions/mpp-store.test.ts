// mppx's AtomicStore on Durable Objects (src/core/sessions/mpp-store.ts), as tempo.session uses it: a channel's
// record updated atomically across isolates (a voucher's deduction applied once), replay keys claimed once, bigints kept.
import { env } from "cloudflare:workers";
import { Store } from "mppx";
import { describe, expect, it } from "vitest";
import { durableMppStore } from "../../src/core/sessions/mpp-store.ts";

const scope = () => `test-${crypto.randomUUID()}`;

interface ChannelRecord {
  highestVoucherAmount: bigint;
  spent: bigint;
}

/** What a session charge does: deduct `amount` if the latest voucher still covers it. Whether it was deducted. */
const charge = (store: Store.AtomicStore, key: string, amount: bigint) =>
  store.update(key, (stored): Store.Change<unknown, boolean> => {
    const current = stored as ChannelRecord | null;
    if (!current || current.spent + amount > current.highestVoucherAmount) return { op: "noop", result: false };
    return { op: "set", value: { ...current, spent: current.spent + amount }, result: true };
  });

describe("update across isolates", () => {
  it("two concurrent charges that the voucher covers only once, from two isolates' stores: exactly one is deducted", async () => {
    const s = scope();
    for (let round = 0; round < 10; round++) {
      const key = `channel:${crypto.randomUUID()}`;
      await durableMppStore(env.CHANNELS, s).put(key, { highestVoucherAmount: 1_000n, spent: 0n });
      const results = await Promise.all([
        charge(durableMppStore(env.CHANNELS, s), key, 600n),
        charge(durableMppStore(env.CHANNELS, s), key, 600n),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await durableMppStore(env.CHANNELS, s).get(key)).toEqual({ highestVoucherAmount: 1_000n, spent: 600n });
    }
  });

  it("100 concurrent charges from separate stores: each lands once, none is lost", async () => {
    const s = scope();
    const key = "channel:0xabc";
    await durableMppStore(env.CHANNELS, s).put(key, { highestVoucherAmount: 10n ** 30n, spent: 0n });
    const results = await Promise.all(Array.from({ length: 100 }, () => charge(durableMppStore(env.CHANNELS, s), key, 7n)));
    expect(results.every(Boolean)).toBe(true);
    expect(await durableMppStore(env.CHANNELS, s).get(key)).toEqual({ highestVoucherAmount: 10n ** 30n, spent: 700n });
  });

  it("a replay key claimed by 20 requests at once is claimed by exactly one, and again once it expired", async () => {
    const s = scope();
    const claims = await Promise.all(
      Array.from({ length: 20 }, () =>
        Store.tryClaim(durableMppStore(env.CHANNELS, s), "replay:credential-1", Date.now() + 60_000),
      ),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    const store = durableMppStore(env.CHANNELS, s);
    expect(await Store.tryClaim(store, "replay:credential-2", Date.now() - 1)).toBe(true);
    expect(await Store.tryClaim(store, "replay:credential-2", Date.now() + 60_000)).toBe(true);
    expect(await Store.tryClaim(store, "replay:credential-2", Date.now() + 60_000)).toBe(false);
  });
});

describe("values and isolation", () => {
  it("keeps bigints and deletes", async () => {
    const store = durableMppStore(env.CHANNELS, scope());
    expect(await store.get("k")).toBeNull();
    await store.put("k", { amount: 2n ** 90n });
    expect(await store.get("k")).toEqual({ amount: 2n ** 90n });
    await store.delete("k");
    expect(await store.get("k")).toBeNull();
  });

  it("the same key in two scopes is two records: neither reads nor changes the other", async () => {
    const [mine, theirs] = [durableMppStore(env.CHANNELS, scope()), durableMppStore(env.CHANNELS, scope())];
    await mine.put("channel:1", { highestVoucherAmount: 1_000n, spent: 0n });
    expect(await theirs.get("channel:1")).toBeNull();
    expect(await charge(theirs, "channel:1", 1n)).toBe(false);
    expect(await charge(mine, "channel:1", 1n)).toBe(true);
    expect(await mine.get("channel:2")).toBeNull();
  });
});
