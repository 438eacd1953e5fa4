/** @jsxImportSource hono/jsx */
/**
 * What the client script needs to refuse an unknown model id as soon as it is added to a rule
 * (before the save; the server's check in src/iam/model-refs.ts stays the authority): catalogue
 * ids and aliases, provider ids and the organization's custom providers, as a JSON data block
 * (not executed, so the CSP's `script-src 'self'` is unaffected).
 */
import type { FC } from "hono/jsx";
import { raw } from "hono/html";
import { listModels } from "../catalog";
import { PROVIDER_IDS } from "../catalog/types";

export interface ModelRefs {
  refs: string[];
  providers: string[];
  /** null: not loaded on this page; `<name>/<model>` of an unknown prefix is left to the server. */
  custom: string[] | null;
}

export function modelRefs(custom: string[] | null): ModelRefs {
  const refs = new Set<string>();
  for (const m of listModels()) for (const name of [m.id, ...(m.aliases ?? [])]) refs.add(name.toLowerCase());
  return { refs: [...refs], providers: [...PROVIDER_IDS], custom };
}

/** `<` escaped so the JSON cannot end the element. */
export const ModelRefsData: FC<{ custom: string[] | null }> = ({ custom }) => (
  <script type="application/json" id="model-refs">
    {raw(JSON.stringify(modelRefs(custom)).replace(/</g, "\\u003c"))}
  </script>
);
