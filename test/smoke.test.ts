import { exports } from "cloudflare:workers";
import { expect, it } from "vitest";

it("health answers", async () => {
  const res = await exports.default.fetch("http://x/v1/health");
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ data: { status: "ok" } });
});
