/**
 * Services and paywalls: the tenant's services with their paywalls (price in USDC, networks, enabled state, the
 * buyer-facing payment URLs with copy buttons), the paywalls without a service, and an enable/disable toggle per
 * paywall (a form POST, limited to the signed-in tenant's paywalls). Changes beyond that go through the API.
 */
import type { Context } from "hono";
import { Hono } from "hono";
import { getConfig } from "../../core/config.ts";
import { discoveryUrls } from "../../core/discovery/operations.ts";
import { formatUsdc } from "../../core/money/usdc.ts";
import { paymentUrls } from "../../core/payments.ts";
import { findPaywall, findPaywallsPage, setPaywallEnabled } from "../../db/paywalls.ts";
import type { PaywallRow, ServiceRow } from "../../db/schema.ts";
import { findServicesPage } from "../../db/services.ts";
import type { DashboardEnv } from "../env.ts";
import { Layout, Notice } from "../layout.tsx";

type Ctx = Context<DashboardEnv>;

const SERVICES_PER_PAGE = 10;
/** Paywalls without a service shown here; more are listed by the API. */
const STANDALONE_LIMIT = 100;

const STYLE = `
ul.paywalls { list-style:none; margin:0; padding:0; }
ul.paywalls > li { border-top:1px solid var(--line); padding:.75rem 0; }
.paywall-head { display:flex; flex-wrap:wrap; align-items:center; gap:.4rem .6rem; margin-bottom:.4rem; }
.paywall-head form { margin:0 0 0 auto; }
.payurl { display:flex; flex-wrap:wrap; gap:.25rem .5rem; align-items:center; margin:.15rem 0 .4rem; }
.payurl .hint { min-width:2.5rem; }
.payurl code { flex:1 1 16rem; background:#f0f2f5; padding:.3rem .45rem; border-radius:6px; }
`;

const pageNumber = (value: string | undefined) => Math.max(1, Math.min(10_000, Number.parseInt(value ?? "1", 10) || 1));

function PaymentUrl({ paywall, kind, url }: { paywall: PaywallRow; kind: "x402" | "MPP"; url: string }) {
  const id = `url-${kind.toLowerCase()}-${paywall.id}`;
  return (
    <div class="payurl">
      <span class="hint">{kind}</span>
      <code id={id}>{url}</code>
      <button type="button" class="secondary" data-copy={`#${id}`} aria-label={`Copy the ${kind} payment URL of ${paywall.name}`}>
        Copy
      </button>
    </div>
  );
}

/** The paywalls as a list of entries (one card each): readable at 375 px without scrolling sideways. */
function PaywallList({ paywalls, base, page }: { paywalls: PaywallRow[]; base: string; page: number }) {
  if (paywalls.length === 0) return <p class="hint">No paywalls yet.</p>;
  return (
    <ul class="paywalls">
      {paywalls.map((p) => {
        const urls = paymentUrls(base, p.serviceId, p.slug, p.networks);
        return (
          <li id={`pw-${p.id}`}>
            <div class="paywall-head">
              <strong>{p.name}</strong> <code>{p.slug}</code>{" "}
              <span class={`status ${p.enabled ? "active" : "paused"}`}>{p.enabled ? "Enabled" : "Disabled"}</span>
              <form method="post" action={`/dashboard/services/paywalls/${encodeURIComponent(p.id)}/enabled`}>
                <input type="hidden" name="enabled" value={p.enabled ? "false" : "true"} />
                <input type="hidden" name="page" value={String(page)} />
                <button type="submit" class="secondary" aria-label={`${p.enabled ? "Disable" : "Enable"} paywall ${p.name}`}>
                  {p.enabled ? "Disable" : "Enable"}
                </button>
              </form>
            </div>
            <dl class="profile">
              <dt>Price</dt>
              <dd>{`${formatUsdc(p.price)} USDC`}</dd>
              <dt>Networks</dt>
              <dd>{p.networks.join(", ")}</dd>
              <dt>{p.targetType === "ROUTE" ? "Route" : "Upstream URL"}</dt>
              <dd>
                <code>{p.targetType === "ROUTE" ? p.targetRoute : p.targetUrl}</code>
              </dd>
              <dt>Payment URLs</dt>
              <dd>
                {urls.x402 || urls.mpp ? (
                  <>
                    {urls.x402 && <PaymentUrl paywall={p} kind="x402" url={urls.x402} />}
                    {urls.mpp && <PaymentUrl paywall={p} kind="MPP" url={urls.mpp} />}
                  </>
                ) : (
                  <span class="hint">None: a paywall without a service has no payment URL.</span>
                )}
              </dd>
            </dl>
          </li>
        );
      })}
    </ul>
  );
}

