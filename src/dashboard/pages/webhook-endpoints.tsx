/**
 * Webhooks: the tenant's endpoints and a form for a new one (its signing secret shown once, through a flash), and per
 * endpoint its delivery log with "Send test event", "Retry", "Enable"/"Disable" and "Delete endpoint" (after a
 * confirmation step). All through the shared rules of src/core/webhooks/endpoints.ts, as the API, limited to the
 * signed-in tenant: another tenant's endpoint answers 404, as an unknown one.
 */
import type { Context } from "hono";
import { Hono } from "hono";
import { ApiError } from "../../core/http/errors.ts";
import { parseInput } from "../../core/keys/management.ts";
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  MAX_WEBHOOK_ENDPOINTS_PER_TENANT,
  ownWebhookEndpoint,
  retryWebhookDelivery,
  sendTestEvent,
  updateWebhookEndpoint,
  type WebhookChangeBy,
  WebhookEndpointCreateSchema,
} from "../../core/webhooks/endpoints.ts";
import { WEBHOOK_EVENT_TYPES } from "../../core/webhooks/events.ts";
import type { WebhookDeliveryRow, WebhookEndpointRow } from "../../db/schema.ts";
import { findWebhookDeliveriesPage, findWebhookEndpointsPage } from "../../db/webhooks.ts";
import type { DashboardEnv } from "../env.ts";
import { putFlash, takeFlash } from "../flash.ts";
import { FormToken, oneTimeForm } from "../form-token.tsx";
import { formatDate } from "../format.ts";
import { Choices, ErrorSummary, Field, type FormErrors, formErrorsOf, readForm } from "../forms.tsx";
import { Layout, Notice, ScrollRegion } from "../layout.tsx";
import { clientIp } from "../session.ts";

type Ctx = Context<DashboardEnv>;

/** Changes made here are the dashboard's, from the signed-in browser's address. */
const byDashboard = (c: Ctx): WebhookChangeBy => ({ actor: "dashboard", ip: clientIp(c) });

/** Deliveries per page of the log. */
export const DELIVERIES_PER_PAGE = 50;

type DeliveriesPage = Awaited<ReturnType<typeof findWebhookDeliveriesPage>>;

const LABELS: Record<string, string> = { url: "URL", events: "Events", description: "Description" };

const DONE: Record<string, string> = {
  tested: "A test event is queued: it shows in the log below.",
  retried: "The delivery is queued again.",
  enabled: "The endpoint is enabled: events are sent to it.",
  disabled: "The endpoint is disabled: no events are sent to it until you enable it.",
  deleted: "The endpoint is deleted with its delivery log.",
};

interface FormValues {
  url?: string;
  events?: string[];
  description?: string;
}

interface ShownSecret {
  url: string;
  secret: string;
}

const endpointErrors = (err: unknown): FormErrors | undefined =>
  formErrorsOf(err, (path) => {
    const field = path.split(".")[0] ?? "";
    return field in LABELS ? field : null;
  });

function EndpointState({ e }: { e: WebhookEndpointRow }) {
  return e.enabled ? (
    <span class="status active">enabled</span>
  ) : (
    <span class="status paused">{e.disabledReason ? `disabled: ${e.disabledReason}` : "disabled"}</span>
  );
}

/** An endpoint the platform disabled after failing every attempt (the tenant's own _Disable_ leaves no reason). */
function DisabledNotice({ e, link }: { e: WebhookEndpointRow; link: boolean }) {
  if (e.enabled || !e.disabledReason) return null;
  return (
    <Notice kind="error">
      {link ? <a href={`/dashboard/webhooks/${e.id}`}>{e.url}</a> : e.url} was disabled after {e.disabledReason}: no events are
      sent to it. Fix the endpoint, then enable it again.
    </Notice>
  );
}

/** A new endpoint's signing secret, shown once. */
function ShownSecretNotice({ shown }: { shown: ShownSecret }) {
  return (
    <Notice kind="warning">
      <p>
        <strong>Copy the signing secret now.</strong> It is shown only this once; verify deliveries to {shown.url} with it:
      </p>
      <div class="secret">
        <code id="new-secret">{shown.secret}</code>
        <button type="button" data-copy="#new-secret" data-copy-what="the signing secret" hidden>
          Copy secret
        </button>
      </div>
    </Notice>
  );
}

