import type { StackInfo } from "../../src/cli/localnet/stack.ts";

declare module "vitest" {
  interface ProvidedContext {
    /** The local payment stack of the gateway tests (test/localnet/global-setup.ts). */
    localnet: StackInfo;
  }
}
