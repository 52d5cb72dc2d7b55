import { z } from "zod";
import { type KeyRing, parseKeyRing } from "./secrets/secret-box.ts";

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** `https://app.example.com`: a scheme, a host and an optional port, exactly as a browser sends `Origin`. */
const isOrigin = (value: string) => {
  const url = URL.parse(value);
  return url !== null && (url.protocol === "https:" || url.protocol === "http:") && url.origin === value;
};

/** A comma-separated list (empty: none), its entries trimmed. */
const commaList = z
  .string()
  .default("")
  .transform((list) =>
    list
      .split(",")
      .map((entry) => entry.trim())
      .filter(Boolean),
  );

const OriginListSchema = commaList.pipe(
  z.array(z.string().refine(isOrigin, { message: "Each entry must be an origin like https://app.example.com" })),
);

/** A comma-separated list of facilitator URLs (empty: unset). */
const UrlListSchema = commaList.pipe(z.array(z.url()).max(5, { message: "At most 5 facilitators per mode" }));

const ConfigSchema = z.object({
  RATE_LIMIT_MAX: positiveInt(1000),
  RATE_LIMIT_WINDOW_SECONDS: positiveInt(60),
  IP_RATE_LIMIT_MAX: positiveInt(120),
  PAYMENT_REFUSAL_LIMIT: positiveInt(30),
  MAX_SERVICES_PER_TENANT: positiveInt(50),
  MAX_PAYWALLS_PER_TENANT: positiveInt(500),
  PAYMENT_BASE_URL: z.url().default("https://pay.example.com"),
  FACILITATOR_URL_TESTNET: z.url().default("https://facilitator.example.com/testnet"),
  FACILITATOR_URL_MAINNET: z.url().default("https://facilitator.example.com/mainnet"),
  // Several facilitators per mode, in the preferred order; set, they replace FACILITATOR_URL_<MODE>.
  FACILITATOR_URLS_TESTNET: UrlListSchema,
  FACILITATOR_URLS_MAINNET: UrlListSchema,
  FACILITATOR_VERIFY_TIMEOUT_MS: positiveInt(5_000),
  ENCRYPTION_KEY: z.string().optional(),
  // The receiver authorizer of x402 sessions (docs/sessions.md): a hex private key. Unset: no sessions are offered.
  SESSION_AUTHORIZER_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, { message: "SESSION_AUTHORIZER_KEY must be a 0x-prefixed 32-byte hex private key" })
    .optional(),
  SERVER_TIMING: z.enum(["on", "off"]).default("off"),
  // How long an isolate answers payment URLs from its last read of their paywall's state (docs/scale.md); 0: every request.
  PAYWALL_STATE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
  CORS_ALLOWED_ORIGINS: OriginListSchema,
  // Dev only: `npm run dev` passes it (never wrangler.toml). Honoured only with a loopback PAYMENT_BASE_URL.
  WEBHOOKS_ALLOW_LOOPBACK: z.enum(["on", "off"]).default("off"),
  // Dev only, as WEBHOOKS_ALLOW_LOOPBACK: services and paywalls may name an upstream on this machine.
  UPSTREAMS_ALLOW_LOOPBACK: z.enum(["on", "off"]).default("off"),
  // Sessions (docs/sessions.md, "Settlement and refunds"): how often a receiver's channels are claimed and settled,
  // and how long a channel stays unused before the rest of its deposit goes back to its buyer.
  SESSION_SETTLE_INTERVAL_SECONDS: positiveInt(3600),
  SESSION_IDLE_REFUND_SECONDS: positiveInt(86_400),
});

