/**
 * Readable names for ids the dashboard shows: rule types (`allow_models` -> "Allow models") and
 * provider ids (the catalogue's display name, `google-ai-studio` -> "Google AI Studio"). The ids
 * stay in the forms' values and the API; only the text a person reads changes.
 */
import type { RuleType } from "../db/schema";
import { getProvider } from "../catalog";

const RULE_TYPE_LABEL: Record<RuleType, string> = {
  allow_models: "Allow models",
  deny_models: "Deny models",
  allow_providers: "Allow providers",
  deny_providers: "Deny providers",
  allow_pricing: "Allow pricing",
  deny_pricing: "Deny pricing",
  allow_ip_cidrs: "Allow IP ranges",
  deny_ip_cidrs: "Deny IP ranges",
  allow_regions: "Allow regions",
  deny_regions: "Deny regions",
};

export const ruleTypeLabel = (t: RuleType): string => RULE_TYPE_LABEL[t];

/** A provider id of a rule or a request: catalogue name, `custom` (every custom provider) or `custom:<name>`. */
export function providerLabel(id: string): string {
  if (id === "custom") return "Custom providers (all)";
  if (id.startsWith("custom:")) return `${id.slice("custom:".length)} (custom)`;
  return getProvider(id)?.name ?? id;
}
