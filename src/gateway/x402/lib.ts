// The parts of the x402 SDK the gateway uses, loaded lazily by sdk.ts (as ../mpp/lib.ts is by ../mpp/sdk.ts): an isolate that
// only answers the management API never evaluates @x402/core or @x402/evm (test/bench/startup.ts checks it).
// `@x402/extensions/payment-identifier` by its subpath, and only `extractPaymentIdentifier` of its readers: its
// validators compile a JSON schema with ajv, which workerd refuses (no code generation from strings).
export {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
  HTTPFacilitatorClient,
} from "@x402/core/http";
export { x402ResourceServer } from "@x402/core/server";
export { SettleError } from "@x402/core/types";
export { ExactEvmScheme } from "@x402/evm/exact/server";
export {
  declarePaymentIdentifierExtension,
  extractPaymentIdentifier,
  PAYMENT_IDENTIFIER,
} from "@x402/extensions/payment-identifier";
export { recoverTypedDataAddress } from "viem";
