/**
 * API keys: the create form (permission presets or single scopes, expiry, IP allowlist), the table (effective status,
 * prefix, permissions, dates, allowlist) and the actions: pause and resume at once; edit, roll (a new key now, the old
 * one expiring after a grace period), revoke and delete after a confirmation step that works without JavaScript. All
 * through the shared key-management module, limited to the signed-in tenant.
 *
 * Post/Redirect/Get everywhere: a new raw key is handed to the next page through a flash (flash.ts) and shown once, so
 * a reload or Back never creates a second key.
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
  rollKey,
} from "../../core/keys/management.ts";
import { SCOPES } from "../../core/keys/scopes.ts";
import { findKeyById, listKeysOfTenant } from "../../db/api-keys.ts";
import type { ApiKeyRow } from "../../db/schema.ts";
import type { DashboardEnv } from "../env.ts";
import { putFlash, takeFlash } from "../flash.ts";
import { FormToken, oneTimeForm } from "../form-token.tsx";
import { expiryFromForm, formatDate, toDateTimeLocal } from "../format.ts";
import { boxAttrs, ErrorSummary, Field, FieldGroup, type FormErrors, formErrorsOf, hasErrors, readForm } from "../forms.tsx";
import { Layout, Notice } from "../layout.tsx";
import { clientIp } from "../session.ts";

type Ctx = Context<DashboardEnv>;

const actor = (c: Ctx): Actor => ({ actor: "dashboard", ip: clientIp(c) });

const DONE: Record<string, string> = {
  paused: "The key is paused: requests with it get 401 KEY_INACTIVE until you resume it.",
  resumed: "The key is active again.",
  edited: "The key is saved. The change applies from the next request.",
  revoked: "The key is revoked: requests with it get 401 KEY_REVOKED. This cannot be undone.",
  deleted: "The key is deleted: requests with it get 401 INVALID_API_KEY.",
};

/** Permission presets: every read scope, or every scope; `custom` takes the boxes ticked. */
export const PRESETS = {
  "read-only": SCOPES.filter((s) => s.endsWith(":read")),
  full: [...SCOPES],
} as const;
type Preset = keyof typeof PRESETS | "custom";

/** Grace periods offered when rolling a key, in seconds. */
export const GRACE_PERIODS: { seconds: number; label: string }[] = [
  { seconds: 0, label: "None: the old key stops now" },
  { seconds: 60 * 60, label: "1 hour" },
  { seconds: 24 * 60 * 60, label: "24 hours" },
  { seconds: 3 * 24 * 60 * 60, label: "3 days" },
  { seconds: 7 * 24 * 60 * 60, label: "7 days" },
];

/** The permissions a key's scopes grant: a write scope includes its read scope (said once, when not listed itself). */
const describeScopes = (scopes: string[]) =>
  scopes
    .map((s) => {
      const read = s.replace(/:write$/, ":read");
      return s.endsWith(":write") && !scopes.includes(read) ? `${s} (+ ${read})` : s;
    })
    .join(", ");

/** What the create form starts with: the least a new key usually needs. */
const NEW_KEY_DEFAULTS: FormValues = { preset: "read-only" };

interface FormValues {
  name?: string;
  preset?: Preset;
  scopes?: string[];
  expiresAt?: string;
  allowIps?: string;
}

/** Form values in the shapes the key rules take (a preset stands for its scopes), and as typed (to show them again). */
async function readKeyForm(c: Ctx) {
  const form = await readForm(c.req);
  const preset = (["read-only", "full"].includes(form.one("preset")) ? form.one("preset") : "custom") as Preset;
  const scopes = preset === "custom" ? form.many("scopes") : [...PRESETS[preset]];
  const values: FormValues = {
    name: form.one("name"),
    preset,
    scopes: form.many("scopes"),
    expiresAt: form.one("expiresAt"),
    allowIps: form.one("allowIps"),
  };
  return {
    input: { name: form.one("name"), scopes, expiresAt: expiryFromForm(form.one("expiresAt")), allowIps: form.one("allowIps") },
    values,
  };
}

