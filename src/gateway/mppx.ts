// The parts of mppx the gateway uses, imported by name (so the bundle keeps only these); loaded lazily by mpp.ts.
export { Challenge } from "mppx";
export { Methods } from "mppx/tempo";