function ServiceCard({
  service,
  paywalls,
  base,
  page,
}: {
  service: ServiceRow;
  paywalls: PaywallRow[];
  base: string;
  page: number;
}) {
  return (
    <section aria-labelledby={`svc-${service.id}`}>
      <h2 id={`svc-${service.id}`}>{service.name}</h2>
      {service.description && <p>{service.description}</p>}
      <dl class="profile">
        <dt>Service id</dt>
        <dd>
          <code>{service.id}</code>
        </dd>
        <dt>Upstream</dt>
        <dd>
          <code>{service.baseUrl}</code>
        </dd>
        <dt>Mode</dt>
        <dd>{service.mode}</dd>
        <dt>Networks</dt>
        <dd>{service.networks.join(", ")}</dd>
        <dt>Discovery</dt>
        <dd>
          <a href={`/dashboard/services/${encodeURIComponent(service.id)}/discovery`}>What agents see</a>
          <span class="hint"> (document, llms.txt, diagnostics)</span>
          <div class="payurl">
            <span class="hint">OpenAPI</span>
            <code>{discoveryUrls(base, service).openapiUrl}</code>
          </div>
          <div class="payurl">
            <span class="hint">llms.txt</span>
            <code>{discoveryUrls(base, service).llmsTxtUrl}</code>
          </div>
        </dd>
      </dl>
      <h3>Paywalls</h3>
      <PaywallList paywalls={paywalls} base={base} page={page} />
    </section>
  );
}

/** The page; `notice` says what the last toggle did (or why it did nothing). */
async function renderServices(
  c: Ctx,
  page: number,
  notice?: { kind: "ok" | "error"; text: string },
  status: 200 | 404 | 400 = 200,
) {
  const tenant = c.var.session.tenant;
  const base = getConfig(c.env).paymentBaseUrl;
  const [services, standalone] = await Promise.all([
    findServicesPage(c.var.db, tenant.id, { limit: SERVICES_PER_PAGE, offset: (page - 1) * SERVICES_PER_PAGE }),
    findPaywallsPage(c.var.db, tenant.id, { limit: STANDALONE_LIMIT, offset: 0 }, { serviceId: null }),
  ]);
  const pages = Math.max(1, Math.ceil(services.total / SERVICES_PER_PAGE));
  return c.html(
    <Layout title="Services and paywalls" active="services" tenantName={tenant.name} scripts={["/dashboard/assets/copy.js"]}>
      <style nonce={c.var.cspNonce}>{STYLE}</style>
      {notice && <Notice kind={notice.kind}>{notice.text}</Notice>}
      <p>
        Your services and the paywalls that sell their routes. Buyers pay at the payment URLs. Create and change them through the
        API (<code>/v1/services</code>, <code>/v1/paywalls</code>); here you can turn a paywall on or off.
      </p>
      {services.total === 0 && standalone.total === 0 && (
        <section>
          <p>
            No services yet. Create one with <code>POST /v1/services</code>.
          </p>
        </section>
      )}
      {services.items.map(({ service, paywalls }) => (
        <ServiceCard service={service} paywalls={paywalls} base={base} page={page} />
      ))}
      {pages > 1 && (
        <nav aria-label="Service pages" class="actions">
          {page > 1 && <a href={`/dashboard/services?page=${page - 1}`}>Previous services</a>}
          <span class="hint">
            Page {page} of {pages} ({services.total} services)
          </span>
          {page < pages && <a href={`/dashboard/services?page=${page + 1}`}>More services</a>}
        </nav>
      )}
      {standalone.total > 0 && (
        <section aria-labelledby="standalone">
          <h2 id="standalone">Paywalls without a service</h2>
          <PaywallList paywalls={standalone.rows} base={base} page={page} />
          {standalone.total > STANDALONE_LIMIT && (
            <p class="hint">
              Showing {STANDALONE_LIMIT} of {standalone.total}; list the rest with <code>GET /v1/paywalls</code>.
            </p>
          )}
        </section>
      )}
    </Layout>,
    status,
  );
}

export const servicesPages = new Hono<DashboardEnv>();

servicesPages.get("/services", async (c) => {
  const page = pageNumber(c.req.query("page"));
  const updated = c.req.query("updated");
  if (!updated) return renderServices(c, page);
  const paywall = await findPaywall(c.var.db, updated);
  if (!paywall || paywall.tenantId !== c.var.session.tenant.id) return renderServices(c, page);
  const text = paywall.enabled
    ? `${paywall.name} is enabled: buyers can pay for it.`
    : `${paywall.name} is disabled: buyers cannot pay for it until you enable it.`;
  return renderServices(c, page, { kind: "ok", text });
});

servicesPages.post("/services/paywalls/:id/enabled", async (c) => {
  const body = await c.req.parseBody();
  const page = pageNumber(typeof body.page === "string" ? body.page : undefined);
  if (body.enabled !== "true" && body.enabled !== "false") {
    return renderServices(c, page, { kind: "error", text: "enabled must be true or false; nothing was changed." }, 400);
  }
  const id = c.req.param("id");
  const row = await setPaywallEnabled(c.var.db, c.var.session.tenant.id, id, body.enabled === "true", c.var.now);
  if (!row) {
    return renderServices(c, page, { kind: "error", text: "None of your paywalls has this id; nothing was changed." }, 404);
  }
  return c.redirect(
    `/dashboard/services?page=${page}&updated=${encodeURIComponent(row.id)}#pw-${encodeURIComponent(row.id)}`,
    303,
  );
});
