import { supportsMpp } from "./networks.ts";

export interface PaymentUrls {
  x402: string | null;
  mpp: string | null;
}

/** Buyer-facing payment URLs of a paywall; both `null` without a service, `mpp` only with a Tempo network. */
export function paymentUrls(base: string, serviceId: string | null, slug: string, networks: readonly string[]): PaymentUrls {
  if (!serviceId) return { x402: null, mpp: null };
  const tail = `${encodeURIComponent(serviceId)}/${encodeURIComponent(slug)}`;
  return {
    x402: `${base}/api/x402/pay/${tail}`,
    mpp: supportsMpp(networks) ? `${base}/api/mpp/pay/${tail}` : null,
  };
}
