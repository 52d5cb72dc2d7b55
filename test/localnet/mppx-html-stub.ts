/**
 * A Vite plugin for the workerd test projects: mppx's tempo server imports its browser payment page
 * (`mppx/dist/tempo/server/internal/html.gen.js`, 720 KB of inlined script). The gateway never serves that page (a
 * payment URL answers API clients), and the file is larger than the 1 MiB WebSocket message the vitest pool uses to
 * ship modules into workerd ("WebSocket protocol error … Message is too large"). This resolves it, and only it, to an
 * empty page.
 */
import type { Plugin } from "vite";

const STUB_ID = "\0mppx-html-stub";

export function mppxHtmlStub(): Plugin {
  return {
    name: "mppx-html-stub",
    enforce: "pre",
    resolveId(source, importer) {
      if (source === "./internal/html.gen.js" && importer?.replaceAll("\\", "/").includes("/mppx/dist/tempo/server/"))
        return STUB_ID;
      return undefined;
    },
    load(id) {
      return id === STUB_ID ? 'export const html = "";\n' : undefined;
    },
  };
}
