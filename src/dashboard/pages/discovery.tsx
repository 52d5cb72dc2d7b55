/**
 * "What agents see" of one service (docs/discovery.md): the URLs of its discovery document and llms.txt, the paid,
 * free and wallet sign-in routes the document lists, the diagnostics of the API's `GET /v1/services/{id}/discovery`
 * (the same function), the listing status facilitators returned, and the document itself. Read-only.
 */
import type { Context } from "hono";
import { Hono } from "hono";
import { getConfig } from "../../core/config.ts";
import type { Diagnostic } from "../../core/discovery/diagnostics.ts";
import { serviceOperations } from "../../core/discovery/operations.ts";
import { discoveryPreview } from "../../core/discovery/preview.ts";
import { networkTable } from "../../core/money/network-table.ts";
import type { Db } from "../../db/client.ts";
import type { Tenant } from "../../db/schema.ts";
import { findServiceWithPaywalls } from "../../db/services.ts";
import type { DashboardEnv } from "../env.ts";
import { Layout, Notice } from "../layout.tsx";

type Ctx = Context<DashboardEnv>;

const STYLE = `
.sev { display:inline-block; min-width:3.2rem; font-weight:600; }
.sev.error { color:var(--danger); } .sev.warn { color:var(--warn); } .sev.info { color:var(--muted); }
ul.diagnostics { list-style:none; margin:0; padding:0; }
ul.diagnostics li { border-top:1px solid var(--line); padding:.45rem 0; }
pre.document { max-height:28rem; overflow:auto; background:#f0f2f5; padding:.6rem; border-radius:6px; font-size:.82em; }
.payurl { display:flex; flex-wrap:wrap; gap:.25rem .5rem; align-items:center; margin:.15rem 0 .4rem; }
.payurl code { flex:1 1 16rem; background:#f0f2f5; padding:.3rem .45rem; border-radius:6px; }
`;

const SEVERITY_ORDER = { error: 0, warn: 1, info: 2 } as const;

function CopyUrl({ id, label, url }: { id: string; label: string; url: string }) {
  return (
    <div class="payurl">
      <code id={id}>{url}</code>
      <button
        type="button"
        class="secondary"
        data-copy={`#${id}`}
        data-copy-what={`the ${label} URL`}
        aria-label={`Copy the ${label} URL`}
        hidden
      >
        Copy
      </button>
    </div>
  );
}

function Diagnostics({ diagnostics }: { diagnostics: Diagnostic[] }) {
  if (diagnostics.length === 0) return <p>Nothing to improve: agents get everything this page can check.</p>;
  const sorted = [...diagnostics].sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
  return (
    <ul class="diagnostics">
      {sorted.map((d) => (
        <li>
          <span class={`sev ${d.severity}`}>{d.severity}</span> <code>{d.code}</code> {d.message}
        </li>
      ))}
    </ul>
  );
}

type Operation = ReturnType<typeof serviceOperations>["operations"][number];
type Discovery = NonNullable<Awaited<ReturnType<typeof loadDiscovery>>>;

// ---- what the data is

/** The tenant's service with what agents see of it, or `undefined` when the tenant has no service with this id. */
async function loadDiscovery(db: Db, env: Env, tenant: Tenant, serviceId: string) {
  const found = await findServiceWithPaywalls(db, serviceId);
  if (!found || found.service.tenantId !== tenant.id) return undefined;
  const { service, paywalls } = found;
  const preview = await discoveryPreview(db, env, service, paywalls, tenant);
  const { operations } = serviceOperations(getConfig(env).paymentBaseUrl, service, paywalls, networkTable(env), tenant);
  const counts = { error: 0, warn: 0, info: 0 };
  for (const d of preview.diagnostics) counts[d.severity]++;
  return { service, preview, operations, counts };
}

// ---- what the page shows

function NotFound({ tenantName }: { tenantName: string }) {
  return (
    <Layout title="Service not found" active="services" tenantName={tenantName}>
      <Notice kind="error">None of your services has this id.</Notice>
      <p>
        <a href="/dashboard/services">Back to your services</a>
      </p>
    </Layout>
  );
}

