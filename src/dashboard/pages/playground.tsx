/** @jsxImportSource hono/jsx */
/**
 * Playground: chat with a model of the catalogue from the browser, without curl. A system prompt,
 * temperature, max tokens and streaming; each answer shows its model, provider, tokens, cost and
 * routing attempts, with a link to the request's page. Requests run as the project's playground
 * key (`POST /api/playground/chat/completions`), so that key's rules, limits and the project's
 * mode apply exactly as they would to an API call: a denied model answers with the rule's 403
 * message. The conversation lives in the page (playground.js); nothing is stored but the request log.
 */
import type { FC } from "hono/jsx";
import type { Env } from "../../env";
import { listModels } from "../../catalog";
import type { PageContext } from "../context";
import { Layout, PageHead } from "../layout";
import { providerLabel } from "../labels";
import { exampleModelIds } from "../rule-preview";
import { playgroundKeyFor } from "../../actions/playground";

export const ASSET_PLAYGROUND = "/dashboard/assets/playground.js";

export interface PlaygroundData {
  key: { id: string; projectId: string; projectName: string } | null;
  /** Chat models by maker, for the picker. */
  makers: Array<{ maker: string; models: Array<{ id: string; name: string }> }>;
  defaultModel: string;
}

export async function loadPlayground(env: Env, ctx: PageContext): Promise<PlaygroundData> {
  const byMaker = new Map<string, Array<{ id: string; name: string }>>();
  for (const m of listModels()) {
    if (m.kind !== "chat" || m.deactivatedAt) continue;
    const list = byMaker.get(m.maker) ?? [];
    list.push({ id: m.id, name: m.name });
    byMaker.set(m.maker, list);
  }
  const makers = [...byMaker.entries()].map(([maker, models]) => ({ maker, models })).sort((a, b) => a.maker.localeCompare(b.maker));
  return { key: await playgroundKeyFor(env, ctx.session.organizationId, ctx.project?.id), makers, defaultModel: exampleModelIds(1)[0] ?? "" };
}

export const PlaygroundPage: FC<{ ctx: PageContext; data: PlaygroundData }> = ({ ctx, data }) => {
  const key = data.key;
  return (
    <Layout title="Playground" ctx={ctx}>
      <PageHead
        title="Playground"
        sub={key ? `Runs as the playground key of ${key.projectName}: its rules, limits and the project's mode apply; usage is billed and logged like any request.` : undefined}
      />
      {key ? (
        <div class="playground" data-playground={`/api/playground/chat/completions?project=${encodeURIComponent(key.projectId)}`} data-project={key.projectId}>
          <form class="card pg-settings" id="pg-form" aria-labelledby="pg-settings-title">
            <h2 id="pg-settings-title">Settings</h2>
            <div class="field">
              <label for="pg-model">Model</label>
              <select id="pg-model" name="model">
                {data.makers.map((g) => (
                  <optgroup label={providerLabel(g.maker)}>
                    {g.models.map((m) => (
                      <option value={m.id} selected={m.id === data.defaultModel}>
                        {`${m.name} (${m.id})`}
                      </option>
                    ))}
                  </optgroup>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="pg-system">System prompt</label>
              <textarea id="pg-system" name="system" rows={4} placeholder="optional, e.g. You are a concise assistant."></textarea>
            </div>
            <div class="row">
              <div class="field">
                <label for="pg-temperature">Temperature</label>
                <input id="pg-temperature" name="temperature" type="number" min={0} max={2} step={0.1} placeholder="model's default" />
              </div>
              <div class="field">
                <label for="pg-max-tokens">Max tokens</label>
                <input id="pg-max-tokens" name="max_tokens" type="number" min={1} step={1} placeholder="model's default" />
              </div>
            </div>
            <label class="check">
              <input id="pg-stream" type="checkbox" name="stream" checked />
              Stream the answer
            </label>
            <p class="hint">
              Rules of this key: <a href={`/dashboard/access?project=${encodeURIComponent(key.projectId)}&key=${encodeURIComponent(key.id)}`}>Access rules</a>. Add a deny rule there and send again to see its 403 message here.
            </p>
          </form>
          <section class="card pg-chat" aria-labelledby="pg-chat-title">
            <div class="page-head">
              <h2 id="pg-chat-title">Conversation</h2>
              <button class="sm" type="button" id="pg-clear">
                Clear conversation
              </button>
            </div>
            <div id="pg-log" class="pg-log" role="log" aria-live="polite" aria-label="Conversation">
              <p class="empty" id="pg-empty">
                Send a message to start. Each answer shows its model, provider, tokens, cost and routing.
              </p>
            </div>
            <form id="pg-send" aria-label="Send a message">
              <div class="field">
                <label for="pg-message">Message</label>
                <textarea id="pg-message" rows={3} required placeholder="Ask something… (Ctrl+Enter sends)"></textarea>
              </div>
              <p class="alert" role="alert" id="pg-error"></p>
              <div class="actions">
                <button class="primary" type="submit" id="pg-submit">
                  Send
                </button>
                <button type="button" id="pg-stop" disabled>
                  Stop
                </button>
              </div>
            </form>
          </section>
          <noscript>
            <p class="alert">The playground needs JavaScript.</p>
          </noscript>
          <script src={ASSET_PLAYGROUND} defer></script>
        </div>
      ) : (
        <p class="empty">This organization has no playground key. Create a key on the Keys page and use it with any OpenAI-compatible client.</p>
      )}
    </Layout>
  );
};
