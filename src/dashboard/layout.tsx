/**
 * The dashboard's page frame: navigation (Keys, Activity, Services, Earnings, Profile, Sign out), the stylesheet,
 * and optional same-origin scripts. Every page renders inside `<Layout>`; pages of other modules pass `active`
 * with their own nav id.
 */
import type { Child } from "hono/jsx";

export type NavId = "keys" | "activity" | "services" | "earnings" | "profile";

export const NAV: { id: NavId; label: string; href: string }[] = [
  { id: "keys", label: "Keys", href: "/dashboard/keys" },
  { id: "activity", label: "Activity", href: "/dashboard/activity" },
  { id: "services", label: "Services", href: "/dashboard/services" },
  { id: "earnings", label: "Earnings", href: "/dashboard/earnings" },
  { id: "profile", label: "Profile", href: "/dashboard/profile" },
];

export interface LayoutProps {
  title: string;
  /** The highlighted navigation entry; without it (sign-in pages) no navigation is shown. */
  active?: NavId;
  /** The signed-in tenant's name, shown beside Sign out. */
  tenantName?: string;
  /** Same-origin scripts, e.g. `/dashboard/assets/copy.js`. */
  scripts?: string[];
  children?: Child;
}

export function Layout({ title, active, tenantName, scripts = [], children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Dashboard`}</title>
        <link rel="stylesheet" href="/dashboard/assets/dashboard.css" />
        {scripts.map((src) => (
          <script src={src} defer />
        ))}
      </head>
      <body>
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
        <main id="main">
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
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
