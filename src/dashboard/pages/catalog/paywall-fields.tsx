/** What the paywall form shows: its target, networks and methods, cache rules and the schemas agents are told. */
import { HTTP_METHODS } from "../../../core/catalog/paywalls.ts";
import { Choices, Field, FieldGroup, type FormErrors } from "../../forms.tsx";
import { NetworkBoxes, TextField } from "./fields.tsx";
import { type PaywallFormValues, paywallFieldId } from "./paywall-form.ts";

type Props = {
  values: PaywallFormValues;
  errors?: FormErrors | undefined;
  services: { id: string; name: string; networks: string[] }[];
  editing: boolean;
};

/** What a paid request reaches: a route of a service, or an upstream URL. */
function TargetFields({ values, errors, services, editing }: Props) {
  const id = paywallFieldId;
  return (
    <>
      <Field
        errors={errors}
        name="serviceId"
        id={id("serviceId")}
        label="Service"
        hint="A route of a service, or none for a standalone upstream URL."
      >
        {(a) => (
          <select {...a} id={id("serviceId")} name="serviceId" data-paywall-service={editing ? undefined : ""}>
            <option value="">None</option>
            {services.map((s) => (
              <option value={s.id} selected={values.serviceId === s.id} data-networks={s.networks.join(" ")}>
                {s.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Choices
        type="radio"
        errors={errors}
        name="targetType"
        id={id("targetType")}
        legend="Target"
        hint="What a paid request reaches."
        options={[
          ["ROUTE", "A route of the service"],
          ["PROXY", "An upstream URL"],
        ]}
        checked={[values.targetType]}
      />
      <TextField
        values={values}
        errors={errors}
        name="targetRoute"
        id={id("targetRoute")}
        label="Route"
        hint={
          editing
            ? "For a route target: the path on the service, e.g. /v1/forecast."
            : "For a route target: the path on the service, e.g. /v1/forecast; empty: / and the slug."
        }
      />
      <TextField
        values={values}
        errors={errors}
        name="targetUrl"
        id={id("targetUrl")}
        label="Upstream URL"
        type="url"
        hint="For an upstream URL target."
      />
    </>
  );
}

/** The edge cache's rules: how long, and what a cached answer varies on. */
function CacheFields({ values, errors }: Props) {
  const id = paywallFieldId;
  return (
    <fieldset>
      <legend>Cache</legend>
      <p class="hint">
        Serve the next buyers of the same request from the edge cache: each still pays, the upstream is called once. Leave empty
        for no caching.
      </p>
      <TextField
        values={values}
        errors={errors}
        name="cacheTtlSeconds"
        id={id("cacheTtlSeconds")}
        label="Cache answers for (seconds)"
        type="number"
        hint="0 to 86400; empty or 0: never cached."
      />
      <TextField
        values={values}
        errors={errors}
        name="cacheVaryQuery"
        id={id("cacheVaryQuery")}
        label="Vary on query parameters"
        hint="Comma-separated names, e.g. city, days; empty: the whole query string."
      />
      <TextField
        values={values}
        errors={errors}
        name="cacheVaryHeaders"
        id={id("cacheVaryHeaders")}
        label="Vary on headers"
        hint="Comma-separated header names; empty: every header forwarded upstream."
      />
      <div class="field">
        <label for={id("cacheVaryBody")} class="inline-check">
          <input id={id("cacheVaryBody")} type="checkbox" name="cacheVaryBody" value="true" checked={values.cacheVaryBody} /> Vary
          on the body: requests with different bodies get different answers (POST, PUT, PATCH)
        </label>
      </div>
      <TextField
        values={values}
        errors={errors}
        name="cacheStatuses"
        id={id("cacheStatuses")}
        label="Cached statuses"
        hint="Comma-separated upstream statuses from 200 to 399; empty: 200 only."
      />
    </fieldset>
  );
}

/** The JSON Schemas agents are told. */
function SchemaFields({ values, errors }: Props) {
  const id = paywallFieldId;
  return (
    <fieldset>
      <legend>What agents are told</legend>
      <p class="hint">
        JSON Schema 2020-12 objects, shown in the discovery document and the 402s. The input: the query parameters of a GET, the
        JSON body otherwise. Empty: none.
      </p>
      <TextField
        values={values}
        errors={errors}
        name="inputSchema"
        id={id("inputSchema")}
        label="Input schema (JSON)"
        hint='e.g. {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}'
        multiline
      />
      <TextField
        values={values}
        errors={errors}
        name="outputSchema"
        id={id("outputSchema")}
        label="Output schema (JSON)"
        hint="The answer's JSON: an object or array schema."
        multiline
      />
    </fieldset>
  );
}

/** Sessions (docs/sessions.md): off unless the tenant turns them on; per-call payments are accepted either way. */
function SessionFields({ values, errors }: Props) {
  const id = paywallFieldId;
  return (
    <FieldGroup errors={errors} name="sessionsEnabled" id={id("sessionsEnabled")} legend="Sessions">
      {(attrs) => (
        <>
          <p class="hint">
            A session lets a buyer deposit once and pay each call with a signed voucher; you are paid when the vouchers are
            settled, in batches. The deposit stays locked in the buyer's channel until then, so sessions are off unless you turn
            them on. Paying per call stays possible either way. x402 only: needs a network other than Tempo.
          </p>
          <div class="field">
            <label for={id("sessionsEnabledBox")} class="inline-check">
              <input
                {...attrs}
                id={id("sessionsEnabledBox")}
                type="checkbox"
                name="sessionsEnabled"
                value="true"
                checked={values.sessionsEnabled}
              />{" "}
              Accept sessions
            </label>
          </div>
          <TextField
            values={values}
            errors={errors}
            name="sessionsMinDeposit"
            id={id("sessionsMinDeposit")}
            label="Minimum deposit (USDC)"
            hint="The least a buyer deposits to open a session, e.g. 1 (at least the price, at most 1,000,000); empty: the price."
          />
        </>
      )}
    </FieldGroup>
  );
}

/** The slug: a field on a new paywall, shown as set on an existing one (it is part of the payment URL). */
function SlugField({ values, errors, editing }: Props) {
  return editing ? (
    <p>
      Slug <code>{values.slug}</code> <span class="hint">(part of the payment URL; it does not change)</span>
    </p>
  ) : (
    <TextField
      values={values}
      errors={errors}
      name="slug"
      id={paywallFieldId("slug")}
      label="Slug"
      hint="Lowercase letters, digits, '.', '_' and '-': the last part of the payment URL."
      required
    />
  );
}

export function PaywallFields(props: Props) {
  const { values, errors, editing } = props;
  const id = paywallFieldId;
  return (
    <>
      <SlugField {...props} />
      <TextField values={values} errors={errors} name="name" id={id("name")} label="Name" required />
      <TextField
        values={values}
        errors={errors}
        name="price"
        id={id("price")}
        label="Price (USDC)"
        hint="Per request, e.g. 0.01 (at most 6 decimals)."
        required
      />
      <TextField values={values} errors={errors} name="description" id={id("description")} label="Description" multiline />
      <TargetFields {...props} />
      <NetworkBoxes errors={errors} idPrefix="pw" checked={values.networks} />
      <Choices
        type="checkbox"
        errors={errors}
        name="allowedMethods"
        id={id("allowedMethods")}
        boxIds={id("method")}
        legend="Methods"
        hint="The HTTP methods buyers may pay for."
        options={HTTP_METHODS.map((m) => [m, m] as const)}
        checked={values.allowedMethods}
      />
      {!editing && (
        <Choices
          type="radio"
          errors={errors}
          name="fulfillmentMode"
          id={id("fulfillmentMode")}
          legend="Fulfilment"
          options={[
            ["PROXY", "Answer with the upstream's response"],
            ["SIGNED_URL", "Answer with a one-time signed URL"],
          ]}
          checked={[values.fulfillmentMode]}
        />
      )}
      <TextField
        values={values}
        errors={errors}
        name="timeout"
        id={id("timeout")}
        label="Upstream timeout (seconds)"
        type="number"
        hint="30 to 3600."
      />
      <SessionFields {...props} />
      <CacheFields {...props} />
      <SchemaFields {...props} />
      {!editing && (
        <div class="field">
          <label for={id("enabled")} class="inline-check">
            <input id={id("enabled")} type="checkbox" name="enabled" value="true" checked={values.enabled} /> Enabled: buyers can
            pay for it at once
          </label>
        </div>
      )}
    </>
  );
}
