/**
 * The dashboard's page frame: navigation (Keys, Activity, Services, Earnings, Webhooks, Profile, Sign out), the stylesheet,
 * and optional same-origin scripts. Every page renders inside `<Layout>`; pages of other modules pass `active`
 * with their own nav id.
 */
import type { Child } from "hono/jsx";
import { ASSET_URL, type AssetId } from "./assets.ts";

export type NavId = "keys" | "activity" | "services" | "earnings" | "webhooks" | "profile";

export const NAV: { id: NavId; label: string; href: string }[] = [
  { id: "keys", label: "Keys", href: "/dashboard/keys" },
  { id: "activity", label: "Activity", href: "/dashboard/activity" },
  { id: "services", label: "Services", href: "/dashboard/services" },
  { id: "earnings", label: "Earnings", href: "/dashboard/earnings" },
  { id: "webhooks", label: "Webhooks", href: "/dashboard/webhooks" },
  { id: "profile", label: "Profile", href: "/dashboard/profile" },
];

export interface LayoutProps {
  title: string;
  /** The highlighted navigation entry; without it (sign-in pages) no navigation is shown. */
  active?: NavId;
  /** The signed-in tenant's name, shown beside Sign out. */
  tenantName?: string;
  /** Same-origin scripts: `copy` (copy buttons), `siwe` (wallet signatures), `auth` (upstream credential fields). */
  scripts?: AssetId[];
  children?: Child;
}

export function Layout({ title, active, tenantName, scripts = [], children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Dashboard`}</title>
        <link rel="stylesheet" href={ASSET_URL.css} />
        {scripts.map((id) => (
          <script src={ASSET_URL[id]} defer />
        ))}
      </head>
      <body>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/dashboard">
            Paywall dashboard
          </a>
          {active && (
            <nav aria-label="Main">
              <ul>
                {NAV.map((item) => (
                  <li>
                    <a href={item.href} aria-current={item.id === active ? "page" : undefined}>
                      {item.label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )}
          {active && (
            <form method="post" action="/dashboard/sign-out" class="sign-out">
              {tenantName && <span class="who">{tenantName}</span>}
              <button type="submit">Sign out</button>
            </form>
          )}
        </header>
        <main id="main" tabindex={-1}>
          <h1>{title}</h1>
          {children}
          {scripts.includes("copy") && <p id="copy-status" class="sr-only" role="status" aria-live="polite"></p>}
        </main>
      </body>
    </html>
  );
}

/**
 * Text with a copy button: the text stays selectable without JavaScript, the button appears with it (copy.js).
 * `what` names the text for the button and the announcement ("Copy transaction hash 0x12…").
 */
export function Copyable({ id, text, what }: { id: string; text: string; what: string }) {
  return (
    <span class="copyable">
      <code id={id}>{text}</code>
      <button type="button" class="secondary small" data-copy={`#${id}`} data-copy-what={what} hidden>
        Copy<span class="sr-only"> {what}</span>
      </button>
    </span>
  );
}

/**
 * A table that may scroll sideways on a narrow screen: a labelled region that takes keyboard focus, so it can be
 * scrolled with the arrow keys.
 */
export function ScrollRegion({ label, children }: { label: string; children?: Child }) {
  return (
    <section class="table-wrap" aria-label={label} tabindex={0}>
      {children}
    </section>
  );
}

/** A notice above a page's content: `error` for refusals, `ok` for confirmations. */
export function Notice({ kind, children }: { kind: "error" | "ok" | "warning"; children?: Child }) {
  return (
    <div class={`notice ${kind}`} role={kind === "error" ? "alert" : "status"}>
      {children}
    </div>
  );
}