function DiagnosticsSection({ preview, counts }: Pick<Discovery, "preview" | "counts">) {
  return (
    <section aria-labelledby="diagnostics">
      <h2 id="diagnostics">
        Diagnostics{" "}
        <span class="hint">
          {counts.error} errors, {counts.warn} warnings, {counts.info} notes
        </span>
      </h2>
      <Diagnostics diagnostics={preview.diagnostics} />
    </section>
  );
}

function OperationRow({ op }: { op: Operation }) {
  return (
    <tr>
      <td data-label="Method">{op.method}</td>
      <td data-label="Path">
        <code>{op.path}</code>
      </td>
      <td data-label="Access">
        {op.kind === "paid" ? (op.protocol === "x402" ? "x402" : "MPP") : op.kind === "free" ? "Free" : "Wallet sign-in"}
      </td>
      <td data-label="Price">{op.kind === "paid" ? `${op.priceUsd} USD` : "—"}</td>
      <td data-label="Networks">{op.kind === "paid" ? op.networks.map((n) => n.id).join(", ") : "—"}</td>
    </tr>
  );
}

function Routes({ operations }: { operations: Operation[] }) {
  return (
    <section aria-labelledby="routes">
      <h2 id="routes">Routes listed</h2>
      {operations.length === 0 ? (
        <p class="hint">No route is listed: enable a paywall, or add publicRoutes or siwxRoutes to the service.</p>
      ) : (
        <div class="table-wrap">
          <table class="cards">
            <thead>
              <tr>
                <th scope="col">Method</th>
                <th scope="col">Path</th>
                <th scope="col">Access</th>
                <th scope="col">Price</th>
                <th scope="col">Networks</th>
              </tr>
            </thead>
            <tbody>
              {operations.map((op) => (
                <OperationRow op={op} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Listings({ listings }: { listings: Discovery["preview"]["listings"] }) {
  return (
    <section aria-labelledby="listings">
      <h2 id="listings">Facilitator listings</h2>
      {listings.length === 0 ? (
        <p class="hint">
          No facilitator has said yet whether it listed these routes in its Bazaar: it says so when it settles a payment.
        </p>
      ) : (
        <ul>
          {listings.map((l) => (
            <li>
              <code>{l.slug}</code>: {l.status}
              {l.reason ? ` (${l.reason})` : ""} <span class="hint">as of {l.updatedAt.toISOString()}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function DiscoveryView({ data, tenantName, nonce }: { data: Discovery; tenantName: string; nonce: string }) {
  const { service, preview, operations, counts } = data;
  return (
    <Layout title={`What agents see: ${service.name}`} active="services" tenantName={tenantName} scripts={["copy"]}>
      <style nonce={nonce}>{STYLE}</style>
      <p>
        Agents and crawlers find this service's paid routes in its discovery document and its llms.txt, served on the payment
        origin and built from your service and paywalls on every request. Disabled paywalls are not listed. The API gives the same
        with <code>GET /v1/services/{service.id}/discovery</code> (see the <a href="/docs">API reference</a>).
      </p>
      <section aria-labelledby="urls">
        <h2 id="urls">Where agents look</h2>
        <h3>Discovery document (OpenAPI)</h3>
        <CopyUrl id="discovery-openapi" label="discovery document" url={preview.openapiUrl} />
        <h3>llms.txt</h3>
        <CopyUrl id="discovery-llms" label="llms.txt" url={preview.llmsTxtUrl} />
      </section>
      <DiagnosticsSection preview={preview} counts={counts} />
      <Routes operations={operations} />
      <Listings listings={preview.listings} />
      <section aria-labelledby="document">
        <h2 id="document">The document</h2>
        <details>
          <summary>Show the discovery document as served now</summary>
          <pre class="document">{JSON.stringify(preview.document, null, 2)}</pre>
        </details>
      </section>
      <p>
        <a href="/dashboard/services">Back to your services</a>
      </p>
    </Layout>
  );
}

async function render(c: Ctx) {
  const tenant = c.var.session.tenant;
  const data = await loadDiscovery(c.var.db, c.env, tenant, c.req.param("id") ?? "");
  if (!data) return c.html(<NotFound tenantName={tenant.name} />, 404);
  return c.html(<DiscoveryView data={data} tenantName={tenant.name} nonce={c.var.cspNonce} />);
}

export const discoveryPages = new Hono<DashboardEnv>();

discoveryPages.get("/services/:id/discovery", render);
