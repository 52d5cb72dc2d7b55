/**
 * Services and paywalls: the tenant's services with their paywalls (price in USDC, networks, enabled state, the
 * buyer-facing payment URLs with copy buttons) and the paywalls without a service; create, edit and delete both, and
 * enable or disable a paywall. Every change goes through the API's own rules (src/core/catalog/), with the version
 * the form was opened at as its If-Match, so an edit never overwrites a change made meanwhile. Deleting, and
 * disabling a paywall, ask for confirmation on a page of their own (no JavaScript needed).
 */
import type { Context } from "hono";
import { Hono } from "hono";
import type { Child } from "hono/jsx";
import {
  createPaywall,
  deletePaywall,
  enablePaywall,
  PaywallCreateSchema,
  PaywallUpdateSchema,
  updatePaywall,
} from "../../core/catalog/paywalls.ts";
import {
  type CatalogWriter,
  createService,
  deleteService,
  ServiceCreateSchema,
  ServiceUpdateSchema,
  updateService,
} from "../../core/catalog/services.ts";
import { getConfig, keyRing } from "../../core/config.ts";
import { credentialsOverHttp } from "../../core/discovery/diagnostics.ts";
import { discoveryUrls } from "../../core/discovery/operations.ts";
import { ApiError } from "../../core/http/errors.ts";
import { formatUsdcAmount } from "../../core/money/usdc.ts";
import { paymentUrls } from "../../core/payments.ts";
import type { Db } from "../../db/client.ts";
import { findPaywall, findPaywallsPage } from "../../db/paywalls.ts";
import type { PaywallRow, ServiceRow } from "../../db/schema.ts";
import { findService, findServicesPage, listServiceNames } from "../../db/services.ts";
import type { AssetId } from "../assets.ts";
import type { DashboardEnv } from "../env.ts";
import { FormToken, oneTimeForm } from "../form-token.tsx";
import { ErrorSummary, type FormErrors, readForm } from "../forms.tsx";
import { Layout, Notice } from "../layout.tsx";
import { clientIp } from "../session.ts";
import { PaywallFields } from "./catalog/paywall-fields.tsx";
import {
  emptyPaywall,
  PAYWALL_LABELS,
  type PaywallFormValues,
  paywallCreateFrom,
  paywallErrorsOf,
  paywallFieldId,
  paywallUpdateFrom,
  paywallValuesOf,
} from "./catalog/paywall-form.ts";
import { ServiceFields } from "./catalog/service-fields.tsx";
import {
  emptyService,
  SERVICE_LABELS,
  type ServiceFormValues,
  serviceCreateFrom,
  serviceErrorsOf,
  serviceFieldId,
  serviceUpdateFrom,
  serviceValuesOf,
} from "./catalog/service-form.ts";
import { McpServerConfig } from "./mcp-config.tsx";

type Ctx = Context<DashboardEnv>;

const SERVICES_PER_PAGE = 10;
/** Paywalls without a service shown here; more are listed by the API. */
const STANDALONE_LIMIT = 100;
/** Services offered in a paywall form's list. */
const SERVICE_CHOICES = 200;

const STYLE = `
ul.paywalls { list-style:none; margin:0; padding:0; }
ul.paywalls > li { border-top:1px solid var(--line); padding:.75rem 0; }
.paywall-head { display:flex; flex-wrap:wrap; align-items:center; gap:.4rem .6rem; margin-bottom:.4rem; }
.paywall-head .actions { margin-left:auto; }
.payurl { display:flex; flex-wrap:wrap; gap:.25rem .5rem; align-items:center; margin:.15rem 0 .4rem; }
.payurl .hint { min-width:2.5rem; }
.payurl code { flex:1 1 16rem; background:#f0f2f5; padding:.3rem .45rem; border-radius:6px; }
.service-head { display:flex; flex-wrap:wrap; align-items:center; gap:.5rem 1rem; }
.service-head h2 { margin:0; }
.service-head .actions { margin-left:auto; }
.network-modes { display:flex; flex-wrap:wrap; gap:0 2rem; }
.network-modes .hint { margin:.2rem 0 0; }
`;

