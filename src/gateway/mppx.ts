// The parts of mppx the gateway uses, imported by name (so the bundle keeps only these); loaded lazily by mpp.ts.
// mppx's tempo server also imports its browser payment page (`internal/html.gen.js`), which the gateway never serves:
// the production build aliases it to an empty page (src/cli/build.ts), the workerd tests likewise
// (test/localnet/mppx-html-stub.ts).
export { Challenge, Credential, Errors, Receipt } from "mppx";
export { Mppx, tempo } from "mppx/server";
export { createClient, http } from "viem";
export { tempo as tempoMainnet, tempoModerato } from "viem/chains";
