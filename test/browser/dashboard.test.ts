// The dashboard in a real headless Chromium against the production bundle in workerd (Miniflare, real sockets):
// sign in with a one-time link and with Sign-In with Ethereum through an injected EIP-1193 provider whose
// signatures are real (a viem local account), sign up a new wallet, create a key and copy it, use it on the API,
// pause / resume / revoke it, hit the 20-key limit, sign out. Every page is saved as a screenshot under
// test-output/screenshots/, desktop and 375 px wide.
import type { Browser, Page } from "puppeteer-core";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "../../src/admin/commands.ts";
import { createKey } from "../../src/core/keys/management.ts";
import { createSignInLink } from "../../src/core/sign-in-links.ts";
import { getDb } from "../../src/db/client.ts";
import { checkPage } from "./support/axe.ts";
import { DESKTOP, launchBrowser, openPage, type PageProblems, PHONE, screenshot } from "./support/browser.ts";
import { type RunningWorker, startWorker } from "./support/worker.ts";

let worker: RunningWorker;
let browser: Browser;

beforeAll(async () => {
  [worker, browser] = await Promise.all([startWorker({ port: 8851, vars: { DASHBOARD_SIGNUP: "open" } }), launchBrowser()]);
  await browser
    .defaultBrowserContext()
    .overridePermissions(worker.url, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

const db = async () => getDb(await worker.db());

const inPage = <T>(page: Page, fn: string): Promise<T> => page.evaluate(`(${fn})()`) as Promise<T>;

async function me(key: string): Promise<{ status: number; code?: string }> {
  const res = await fetch(`${worker.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await res.json()) as { code?: string };
  return { status: res.status, code: body.code };
}

/** The button or link (inside `scope`, a CSS selector) whose text, as a screen reader reads it, starts with `label`. */
async function control(page: Page, label: string, scope = "body") {
  const handle = await page.evaluateHandle(
    `[...document.querySelectorAll(${JSON.stringify(`${scope} button, ${scope} a`)})].find((el) => el.textContent.replace(/\\s+/g, " ").trim().startsWith(${JSON.stringify(label)}))`,
  );
  const element = handle.asElement();
  expect(element, `a control named "${label}…" in ${scope}`).not.toBeNull();
  return element as import("puppeteer-core").ElementHandle<Element>;
}

/** Clicks that control and waits for the page it leads to (if any). */
async function click(page: Page, label: string, scope = "body") {
  const element = await control(page, label, scope);
  await Promise.all([page.waitForNavigation({ waitUntil: "load", timeout: 5000 }).catch(() => undefined), element.click()]);
}

/** The table row of the key named `name`, as a CSS selector usable in `click`. */
async function rowOf(page: Page, name: string): Promise<string> {
  const index = await inPage<number>(
    page,
    `() => [...document.querySelectorAll("tbody tr")].findIndex((tr) => tr.cells[0].textContent === ${JSON.stringify(name)})`,
  );
  expect(index, `row of ${name}`).toBeGreaterThanOrEqual(0);
  return `tbody tr:nth-child(${index + 1})`;
}

const statusIn = (page: Page, row: string) =>
  page.$eval(`${row} .status`, (el) => (el as unknown as { textContent: string }).textContent);

/** Fails on what a user would see as broken: script errors, CSP violations, requests to other origins. */
function expectClean(problems: PageProblems) {
  // A refusal the test asked for (409 KEY_LIMIT_REACHED) is logged by Chromium as a failed resource: not a problem.
  expect(problems.errors.filter((e) => !/^Failed to load resource: the server responded with a status of 4\d\d/.test(e))).toEqual(
    [],
  );
  expect(problems.foreign).toEqual([]);
}

/** The page fits a phone's screen: nothing wider than the viewport except inside a scrollable table wrapper. */
async function expectFitsPhone(page: Page, name: string) {
  await page.setViewport(PHONE);
  await page.reload({ waitUntil: "load" });
  const width = await inPage<number>(page, "() => document.documentElement.scrollWidth");
  expect(width, `${name} at ${PHONE.width} px`).toBeLessThanOrEqual(PHONE.width);
  await screenshot(page, `${name}-${PHONE.width}`);
  await page.setViewport(DESKTOP);
}

/** An EIP-1193 provider in the page whose accounts and signatures come from a viem local account in this process. */
async function injectWallet(page: Page, getAccount: () => PrivateKeyAccount, chainId = 8453) {
  await page.exposeFunction("__walletAddress", () => getAccount().address);
  await page.exposeFunction("__walletSign", (hex: `0x${string}`) => getAccount().signMessage({ message: { raw: hex } }));
  await page.evaluateOnNewDocument(`
    window.ethereum = {
      isTestWallet: true,
      async request({ method, params }) {
        if (method === "eth_requestAccounts" || method === "eth_accounts") return [await window.__walletAddress()];
        if (method === "eth_chainId") return "0x${chainId.toString(16)}";
        if (method === "personal_sign") return window.__walletSign(params[0]);
        throw Object.assign(new Error("unsupported " + method), { code: 4200 });
      },
    };
  `);
}

describe("dashboard in a browser", () => {
  it("link sign-in → create and copy a key → use it → pause, resume, revoke → 21st key refused → sign out", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    const link = await createSignInLink(await db(), { tenant: worker.tenantId, baseUrl: worker.url });
    await page.goto(link.url, { waitUntil: "load" });
    await screenshot(page, "sign-in-link");
    await click(page, "Sign in");
    expect(new URL(page.url()).pathname).toBe("/dashboard/keys");
    await screenshot(page, "keys");

    // Create a key with two scopes and an allowlist that admits the test's address.
    await page.click("#create-heading");
    await page.type("#new-name", "Browser key");
    await page.click("#new-services-write");
    await page.click("#new-events-read");
    await page.type("#new-ips", "127.0.0.1\n::1");
    await click(page, "Create key");
    const shown = await page.$eval("#new-key", (el) => (el as unknown as { textContent: string }).textContent ?? "");
    expect(shown).toMatch(/^mpk_[0-9a-f]{64}$/);
    expect(await page.$eval(".notice.warning", (el) => (el as unknown as { textContent: string }).textContent)).toContain(
      "shown only this once",
    );
    await screenshot(page, "key-created");
    await click(page, "Copy key");
    const copied = await inPage<string>(page, "() => navigator.clipboard.readText()");
    expect(copied).toBe(shown);
    expect(await me(copied)).toEqual({ status: 200, code: undefined });

    // Gone for good once the page changes.
    await page.goto(`${worker.url}/dashboard/keys`, { waitUntil: "load" });
    expect(await page.content()).not.toContain(copied);
    const row = await rowOf(page, "Browser key");
    expect(await statusIn(page, row)).toBe("active");

    await click(page, "Pause", row);
    expect(await me(copied)).toEqual({ status: 401, code: "KEY_INACTIVE" });
    expect(await statusIn(page, await rowOf(page, "Browser key"))).toBe("paused");
    await click(page, "Resume", await rowOf(page, "Browser key"));
    expect(await me(copied)).toEqual({ status: 200, code: undefined });
    // Revoke asks first: one click changes nothing.
    await click(page, "Revoke", await rowOf(page, "Browser key"));
    expect(await me(copied)).toEqual({ status: 200, code: undefined });
    await click(page, "Revoke key Browser key");
    expect(await me(copied)).toEqual({ status: 401, code: "KEY_REVOKED" });
    expect(await statusIn(page, await rowOf(page, "Browser key"))).toBe("revoked");
    await screenshot(page, "keys-after-revoke");

    // 20 active keys (the demo key + 19), then the 21st through the form.
    const d = await db();
    for (let i = 0; i < 19; i++) await createKey(d, { tenant: worker.tenantId, name: `bulk ${i}`, scopes: "events:read" });
    await page.goto(`${worker.url}/dashboard/keys`, { waitUntil: "load" });
    await page.click("#create-heading");
    await page.type("#new-name", "One too many");
    await page.click("#new-events-read");
    await click(page, "Create key");
    expect(await page.$eval(".notice.error", (el) => (el as unknown as { textContent: string }).textContent)).toContain(
      "KEY_LIMIT_REACHED",
    );
    expect(await page.$("#new-key")).toBeNull();
    await screenshot(page, "key-limit");

    await page.goto(`${worker.url}/dashboard/activity`, { waitUntil: "load" });
    expect(await page.content()).toContain("Browser key");
    await screenshot(page, "activity");
    await expectFitsPhone(page, "activity");
    await page.goto(`${worker.url}/dashboard/profile`, { waitUntil: "load" });
    await screenshot(page, "profile");
    await expectFitsPhone(page, "profile");
    await page.goto(`${worker.url}/dashboard/keys`, { waitUntil: "load" });
    await expectFitsPhone(page, "keys");

    await click(page, "Sign out");
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    await page.goto(`${worker.url}/dashboard/keys`, { waitUntil: "load" });
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    expectClean(problems);
    await page.close();
  });

  it("Sign-In with Ethereum through the page's wallet: an existing tenant's wallet signs in; a new wallet signs up", async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const tenant = await createTenant(await db(), {
      email: "wallet-owner@example.com",
      name: "Wallet Owner",
      wallet: owner.address,
    });
    let account = owner;
    const { page, problems } = await openPage(browser, worker.url);
    await injectWallet(page, () => account);

    await page.goto(`${worker.url}/dashboard/sign-in`, { waitUntil: "load" });
    await screenshot(page, "sign-in");
    await expectFitsPhone(page, "sign-in");
    await click(page, "Sign in with Ethereum");
    await page.waitForFunction(`location.pathname === "/dashboard/keys"`, { timeout: 10_000 });
    expect(await page.$eval(".who", (el) => (el as unknown as { textContent: string }).textContent)).toBe(tenant.name);
    await click(page, "Sign out");

    // A wallet of no tenant, with sign-up open: name and e-mail, then the new tenant's keys page.
    account = privateKeyToAccount(generatePrivateKey());
    await click(page, "Sign in with Ethereum");
    await page.waitForFunction(`location.pathname === "/dashboard/sign-up"`, { timeout: 10_000 });
    expect(await page.content()).toContain(account.address);
    await screenshot(page, "sign-up");
    // The same page (this browser's session) in a second tab that lets axe's script in.
    const audit = (await openPage(browser, worker.url)).page;
    await audit.setBypassCSP(true);
    await audit.goto(`${worker.url}/dashboard/sign-up`, { waitUntil: "load" });
    expect(await audit.content()).toContain(account.address);
    await checkPage(audit, "sign-up");
    await audit.close();
    await page.type("#signup-name", "Fresh Seller");
    await page.type("#signup-email", "fresh-seller@example.com");
    await click(page, "Create account");
    expect(new URL(page.url()).pathname).toBe("/dashboard/keys");
    expect(await page.$eval(".who", (el) => (el as unknown as { textContent: string }).textContent)).toBe("Fresh Seller");
    await screenshot(page, "keys-new-tenant");
    await page.goto(`${worker.url}/dashboard/profile`, { waitUntil: "load" });
    expect(await page.content()).toContain(account.address);
    await click(page, "Sign out");
    expectClean(problems);
    await page.close();
  });

  it("without a wallet extension, the sign-in page says so instead of failing", async () => {
    const { page, problems } = await openPage(browser, worker.url);
    await page.goto(`${worker.url}/dashboard/sign-in`, { waitUntil: "load" });
    await (await control(page, "Sign in with Ethereum")).click();
    await page.waitForFunction(`document.querySelector("[data-siwe-status]").textContent.includes("No wallet found")`);
    expectClean(problems);
    await page.close();
  });
});
