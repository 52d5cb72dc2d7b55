// node --test test/cli/fn-lengths.check.ts: the function-length count of `npm run fn-lengths`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { functionLengths } from "../lib/fn-lengths.ts";

const source = `import { x } from "y";

export async function spread(
  a: string,
  b: { c: number },
): Promise<{ d: string }> {
  if (a) {
    return { d: a };
  }
  return { d: String(b.c) };
}

const arrow = async (n: number) => {
  for (const i of [n]) {
    console.log(i);
  }
};

class Holder {
  method(n: number): number {
    return n;
  }
}
`;

test("counts each block-bodied function from its signature to its closing brace, and no control block", () => {
  const found = functionLengths(source).map(({ name, line, lines }) => ({ name, line, lines }));
  assert.deepEqual(found, [
    { name: "spread", line: 3, lines: 9 },
    { name: "arrow", line: 13, lines: 5 },
    { name: "method", line: 20, lines: 3 },
  ]);
});
