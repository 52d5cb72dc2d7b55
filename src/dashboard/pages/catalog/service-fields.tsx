/** What the service form shows: its fields, the upstream's credentials and the discovery fields. */
import { AUTH_METHODS } from "../../../core/secrets/auth-config.ts";
import { Choices, Field, type FormErrors } from "../../forms.tsx";
import { NetworkBoxes, TextField } from "./fields.tsx";
import {
  AUTH_FIELD_LABELS,
  AUTH_FIELDS,
  isSecret,
  methodsUsing,
  type ServiceFormValues,
  serviceFieldId,
} from "./service-form.ts";

/** The service's discovery fields (docs/discovery.md), in the order the form shows them. */
const DISCOVERY_FIELDS: { name: string; label: string; type?: string; hint?: string; multiline?: boolean }[] = [
  { name: "contactEmail", label: "Contact e-mail", type: "email" },
  { name: "categories", label: "Categories", hint: "Comma-separated, e.g. weather, maps." },
  { name: "docsHomepage", label: "Documentation homepage", type: "url" },
  { name: "docsApiReference", label: "API reference URL", type: "url" },
  { name: "docsLlms", label: "llms.txt URL", type: "url" },
  { name: "xGuidance", label: "Guidance for agents", multiline: true },
  { name: "publicRoutes", label: "Public routes", hint: "Paths served without payment, one per line.", multiline: true },
  {
    name: "siwxRoutes",
    label: "Sign-in-with-wallet routes",
    hint: "Paths that ask the buyer's wallet to sign in, one per line.",
    multiline: true,
  },
];

type Props = { values: ServiceFormValues; errors?: FormErrors | undefined; editing: boolean };

/** How the platform authenticates to the upstream: the method, then every credential field (the script shows the method's). */
function AuthFields({ values, errors, editing }: Props) {
  const id = serviceFieldId;
  return (
    <fieldset>
      <legend>Upstream authentication</legend>
      <p class="hint">
        How the platform authenticates to your API. Credentials are encrypted at rest and never shown again
        {editing ? "; leave a secret empty to keep the stored one" : ""}. Only the fields of the chosen method are sent.
      </p>
      <Field errors={errors} name="authMethod" id={id("authMethod")} label="Method">
        {(a) => (
          <select {...a} id={id("authMethod")} name="authMethod" data-auth-method>
            {AUTH_METHODS.map((m) => (
              <option value={m} selected={values.authMethod === m}>
                {m}
              </option>
            ))}
          </select>
        )}
      </Field>
      {AUTH_FIELDS.map((f) => {
        const secret = isSecret(f);
        const stored = values.storedSecrets.includes(f);
        const hint = `For ${methodsUsing(f).join(", ")}.${secret ? (stored ? " Stored; leave empty to keep it." : " Write-only.") : ""}`;
        return (
          <div data-auth-for={methodsUsing(f).join(" ")}>
            <Field errors={errors} name={`auth.${f}`} id={id(`auth.${f}`)} label={AUTH_FIELD_LABELS[f] as string} hint={hint}>
              {(a) =>
                secret ? (
                  <input {...a} id={id(`auth.${f}`)} type="password" name={`auth.${f}`} value="" autocomplete="new-password" />
                ) : (
                  <input {...a} id={id(`auth.${f}`)} type="text" name={`auth.${f}`} value={values.auth[f] ?? ""} />
                )
              }
            </Field>
          </div>
        );
      })}
    </fieldset>
  );
}

export function ServiceFields({ values, errors, editing }: Props) {
  const id = serviceFieldId;
  return (
    <>
      <TextField values={values} errors={errors} name="name" id={id("name")} label="Name" required />
      <TextField
        values={values}
        errors={errors}
        name="baseUrl"
        id={id("baseUrl")}
        label="Base URL"
        type="url"
        hint="The upstream API's address, e.g. https://api.example.com/ (public http or https)."
        required
      />
      <TextField values={values} errors={errors} name="description" id={id("description")} label="Description" multiline />
      <Choices
        type="radio"
        errors={errors}
        name="mode"
        id={id("mode")}
        legend="Mode"
        hint="Testnet networks for trying out, mainnet for real money."
        options={[
          ["testnet", "testnet"],
          ["mainnet", "mainnet"],
        ]}
        checked={[values.mode]}
      />
      <NetworkBoxes errors={errors} idPrefix="svc" checked={values.networks} />
      <AuthFields values={values} errors={errors} editing={editing} />
      <fieldset>
        <legend>Discovery</legend>
        <p class="hint">What buyers and agents learn about the service.</p>
        {DISCOVERY_FIELDS.map((f) => (
          <TextField values={values} errors={errors} id={id(f.name)} {...f} />
        ))}
      </fieldset>
    </>
  );
}
