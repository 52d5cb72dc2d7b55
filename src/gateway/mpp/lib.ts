// The parts of mppx the gateway uses, loaded lazily by sdk.ts: an isolate that answers the management API never
// evaluates mppx (test/bench/startup.ts checks it).
export { Challenge, Credential, Errors, PaymentRequest, Receipt } from "mppx";
export { Mppx, tempo } from "mppx/server";
export { createClient, http } from "viem";
export { tempo as tempoMainnet, tempoModerato } from "viem/chains";
