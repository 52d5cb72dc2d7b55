// A real headless Chromium from npm (@sparticuz/chromium), driven by puppeteer-core; nothing is downloaded.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import chromium from "@sparticuz/chromium";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { OUTPUT_DIR } from "./worker.ts";

export const SCREENSHOT_DIR = join(OUTPUT_DIR, "screenshots");

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: await chromium.executablePath(),
    args: chromium.args,
    headless: true,
    defaultViewport: DESKTOP,
  });
}

export interface PageProblems {
  /** Uncaught exceptions and console errors of the page. */
  errors: string[];
  /** Every request the page made to another origin (a page that works offline makes none). */
  foreign: string[];
  /** Responses with a status of 400 or more. */
  failed: string[];
}

/** A new page at `viewport` that records errors, failed responses and requests leaving `origin`. */
export async function openPage(
  browser: Browser,
  origin: string,
  viewport = DESKTOP,
): Promise<{ page: Page; problems: PageProblems }> {
  const page = await browser.newPage();
  await page.setViewport(viewport);
  const problems: PageProblems = { errors: [], foreign: [], failed: [] };
  page.on("pageerror", (err) => problems.errors.push(String(err)));
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.errors.push(msg.text());
  });
  page.on("request", (req) => {
    if (!req.url().startsWith(origin) && !req.url().startsWith("data:")) problems.foreign.push(req.url());
  });
  page.on("response", (res) => {
    if (res.status() >= 400) problems.failed.push(`${res.status()} ${res.url()}`);
  });
  return { page, problems };
}

/** Saves a PNG of the viewport (or of the whole page) under test-output/screenshots/ and returns its path. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: options.fullPage ?? false });
  return path;
}

/** Scrolls the element matching `selector` to the top of the viewport (for a screenshot of that part). */
export async function scrollTo(page: Page, selector: string): Promise<void> {
  await page.evaluate(`document.querySelector(${JSON.stringify(selector)}).scrollIntoView()`);
}
