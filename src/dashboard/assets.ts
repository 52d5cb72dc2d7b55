/**
 * The dashboard's static files, served from this origin (the CSP allows scripts and styles only from here):
 * the stylesheet, the copy buttons, and the wallet signature (Sign-In with Ethereum and wallet changes through
 * the browser's EIP-1193 provider, `window.ethereum`). Everything else works without JavaScript.
 */

const CSS = `
:root { color-scheme: light; --fg:#1d2430; --muted:#5b6576; --line:#d6dbe3; --bg:#f6f7f9; --accent:#1f5fbf; --danger:#b42318; --ok:#146c2e; --warn:#8a5a00; --focus:#0b3d91; }
* { box-sizing: border-box; }
body { margin:0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color:var(--fg); background:var(--bg); }
a { color: var(--accent); }
.top { display:flex; flex-wrap:wrap; align-items:center; gap:.5rem 1rem; padding:.6rem 1rem; background:#fff; border-bottom:1px solid var(--line); }
.brand { font-weight:700; text-decoration:none; color:var(--fg); }
nav ul { display:flex; flex-wrap:wrap; gap:.25rem; list-style:none; margin:0; padding:0; }
nav a { display:inline-block; padding:.35rem .6rem; border-radius:6px; text-decoration:none; }
nav a[aria-current="page"] { background:var(--accent); color:#fff; }
.sign-out { margin-left:auto; display:flex; align-items:center; gap:.5rem; }
.who { color:var(--muted); font-size:.9em; max-width:12rem; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
main { max-width:72rem; margin:0 auto; padding:1rem; }
h1 { font-size:1.5rem; margin:.5rem 0 1rem; }
/* A long URL or hash in a title or a sentence wraps instead of widening the page. */
h1, h2, p, li { overflow-wrap:break-word; }
h2 { font-size:1.15rem; margin:1.5rem 0 .5rem; }
section, .card { background:#fff; border:1px solid var(--line); border-radius:8px; padding:1rem; margin:0 0 1rem; }
.table-wrap { overflow-x:auto; }
section.table-wrap { background:none; border:0; border-radius:0; padding:0; margin:0; }
table { border-collapse:collapse; width:100%; font-size:.92em; }
th, td { text-align:left; padding:.45rem .5rem; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--muted); font-weight:600; white-space:nowrap; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size:.92em; overflow-wrap:anywhere; }
label { display:block; font-weight:600; margin:.6rem 0 .2rem; }
fieldset { border:1px solid var(--line); border-radius:6px; margin:.6rem 0; padding:.4rem .8rem .6rem; }
legend { font-weight:600; padding:0 .3rem; }
fieldset label { font-weight:400; display:flex; gap:.4rem; align-items:baseline; margin:.2rem 0; }
fieldset .field > label { display:block; font-weight:600; margin:.6rem 0 .2rem; }
.hint { color:var(--muted); font-size:.88em; font-weight:400; }
input[type=text], input[type=email], input[type=datetime-local], textarea { width:100%; max-width:28rem; padding:.45rem .5rem; border:1px solid #9aa3b2; border-radius:6px; font:inherit; }
textarea { min-height:5.5rem; }
button, .button { font:inherit; padding:.45rem .8rem; border-radius:6px; border:1px solid var(--accent); background:var(--accent); color:#fff; cursor:pointer; text-decoration:none; display:inline-block; }
button.secondary, .button.secondary { background:#fff; color:var(--accent); }
button.danger, .button.danger { background:#fff; color:var(--danger); border-color:var(--danger); }
.confirm button.danger { background:var(--danger); color:#fff; }
:focus-visible { outline:3px solid var(--focus); outline-offset:2px; }
.skip-link { position:absolute; left:.5rem; top:-3rem; z-index:10; background:#fff; color:var(--accent); padding:.5rem .8rem; border:2px solid var(--accent); border-radius:6px; }
.skip-link:focus { top:.5rem; }
.field { margin:0 0 .4rem; }
.field-error { color:var(--danger); font-weight:600; margin:.15rem 0; }
.field.invalid input, .field.invalid textarea, .field.invalid select, fieldset.invalid { border-color:var(--danger); border-width:2px; }
.notice ul { margin:.3rem 0 0; padding-left:1.2rem; }
.notice.error a { color:var(--danger); }
.confirm { border-color:var(--danger); }
.page-actions { display:flex; flex-wrap:wrap; gap:.5rem; margin:0 0 1rem; }
.table-wrap:focus-visible { outline-offset:-3px; }
select { font:inherit; padding:.4rem .45rem; border:1px solid #9aa3b2; border-radius:6px; background:#fff; max-width:28rem; width:100%; }
input[type=password], input[type=url], input[type=number] { width:100%; max-width:28rem; padding:.45rem .5rem; border:1px solid #9aa3b2; border-radius:6px; font:inherit; }
.copyable { display:inline-flex; flex-wrap:wrap; gap:.25rem .4rem; align-items:center; }
button.small { padding:.1rem .45rem; font-size:.85em; }
h2.inline { display:inline; margin:0; }
details > summary { padding:.2rem 0; }
details[open] > summary { margin-bottom:.5rem; }
label.inline-check { display:flex; gap:.4rem; align-items:baseline; font-weight:400; }
.scope-boxes { margin:.3rem 0 0 1.5rem; }
.chart svg { overflow:visible; }
.totals { display:grid; gap:.5rem; grid-template-columns:repeat(auto-fill, minmax(min(100%, 15rem), 1fr)); }
.totals table { font-variant-numeric:tabular-nums; }
.actions { display:flex; flex-wrap:wrap; gap:.35rem; }
main > .actions { margin:0 0 1rem; }
.actions form { margin:0; }
.status { display:inline-block; padding:.05rem .45rem; border-radius:999px; font-size:.85em; font-weight:600; border:1px solid; }
.status.active { color:var(--ok); } .status.paused { color:var(--warn); } .status.revoked, .status.expired { color:var(--danger); }
.notice { border-radius:8px; padding:.75rem 1rem; margin:0 0 1rem; border:1px solid; background:#fff; }
.notice.error { border-color:var(--danger); color:var(--danger); }
.notice.ok { border-color:var(--ok); color:var(--ok); }
.notice.warning { border-color:var(--warn); color:#5c3c00; background:#fff8e6; }
.secret { display:flex; flex-wrap:wrap; gap:.5rem; align-items:center; }
.secret code { background:#f0f2f5; padding:.4rem .5rem; border-radius:6px; }
details summary { cursor:pointer; color:var(--accent); }
dl.profile { display:grid; grid-template-columns:max-content 1fr; gap:.3rem 1rem; }
dl.profile dt { color:var(--muted); } dl.profile dd { margin:0; overflow-wrap:anywhere; }
.sr-only { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); white-space:nowrap; }
section > :first-child, .card > :first-child { margin-top:0; }
td .actions { min-width:9rem; }
/* A delivery's id and error wrap inside their cells: the log fits its card at desktop widths. */
table.deliveries td .hint { overflow-wrap:anywhere; }
td.nowrap, td.nowrap code { white-space:nowrap; overflow-wrap:normal; }
@media (max-width: 40rem) {
  main { padding:.6rem; } .sign-out { margin-left:0; }
  /* Tables become one card per row; each cell says what it is. */
  table.cards thead { position:absolute; width:1px; height:1px; overflow:hidden; clip:rect(0 0 0 0); }
  table.cards, table.cards tbody, table.cards tr, table.cards td { display:block; width:100%; }
  table.cards tr { border:1px solid var(--line); border-radius:8px; padding:.4rem .6rem; margin:0 0 .6rem; }
  table.cards td { border:0; padding:.2rem 0; display:grid; grid-template-columns:7.5rem minmax(0, 1fr); gap:.5rem; overflow-wrap:anywhere; }
  table.cards td::before { content: attr(data-label); color:var(--muted); font-weight:600; }
  table.cards td > * { justify-self:start; }
  table.cards td.amount, table.cards td.nowrap { text-align:left; white-space:normal; }
  table.cards td.hash { white-space:normal; }
  table.cards td.hash .copyable { flex-wrap:wrap; }
  table.cards td.hash code { max-width:100%; white-space:normal; overflow-wrap:anywhere; }
  td .actions { min-width:0; }
  /* Chart labels stay legible when the drawing is scaled down to a phone's width. */
  .chart svg text { font-size:17px; }
}
`;

