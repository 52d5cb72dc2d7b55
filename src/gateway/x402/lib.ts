// The parts of the x402 SDK the gateway uses, loaded lazily by sdk.ts (as ../mpp/lib.ts is by ../mpp/sdk.ts): an isolate that
// only answers the management API never evaluates @x402/core or @x402/evm (test/bench/startup.ts checks it).
export {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
  HTTPFacilitatorClient,
} from "@x402/core/http";
export { x402ResourceServer } from "@x402/core/server";
export { SettleError } from "@x402/core/types";
export { ExactEvmScheme } from "@x402/evm/exact/server";
