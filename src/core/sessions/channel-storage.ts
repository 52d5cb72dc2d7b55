import type { Channel, ChannelStorage, ChannelUpdateResult } from "@x402/evm/batch-settlement/server";

/** What an update decided, given the record it was shown: keep it, or replace it (null: delete it). */
export type ChannelChange = { kind: "unchanged" } | { kind: "write"; value: string | null };

/** What `ChannelObject.update` answers. */
export interface ChannelUpdated {
  status: "updated" | "unchanged" | "deleted";
  /** The record after the update, as JSON text; null when there is none. */
  value: string | null;
}

/**
 * The object of one session channel, as the gateway serves it: `channel:<scope>:<channel id>` with the scope
 * `<CAIP-2 network>:<receiver>` (the channel's id already binds both: one object per on-chain channel). Its index,
 * `index:<scope>`, is what `DurableChannelStorage(env.CHANNELS, scope)` lists for a settlement run.
 */
export const channelObjectName = (network: string, receiver: string, channelId: string) =>
  channelInScope(sessionScope(network, receiver), channelId);

/** The object of a channel of `scope` (`<CAIP-2 network>:<receiver>`). */
export const channelInScope = (scope: string, channelId: string) => `channel:${scope}:${channelId.toLowerCase()}`;

/** The settlement scope of a receiver's channels on a network. */
export const sessionScope = (network: string, receiver: string) => `${network}:${receiver.toLowerCase()}`;

/** The index object of a channel object's scope. */
export const indexOfChannel = (name: string) => `index:${name.slice("channel:".length, name.lastIndexOf(":"))}`;

const parse = (value: string | null): Channel | undefined => (value === null ? undefined : (JSON.parse(value) as Channel));

/**
 * `@x402/evm`'s batch-settlement `ChannelStorage` on Durable Objects: one `ChannelObject` per channel, named
 * `channel:<scope>:<channel id>`, plus one index object per scope (`index:<scope>`) listing its channels.
 *
 * `updateChannel(id, update)` is atomic across every isolate: the channel's object runs `update` on its current
 * record and stores the result before it starts the next update of that channel, so two concurrent updates behave as
 * if one ran after the other (channel-object.ts). Channels of different ids or scopes share nothing. The scope is who
 * owns the channels (e.g. a paywall), so no scope can read or change another's.
 */
export class DurableChannelStorage implements ChannelStorage {
  private readonly namespace: Env["CHANNELS"];
  private readonly scope: string;

  constructor(namespace: Env["CHANNELS"], scope: string) {
    this.namespace = namespace;
    this.scope = scope;
  }

  private channel(channelId: string) {
    return this.namespace.getByName(channelInScope(this.scope, channelId));
  }

  private index() {
    return this.namespace.getByName(`index:${this.scope}`);
  }

  async get(channelId: string): Promise<Channel | undefined> {
    return parse(await this.channel(channelId).read());
  }

  async list(): Promise<Channel[]> {
    const ids = await this.index().tracked();
    const channels = await Promise.all(ids.map((id) => this.get(id)));
    return channels.filter((c): c is Channel => c !== undefined);
  }

  async updateChannel(
    channelId: string,
    update: (current: Channel | undefined) => Channel | undefined,
  ): Promise<ChannelUpdateResult> {
    const id = channelId.toLowerCase();
    const decide = async (stored: string | null): Promise<ChannelChange> => {
      const current = parse(stored);
      const next = update(current);
      if (next === current) return { kind: "unchanged" };
      // Listed before it is first stored, so a settlement run never misses a channel that holds a charge.
      if (current === undefined) await this.index().track(id);
      return { kind: "write", value: next === undefined ? null : JSON.stringify(next) };
    };
    const result = await this.channel(id).update(decide);
    if (result.status === "deleted") await this.index().untrack(id);
    return { channel: parse(result.value), status: result.status };
  }
}