export interface Config {
  /**
   * `max` per API key; `ipMax` per client address for requests without an authenticated key; `paymentRefusalMax`
   * refused payment attempts per client address at the gateway; one window length.
   */
  rateLimit: { max: number; ipMax: number; paymentRefusalMax: number; windowMs: number };
  maxServicesPerTenant: number;
  maxPaywallsPerTenant: number;
  paymentBaseUrl: string;
  /** Each mode's first facilitator (what a paywall shows as its `facilitatorUrl`). */
  facilitatorUrl: { testnet: string; mainnet: string };
  /**
   * Each mode's facilitators in the configured order (`FACILITATOR_URLS_<MODE>`, else the one of
   * `FACILITATOR_URL_<MODE>`): the gateway asks them in the order their health gives (docs/gateway.md, "Facilitators").
   */
  facilitatorUrls: { testnet: string[]; mainnet: string[] };
  /** How long a facilitator's `/verify` may take before the next one is asked. */
  facilitatorVerifyTimeoutMs: number;
  encryptionKey: string | undefined;
  /** The x402 sessions' receiver authorizer key (never logged or returned); undefined: sessions are not offered. */
  sessionAuthorizerKey: string | undefined;
  serverTiming: boolean;
  /**
   * How long after reading a payment URL's paywall state an isolate names it from that read, without a D1 statement:
   * the bound within which a change written elsewhere (another isolate, or outside the API) is honoured.
   */
  paywallStateTtlMs: number;
  /** Origins whose browser pages may call the API; empty: no cross-origin access. */
  corsAllowedOrigins: string[];
  /**
   * Webhook endpoints on this machine (`http://localhost…`, `127.0.0.1`, `[::1]`) are allowed: only when
   * `WEBHOOKS_ALLOW_LOOPBACK=on` (set by `npm run dev` alone) and the payment origin itself is on loopback, which a
   * deployed Worker's never is.
   */
  webhooksAllowLoopback: boolean;
  /**
   * Upstreams on this machine (`baseUrl`/`targetUrl` on 127.0.0.0/8, `[::1]`, `localhost`; nothing else private) are
   * allowed, when set and called: under the same two conditions, `UPSTREAMS_ALLOW_LOOPBACK=on` (set by `npm run dev`
   * alone) and a loopback payment origin.
   */
  upstreamsAllowLoopback: boolean;
  /** Sessions: seconds between a receiver's settlement runs, and of no call after which a channel is refunded. */
  sessions: { settleIntervalSeconds: number; idleRefundSeconds: number };
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Whether `url` names this machine: `localhost`, `127.0.0.1` or `[::1]`. */
export const isLoopbackUrl = (url: string): boolean => LOOPBACK_HOSTS.has(URL.parse(url)?.hostname ?? "");

const cache = new WeakMap<object, Config>();

/** Parses the Worker's vars once per isolate (per env object); a bad value fails loudly at the first request. */
export function getConfig(env: object): Config {
  let config = cache.get(env);
  if (!config) {
    const v = ConfigSchema.parse(env);
    const facilitatorUrls = {
      testnet: v.FACILITATOR_URLS_TESTNET.length > 0 ? v.FACILITATOR_URLS_TESTNET : [v.FACILITATOR_URL_TESTNET],
      mainnet: v.FACILITATOR_URLS_MAINNET.length > 0 ? v.FACILITATOR_URLS_MAINNET : [v.FACILITATOR_URL_MAINNET],
    };
    config = {
      rateLimit: {
        max: v.RATE_LIMIT_MAX,
        ipMax: v.IP_RATE_LIMIT_MAX,
        paymentRefusalMax: v.PAYMENT_REFUSAL_LIMIT,
        windowMs: v.RATE_LIMIT_WINDOW_SECONDS * 1000,
      },
      maxServicesPerTenant: v.MAX_SERVICES_PER_TENANT,
      maxPaywallsPerTenant: v.MAX_PAYWALLS_PER_TENANT,
      paymentBaseUrl: v.PAYMENT_BASE_URL.replace(/\/+$/, ""),
      facilitatorUrl: { testnet: facilitatorUrls.testnet[0]!, mainnet: facilitatorUrls.mainnet[0]! },
      facilitatorUrls,
      facilitatorVerifyTimeoutMs: v.FACILITATOR_VERIFY_TIMEOUT_MS,
      encryptionKey: v.ENCRYPTION_KEY,
      sessionAuthorizerKey: v.SESSION_AUTHORIZER_KEY,
      serverTiming: v.SERVER_TIMING === "on",
      paywallStateTtlMs: v.PAYWALL_STATE_TTL_MS,
      corsAllowedOrigins: v.CORS_ALLOWED_ORIGINS,
      webhooksAllowLoopback: v.WEBHOOKS_ALLOW_LOOPBACK === "on" && isLoopbackUrl(v.PAYMENT_BASE_URL),
      upstreamsAllowLoopback: v.UPSTREAMS_ALLOW_LOOPBACK === "on" && isLoopbackUrl(v.PAYMENT_BASE_URL),
      sessions: { settleIntervalSeconds: v.SESSION_SETTLE_INTERVAL_SECONDS, idleRefundSeconds: v.SESSION_IDLE_REFUND_SECONDS },
    };
    cache.set(env, config);
  }
  return config;
}

/** The `ENCRYPTION_KEY` secret (also the root of the gateway's HMAC keys). A missing secret is a deployment error (500). */
export function encryptionSecret(env: Env): string {
  const secret = getConfig(env).encryptionKey;
  if (!secret) throw new Error("ENCRYPTION_KEY is not configured");
  return secret;
}

/** The encryption key ring from the `ENCRYPTION_KEY` secret. */
export const keyRing = (env: Env): KeyRing => parseKeyRing(encryptionSecret(env));
