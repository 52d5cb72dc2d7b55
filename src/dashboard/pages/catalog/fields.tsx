/** Fields both catalog forms show: a text field with its errors, and the networks grouped by mode. */
import { NETWORKS_BY_MODE } from "../../../core/money/networks.ts";
import { boxAttrs, Field, FieldGroup, type FormErrors } from "../../forms.tsx";

/** A form's values as the text fields read them. */
type TextValues = object;

const text = (v: TextValues, name: string) => (v as Record<string, string>)[name] ?? "";

export function TextField({
  values,
  errors,
  name,
  id,
  label,
  type = "text",
  hint,
  multiline,
  required,
}: {
  values: TextValues;
  errors?: FormErrors | undefined;
  name: string;
  id: string;
  label: string;
  type?: string;
  hint?: string;
  multiline?: boolean;
  required?: boolean;
}) {
  return (
    <Field errors={errors} name={name} id={id} label={label} hint={hint}>
      {(a) =>
        multiline ? (
          <textarea {...a} id={id} name={name}>
            {text(values, name)}
          </textarea>
        ) : (
          <input {...a} id={id} type={type} name={name} value={text(values, name)} required={required} />
        )
      }
    </Field>
  );
}

/** The networks, one group per mode: a service (and its paywalls) accepts the networks of its mode only. */
export function NetworkBoxes({
  errors,
  idPrefix,
  checked,
  modes = ["testnet", "mainnet"],
}: {
  errors?: FormErrors | undefined;
  idPrefix: string;
  checked: string[];
  modes?: ("testnet" | "mainnet")[];
}) {
  return (
    <FieldGroup
      errors={errors}
      name="networks"
      id={`${idPrefix}-networks`}
      legend="Networks"
      hint={
        modes.length > 1
          ? "The networks buyers may pay on, of the service's mode."
          : `Networks of the service's mode (${modes[0]}).`
      }
    >
      {(a) => (
        <div class="network-modes">
          {modes.map((mode, m) => (
            <div>
              <p class="hint">{mode === "testnet" ? "Testnet" : "Mainnet"}</p>
              {NETWORKS_BY_MODE[mode].map((n, i) => (
                <label for={`${idPrefix}-net-${n}`}>
                  <input
                    {...boxAttrs(a, m + i)}
                    id={`${idPrefix}-net-${n}`}
                    type="checkbox"
                    name="networks"
                    value={n}
                    checked={checked.includes(n)}
                  />
                  <span>{n}</span>
                </label>
              ))}
            </div>
          ))}
        </div>
      )}
    </FieldGroup>
  );
}
