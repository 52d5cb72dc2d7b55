import { defineConfig } from "drizzle-kit";

// drizzle-kit reads the schema and writes SQL migrations where wrangler and the tests apply them.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema.ts",
  out: "./migrations",
});
