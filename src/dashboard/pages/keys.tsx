/**
 * API keys: the table (effective status, prefix, permissions, dates, allowlist), the create form, and the
 * actions (pause, resume, edit, revoke, delete), all through the shared key-management module, limited to the
 * signed-in tenant. The raw key is shown once, in the answer to the create form.
 */
import type { Context } from "hono";
import { Hono } from "hono";
import { ApiError } from "../../core/http/errors.ts";
import { effectiveKeyStatus } from "../../core/keys/api-key.ts";
import { workerKeyStore } from "../../core/keys/key-object.ts";
import {
  type Actor,
  type CreatedKeyOutput,
  createKey,
  editKey,
  MAX_ACTIVE_KEYS_PER_TENANT,
  pauseKey,
  removeKey,
  resumeKey,
  revokeKey,
} from "../../core/keys/management.ts";
import { SCOPES } from "../../core/keys/scopes.ts";
import { findKeyById, listKeysOfTenant } from "../../db/api-keys.ts";
import type { ApiKeyRow } from "../../db/schema.ts";
import type { DashboardEnv } from "../env.ts";
import { expiryFromForm, formatDate, toDateTimeLocal } from "../format.ts";
import { Layout, Notice } from "../layout.tsx";

type Ctx = Context<DashboardEnv>;

const actor = (c: Ctx): Actor => ({ actor: "dashboard", ip: c.req.header("cf-connecting-ip") ?? null });

const DONE: Record<string, string> = {
  paused: "The key is paused: requests with it get 401 KEY_INACTIVE until you resume it.",
  resumed: "The key is active again.",
  edited: "The key is saved. The change applies from the next request.",
  revoked: "The key is revoked: requests with it get 401 KEY_REVOKED. This cannot be undone.",
  deleted: "The key is deleted: requests with it get 401 INVALID_API_KEY.",
};

/** The permissions a key's scopes grant: a write scope includes its read scope. */
const describeScopes = (scopes: string[]) =>
  scopes.map((s) => (s.endsWith(":write") ? `${s} (+ ${s.replace(/:write$/, ":read")})` : s)).join(", ");

/** Form values in the shapes the key rules take: one or many checkboxes, a textarea of IPs/CIDRs. */
async function readKeyForm(c: Ctx) {
  const body = await c.req.parseBody({ all: true });
  const text = (name: string) => {
    const v = body[name];
    return typeof v === "string" ? v : "";
  };
  const scopes = ([] as unknown[]).concat(body.scopes ?? []).filter((s): s is string => typeof s === "string");
  return { name: text("name"), scopes, expiresAt: expiryFromForm(text("expiresAt")), allowIps: text("allowIps") };
}

function errorText(err: unknown): string | null {
  if (!(err instanceof ApiError)) return null;
  if (err.code === "VALIDATION_ERROR" && Array.isArray(err.details)) {
    return (err.details as { path: string; message: string }[])
      .map((d) => (d.path ? `${d.path}: ${d.message}` : d.message))
      .join("; ");
  }
  return err.code === "KEY_LIMIT_REACHED"
    ? `KEY_LIMIT_REACHED: you already hold ${MAX_ACTIVE_KEYS_PER_TENANT} active keys (paused keys count). Revoke or delete one first.`
    : `${err.code}: ${err.message}`;
}

interface FormValues {
  name?: string;
  scopes?: string[];
  expiresAt?: string;
  allowIps?: string;
}

function ScopeBoxes({ idPrefix, checked }: { idPrefix: string; checked: string[] }) {
  return (
    <fieldset>
      <legend>Permissions</legend>
      {SCOPES.map((scope) => {
        const id = `${idPrefix}-${scope.replace(":", "-")}`;
        return (
          <label for={id}>
            <input id={id} type="checkbox" name="scopes" value={scope} checked={checked.includes(scope)} />
            <span>
              <code>{scope}</code>
              {scope.endsWith(":write") && <span class="hint"> includes {scope.replace(/:write$/, ":read")}</span>}
            </span>
          </label>
        );
      })}
    </fieldset>
  );
}

