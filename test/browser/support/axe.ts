// axe-core in the page: the accessibility check every dashboard page passes at desktop and phone widths.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { CDPSession, Page } from "puppeteer-core";
import { expect } from "vitest";
import { DESKTOP, PHONE, SCREENSHOT_DIR } from "./browser.ts";

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

/** One DevTools session per page for the emulation below: an override lives as long as the session that set it. */
const sessions = new WeakMap<Page, CDPSession>();

/**
 * Sets the page's viewport in place: puppeteer's `setViewport` reloads the page when it turns phone emulation (mobile,
 * touch) on or off, which would re-send a form or use up a page shown once. Chromium's own emulation applies at once.
 */
async function emulate(page: Page, viewport: { width: number; height: number; deviceScaleFactor?: number; isMobile?: boolean }) {
  let session = sessions.get(page);
  if (!session) {
    session = await page.createCDPSession();
    sessions.set(page, session);
  }
  await session.send("Emulation.setDeviceMetricsOverride", {
    width: viewport.width,
    height: viewport.height,
    deviceScaleFactor: viewport.deviceScaleFactor ?? 1,
    mobile: viewport.isMobile ?? false,
  });
  await session.send("Emulation.setTouchEmulationEnabled", { enabled: viewport.isMobile ?? false });
  await page.waitForFunction(`window.innerWidth === ${viewport.width}`, { timeout: 5000 });
  await page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r())))");
}

/**
 * A PNG of the whole page as it is laid out now, under test-output/screenshots/: taken through the page's own
 * DevTools session, so the emulated width holds (puppeteer's full-page capture lays the page out at its own viewport).
 */
async function wholePage(page: Page, name: string) {
  const session = sessions.get(page) as CDPSession;
  const size = (await page.evaluate(
    "({ width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight })",
  )) as { width: number; height: number };
  const { data } = await session.send("Page.captureScreenshot", {
    format: "png",
    captureBeyondViewport: true,
    clip: { x: 0, y: 0, width: size.width, height: Math.min(size.height, 16_000), scale: 1 },
  });
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await writeFile(join(SCREENSHOT_DIR, `${name}.png`), Buffer.from(data, "base64"));
}

/**
 * Card tables on a phone (`table.cards`: each cell a label beside its value) put the whole value beside its label:
 * the cells whose content reaches into the label's column, as text.
 */
async function cardCellsOutOfPlace(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll("table.cards td")].flatMap((td) => {
    if (getComputedStyle(td).display !== "grid" || !td.textContent.trim()) return [];
    const label = parseFloat(getComputedStyle(td).gridTemplateColumns.split(" ")[0]);
    const range = document.createRange();
    range.selectNodeContents(td);
    const left = td.getBoundingClientRect().left + label;
    const out = [...range.getClientRects()].some((r) => r.width > 0 && r.left < left - 1);
    return out ? [td.dataset.label + ": " + td.textContent.trim().slice(0, 60)] : [];
  })`) as Promise<string[]>;
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
      expect(await cardCellsOutOfPlace(page), `${name}: card values beside their labels`).toEqual([]);
    } else {
      const width = (await page.evaluate("document.documentElement.scrollWidth")) as number;
      expect(width, `${name} fits ${viewport.width} px`).toBeLessThanOrEqual(viewport.width);
    }
    await wholePage(page, `${name}-${viewport.width}`);
  }
  await emulate(page, DESKTOP);
  expect(await page.evaluate("performance.timeOrigin"), `${name}: checked without reloading`).toBe(loadedAt);
}