/**
 * Copy buttons: `<button data-copy="#id" hidden>` copies the text of the element `#id`. They are hidden until this
 * script shows them (without JavaScript the text is there to select), and "Copied" is announced through the page's
 * live region (`#copy-status`).
 */
const COPY_JS = `
for (const button of document.querySelectorAll("button[data-copy]")) button.hidden = false;
document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.querySelector(button.dataset.copy);
  if (!source) return;
  const text = source.textContent.trim();
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const range = document.createRange();
    range.selectNodeContents(source);
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    document.execCommand("copy");
  }
  const status = document.getElementById("copy-status");
  if (status) {
    status.textContent = "";
    setTimeout(() => { status.textContent = "Copied " + (button.dataset.copyWhat || "to the clipboard"); }, 50);
  }
  if (!button.dataset.label) button.dataset.label = button.innerHTML;
  button.textContent = "Copied";
  setTimeout(() => { button.innerHTML = button.dataset.label; }, 1500);
});
`;

/**
 * Wallet signatures. A \`<form data-siwe="/dashboard/…/message">\` (with its \`action\` for the signed result) asks the
 * wallet for its address and chain, asks the server for the message to sign (with a server-issued nonce), has the
 * wallet sign it (\`personal_sign\`) and posts message and signature to the form's action; the server answers
 * \`{ location }\` or \`{ error }\`. Forms post \`application/x-www-form-urlencoded\`, as every dashboard form.
 */