function KeyFields({ idPrefix, values }: { idPrefix: string; values: FormValues }) {
  return (
    <>
      <label for={`${idPrefix}-name`}>Name</label>
      <input id={`${idPrefix}-name`} type="text" name="name" required maxlength={100} value={values.name ?? ""} />
      <ScopeBoxes idPrefix={idPrefix} checked={values.scopes ?? []} />
      <label for={`${idPrefix}-expires`}>
        Expires at <span class="hint">(optional, UTC)</span>
      </label>
      <input id={`${idPrefix}-expires`} type="datetime-local" name="expiresAt" value={values.expiresAt ?? ""} />
      <label for={`${idPrefix}-ips`}>
        IP allowlist{" "}
        <span class="hint">
          (optional: IP addresses or CIDR blocks, one per line or comma-separated; empty allows any address)
        </span>
      </label>
      <textarea id={`${idPrefix}-ips`} name="allowIps">
        {values.allowIps ?? ""}
      </textarea>
    </>
  );
}

function KeyRow({ k, now }: { k: ApiKeyRow; now: Date }) {
  const status = effectiveKeyStatus(k, now);
  const label = (action: string) => (
    <>
      {action}
      <span class="sr-only"> key {k.name}</span>
    </>
  );
  const action = (path: string, text: string, kind = "secondary") => (
    <form method="post" action={`/dashboard/keys/${k.id}/${path}`}>
      <button type="submit" class={kind}>
        {label(text)}
      </button>
    </form>
  );
  return (
    <tr>
      <td data-label="Name">{k.name}</td>
      <td data-label="Status">
        <span class={`status ${status}`}>{status}</span>
      </td>
      <td data-label="Prefix">
        <code>{k.keyPrefix}…</code>
      </td>
      <td data-label="Permissions">{describeScopes(k.scopes)}</td>
      <td data-label="Created">{formatDate(k.createdAt)}</td>
      <td data-label="Last used">{formatDate(k.lastUsedAt) ?? "never"}</td>
      <td data-label="Expires">{formatDate(k.expiresAt) ?? "never"}</td>
      <td data-label="IP allowlist">{k.allowedIps.length === 0 ? "any address" : k.allowedIps.join(", ")}</td>
      <td data-label="Actions">
        <div class="actions">
          {k.status === "active" && action("pause", "Pause")}
          {k.status === "paused" && action("resume", "Resume")}
          {k.status !== "revoked" && (
            <a class="button secondary" href={`/dashboard/keys/${k.id}/edit`}>
              {label("Edit")}
            </a>
          )}
          {k.status !== "revoked" && action("revoke", "Revoke", "danger")}
          {action("delete", "Delete", "danger")}
        </div>
      </td>
    </tr>
  );
}

