import { z } from "@hono/zod-openapi";
import { NetworkIdSchema } from "../../../core/catalog/fields.ts";
import { CHANNEL_STATUSES, type ChannelRow, PROTOCOLS, TOKENS } from "../../../db/schema.ts";
import { PageQuerySchema } from "../../paging.ts";

const MicroUnits = (description: string) =>
  z.string().openapi({ description: `${description}, integer micro-USDC`, example: "250000" });

export const ChannelSchema = z
  .object({
    id: z.string().openapi({ description: "The channel's id on chain (lowercase hex)", example: `0x${"3f".repeat(32)}` }),
    paywallId: z.string(),
    serviceId: z.string().nullable(),
    protocol: z.enum(PROTOCOLS),
    network: NetworkIdSchema,
    currency: z.enum(TOKENS).openapi({ description: "The token deposited: USDC, or pathUSD on tempo-testnet (6 decimals each)" }),
    payer: z.string().openapi({ description: "The buyer's address that opened the channel" }),
    deposit: MicroUnits("What the buyer deposited into the channel"),
    charged: MicroUnits("What the buyer's vouchers paid for (successful calls)"),
    claimed: MicroUnits("What of `charged` was claimed on chain"),
    settled: MicroUnits("What of `charged` reached the receiving wallet"),
    unsettled: MicroUnits("`charged` − `settled`: earned, not in the wallet yet"),
    status: z.enum(CHANNEL_STATUSES),
    openedAt: z.iso.datetime(),
    lastCallAt: z.iso.datetime().nullable().openapi({ description: "The last paid call (null: none since the deposit)" }),
  })
  .openapi("Channel");

export type Channel = z.infer<typeof ChannelSchema>;

/** The response form of a channel. Amounts stay integer strings: `unsettled` is computed in bigint. */
export const toChannel = (row: ChannelRow): Channel => ({
  id: row.id,
  paywallId: row.paywallId,
  serviceId: row.serviceId,
  protocol: row.protocol,
  network: row.network as Channel["network"],
  currency: row.currency,
  payer: row.payerAddress,
  deposit: row.deposit,
  charged: row.charged,
  claimed: row.claimed,
  settled: row.settled,
  unsettled: (BigInt(row.charged) - BigInt(row.settled)).toString(),
  status: row.status,
  openedAt: row.openedAt.toISOString(),
  lastCallAt: row.lastCallAt?.toISOString() ?? null,
});

export const ChannelListQuerySchema = z.strictObject({
  ...PageQuerySchema.shape,
  status: z.enum(CHANNEL_STATUSES).optional(),
  paywallId: z.string().min(1).max(64).optional(),
  network: NetworkIdSchema.optional(),
});

/** A channel's id (0x and 64 hex digits on chain), in any letter case; any other text is an id nobody holds. */
export const ChannelIdParamSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(66)
    .transform((id) => id.toLowerCase())
    .openapi({ param: { name: "id", in: "path" }, example: `0x${"3f".repeat(32)}` }),
});
