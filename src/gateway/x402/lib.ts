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
export { FacilitatorResponseError, FacilitatorTimeoutError, SettleError, VerifyError } from "@x402/core/types";
export { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/server";
export { ExactEvmScheme } from "@x402/evm/exact/server";
// The Bazaar discovery extension (docs/discovery.md), by its subpath: the package root would evaluate every extension
// (and ajv). Only declaring and enriching run here; the package's validators compile JSON Schema with ajv, which
// Workers refuse, so they are never called in the Worker.
export {
  bazaarResourceServerExtension,
  declareDiscoveryExtension,
  isValidServiceName,
  sanitizeTags,
} from "@x402/extensions/bazaar";
export {
  declarePaymentIdentifierExtension,
  extractPaymentIdentifier,
  PAYMENT_IDENTIFIER,
} from "@x402/extensions/payment-identifier";
export { recoverTypedDataAddress } from "viem";
export { privateKeyToAccount } from "viem/accounts";
