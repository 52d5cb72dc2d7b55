// The paywall form's sessions setting in a real headless Chromium against the production bundle: the box and the
// minimum deposit typed in USDC are what the API then returns in micro-USDC; a deposit below the price or a Tempo-only
// paywall is named at its field; editing keeps and changes them. Pages saved at 1280 and 390 px under
// test-output/screenshots/ (`paywall-sessions-*`).
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSignInLink } from "../../src/core/sign-in-links.ts";
import { getDb } from "../../src/db/client.ts";
import { checkPage } from "./support/axe.ts";
import { launchBrowser, openPage } from "./support/browser.ts";
import { type RunningWorker, startWorker } from "./support/worker.ts";

let worker: RunningWorker;
let browser: Browser;

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker({ port: 8944 }), launchBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

async function signIn(page: Page) {
  const link = await createSignInLink(getDb(await worker.db()), { tenant: worker.tenantId, baseUrl: worker.url });
  await page.goto(link.url, { waitUntil: "load" });
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("main form button[type=submit]")]);
}

async function submit(page: Page, label: string) {
  const button = await page.evaluateHandle(
    `[...document.querySelectorAll("main button")].find((el) => el.textContent.replace(/\\s+/g, " ").trim().startsWith(${JSON.stringify(label)}))`,
  );
  await Promise.all([
    page.waitForNavigation({ waitUntil: "load", timeout: 10_000 }),
    (button.asElement() as never as { click(): Promise<void> }).click(),
  ]);
}

async function fill(page: Page, selector: string, value: string) {
  await page.$eval(selector, (el) => {
    (el as unknown as { value: string }).value = "";
  });
  await page.type(selector, value);
}

const textOf = (page: Page, selector: string) =>
  page.$eval(selector, (el) => ((el as unknown as { textContent: string }).textContent ?? "").replace(/\s+/g, " ").trim());
const isChecked = (page: Page, selector: string) => page.$eval(selector, (el) => (el as unknown as { checked: boolean }).checked);
const fieldValue = (page: Page, selector: string) => page.$eval(selector, (el) => (el as unknown as { value: string }).value);

async function api(path: string, init: RequestInit = {}) {
  const res = await fetch(`${worker.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${worker.key}`, "content-type": "application/json", ...init.headers },
  });
  return { status: res.status, body: (await res.json()) as { data: Record<string, unknown> } };
}

describe("the paywall form's sessions", () => {
  it("a box and a minimum deposit in USDC: sent as micro-USDC, refused at their fields, kept and changed on edit", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    await page.setBypassCSP(true);
    await signIn(page);
    const service = await api("/v1/services", {
      method: "POST",
      body: JSON.stringify({
        name: "Metered",
        baseUrl: "https://metered.example.com",
        authMethod: "none",
        networks: ["base-sepolia", "tempo-testnet"],
        mode: "testnet",
      }),
    });
    expect(service.status).toBe(201);
    const serviceId = service.body.data.id as string;

    await page.goto(`${worker.url}/dashboard/paywalls/new?service=${serviceId}`, { waitUntil: "load" });
    expect(await isChecked(page, "#pw-sessionsEnabledBox")).toBe(false);
    await page.type("#pw-slug", "metered");
    await page.type("#pw-name", "Metered calls");
    await page.type("#pw-price", "0.01");
    await page.click("#pw-sessionsEnabledBox");
    await page.type("#pw-sessionsMinDeposit", "0.005");
    await checkPage(page, "paywall-sessions-new");
    await submit(page, "Create paywall");
    // Below the price: named at the deposit field, in the form's words, what was typed kept.
    expect(await textOf(page, "#pw-sessionsMinDeposit-error")).toContain("Minimum deposit (USDC): Must be at least the price");
    expect(await fieldValue(page, "#pw-sessionsMinDeposit")).toBe("0.005");
    expect(await isChecked(page, "#pw-sessionsEnabledBox")).toBe(true);
    await checkPage(page, "paywall-sessions-errors");

    await fill(page, "#pw-sessionsMinDeposit", "2.5");
    await submit(page, "Create paywall");
    expect(new URL(page.url()).searchParams.get("done")).toBe("paywall-created");
    const id = new URL(page.url()).searchParams.get("id") as string;
    expect((await api(`/v1/paywalls/${id}`)).body.data).toMatchObject({
      price: "10000",
      sessions: { enabled: true, minDeposit: "2500000" },
    });

    // The edit form shows them as stored; Tempo only with sessions on is refused at the box.
    await page.goto(`${worker.url}/dashboard/paywalls/${id}/edit`, { waitUntil: "load" });
    expect(await isChecked(page, "#pw-sessionsEnabledBox")).toBe(true);
    expect(await fieldValue(page, "#pw-sessionsMinDeposit")).toBe("2.5");
    await checkPage(page, "paywall-sessions-edit");
    await page.click("#pw-net-base-sepolia");
    await submit(page, "Save paywall");
    expect(await textOf(page, "#pw-sessionsEnabled-error")).toContain("Sessions: Sessions need an EVM network");
    await checkPage(page, "paywall-sessions-tempo-error");
    await page.click("#pw-net-base-sepolia");
    await fill(page, "#pw-sessionsMinDeposit", "1000000");
    await submit(page, "Save paywall");
    expect(new URL(page.url()).searchParams.get("done")).toBe("paywall-saved");
    expect((await api(`/v1/paywalls/${id}`)).body.data.sessions).toEqual({ enabled: true, minDeposit: "1000000000000" });

    // Unticked and emptied: off, the price is the minimum again.
    await page.goto(`${worker.url}/dashboard/paywalls/${id}/edit`, { waitUntil: "load" });
    await page.click("#pw-sessionsEnabledBox");
    await fill(page, "#pw-sessionsMinDeposit", "");
    await submit(page, "Save paywall");
    expect(new URL(page.url()).searchParams.get("done")).toBe("paywall-saved");
    expect((await api(`/v1/paywalls/${id}`)).body.data.sessions).toEqual({ enabled: false });
    expect(problems.errors.filter((e) => !/status of 4\d\d/.test(e))).toEqual([]);
    expect(problems.foreign).toEqual([]);
    await page.close();
  });
});
