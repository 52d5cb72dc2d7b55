// The parts of mppx the gateway uses, imported by name (so the bundle keeps only these); loaded lazily by mpp.ts.
// The production build (src/cli/build.ts) leaves out what of mppx and viem the gateway never runs (mppx's browser
// payment page, the fee payer's actions, viem's transaction-preparation hooks of the Tempo chains); the workerd tests
// (vitest.gateway.config.ts) apply the same substitutions.
export { Challenge, Credential, Errors, Receipt } from "mppx";
export { Mppx, tempo } from "mppx/server";
export { createClient, http } from "viem";
export { tempo as tempoMainnet, tempoModerato } from "viem/chains";
