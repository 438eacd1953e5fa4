/**
 * The reference's sections, named for what a reader does and in the order a newcomer needs them:
 * chat and models first, the operator's API last. A path belongs to the first group that claims it.
 */
export interface DocGroup {
  name: string;
  claims: (parts: readonly string[]) => boolean;
}

const v1 = (...names: string[]) => (p: readonly string[]) => p[0] === "v1" && names.includes(p[1] ?? "");

export const DOC_GROUPS: readonly DocGroup[] = [
  { name: "Chat and models", claims: v1("chat", "messages", "responses", "models", "embeddings", "moderations") },
  { name: "Images and video", claims: v1("images", "videos") },
  { name: "End-user sessions", claims: v1("sessions") },
  { name: "MCP and OAuth", claims: (p) => ["mcp", "sse", "messages", "oauth", ".well-known"].includes(p[0] ?? "") },
  { name: "Keys, projects and the organization (master API)", claims: v1("master") },
  { name: "Dashboard session API", claims: (p) => p[0] === "api" },
  { name: "Gateway: other endpoints", claims: (p) => p[0] === "v1" && p[1] !== "admin" },
  { name: "Operator (admin API)", claims: v1("admin") },
  { name: "Health, pages and this reference", claims: () => true },
];

/** The group of an OpenAPI path (`/v1/chat/completions` -> "Chat and models"). */
export function groupOf(path: string): string {
  const parts = path.split("/").filter(Boolean);
  return (DOC_GROUPS.find((g) => g.claims(parts)) ?? DOC_GROUPS[DOC_GROUPS.length - 1]!).name;
}

/** Position of a group in the reference (unknown names last). */
export const groupRank = (name: string): number => {
  const i = DOC_GROUPS.findIndex((g) => g.name === name);
  return i < 0 ? DOC_GROUPS.length : i;
};
