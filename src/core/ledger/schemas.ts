import { z } from "zod";
import { EVENT_TYPES, PROTOCOLS } from "../../db/schema.ts";
import { jsonShapeProblem } from "../../lib/json-shape.ts";
import { NETWORK_IDS } from "../money/networks.ts";

/** Caller-chosen ids make every write idempotent: the same id twice stores one row. */
const RecordId = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, "8-64 letters, digits, '_' or '-'");
const MicroUsdc = z.string().regex(/^(0|[1-9][0-9]{0,15})$/, "Integer micro-USDC as a decimal string");
const Address = z.string().regex(/^0x[a-fA-F0-9]{40}$/, "A 0x-prefixed 20-byte hex address");
const TxHash = z.string().regex(/^0x[a-fA-F0-9]{64}$/, "A 0x-prefixed 32-byte hex hash");
/** When it happened; defaults to now and may not lie in the future. */
const OccurredAt = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .refine((d) => d.getTime() <= Date.now() + 60_000, { message: "Must not be in the future" });

const FailureReason = z
  .string()
  .min(1)
  .max(500)
  .refine((s) => s.isWellFormed(), "Must be well-formed Unicode")
  .nullish();

/** A COMPLETED transaction names its on-chain hash; a FAILED one says why. */
function requireOutcomeFields(
  t: { status: string; txHash?: string | null; failureReason?: string | null },
  ctx: z.RefinementCtx,
) {
  if (t.status === "COMPLETED" && !t.txHash)
    ctx.addIssue({ code: "custom", path: ["txHash"], message: "Required for a COMPLETED transaction" });
  if (t.status === "FAILED" && !t.failureReason) {
    ctx.addIssue({ code: "custom", path: ["failureReason"], message: "Required for a FAILED transaction" });
  }
}

export const TransactionInputSchema = z
  .strictObject({
    id: RecordId,
    paywallId: z.string().min(1).max(64),
    protocol: z.enum(PROTOCOLS),
    network: z.enum(NETWORK_IDS),
    amount: MicroUsdc,
    currency: z.literal("USDC").default("USDC"),
    status: z.enum(["PENDING", "COMPLETED", "FAILED"]).default("PENDING"),
    payerAddress: Address.nullish(),
    txHash: TxHash.nullish(),
    failureReason: FailureReason,
    createdAt: OccurredAt.optional(),
    settledAt: OccurredAt.optional(),
  })
  .superRefine(requireOutcomeFields);

export const SettlementSchema = z
  .strictObject({
    status: z.enum(["COMPLETED", "FAILED"]),
    txHash: TxHash.nullish(),
    settledAt: OccurredAt.optional(),
    failureReason: FailureReason,
  })
  .superRefine(requireOutcomeFields);

const Metadata = z
  .record(z.string().max(64), z.unknown())
  .refine((m) => Object.keys(m).length <= 20, { message: "At most 20 keys" })
  .superRefine((m, ctx) => {
    const problem = jsonShapeProblem(m, { maxDepth: 4, maxLength: 2048 });
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

export const EventInputSchema = z.strictObject({
  id: RecordId,
  paywallId: z.string().min(1).max(64),
  eventType: z.enum(EVENT_TYPES),
  statusCode: z.int().min(100).max(599).nullish(),
  responseTime: z.int().min(0).max(3_600_000).nullish(),
  amount: MicroUsdc.nullish(),
  metadata: Metadata.nullish(),
  createdAt: OccurredAt.optional(),
});

export type TransactionInput = z.input<typeof TransactionInputSchema>;
export type SettlementInput = z.input<typeof SettlementSchema>;
export type EventInput = z.input<typeof EventInputSchema>;