async function keysPage(
  c: Ctx,
  extra: { created?: CreatedKeyOutput; error?: string | null; values?: FormValues; done?: string },
) {
  const keys = await listKeysOfTenant(c.var.db, c.var.session.tenant.id);
  const now = c.var.now;
  const active = keys.filter((k) => k.status !== "revoked" && !(k.expiresAt && k.expiresAt <= now)).length;
  return (
    <Layout title="API keys" active="keys" tenantName={c.var.session.tenant.name} scripts={["/dashboard/assets/copy.js"]}>
      {extra.error && <Notice kind="error">{extra.error}</Notice>}
      {extra.done && DONE[extra.done] && <Notice kind="ok">{DONE[extra.done]}</Notice>}
      {extra.created && (
        <Notice kind="warning">
          <p>
            <strong>Copy your new key now.</strong> It is shown only this once and cannot be recovered; store it in a secret
            manager. Key “{extra.created.name}”:
          </p>
          <div class="secret">
            <code id="new-key">{extra.created.key}</code>
            <button type="button" data-copy="#new-key">
              Copy key
            </button>
          </div>
          <p class="hint">
            Try it: <code>curl -H "Authorization: Bearer $KEY" {new URL(c.req.url).origin}/v1/me</code>
          </p>
        </Notice>
      )}
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">
          Your keys{" "}
          <span class="hint">
            ({active} of {MAX_ACTIVE_KEYS_PER_TENANT} active; paused keys count)
          </span>
        </h2>
        {keys.length === 0 ? (
          <p>No keys yet. Create one below.</p>
        ) : (
          <div class="table-wrap">
            <table class="cards">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Permissions</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col">IP allowlist</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {keys.map((k) => (
                  <KeyRow k={k} now={now} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section aria-labelledby="create-heading">
        <h2 id="create-heading">Create a key</h2>
        <form method="post" action="/dashboard/keys">
          <KeyFields idPrefix="new" values={extra.created ? {} : (extra.values ?? {})} />
          <p>
            <button type="submit">Create key</button>
          </p>
        </form>
      </section>
    </Layout>
  );
}

export const keyPages = new Hono<DashboardEnv>();

keyPages.get("/keys", async (c) => c.html(await keysPage(c, { done: c.req.query("done") })));

keyPages.post("/keys", async (c) => {
  const form = await readKeyForm(c);
  try {
    const created = await createKey(c.var.db, { tenant: c.var.session.tenant.id, ...form }, c.var.now, actor(c));
    return c.html(await keysPage(c, { created }), 201);
  } catch (err) {
    const error = errorText(err);
    if (!error) throw err;
    const values = { ...form, expiresAt: form.expiresAt ? toDateTimeLocal(form.expiresAt) : "" };
    return c.html(await keysPage(c, { error, values }), (err as ApiError).status as 400);
  }
});

const ACTIONS = {
  pause: { run: pauseKey, done: "paused" },
  resume: { run: resumeKey, done: "resumed" },
  revoke: { run: revokeKey, done: "revoked" },
  delete: { run: removeKey, done: "deleted" },
} as const;

keyPages.post("/keys/:id/:action{pause|resume|revoke|delete}", async (c) => {
  const { run, done } = ACTIONS[c.req.param("action") as keyof typeof ACTIONS];
  try {
    await run(workerKeyStore(c.var.db, c.env), { id: c.req.param("id"), tenant: c.var.session.tenant.id }, c.var.now, actor(c));
  } catch (err) {
    const error = errorText(err);
    if (!error) throw err;
    return c.html(await keysPage(c, { error }), (err as ApiError).status as 400);
  }
  return c.redirect(`/dashboard/keys?done=${done}`, 303);
});

async function editPage(c: Ctx, k: ApiKeyRow, values: FormValues, error?: string | null) {
  return (
    <Layout title={`Edit key “${k.name}”`} active="keys" tenantName={c.var.session.tenant.name}>
      {error && <Notice kind="error">{error}</Notice>}
      <section>
        <p>
          Key <code>{k.keyPrefix}…</code>. Changes apply from the next request made with it.
        </p>
        <form method="post" action={`/dashboard/keys/${k.id}/edit`}>
          <KeyFields idPrefix="edit" values={values} />
          <p class="actions">
            <button type="submit">Save key</button>
            <a class="button secondary" href="/dashboard/keys">
              Cancel
            </a>
          </p>
        </form>
      </section>
    </Layout>
  );
}

/** The signed-in tenant's key, or the refusal (`404` unknown, `403` another tenant's). */
async function ownKey(c: Ctx): Promise<ApiKeyRow> {
  const k = await findKeyById(c.var.db, c.req.param("id") ?? "");
  if (!k) throw new ApiError("NOT_FOUND", "There is no such API key");
  if (k.tenantId !== c.var.session.tenant.id) throw new ApiError("FORBIDDEN", "This API key belongs to another tenant");
  return k;
}

keyPages.get("/keys/:id/edit", async (c) => {
  const k = await ownKey(c);
  return c.html(
    await editPage(c, k, {
      name: k.name,
      scopes: k.scopes,
      expiresAt: toDateTimeLocal(k.expiresAt),
      allowIps: k.allowedIps.join("\n"),
    }),
  );
});

keyPages.post("/keys/:id/edit", async (c) => {
  const k = await ownKey(c);
  const form = await readKeyForm(c);
  try {
    await editKey(workerKeyStore(c.var.db, c.env), { id: k.id, tenant: c.var.session.tenant.id, ...form }, c.var.now, actor(c));
  } catch (err) {
    const error = errorText(err);
    if (!error) throw err;
    const values = { ...form, expiresAt: form.expiresAt ? toDateTimeLocal(form.expiresAt) : "" };
    return c.html(await editPage(c, k, values, error), (err as ApiError).status as 400);
  }
  return c.redirect("/dashboard/keys?done=edited", 303);
});