const LABELS: Record<string, string> = {
  name: "Name",
  scopes: "Permissions",
  expiresAt: "Expires at",
  allowIps: "IP allowlist",
};

const keyErrors = (err: unknown): FormErrors | undefined =>
  formErrorsOf(err, (path) => {
    const field = path.split(".")[0] ?? "";
    return field in LABELS ? field : null;
  });

/** Why a key action was refused, in words (the code stays visible for support). */
function refusalText(err: unknown): string | null {
  if (!(err instanceof ApiError)) return null;
  return err.code === "KEY_LIMIT_REACHED"
    ? `You already hold ${MAX_ACTIVE_KEYS_PER_TENANT} active keys (paused keys count): revoke or delete one first (KEY_LIMIT_REACHED).`
    : `${err.message} (${err.code}).`;
}

/** One box per permission; a write permission says which read permission it includes. */
function ScopeBoxes({ idPrefix, values, a }: { idPrefix: string; values: FormValues; a: Parameters<typeof boxAttrs>[0] }) {
  return (
    <div class="scope-boxes">
      {SCOPES.map((scope) => {
        const id = `${idPrefix}-${scope.replace(":", "-")}`;
        return (
          <label for={id}>
            <input
              {...boxAttrs(a, 1)}
              id={id}
              type="checkbox"
              name="scopes"
              value={scope}
              checked={(values.scopes ?? []).includes(scope)}
            />
            <span>
              <code>{scope}</code>
              {scope.endsWith(":write") && <span class="hint"> includes {scope.replace(/:write$/, ":read")}</span>}
            </span>
          </label>
        );
      })}
    </div>
  );
}

