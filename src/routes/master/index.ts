/**
 * Master API (contract section 4): `Authorization: Bearer <master key>`, every route scoped to the
 * master key's organization. Each resource lives in its own router; this file only mounts them.
 */
import { webhookRoutes } from "./webhooks";
import { Hono } from "hono";
import type { AppEnv } from "../../app-types";
import { requireMasterKey } from "../../auth/master-auth";
import { projectRoutes } from "./projects";
import { memberRoutes } from "./members";
import { teamRoutes } from "./teams";
import { providerKeyRoutes } from "./provider-keys";
import { customProviderRoutes } from "./custom-providers";
import { customModelRoutes } from "./custom-models";
import { organizationRoutes } from "./organization";
import { masterKeyRoutes } from "./keys";
import { masterIamRoutes } from "./iam";
import { masterMasterKeyRoutes } from "./master-keys";
import { masterCreditRoutes } from "./credits";
import { masterLogRoutes } from "./logs";
import { spendLimitRoutes } from "./spend-limits";
import { masterPlatformRoutes } from "./platform";
import { masterAuditRoutes } from "../audit-log";
import { masterSsoRoutes } from "../sso";

export const masterRoutes = new Hono<AppEnv>();
masterRoutes.use("*", requireMasterKey);

masterRoutes.route("/projects", projectRoutes);
masterRoutes.route("/members", memberRoutes);
masterRoutes.route("/teams", teamRoutes);
masterRoutes.route("/provider-keys", providerKeyRoutes);
masterRoutes.route("/custom-providers", customProviderRoutes);
masterRoutes.route("/custom-models", customModelRoutes);
masterRoutes.route("/organization", organizationRoutes);
masterRoutes.route("/master-keys", masterMasterKeyRoutes);
masterRoutes.route("/credits", masterCreditRoutes);
masterRoutes.route("/logs", masterLogRoutes);
masterRoutes.route("/audit-log", masterAuditRoutes);
masterRoutes.route("/webhooks", webhookRoutes);
masterRoutes.route("/sso", masterSsoRoutes);
masterRoutes.route("/", masterPlatformRoutes);

// master-routes:begin (keys and IAM rule routes: one line each, added by their owner)
masterRoutes.route("/keys", masterKeyRoutes);
masterRoutes.route("/", masterIamRoutes);
masterRoutes.route("/", spendLimitRoutes);
// master-routes:end
