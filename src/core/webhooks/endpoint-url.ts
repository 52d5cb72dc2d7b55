import { checkUpstreamUrl, type SsrfCheck } from "../../lib/ssrf.ts";
import { urlTextProblem } from "../../lib/url-rules.ts";
import { type Config, isLoopbackUrl } from "../config.ts";

/**
 * Whether the platform may POST to a webhook endpoint's URL: the rule of upstream URLs (public http or https
 * addresses; src/lib/ssrf.ts), checked at creation, at every change and before every attempt. Only under
 * `npm run dev` (`Config.webhooksAllowLoopback`) may it name this machine (`localhost`, `127.0.0.1`, `[::1]`).
 */
export function checkWebhookUrl(input: string, config: Pick<Config, "webhooksAllowLoopback">): SsrfCheck {
  if (config.webhooksAllowLoopback && !urlTextProblem(input) && isLoopbackUrl(input)) {
    const url = new URL(input);
    if ((url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === "") {
      return { allowed: true, url };
    }
  }
  return checkUpstreamUrl(input);
}