function KeyFields({ idPrefix, values, errors }: { idPrefix: string; values: FormValues; errors?: FormErrors | undefined }) {
  const preset = values.preset ?? "custom";
  return (
    <>
      <Field errors={errors} name="name" id={`${idPrefix}-name`} label="Name">
        {(a) => (
          <input {...a} id={`${idPrefix}-name`} type="text" name="name" required maxlength={100} value={values.name ?? ""} />
        )}
      </Field>
      <FieldGroup
        errors={errors}
        name="scopes"
        id={`${idPrefix}-scopes`}
        legend="Permissions"
        hint="A preset, or single permissions. A write permission includes its read permission."
      >
        {(a) => (
          <>
            {(
              [
                ["read-only", "Read-only", "every read permission"],
                ["full", "Full access", "every permission"],
                ["custom", "Custom", "the permissions ticked below"],
              ] as const
            ).map(([value, label, hint], i) => (
              <label for={`${idPrefix}-preset-${value}`}>
                <input
                  {...boxAttrs(a, i)}
                  id={`${idPrefix}-preset-${value}`}
                  type="radio"
                  name="preset"
                  value={value}
                  checked={preset === value}
                />
                <span>
                  {label} <span class="hint">({hint})</span>
                </span>
              </label>
            ))}
            <ScopeBoxes idPrefix={idPrefix} values={values} a={a} />
          </>
        )}
      </FieldGroup>
      <Field errors={errors} name="expiresAt" id={`${idPrefix}-expires`} label="Expires at" hint="Optional, in UTC.">
        {(a) => <input {...a} id={`${idPrefix}-expires`} type="datetime-local" name="expiresAt" value={values.expiresAt ?? ""} />}
      </Field>
      <Field
        errors={errors}
        name="allowIps"
        id={`${idPrefix}-ips`}
        label="IP allowlist"
        hint="Optional: IP addresses or CIDR blocks, one per line or comma-separated; empty allows any address."
      >
        {(a) => (
          <textarea {...a} id={`${idPrefix}-ips`} name="allowIps">
            {values.allowIps ?? ""}
          </textarea>
        )}
      </Field>
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
  const post = (path: string, text: string) => (
    <form method="post" action={`/dashboard/keys/${k.id}/${path}`}>
      <button type="submit" class="secondary">
        {label(text)}
      </button>
    </form>
  );
  const link = (path: string, text: string, kind = "secondary") => (
    <a class={`button ${kind}`} href={`/dashboard/keys/${k.id}/${path}`}>
      {label(text)}
    </a>
  );
  return (
    <tr>
      <td data-label="Name">{k.name}</td>
      <td data-label="Status">
        <span class={`status ${status}`}>{status}</span>
      </td>
      <td data-label="Prefix" class="nowrap">
        <code>{k.keyPrefix}…</code>
      </td>
      <td data-label="Permissions">{describeScopes(k.scopes)}</td>
      <td data-label="Created" class="nowrap">
        {formatDate(k.createdAt)}
      </td>
      <td data-label="Last used" class="nowrap">
        {formatDate(k.lastUsedAt) ?? "never"}
      </td>
      <td data-label="Expires" class="nowrap">
        {formatDate(k.expiresAt) ?? "never"}
      </td>
      <td data-label="IP allowlist">{k.allowedIps.length === 0 ? "any address" : k.allowedIps.join(", ")}</td>
      <td data-label="Actions">
        <div class="actions">
          {k.status === "active" && post("pause", "Pause")}
          {k.status === "paused" && post("resume", "Resume")}
          {k.status !== "revoked" && link("edit", "Edit")}
          {k.status !== "revoked" && link("roll", "Roll")}
          {k.status !== "revoked" && link("revoke", "Revoke", "danger")}
          {link("delete", "Delete", "danger")}
        </div>
      </td>
    </tr>
  );
}

/** The new key, shown once (after Create key or Roll key). */
function NewKey({ c, created, rolled }: { c: Ctx; created: CreatedKeyOutput; rolled?: string | null }) {
  return (
    <Notice kind="warning">
      <p>
        <strong>Copy your new key now.</strong> It is shown only this once and cannot be recovered; store it in a secret manager.
        Key “{created.name}”{rolled ? `; the old key ${rolled}` : ""}:
      </p>
      <div class="secret">
        <code id="new-key">{created.key}</code>
        <button type="button" data-copy="#new-key" data-copy-what="the new key" hidden>
          Copy key
        </button>
      </div>
      <p class="hint">
        Try it: <code>curl -H "Authorization: Bearer $KEY" {new URL(c.req.url).origin}/v1/me</code>
      </p>
    </Notice>
  );
}

interface ShownKey {
  created: CreatedKeyOutput;
  rolled?: string | null;
}

/** The tenant's keys, with how many are active of the limit. */
function KeyList({ keys, now }: { keys: ApiKeyRow[]; now: Date }) {
  const active = keys.filter((k) => k.status !== "revoked" && !(k.expiresAt && k.expiresAt <= now)).length;
  return (
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">
        Your keys{" "}
        <span class="hint">
          ({active} of {MAX_ACTIVE_KEYS_PER_TENANT} active; paused keys count)
        </span>
      </h2>
      {keys.length === 0 ? (
        <p>No keys yet. Create one above.</p>
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
  );
}

async function keysPage(
  c: Ctx,
  extra: { shown?: ShownKey; gone?: boolean; error?: string | null; errors?: FormErrors; values?: FormValues; done?: string },
) {
  const keys = await listKeysOfTenant(c.var.db, c.var.session.tenant.id);
  const now = c.var.now;
  const formOpen = hasErrors(extra.errors) || keys.length === 0;
  return (
    <Layout title="API keys" active="keys" tenantName={c.var.session.tenant.name} scripts={["copy"]}>
      {extra.error && <Notice kind="error">{extra.error}</Notice>}
      {extra.done && DONE[extra.done] && <Notice kind="ok">{DONE[extra.done]}</Notice>}
      {extra.shown && <NewKey c={c} created={extra.shown.created} rolled={extra.shown.rolled} />}
      {extra.gone && (
        <Notice kind="ok">
          The new key was shown once and is not shown again (nothing was created by reloading). If you did not copy it, roll or
          revoke it and create another.
        </Notice>
      )}
      <section aria-labelledby="create-heading">
        <details open={formOpen}>
          <summary>
            <h2 id="create-heading" class="inline">
              Create a key
            </h2>
          </summary>
          <ErrorSummary
            errors={extra.errors}
            labels={LABELS}
            ids={(f) => (f === "scopes" ? "new-scopes" : `new-${f === "allowIps" ? "ips" : f === "expiresAt" ? "expires" : f}`)}
          />
          <form method="post" action="/dashboard/keys" novalidate>
            <FormToken />
            <KeyFields idPrefix="new" values={extra.values ?? NEW_KEY_DEFAULTS} errors={extra.errors} />
            <p>
              <button type="submit">Create key</button>
            </p>
          </form>
        </details>
      </section>
      <KeyList keys={keys} now={now} />
    </Layout>
  );
}

export const keyPages = new Hono<DashboardEnv>();

keyPages.get("/keys", async (c) => {
  const shownId = c.req.query("shown");
  const shown = await takeFlash<ShownKey>(c, shownId);
  return c.html(await keysPage(c, { done: c.req.query("done"), shown, gone: !!shownId && !shown }));
});

keyPages.post("/keys", oneTimeForm("/dashboard/keys"), async (c) => {
  const { input, values } = await readKeyForm(c);
  let created: CreatedKeyOutput;
  try {
    created = await createKey(c.var.db, { tenant: c.var.session.tenant.id, ...input }, c.var.now, actor(c));
  } catch (err) {
    const errors = keyErrors(err);
    if (!errors) throw err;
    if (err instanceof ApiError && err.code === "KEY_LIMIT_REACHED") {
      return c.html(await keysPage(c, { error: refusalText(err), values }), 409);
    }
    return c.html(await keysPage(c, { errors, values }), (err as ApiError).status as 400);
  }
  // Post/Redirect/Get: the key goes to the next page through a flash, shown once.
  const id = await putFlash(c, { created } satisfies ShownKey);
  return c.redirect(`/dashboard/keys?shown=${id}`, 303);
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
    const error = refusalText(err);
    if (!error) throw err;
    return c.html(await keysPage(c, { error }), (err as ApiError).status as 400);
  }
  return c.redirect(`/dashboard/keys?done=${done}`, 303);
});

/** The signed-in tenant's key, or the refusal (`404` unknown, `403` another tenant's). */
async function ownKey(c: Ctx): Promise<ApiKeyRow> {
  const k = await findKeyById(c.var.db, c.req.param("id") ?? "");
  if (!k) throw new ApiError("NOT_FOUND", "There is no such API key");
  if (k.tenantId !== c.var.session.tenant.id) throw new ApiError("FORBIDDEN", "This API key belongs to another tenant");
  return k;
}

const CONFIRM = {
  revoke: {
    title: (k: ApiKeyRow) => `Revoke key “${k.name}”?`,
    what: "Requests with this key will get 401 KEY_REVOKED from the next request on. This cannot be undone.",
    verb: "Revoke key",
  },
  delete: {
    title: (k: ApiKeyRow) => `Delete key “${k.name}”?`,
    what: "The key is removed from your list and requests with it get 401 INVALID_API_KEY. Its activity stays. This cannot be undone.",
    verb: "Delete key",
  },
} as const;

/** A destructive action's confirmation step (works without JavaScript): nothing changes until its button is pressed. */
keyPages.get("/keys/:id/:action{revoke|delete}", async (c) => {
  const k = await ownKey(c);
  const confirm = CONFIRM[c.req.param("action") as keyof typeof CONFIRM];
  return c.html(
    <Layout title={confirm.title(k)} active="keys" tenantName={c.var.session.tenant.name}>
      <section class="confirm">
        <p>
          Key <code>{k.keyPrefix}…</code> ({describeScopes(k.scopes)}). {confirm.what}
        </p>
        <form method="post" action={`/dashboard/keys/${k.id}/${c.req.param("action")}`} class="actions">
          <button type="submit" class="danger">{`${confirm.verb} ${k.name}`}</button>
          <a class="button secondary" href="/dashboard/keys">
            Cancel
          </a>
        </form>
      </section>
    </Layout>,
  );
});

function rollPage(c: Ctx, k: ApiKeyRow, error?: string | null) {
  return (
    <Layout title={`Roll key “${k.name}”`} active="keys" tenantName={c.var.session.tenant.name}>
      {error && <Notice kind="error">{error}</Notice>}
      <section>
        <p>
          Rolling makes a new key with the same name, permissions and allowlist, shown once. The old key (
          <code>{k.keyPrefix}…</code>) keeps working for the grace period you choose, so you can deploy the new one first; then it
          expires.
        </p>
        <form method="post" action={`/dashboard/keys/${k.id}/roll`}>
          <FormToken />
          <div class="field">
            <label for="roll-grace">Old key keeps working for</label>
            <select id="roll-grace" name="graceSeconds">
              {GRACE_PERIODS.map((g) => (
                <option value={String(g.seconds)} selected={g.seconds === 24 * 60 * 60}>
                  {g.label}
                </option>
              ))}
            </select>
          </div>
          <p class="actions">
            <button type="submit">{`Roll key ${k.name}`}</button>
            <a class="button secondary" href="/dashboard/keys">
              Cancel
            </a>
          </p>
        </form>
      </section>
    </Layout>
  );
}

keyPages.get("/keys/:id/roll", async (c) => c.html(rollPage(c, await ownKey(c))));

keyPages.post("/keys/:id/roll", oneTimeForm("/dashboard/keys"), async (c) => {
  const k = await ownKey(c);
  const form = await readForm(c.req);
  let result: Awaited<ReturnType<typeof rollKey>>;
  try {
    result = await rollKey(
      workerKeyStore(c.var.db, c.env),
      { id: k.id, tenant: c.var.session.tenant.id, graceSeconds: form.one("graceSeconds") },
      c.var.now,
      actor(c),
    );
  } catch (err) {
    const error = refusalText(err);
    if (!error) throw err;
    return c.html(rollPage(c, k, error), (err as ApiError).status as 400);
  }
  const rolled = result.old.status === "revoked" ? "is revoked" : `keeps working until ${formatDate(result.old.expiresAt)}`;
  const id = await putFlash(c, { created: result.created, rolled } satisfies ShownKey);
  return c.redirect(`/dashboard/keys?shown=${id}`, 303);
});

async function editPage(c: Ctx, k: ApiKeyRow, values: FormValues, errors?: FormErrors) {
  return (
    <Layout title={`Edit key “${k.name}”`} active="keys" tenantName={c.var.session.tenant.name}>
      <ErrorSummary
        errors={errors}
        labels={LABELS}
        ids={(f) => (f === "scopes" ? "edit-scopes" : `edit-${f === "allowIps" ? "ips" : f === "expiresAt" ? "expires" : f}`)}
      />
      <section>
        <p>
          Key <code>{k.keyPrefix}…</code>. Changes apply from the next request made with it.
        </p>
        <form method="post" action={`/dashboard/keys/${k.id}/edit`} novalidate>
          <KeyFields idPrefix="edit" values={values} errors={errors} />
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

keyPages.get("/keys/:id/edit", async (c) => {
  const k = await ownKey(c);
  return c.html(
    await editPage(c, k, {
      name: k.name,
      preset: "custom",
      scopes: k.scopes,
      expiresAt: toDateTimeLocal(k.expiresAt),
      allowIps: k.allowedIps.join("\n"),
    }),
  );
});

keyPages.post("/keys/:id/edit", async (c) => {
  const k = await ownKey(c);
  const { input, values } = await readKeyForm(c);
  try {
    await editKey(workerKeyStore(c.var.db, c.env), { id: k.id, tenant: c.var.session.tenant.id, ...input }, c.var.now, actor(c));
  } catch (err) {
    const errors = keyErrors(err);
    if (!errors) throw err;
    return c.html(await editPage(c, k, values, errors), (err as ApiError).status as 400);
  }
  return c.redirect("/dashboard/keys?done=edited", 303);
});
