// node --test test/cli/fn-lengths.check.ts: the function-length count of `npm run fn-lengths`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { functionLengths, longestUnder } from "../lib/fn-lengths.ts";

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

// The limits the code keeps: a gateway function fits on a screen (60 lines), a dashboard one (80) — JSX is tall.
const LIMITS = { "src/gateway": 60, "src/dashboard": 80 } as const;

for (const [root, limit] of Object.entries(LIMITS)) {
  test(`no function in ${root} is longer than ${limit} lines`, () => {
    const over = longestUnder(root).filter((f) => f.lines > limit);
    assert.deepEqual(
      over.map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`),
      [],
      `functions over ${limit} lines in ${root}`,
    );
  });
}