const SIWE_JS = `
const toHex = (text) => "0x" + Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("");
async function post(url, fields) {
  const response = await fetch(url, {
    method: "POST",
    body: new URLSearchParams(fields),
    credentials: "same-origin",
    headers: { accept: "application/json" },
  });
  if (response.status === 429) {
    throw new Error("Too many sign-in requests from this address: try again in " + (response.headers.get("Retry-After") || "a few") + " seconds.");
  }
  const body = await response.json().catch(() => ({ error: "Unexpected answer (" + response.status + ")" }));
  if (!response.ok || body.error) throw new Error(body.error || "Refused (" + response.status + ")");
  return body;
}
for (const form of document.querySelectorAll("form[data-siwe]")) {
  const status = form.querySelector("[data-siwe-status]");
  const say = (text) => { if (status) status.textContent = text; };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const ethereum = window.ethereum;
    if (!ethereum) { say("No wallet found in this browser. Install a wallet extension, or ask your operator for a sign-in link."); return; }
    try {
      say("Waiting for the wallet…");
      const [address] = await ethereum.request({ method: "eth_requestAccounts" });
      const chainId = parseInt(await ethereum.request({ method: "eth_chainId" }), 16);
      const fields = Object.fromEntries(new FormData(form));
      const { message } = await post(form.dataset.siwe, { ...fields, address, chainId: String(chainId) });
      say("Sign the message in your wallet…");
      const signature = await ethereum.request({ method: "personal_sign", params: [toHex(message), address] });
      const { location } = await post(form.action, { ...fields, message, signature });
      window.location.assign(location);
    } catch (err) {
      say(err && err.message ? err.message : String(err));
    }
  });
}
`;

/**
 * Upstream authentication fields: each credential field's wrapper says which methods use it
 * (\`<div data-auth-for="bearer token">\`); the form shows only the chosen method's. Without JavaScript every field
 * shows, each with a hint naming its methods, and the server takes only the chosen method's fields.
 */
const AUTH_JS = `
for (const select of document.querySelectorAll("select[data-auth-method]")) {
  const show = () => {
    for (const field of select.form.querySelectorAll("[data-auth-for]")) {
      field.hidden = !field.dataset.authFor.split(" ").includes(select.value);
    }
  };
  select.addEventListener("change", show);
  show();
}
`;

/**
 * A new paywall's service: choosing one makes the target a route of it and ticks the networks it accepts
 * (\`<option data-networks="base-sepolia tempo-testnet">\`); choosing none, an upstream URL. Without JavaScript the
 * form opened from a service's page starts that way already.
 */
const PAYWALL_JS = `
for (const select of document.querySelectorAll("select[data-paywall-service]")) {
  select.addEventListener("change", () => {
    const form = select.form;
    const option = select.selectedOptions[0];
    const target = form.querySelector('input[name="targetType"][value="' + (select.value ? "ROUTE" : "PROXY") + '"]');
    if (target) target.checked = true;
    if (!select.value || !option) return;
    const networks = (option.dataset.networks || "").split(" ");
    for (const box of form.querySelectorAll('input[name="networks"]')) box.checked = networks.includes(box.value);
  });
}
`;

/** FNV-1a (32 bits) of the text, as 8 hex digits: enough to tell one version of a file from the next. */
export function contentHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

const FILES = {
  css: { name: "dashboard", ext: "css", type: "text/css; charset=utf-8", body: CSS },
  copy: { name: "copy", ext: "js", type: "text/javascript; charset=utf-8", body: COPY_JS },
  siwe: { name: "siwe", ext: "js", type: "text/javascript; charset=utf-8", body: SIWE_JS },
  auth: { name: "auth-fields", ext: "js", type: "text/javascript; charset=utf-8", body: AUTH_JS },
  paywall: { name: "paywall-fields", ext: "js", type: "text/javascript; charset=utf-8", body: PAYWALL_JS },
} as const;

export type AssetId = keyof typeof FILES;

/**
 * Each file under a name that carries a hash of its content (`dashboard.1a2b3c4d.css`): a new version is a new URL,
 * so each can be cached for good (`immutable`) while pages stay `no-store`.
 */
export const ASSET_URL = Object.fromEntries(
  Object.entries(FILES).map(([id, f]) => [id, `/dashboard/assets/${f.name}.${contentHash(f.body)}.${f.ext}`]),
) as Record<AssetId, string>;

/** The files by the name they are served under. */
export const ASSETS: Record<string, { type: string; body: string }> = Object.fromEntries(
  Object.entries(FILES).map(([id, f]) => [
    ASSET_URL[id as AssetId].slice("/dashboard/assets/".length),
    { type: f.type, body: f.body },
  ]),
);