const pageNumber = (value: string | undefined) => Math.max(1, Math.min(10_000, Number.parseInt(value ?? "1", 10) || 1));

/** The catalog's writer for the signed-in tenant (the same rules as the API's). */
const writerOf = (c: Ctx): CatalogWriter => ({
  db: c.var.db,
  ring: keyRing(c.env),
  config: getConfig(c.env),
  tenant: c.var.session.tenant,
  now: c.var.now,
  actor: "dashboard",
  ip: clientIp(c),
});

/** The version a form was opened at: its If-Match. */
const versionOf = (value: string) => (/^\d{1,9}$/.test(value) ? [Number(value)] : [-1]);

function PaymentUrl({ paywall, kind, url }: { paywall: PaywallRow; kind: "x402" | "MPP"; url: string }) {
  const id = `url-${kind.toLowerCase()}-${paywall.id}`;
  return (
    <div class="payurl">
      <span class="hint">{kind}</span>
      <code id={id}>{url}</code>
      <button
        type="button"
        class="secondary"
        data-copy={`#${id}`}
        data-copy-what={`the ${kind} payment URL of ${paywall.name}`}
        aria-label={`Copy the ${kind} payment URL of ${paywall.name}`}
        hidden
      >
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
        const id = encodeURIComponent(p.id);
        return (
          <li id={`pw-${p.id}`}>
            <div class="paywall-head">
              <strong>{p.name}</strong> <code>{p.slug}</code>{" "}
              <span class={`status ${p.enabled ? "active" : "paused"}`}>{p.enabled ? "Enabled" : "Disabled"}</span>
              <div class="actions">
                {p.enabled ? (
                  <a
                    class="button secondary"
                    href={`/dashboard/paywalls/${id}/disable?page=${page}`}
                    aria-label={`Disable paywall ${p.name}`}
                  >
                    Disable
                  </a>
                ) : (
                  <form method="post" action={`/dashboard/services/paywalls/${id}/enabled`}>
                    <input type="hidden" name="enabled" value="true" />
                    <input type="hidden" name="page" value={String(page)} />
                    <button type="submit" class="secondary" aria-label={`Enable paywall ${p.name}`}>
                      Enable
                    </button>
                  </form>
                )}
                <a class="button secondary" href={`/dashboard/paywalls/${id}/edit`} aria-label={`Edit paywall ${p.name}`}>
                  Edit
                </a>
                <a class="button danger" href={`/dashboard/paywalls/${id}/delete`} aria-label={`Delete paywall ${p.name}`}>
                  Delete
                </a>
              </div>
            </div>
            <dl class="profile">
              <dt>Price</dt>
              <dd>{`${formatUsdcAmount(p.price)} USDC`}</dd>
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
  const id = encodeURIComponent(service.id);
  const overHttp = credentialsOverHttp(service);
  return (
    <section aria-labelledby={`svc-${service.id}`} id={`service-${service.id}`}>
      <div class="service-head">
        <h2 id={`svc-${service.id}`}>{service.name}</h2>
        <div class="actions">
          <a class="button secondary" href={`/dashboard/services/${id}/edit`} aria-label={`Edit service ${service.name}`}>
            Edit
          </a>
          <a class="button danger" href={`/dashboard/services/${id}/delete`} aria-label={`Delete service ${service.name}`}>
            Delete
          </a>
        </div>
      </div>
      {service.description && <p>{service.description}</p>}
      <dl class="profile">
        <dt>Service id</dt>
        <dd>
          <code>{service.id}</code>
        </dd>
        <dt>Upstream</dt>
        <dd>
          <code>{service.baseUrl}</code>
          {overHttp && (
            <Notice kind="warning">
              {overHttp.message} <span class="hint">({overHttp.code})</span>
            </Notice>
          )}
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
          <McpServerConfig service={service} url={discoveryUrls(base, service).mcpUrl} />
        </dd>
      </dl>
      <h3>Paywalls</h3>
      <PaywallList paywalls={paywalls} base={base} page={page} />
      <p>
        <a href={`/dashboard/paywalls/new?service=${id}`}>
          New paywall<span class="sr-only"> in {service.name}</span>
        </a>
      </p>
    </section>
  );
}

/** What the last change did, from the redirect's query (`done`, and the id of what it changed). */
async function doneNotice(c: Ctx): Promise<string | undefined> {
  const done = c.req.query("done");
  const id = c.req.query("id") ?? c.req.query("updated");
  if (done === "service-deleted") return "The service and its paywalls are deleted.";
  if (done === "paywall-deleted") return "The paywall is deleted: its payment URLs answer 404.";
  if (!id) return undefined;
  if (done === "service-created" || done === "service-saved") {
    const s = await findService(c.var.db, id);
    if (!s || s.tenantId !== c.var.session.tenant.id) return undefined;
    return done === "service-created"
      ? `Service “${s.name}” is created. Add a paywall to sell its routes.`
      : `Service “${s.name}” is saved.`;
  }
  const p = await findPaywall(c.var.db, id);
  if (!p || p.tenantId !== c.var.session.tenant.id) return undefined;
  if (done === "paywall-created") return `Paywall “${p.name}” is created.`;
  if (done === "paywall-saved") return `Paywall “${p.name}” is saved.`;
  return p.enabled
    ? `${p.name} is enabled: buyers can pay for it.`
    : `${p.name} is disabled: buyers cannot pay for it until you enable it.`;
}

/** The tenant's services (a page of them, with their paywalls) and its paywalls without a service. */
async function loadServices(db: Db, tenantId: string, page: number) {
  const [services, standalone] = await Promise.all([
    findServicesPage(db, tenantId, { limit: SERVICES_PER_PAGE, offset: (page - 1) * SERVICES_PER_PAGE }),
    findPaywallsPage(db, tenantId, { limit: STANDALONE_LIMIT, offset: 0 }, { serviceId: null }),
  ]);
  return { page, services, standalone, pages: Math.max(1, Math.ceil(services.total / SERVICES_PER_PAGE)) };
}

type ServicesData = Awaited<ReturnType<typeof loadServices>>;

function ServicesView({
  data,
  base,
  notice,
  tenantName,
  nonce,
}: {
  data: ServicesData;
  base: string;
  notice?: { kind: "ok" | "error"; text: string } | undefined;
  tenantName: string;
  nonce: string;
}) {
  const { page, services, standalone, pages } = data;
  return (
    <Layout title="Services and paywalls" active="services" tenantName={tenantName} scripts={["copy"]}>
      <style nonce={nonce}>{STYLE}</style>
      {notice && <Notice kind={notice.kind}>{notice.text}</Notice>}
      <p>Your services and the paywalls that sell their routes. Buyers pay at the payment URLs.</p>
      <p class="page-actions">
        <a class="button" href="/dashboard/services/new">
          New service
        </a>
        <a class="button secondary" href="/dashboard/paywalls/new">
          New paywall
        </a>
      </p>
      {services.total === 0 && standalone.total === 0 && (
        <section>
          <p>No services yet: create one with New service, then add its paywalls.</p>
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
    </Layout>
  );
}

/** The page; `notice` says what the last change did (or why it did nothing). */
async function renderServices(
  c: Ctx,
  page: number,
  notice?: { kind: "ok" | "error"; text: string },
  status: 200 | 404 | 400 = 200,
) {
  const tenant = c.var.session.tenant;
  const data = await loadServices(c.var.db, tenant.id, page);
  const base = getConfig(c.env).paymentBaseUrl;
  return c.html(<ServicesView data={data} base={base} notice={notice} tenantName={tenant.name} nonce={c.var.cspNonce} />, status);
}

export const servicesPages = new Hono<DashboardEnv>();

servicesPages.get("/services", async (c) => {
  const text = await doneNotice(c);
  return renderServices(c, pageNumber(c.req.query("page")), text ? { kind: "ok", text } : undefined);
});

servicesPages.post("/services/paywalls/:id/enabled", async (c) => {
  const body = await c.req.parseBody();
  const page = pageNumber(typeof body.page === "string" ? body.page : undefined);
  if (body.enabled !== "true" && body.enabled !== "false") {
    return renderServices(c, page, { kind: "error", text: "enabled must be true or false; nothing was changed." }, 400);
  }
  const row = await enablePaywall(writerOf(c), c.req.param("id"), body.enabled === "true");
  if (!row) {
    return renderServices(c, page, { kind: "error", text: "None of your paywalls has this id; nothing was changed." }, 404);
  }
  return c.redirect(
    `/dashboard/services?page=${page}&updated=${encodeURIComponent(row.id)}#pw-${encodeURIComponent(row.id)}`,
    303,
  );
});

// ---------------------------------------------------------------------------------------------------------------
// Forms

/** A form page: its title, the error summary, the form, Cancel. */
function formPage(
  c: Ctx,
  o: {
    title: string;
    action: string;
    errors?: FormErrors | undefined;
    labels: Record<string, string>;
    ids: (field: string) => string;
    submit: string;
    version?: number | undefined;
    children: Child;
    status?: number | undefined;
    scripts?: AssetId[];
  },
) {
  return c.html(
    <Layout title={o.title} active="services" tenantName={c.var.session.tenant.name} scripts={o.scripts}>
      <style nonce={c.var.cspNonce}>{STYLE}</style>
      <ErrorSummary errors={o.errors} labels={o.labels} ids={o.ids} />
      <section>
        <form method="post" action={o.action} novalidate>
          <FormToken />
          {o.version !== undefined && <input type="hidden" name="version" value={String(o.version)} />}
          {o.children}
          <p class="actions">
            <button type="submit">{o.submit}</button>
            <a class="button secondary" href="/dashboard/services">
              Cancel
            </a>
          </p>
        </form>
      </section>
    </Layout>,
    (o.status ?? 200) as 200,
  );
}

const staleText = (what: string) =>
  `This ${what} was changed elsewhere since you opened this form, so nothing was saved. Open it again to see the current values, then make your change.`;

/** A refusal of a form: its field errors, or (a version conflict) a summary line. */
function refusal(err: unknown, errorsOf: (err: unknown) => FormErrors | undefined, what: string): FormErrors | undefined {
  if (err instanceof ApiError && err.code === "PRECONDITION_FAILED") return { fields: new Map(), general: [staleText(what)] };
  return errorsOf(err);
}

function serviceForm(c: Ctx, values: ServiceFormValues, opts: { errors?: FormErrors; service?: ServiceRow; status?: number }) {
  const editing = opts.service;
  return formPage(c, {
    title: editing ? `Edit service “${editing.name}”` : "New service",
    action: editing ? `/dashboard/services/${encodeURIComponent(editing.id)}/edit` : "/dashboard/services",
    errors: opts.errors,
    labels: SERVICE_LABELS,
    ids: (f) => (f === "networks" ? "svc-networks" : serviceFieldId(f)),
    submit: editing ? "Save service" : "Create service",
    version: editing?.version,
    status: opts.status,
    children: <ServiceFields values={values} errors={opts.errors} editing={!!editing} />,
    scripts: ["auth"],
  });
}

/** The signed-in tenant's service, or the refusal (`404` unknown, `403` another tenant's). */
async function ownService(c: Ctx): Promise<ServiceRow> {
  const s = await findService(c.var.db, c.req.param("id") ?? "");
  if (!s) throw new ApiError("NOT_FOUND", "There is no such service");
  if (s.tenantId !== c.var.session.tenant.id) throw new ApiError("FORBIDDEN", "This service belongs to another tenant");
  return s;
}

async function ownPaywall(c: Ctx): Promise<PaywallRow> {
  const p = await findPaywall(c.var.db, c.req.param("id") ?? "");
  if (!p) throw new ApiError("NOT_FOUND", "There is no such paywall");
  if (p.tenantId !== c.var.session.tenant.id) throw new ApiError("FORBIDDEN", "This paywall belongs to another tenant");
  return p;
}

servicesPages.get("/services/new", (c) => serviceForm(c, emptyService(), {}));

servicesPages.post("/services", oneTimeForm("/dashboard/services"), async (c) => {
  const { parsed, values } = serviceCreateFrom(await readForm(c.req), ServiceCreateSchema);
  if (parsed.errors) return serviceForm(c, values, { errors: parsed.errors, status: 400 });
  try {
    const row = await createService(writerOf(c), parsed.body);
    return c.redirect(`/dashboard/services?done=service-created&id=${encodeURIComponent(row.id)}#service-${row.id}`, 303);
  } catch (err) {
    const errors = refusal(err, serviceErrorsOf, "service");
    if (!errors) throw err;
    return serviceForm(c, values, { errors, status: (err as ApiError).status });
  }
});

servicesPages.get("/services/:id/edit", async (c) => {
  const service = await ownService(c);
  return serviceForm(c, serviceValuesOf(service), { service });
});

servicesPages.post("/services/:id/edit", async (c) => {
  const service = await ownService(c);
  const form = await readForm(c.req);
  const { parsed, values } = serviceUpdateFrom(form, ServiceUpdateSchema, service);
  if (parsed.errors) return serviceForm(c, values, { errors: parsed.errors, service, status: 400 });
  try {
    await updateService(writerOf(c), service.id, parsed.body, versionOf(form.one("version")));
  } catch (err) {
    const errors = refusal(err, serviceErrorsOf, "service");
    if (!errors) throw err;
    return serviceForm(c, values, { errors, service, status: (err as ApiError).status });
  }
  return c.redirect(`/dashboard/services?done=service-saved&id=${encodeURIComponent(service.id)}#service-${service.id}`, 303);
});

/** A destructive action's confirmation step: nothing changes until its button (named by the action) is pressed. */
function confirmPage(c: Ctx, o: { title: string; what: Child; action: string; button: string; version: number; extra?: Child }) {
  return c.html(
    <Layout title={o.title} active="services" tenantName={c.var.session.tenant.name}>
      <section class="confirm">
        <p>{o.what}</p>
        <form method="post" action={o.action} class="actions">
          <input type="hidden" name="version" value={String(o.version)} />
          {o.extra}
          <button type="submit" class="danger">
            {o.button}
          </button>
          <a class="button secondary" href="/dashboard/services">
            Cancel
          </a>
        </form>
      </section>
    </Layout>,
  );
}

servicesPages.get("/services/:id/delete", async (c) => {
  const s = await ownService(c);
  const found = await findPaywallsPage(c.var.db, s.tenantId, { limit: 1, offset: 0 }, { serviceId: s.id });
  return confirmPage(c, {
    title: `Delete service “${s.name}”?`,
    what: `The service and its ${found.total} ${found.total === 1 ? "paywall" : "paywalls"} are deleted: their payment URLs answer 404. Past transactions stay in Earnings. This cannot be undone.`,
    action: `/dashboard/services/${encodeURIComponent(s.id)}/delete`,
    button: `Delete service ${s.name}`,
    version: s.version,
  });
});

servicesPages.post("/services/:id/delete", async (c) => {
  const s = await ownService(c);
  const form = await readForm(c.req);
  try {
    await deleteService(writerOf(c), s.id, versionOf(form.one("version")));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const text = err.code === "PRECONDITION_FAILED" ? staleText("service") : err.message;
    return renderServices(c, 1, { kind: "error", text }, err.status === 404 ? 404 : 400);
  }
  return c.redirect("/dashboard/services?done=service-deleted", 303);
});

// ---- paywalls

async function paywallForm(
  c: Ctx,
  values: PaywallFormValues,
  opts: { errors?: FormErrors; paywall?: PaywallRow; status?: number },
  choices?: Awaited<ReturnType<typeof listServiceNames>>,
) {
  const editing = opts.paywall;
  const services = choices ?? (await listServiceNames(c.var.db, c.var.session.tenant.id, SERVICE_CHOICES));
  return formPage(c, {
    title: editing ? `Edit paywall “${editing.name}”` : "New paywall",
    action: editing ? `/dashboard/paywalls/${encodeURIComponent(editing.id)}/edit` : "/dashboard/paywalls",
    errors: opts.errors,
    labels: PAYWALL_LABELS,
    ids: (f) => (f === "networks" ? "pw-networks" : paywallFieldId(f)),
    submit: editing ? "Save paywall" : "Create paywall",
    version: editing?.version,
    scripts: editing ? undefined : ["paywall"],
    status: opts.status,
    children: <PaywallFields values={values} errors={opts.errors} services={services} editing={!!editing} />,
  });
}

servicesPages.get("/paywalls/new", async (c) => {
  const services = await listServiceNames(c.var.db, c.var.session.tenant.id, SERVICE_CHOICES);
  const chosen = services.find((s) => s.id === c.req.query("service"));
  return paywallForm(c, emptyPaywall(chosen), {}, services);
});

servicesPages.post("/paywalls", oneTimeForm("/dashboard/services"), async (c) => {
  const { parsed, values } = paywallCreateFrom(await readForm(c.req), PaywallCreateSchema);
  if (parsed.errors) return paywallForm(c, values, { errors: parsed.errors, status: 400 });
  try {
    const row = await createPaywall(writerOf(c), parsed.body);
    return c.redirect(`/dashboard/services?done=paywall-created&id=${encodeURIComponent(row.id)}#pw-${row.id}`, 303);
  } catch (err) {
    const errors = refusal(err, paywallErrorsOf, "paywall");
    if (!errors) throw err;
    return paywallForm(c, values, { errors, status: (err as ApiError).status });
  }
});

servicesPages.get("/paywalls/:id/edit", async (c) => {
  const paywall = await ownPaywall(c);
  return paywallForm(c, paywallValuesOf(paywall), { paywall });
});

servicesPages.post("/paywalls/:id/edit", async (c) => {
  const paywall = await ownPaywall(c);
  const form = await readForm(c.req);
  const { parsed, values } = paywallUpdateFrom(form, PaywallUpdateSchema, paywall);
  if (parsed.errors) return paywallForm(c, values, { errors: parsed.errors, paywall, status: 400 });
  try {
    await updatePaywall(writerOf(c), paywall.id, parsed.body, versionOf(form.one("version")));
  } catch (err) {
    const errors = refusal(err, paywallErrorsOf, "paywall");
    if (!errors) throw err;
    return paywallForm(c, values, { errors, paywall, status: (err as ApiError).status });
  }
  return c.redirect(`/dashboard/services?done=paywall-saved&id=${encodeURIComponent(paywall.id)}#pw-${paywall.id}`, 303);
});

servicesPages.get("/paywalls/:id/delete", async (c) => {
  const p = await ownPaywall(c);
  return confirmPage(c, {
    title: `Delete paywall “${p.name}”?`,
    what: "Its payment URLs answer 404 from now on. Past transactions stay in Earnings. This cannot be undone.",
    action: `/dashboard/paywalls/${encodeURIComponent(p.id)}/delete`,
    button: `Delete paywall ${p.name}`,
    version: p.version,
  });
});

servicesPages.post("/paywalls/:id/delete", async (c) => {
  const p = await ownPaywall(c);
  const form = await readForm(c.req);
  try {
    await deletePaywall(writerOf(c), p.id, versionOf(form.one("version")));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const text = err.code === "PRECONDITION_FAILED" ? staleText("paywall") : err.message;
    return renderServices(c, 1, { kind: "error", text }, err.status === 404 ? 404 : 400);
  }
  return c.redirect("/dashboard/services?done=paywall-deleted", 303);
});

servicesPages.get("/paywalls/:id/disable", async (c) => {
  const p = await ownPaywall(c);
  return confirmPage(c, {
    title: `Disable paywall “${p.name}”?`,
    what: "Buyers cannot pay for it until you enable it again; its payment URLs refuse new payments.",
    action: `/dashboard/services/paywalls/${encodeURIComponent(p.id)}/enabled`,
    button: `Disable paywall ${p.name}`,
    version: p.version,
    extra: (
      <>
        <input type="hidden" name="enabled" value="false" />
        <input type="hidden" name="page" value={String(pageNumber(c.req.query("page")))} />
      </>
    ),
  });
});
