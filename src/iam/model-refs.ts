/**
 * Model references of IAM rules (`allow_models`, `deny_models`) resolved to what evaluation
 * compares (src/iam/evaluate.ts): a catalogue id or alias -> the canonical id; `provider/model` ->
 * `provider/<canonical id>` when that provider serves it; `<custom provider>/<model>` -> itself
 * when the organization has that custom provider (its models may be registered later). Anything else is refused, naming the entry,
 * so a rule can never silently miss the model it was meant for. Pure.
 */
import { findModel, isProviderId, mappingFor } from "../catalog";

export type CanonicalModels = { ok: true; models: string[] } | { ok: false; index: number; message: string };

export function canonicalModelRefs(entries: readonly string[], customProviderNames: readonly string[]): CanonicalModels {
  const out: string[] = [];
  for (const [index, raw] of entries.entries()) {
    const entry = raw.trim();
    const direct = findModel(entry);
    if (direct) {
      out.push(direct.id.toLowerCase());
      continue;
    }
    const slash = entry.indexOf("/");
    const prefix = slash > 0 ? entry.slice(0, slash) : "";
    const rest = slash > 0 ? entry.slice(slash + 1) : "";
    if (prefix && isProviderId(prefix)) {
      const model = findModel(rest);
      if (model && mappingFor(model, prefix)) {
        out.push(`${prefix}/${model.id}`.toLowerCase());
        continue;
      }
      return { ok: false, index, message: model ? `the provider '${prefix}' does not serve '${model.id}'` : `'${rest}' is not a catalogue model` };
    }
    if (prefix && rest && customProviderNames.includes(prefix)) {
      out.push(entry.toLowerCase());
      continue;
    }
    return {
      ok: false,
      index,
      message: `'${entry}' is not a known model: use a catalogue id or alias, 'provider/model', or '<custom provider>/<model>' of one of this organization's custom providers`,
    };
  }
  return { ok: true, models: [...new Set(out)] };
}
