// axe-core in the page: the accessibility check every dashboard page passes at desktop and phone widths.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { Page } from "puppeteer-core";
import { expect } from "vitest";
import { DESKTOP, PHONE, screenshot } from "./browser.ts";

let axeSource: Promise<string> | undefined;

/** axe-core's violations on the page as it is, one line each (rule, impact, the first nodes). */
export async function axeViolations(page: Page): Promise<string[]> {
  axeSource ??= readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(await axeSource);
  const result = await page.evaluate(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => v.id + " (" + v.impact + "): " + v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(" | ")))`,
  );
  return result as string[];
}

/**
 * Sets the page's viewport in place: puppeteer's `setViewport` reloads the page when it turns phone emulation (mobile,
 * touch) on or off, which would re-send a form or use up a page shown once. Chromium's own emulation applies at once.
 */
async function emulate(page: Page, viewport: { width: number; height: number; deviceScaleFactor?: number; isMobile?: boolean }) {
  const session = await page.createCDPSession();
  await session.send("Emulation.setDeviceMetricsOverride", {
    width: viewport.width,
    height: viewport.height,
    deviceScaleFactor: viewport.deviceScaleFactor ?? 1,
    mobile: viewport.isMobile ?? false,
  });
  await session.send("Emulation.setTouchEmulationEnabled", { enabled: viewport.isMobile ?? false });
  await session.detach();
  await page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())))");
}

/**
 * At 1280 px and at 390 px (a phone, emulated in place: the page is not reloaded, so a page shown once or a form's
 * answer is checked as it is): a screenshot of the whole page, 0 axe violations, nothing wider than a phone. The page
 * must bypass CSP (`page.setBypassCSP(true)` before it loads): the dashboard's CSP would refuse axe's script.
 */
export async function checkPage(page: Page, name: string) {
  const loadedAt = await page.evaluate("performance.timeOrigin");
  // At the phone's width, 1 device pixel per CSS pixel: long whole-page captures at 2x come out distorted.
  for (const viewport of [DESKTOP, { ...PHONE, deviceScaleFactor: 1 }]) {
    await emulate(page, viewport);
    expect(await axeViolations(page), `${name} at ${viewport.width} px`).toEqual([]);
    if (viewport.width === PHONE.width) {
      const width = (await page.evaluate("document.documentElement.scrollWidth")) as number;
      expect(width, `${name} fits ${PHONE.width} px`).toBeLessThanOrEqual(PHONE.width);
    }
    await screenshot(page, `${name}-${viewport.width}`, { fullPage: true });
  }
  await emulate(page, DESKTOP);
  expect(await page.evaluate("performance.timeOrigin"), `${name}: checked without reloading`).toBe(loadedAt);
}
