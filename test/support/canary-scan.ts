// Setup file: after every test file, scan every response and console line the file produced for a registered
// secret (see canaries.ts) and fail the file if one appears. A leak is reported by its label, never its value.
//
// Console lines come from the one console capture (console.ts, installed by setup.ts, listed before this file),
// which hands over every line as it is written: the app's, and the tests' own.
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { canaries, describeLeaks, harvestStoredSecrets, markFileStart } from "./canaries.ts";
import { onConsoleLine } from "./console.ts";

onConsoleLine((level, text) => canaries.observe("console", `console.${level}`, text));

let observedAtLastHarvest = 0;

beforeAll(async () => {
  await markFileStart();
  observedAtLastHarvest = canaries.observationCount();
});

afterEach(async () => {
  await canaries.flush();
  // Ciphertexts and key hashes of rows a later test may delete: read D1 after every test that called the app.
  if (canaries.observationCount() !== observedAtLastHarvest) {
    await harvestStoredSecrets();
    observedAtLastHarvest = canaries.observationCount();
  }
});

afterAll(async () => {
  await canaries.flush();
  await harvestStoredSecrets();
  const leaks = canaries.findLeaks();
  canaries.resetObservations();
  if (leaks.length > 0) {
    const file = expect.getState().testPath ?? "(unknown test file)";
    throw new Error(describeLeaks(file, leaks));
  }
});
