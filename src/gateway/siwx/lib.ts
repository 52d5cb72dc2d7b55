// The parts of @x402/extensions' Sign-In-With-X the gateway uses, loaded lazily by sdk.ts (as ../x402/lib.ts is by
// ../x402/sdk.ts): an isolate that only answers the management API never evaluates them. Subpath imports only: the
// package root would evaluate every extension (and ajv).
export { encodePaymentRequiredHeader } from "@x402/core/http";
export { x402ResourceServer } from "@x402/core/server";
export {
  createSIWxResourceServerExtension,
  declareSIWxExtension,
  parseSIWxHeader,
  SIGN_IN_WITH_X,
  validateSIWxMessage,
  verifySIWxSignature,
} from "@x402/extensions/sign-in-with-x";
