/**
 * Read-only tools: get-account, get-usage, get-usage-breakdown. They incur no charges and stay
 * available when the key is over a spend limit (authentication used `checkKey`, not admission).
 * A store failure is a tool error, never a zero report.
 */
import type { McpServer } from "@modelcontextprotocol/server";
import type { McpToolContext } from "../context";
import { AnalyticsError, getUsageBreakdown, getUsageReport, loadMemberView, organizationCreditBalance, resolveAnalyticsScope } from "../../usage/analytics";
import { keyStateStub } from "../../durable-objects/key-state";
import { formatUsd } from "../../billing/money";
import { settleQueuedFor } from "../../billing/settle";
import { accountOutput, breakdownOutput, getUsageBreakdownInput, getUsageInput, usageOutput } from "../schemas";
import { jsonResult, toolError } from "./result";
import { TOOL_TEXT } from "./descriptions";

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

function analyticsFailure(err: unknown) {
  if (err instanceof AnalyticsError) return toolError(err.message);
  console.error("mcp analytics tool failed", err instanceof Error ? err.message : String(err));
  return toolError("The analytics store is unavailable right now; try again shortly.");
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function registerAnalyticsTools(server: McpServer, ctx: McpToolContext): void {
  server.registerTool(
    "get-account",
    {
      ...TOOL_TEXT["get-account"],
      outputSchema: accountOutput,
      annotations: READ_ONLY,
    },
    async () => {
      try {
        const auth = ctx.auth.context;
        const scope = await resolveAnalyticsScope(ctx.env, auth);
        const [member, spend] = await Promise.all([
          loadMemberView(ctx.env, auth.key.createdBy, auth.organization.id),
          settleQueuedFor(ctx.env, auth.key.id).then(() => keyStateStub(ctx.env, auth.key.id).getSpend()).catch(() => null),
        ]);
        if (!member) return toolError("The key's creator is no longer a member of the organization.");
        const privileged = scope.role === "owner" || scope.role === "admin";
        const creditBalanceUsd = privileged ? await organizationCreditBalance(ctx.env, auth.organization.id) : undefined;
        const k = auth.key;
        return jsonResult({
          // The account id is shared across organizations: only a member who accepted the
          // membership has it shown (docs/security.md: never for a pending one).
          user: { id: member.acceptedAt === null ? null : member.userId, email: member.email, name: member.name },
          organization: { id: auth.organization.id, name: member.orgName, plan: auth.organization.plan, ...(creditBalanceUsd !== undefined ? { creditBalanceUsd } : {}) },
          project: { id: auth.project.id, name: scope.projectName, mode: auth.project.mode },
          role: scope.role,
          analyticsScope: { type: scope.type, description: scope.description },
          apiKey: {
            id: k.id,
            description: k.description,
            kind: k.kind,
            status: k.status,
            expiresAt: iso(k.expiresAt),
            spendingLimits: {
              usageLimitUsd: k.usageLimit,
              periodUsageLimitUsd: k.periodUsageLimit,
              periodUsageDurationValue: k.periodUsageDurationValue,
              periodUsageDurationUnit: k.periodUsageDurationUnit,
              usageUsd: spend ? formatUsd(spend.usage) : null,
              periodUsageUsd: spend && k.periodUsageLimit ? formatUsd(spend.periodUsage) : null,
              periodStartedAt: spend ? iso(spend.periodStartedAt) : null,
            },
          },
          authentication: { method: ctx.auth.via, oauthClientId: ctx.auth.oauthClientId },
        });
      } catch (err) {
        return analyticsFailure(err);
      }
    },
  );

  server.registerTool(
    "get-usage",
    {
      ...TOOL_TEXT["get-usage"],
      inputSchema: getUsageInput,
      outputSchema: usageOutput,
      annotations: READ_ONLY,
    },
    async (args) => {
      try {
        const scope = await resolveAnalyticsScope(ctx.env, ctx.auth.context);
        return jsonResult(await getUsageReport(ctx.env, scope, args));
      } catch (err) {
        return analyticsFailure(err);
      }
    },
  );

  server.registerTool(
    "get-usage-breakdown",
    {
      ...TOOL_TEXT["get-usage-breakdown"],
      inputSchema: getUsageBreakdownInput,
      outputSchema: breakdownOutput,
      annotations: READ_ONLY,
    },
    async (args) => {
      try {
        const scope = await resolveAnalyticsScope(ctx.env, ctx.auth.context);
        return jsonResult(
          await getUsageBreakdown(ctx.env, scope, {
            from: args.from,
            to: args.to,
            groupBy: args.group_by,
            sortBy: args.sort_by,
            limit: args.limit,
            offset: args.offset,
          }),
        );
      } catch (err) {
        return analyticsFailure(err);
      }
    },
  );
}