/** The form of a new endpoint, with the values typed and their errors when it was refused. */
function NewEndpointForm({ errors, values }: { errors?: FormErrors | undefined; values: FormValues }) {
  return (
    <section aria-labelledby="create-heading">
      <h2 id="create-heading">New endpoint</h2>
      <ErrorSummary errors={errors} labels={LABELS} ids={(f) => `new-${f}`} />
      <form method="post" action="/dashboard/webhooks" novalidate>
        <FormToken />
        <Field errors={errors} name="url" id="new-url" label="URL" hint="A public http(s) URL; redirects are not followed.">
          {(a) => <input {...a} id="new-url" type="url" name="url" required value={values.url ?? ""} />}
        </Field>
        <Choices
          type="checkbox"
          errors={errors}
          name="events"
          id="new-events"
          boxIds="new-event"
          legend="Events"
          options={WEBHOOK_EVENT_TYPES.map((type) => [type, <code>{type}</code>] as const)}
          checked={values.events ?? [...WEBHOOK_EVENT_TYPES]}
        />
        <Field errors={errors} name="description" id="new-description" label="Description" hint="Optional.">
          {(a) => (
            <input {...a} id="new-description" type="text" name="description" maxlength={500} value={values.description ?? ""} />
          )}
        </Field>
        <p>
          <button type="submit">Create endpoint</button>
        </p>
      </form>
    </section>
  );
}

function EndpointRow({ e }: { e: WebhookEndpointRow }) {
  return (
    <tr>
      <td data-label="URL">
        <span>
          <a href={`/dashboard/webhooks/${e.id}`}>{e.url}</a>
          {e.description && <span class="hint"> {e.description}</span>}
        </span>
      </td>
      <td data-label="Events">{e.events.join(", ")}</td>
      <td data-label="State">
        <EndpointState e={e} />
      </td>
      <td data-label="Failures in a row">{e.consecutiveFailures}</td>
      <td data-label="Created">{formatDate(e.createdAt)}</td>
    </tr>
  );
}

