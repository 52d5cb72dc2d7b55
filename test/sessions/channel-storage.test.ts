// The batch-settlement channel storage on Durable Objects (src/core/sessions): the SDK's `updateChannel` contract
// (atomic read-modify-write across instances), per-channel and per-scope isolation, listing and deletion.

import { env } from "cloudflare:workers";
import type { Channel } from "@x402/evm/batch-settlement/server";
import { describe, expect, it } from "vitest";
import { DurableChannelStorage } from "../../src/core/sessions/channel-storage.ts";

const PRICE = 1_000n;

const channelId = () => `0x${crypto.randomUUID().replaceAll("-", "").padEnd(64, "0")}`;
const scope = () => `test-${crypto.randomUUID()}`;

function channel(id: string, charged = 0n): Channel {
  const zero = "0x0000000000000000000000000000000000000000" as const;
  return {
    channelId: id,
    channelConfig: {
      payer: zero,
      payerAuthorizer: zero,
      receiver: zero,
      receiverAuthorizer: zero,
      token: zero,
      withdrawDelay: 900,
      salt: `0x${"0".repeat(64)}`,
    },
    chargedCumulativeAmount: charged.toString(),
    signedMaxClaimable: charged.toString(),
    signature: "0x",
    balance: "1000000",
    totalClaimed: "0",
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: 0,
  };
}

/**
 * What the scheme's server does with a voucher: it is accepted only if it signs exactly the channel's charged total
 * plus the price, and accepting it moves the charged total up to it. Returns whether this voucher was accepted.
 */
async function presentVoucher(storage: DurableChannelStorage, id: string, signedMaxClaimable: bigint): Promise<boolean> {
  let accepted = false;
  await storage.updateChannel(id, (current) => {
    accepted = current !== undefined && BigInt(current.chargedCumulativeAmount) + PRICE === signedMaxClaimable;
    if (!current || !accepted) return current;
    return {
      ...current,
      chargedCumulativeAmount: signedMaxClaimable.toString(),
      signedMaxClaimable: signedMaxClaimable.toString(),
    };
  });
  return accepted;
}

describe("updateChannel across instances", () => {
  it("two concurrent vouchers for the same charge, from two isolates' storages: exactly one is accepted", async () => {
    const s = scope();
    const id = channelId();
    await new DurableChannelStorage(env.CHANNELS, s).updateChannel(id, () => channel(id));
    for (let round = 1n; round <= 10n; round++) {
      const a = new DurableChannelStorage(env.CHANNELS, s);
      const b = new DurableChannelStorage(env.CHANNELS, s);
      const results = await Promise.all([presentVoucher(a, id, round * PRICE), presentVoucher(b, id, round * PRICE)]);
      expect(results.filter(Boolean)).toHaveLength(1);
    }
    expect((await new DurableChannelStorage(env.CHANNELS, s).get(id))?.chargedCumulativeAmount).toBe((10n * PRICE).toString());
  });

  it("100 concurrent increments from separate storages all land: none is lost", async () => {
    const s = scope();
    const id = channelId();
    await new DurableChannelStorage(env.CHANNELS, s).updateChannel(id, () => channel(id));
    const results = await Promise.all(
      Array.from({ length: 100 }, () =>
        new DurableChannelStorage(env.CHANNELS, s).updateChannel(id, (current) =>
          current
            ? { ...current, chargedCumulativeAmount: (BigInt(current.chargedCumulativeAmount) + PRICE).toString() }
            : current,
        ),
      ),
    );
    expect(results.every((r) => r.status === "updated")).toBe(true);
    expect((await new DurableChannelStorage(env.CHANNELS, s).get(id))?.chargedCumulativeAmount).toBe((100n * PRICE).toString());
  });

  it("answers unchanged, updated and deleted as the interface says, and keeps nothing after a delete", async () => {
    const storage = new DurableChannelStorage(env.CHANNELS, scope());
    const id = channelId();
    expect(await storage.updateChannel(id, (current) => current)).toEqual({ channel: undefined, status: "unchanged" });
    expect(await storage.get(id)).toBeUndefined();
    const created = await storage.updateChannel(id, () => channel(id, PRICE));
    expect(created).toEqual({ channel: channel(id, PRICE), status: "updated" });
    expect(await storage.updateChannel(id, (current) => current)).toEqual({ channel: channel(id, PRICE), status: "unchanged" });
    expect(await storage.list()).toEqual([channel(id, PRICE)]);
    expect(await storage.updateChannel(id, () => undefined)).toEqual({ channel: undefined, status: "deleted" });
    expect(await storage.get(id)).toBeUndefined();
    expect(await storage.list()).toEqual([]);
  });
});

describe("isolation", () => {
  it("a channel's updates never touch another channel of the same scope", async () => {
    const storage = new DurableChannelStorage(env.CHANNELS, scope());
    const [a, b] = [channelId(), channelId()];
    await storage.updateChannel(a, () => channel(a));
    await storage.updateChannel(b, () => channel(b));
    await Promise.all(Array.from({ length: 5 }, (_, i) => presentVoucher(storage, a, BigInt(i + 1) * PRICE)));
    expect((await storage.get(b))?.chargedCumulativeAmount).toBe("0");
    expect((await storage.list()).map((c) => c.channelId).sort()).toEqual([a, b].sort());
  });

  it("the same channel id in two scopes is two channels: neither reads, lists nor changes the other", async () => {
    const [mine, theirs] = [new DurableChannelStorage(env.CHANNELS, scope()), new DurableChannelStorage(env.CHANNELS, scope())];
    const id = channelId();
    await mine.updateChannel(id, () => channel(id, 7n * PRICE));
    expect(await theirs.get(id)).toBeUndefined();
    expect(await theirs.list()).toEqual([]);
    expect(await presentVoucher(theirs, id, 8n * PRICE)).toBe(false);
    expect((await mine.get(id))?.chargedCumulativeAmount).toBe((7n * PRICE).toString());
  });

  it("channel ids are case-insensitive, as the scheme's hex ids are", async () => {
    const storage = new DurableChannelStorage(env.CHANNELS, scope());
    const id = `0x${"ab".repeat(32)}`;
    await storage.updateChannel(id, () => channel(id, PRICE));
    expect((await storage.get(id.toUpperCase().replace("0X", "0x")))?.chargedCumulativeAmount).toBe(PRICE.toString());
  });
});
