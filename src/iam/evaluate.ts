/**
 * IAM evaluation (spec section 5). The signature is the contract used by routing, the models
 * catalogue and moderation; the body is completed by the IAM work (issue 5).
 */
import type { KeyContext } from "../auth/key-context";

export interface AccessRequest {
  /** Canonical model id, or `<customProvider>/<model>` for custom models. */
  model: string;
  /** Provider id (`openai`, ...) or `custom:<name>` for a custom provider. */
  provider: string;
  /** Whether the model/mapping is free (pricing rules). */
  free: boolean;
  /** First X-Forwarded-For entry, or null when unknown. */
  clientIp: string | null;
  /** Moderation requests skip model and pricing rules. */
  kind: "chat" | "image" | "video" | "moderation" | "catalog";
}

export type AccessDecision =
  | { allowed: true }
  | { allowed: false; level: "team" | "member" | "key"; message: string };

export function evaluateAccess(_ctx: KeyContext, _req: AccessRequest): AccessDecision {
  return { allowed: true };
}