/** The tenant's endpoints, each linked to its page. */
function EndpointList({ rows, total }: { rows: WebhookEndpointRow[]; total: number }) {
  return (
    <section aria-labelledby="endpoints-heading">
      <h2 id="endpoints-heading">
        Your endpoints{" "}
        <span class="hint">
          ({total} of {MAX_WEBHOOK_ENDPOINTS_PER_TENANT})
        </span>
      </h2>
      {rows.length === 0 ? (
        <p>No endpoints yet. Add one above.</p>
      ) : (
        <div class="table-wrap">
          <table class="cards">
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">State</th>
                <th scope="col">Failures in a row</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <EndpointRow e={e} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

async function listPage(c: Ctx, extra: { shown?: ShownSecret; gone?: boolean; errors?: FormErrors; values?: FormValues }) {
  const tenant = c.var.session.tenant;
  const { rows, total } = await findWebhookEndpointsPage(c.var.db, tenant.id, {
    limit: MAX_WEBHOOK_ENDPOINTS_PER_TENANT,
    offset: 0,
  });
  const values = extra.values ?? {};
  const done = c.req.query("done");
  return (
    <Layout title="Webhooks" active="webhooks" tenantName={tenant.name} scripts={["copy"]}>
      {done && DONE[done] && <Notice kind="ok">{DONE[done]}</Notice>}
      {rows.map((e) => (
        <DisabledNotice e={e} link />
      ))}
      {extra.shown && <ShownSecretNotice shown={extra.shown} />}
      {extra.gone && (
        <Notice kind="ok">The signing secret was shown once and is not shown again (nothing was created by reloading).</Notice>
      )}
      <NewEndpointForm errors={extra.errors} values={values} />
      <EndpointList rows={rows} total={total} />
    </Layout>
  );
}

export const webhookPages = new Hono<DashboardEnv>();

webhookPages.get("/webhooks", async (c) => {
  const shownId = c.req.query("shown");
  const shown = await takeFlash<ShownSecret>(c, shownId);
  return c.html(await listPage(c, { shown, gone: !!shownId && !shown }));
});

webhookPages.post("/webhooks", oneTimeForm("/dashboard/webhooks"), async (c) => {
  const form = await readForm(c.req);
  const values: FormValues = { url: form.one("url"), events: form.many("events"), description: form.one("description") };
  let created: Awaited<ReturnType<typeof createWebhookEndpoint>>;
  try {
    const body = parseInput(WebhookEndpointCreateSchema, {
      url: values.url,
      events: values.events,
      ...(values.description ? { description: values.description } : {}),
    });
    created = await createWebhookEndpoint(c.var.db, c.env, c.var.session.tenant.id, body, c.var.now, byDashboard(c));
  } catch (err) {
    const errors = endpointErrors(err);
    if (!errors) throw err;
    return c.html(await listPage(c, { errors, values }), (err as ApiError).status as 400);
  }
  // Post/Redirect/Get: the secret goes to the next page through a flash, shown once.
  const id = await putFlash(c, { url: created.row.url, secret: created.secret } satisfies ShownSecret);
  return c.redirect(`/dashboard/webhooks?shown=${id}`, 303);
});

/** The signed-in tenant's endpoint; another tenant's is `404`, as an unknown one. */
const ownEndpoint = (c: Ctx) => ownWebhookEndpoint(c.var.db, c.var.session.tenant.id, c.req.param("id") ?? "");

function DeliveryRow({ d, base }: { d: WebhookDeliveryRow; base: string }) {
  return (
    <tr>
      <td data-label="Event">
        <span>
          <code>{d.eventType}</code> <code class="hint">{d.id}</code>
        </span>
      </td>
      <td data-label="Status">
        <span>
          <span class={`status ${d.status}`}>{d.status}</span>
          {d.error && <span class="hint"> {d.error}</span>}
        </span>
      </td>
      <td data-label="Attempts">{d.attempts}</td>
      <td data-label="Latency">{d.latencyMs === null ? "—" : `${d.latencyMs} ms`}</td>
      <td data-label="Response">{d.responseStatus ?? "—"}</td>
      <td data-label="Next retry">{(d.status === "pending" && formatDate(d.nextAttemptAt)) || "—"}</td>
      <td data-label="Created">{formatDate(d.createdAt)}</td>
      <td data-label="Actions">
        {d.status === "failed" && (
          <form method="post" action={`${base}/deliveries/${d.id}/retry`}>
            <button type="submit" class="secondary">
              Retry<span class="sr-only"> delivery {d.id}</span>
            </button>
          </form>
        )}
      </td>
    </tr>
  );
}

/** The endpoint's deliveries, newest first, a page at a time. */
function DeliveryLog({ log, page, base }: { log: DeliveriesPage; page: number; base: string }) {
  return (
    <section aria-labelledby="log-heading">
      <h2 id="log-heading">
        Delivery log <span class="hint">({log.total}, newest first)</span>
      </h2>
      {log.rows.length === 0 ? (
        <p>No deliveries yet.</p>
      ) : (
        <ScrollRegion label="Delivery log, table">
          <table class="cards deliveries">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Latency</th>
                <th scope="col">Response</th>
                <th scope="col">Next retry</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {log.rows.map(({ row: d }) => (
                <DeliveryRow d={d} base={base} />
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
      <nav aria-label="Delivery pages" class="pager">
        {page > 1 && <a href={`${base}?page=${page - 1}`}>Newer</a>}
        {page * DELIVERIES_PER_PAGE < log.total && <a href={`${base}?page=${page + 1}`}>Older</a>}
      </nav>
    </section>
  );
}

/** Send a test event, enable or disable, delete (after a confirmation step). */
function EndpointActions({ endpoint, base }: { endpoint: WebhookEndpointRow; base: string }) {
  return (
    <div class="actions">
      <form method="post" action={`${base}/test`}>
        <button type="submit">Send test event</button>
      </form>
      <form method="post" action={`${base}/${endpoint.enabled ? "disable" : "enable"}`}>
        <button type="submit" class="secondary">
          {endpoint.enabled ? "Disable" : "Enable"}
          <span class="sr-only"> endpoint {endpoint.url}</span>
        </button>
      </form>
      <a class="button danger" href={`${base}/delete`}>
        Delete<span class="sr-only"> endpoint {endpoint.url}</span>
      </a>
    </div>
  );
}

async function endpointPage(c: Ctx, endpoint: WebhookEndpointRow, error?: string) {
  const page = Math.max(1, Number.parseInt(c.req.query("page") ?? "1", 10) || 1);
  const log = await findWebhookDeliveriesPage(c.var.db, endpoint.id, {
    limit: DELIVERIES_PER_PAGE,
    offset: (page - 1) * DELIVERIES_PER_PAGE,
  });
  const done = c.req.query("done");
  const base = `/dashboard/webhooks/${endpoint.id}`;
  return (
    <Layout title={`Webhook endpoint ${endpoint.url}`} active="webhooks" tenantName={c.var.session.tenant.name}>
      {error && <Notice kind="error">{error}</Notice>}
      {done && DONE[done] && <Notice kind="ok">{DONE[done]}</Notice>}
      <DisabledNotice e={endpoint} link={false} />
      <p>
        <a href="/dashboard/webhooks">All endpoints</a>
      </p>
      <p>
        Events: {endpoint.events.join(", ")}. State: <EndpointState e={endpoint} />. Failures in a row:{" "}
        {endpoint.consecutiveFailures}. Created {formatDate(endpoint.createdAt)}.
      </p>
      <EndpointActions endpoint={endpoint} base={base} />
      <DeliveryLog log={log} page={page} base={base} />
    </Layout>
  );
}

/** Runs an action; a refusal of the shared rules is shown on the endpoint's page with its status. */
async function act(c: Ctx, endpoint: WebhookEndpointRow, run: () => Promise<unknown>, done: string) {
  try {
    await run();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return c.html(await endpointPage(c, endpoint, `${err.message} (${err.code}).`), err.status as 400);
  }
  return c.redirect(`/dashboard/webhooks/${endpoint.id}?done=${done}`, 303);
}

webhookPages.get("/webhooks/:id", async (c) => c.html(await endpointPage(c, await ownEndpoint(c))));

webhookPages.post("/webhooks/:id/test", async (c) => {
  const endpoint = await ownEndpoint(c);
  return act(c, endpoint, () => sendTestEvent(c.var.db, c.env, c.executionCtx, endpoint, c.var.now, "dashboard"), "tested");
});

webhookPages.post("/webhooks/:id/deliveries/:deliveryId/retry", async (c) => {
  const endpoint = await ownEndpoint(c);
  return act(
    c,
    endpoint,
    () => retryWebhookDelivery(c.var.db, c.env, c.executionCtx, endpoint, c.req.param("deliveryId"), c.var.now),
    "retried",
  );
});

webhookPages.post("/webhooks/:id/:action{enable|disable}", async (c) => {
  const endpoint = await ownEndpoint(c);
  const enabled = c.req.param("action") === "enable";
  return act(
    c,
    endpoint,
    () => updateWebhookEndpoint(c.var.db, c.env, endpoint, { enabled }, c.var.now, byDashboard(c)),
    enabled ? "enabled" : "disabled",
  );
});

/** The confirmation step (works without JavaScript): nothing changes until its button is pressed. */
webhookPages.get("/webhooks/:id/delete", async (c) => {
  const endpoint = await ownEndpoint(c);
  return c.html(
    <Layout title={`Delete webhook endpoint ${endpoint.url}?`} active="webhooks" tenantName={c.var.session.tenant.name}>
      <section class="confirm">
        <p>The endpoint and its delivery log are deleted; queued deliveries are dropped. This cannot be undone.</p>
        <form method="post" action={`/dashboard/webhooks/${endpoint.id}/delete`} class="actions">
          <button type="submit" class="danger">{`Delete endpoint ${endpoint.url}`}</button>
          <a class="button secondary" href={`/dashboard/webhooks/${endpoint.id}`}>
            Cancel
          </a>
        </form>
      </section>
    </Layout>,
  );
});

webhookPages.post("/webhooks/:id/delete", async (c) => {
  const endpoint = await ownEndpoint(c);
  await deleteWebhookEndpoint(c.var.db, endpoint, c.var.now, byDashboard(c));
  return c.redirect("/dashboard/webhooks?done=deleted", 303);
});
