/**
 * The normalized form of a ROUTE paywall's path: one leading slash, no repeated slashes,
 * no trailing slash (except the root), no query or fragment.
 */
export function normalizeRoute(route: string): string {
  const path = route.split(/[?#]/, 1)[0] ?? "";
  const collapsed = `/${path.split("/").filter(Boolean).join("/")}`;
  return collapsed;
}
