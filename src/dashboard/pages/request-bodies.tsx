/** @jsxImportSource hono/jsx */
/**
 * The request page's prompt and answer, for a project that keeps bodies (src/usage/bodies.ts):
 * each message with its role, text and image parts, tool calls with their arguments, tool results,
 * and reasoning folded. Anything else (a truncated body, another shape) is shown as JSON text.
 */
import type { FC } from "hono/jsx";
import type { BodiesStatus, StoredBodies } from "../../usage/bodies";

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v, null, 2));

/** A message's content: a string, or OpenAI content parts (text, image_url, ...). */
const Content: FC<{ content: unknown }> = ({ content }) => {
  if (content === null || content === undefined || content === "") return null;
  if (!Array.isArray(content)) return <pre class="body-text">{text(content)}</pre>;
  return (
    <>
      {content.map((part) => {
        if (isObject(part) && part.type === "text") return <pre class="body-text">{text(part.text)}</pre>;
        const url = isObject(part) && isObject(part.image_url) ? part.image_url.url : undefined;
        if (typeof url === "string" && /^(https:|data:image\/)/.test(url)) return <img class="body-image" src={url} alt="image in the prompt" loading="lazy" width={160} />;
        return <pre class="body-text">{text(part)}</pre>;
      })}
    </>
  );
};

const ToolCalls: FC<{ calls: unknown }> = ({ calls }) =>
  Array.isArray(calls) && calls.length ? (
    <ul class="tool-calls">
      {calls.map((c) => {
        const fn = isObject(c) && isObject(c.function) ? c.function : {};
        return (
          <li>
            <span class="muted small">tool call {isObject(c) ? String(c.id ?? "") : ""}</span> <code>{String(fn.name ?? "?")}</code>
            <pre class="body-text">{text(fn.arguments ?? "")}</pre>
          </li>
        );
      })}
    </ul>
  ) : null;

const Message: FC<{ m: Json }> = ({ m }) => (
  <li class="message">
    <strong>{String(m.role ?? "message")}</strong>
    {m.role === "tool" && m.tool_call_id ? <span class="muted small"> result of {String(m.tool_call_id)}</span> : null}
    {typeof m.reasoning === "string" && m.reasoning ? (
      <details>
        <summary>Reasoning</summary>
        <pre class="body-text">{m.reasoning}</pre>
      </details>
    ) : null}
    <Content content={m.content} />
    <ToolCalls calls={m.tool_calls} />
  </li>
);

function requestMessages(body: unknown): Json[] | null {
  return isObject(body) && Array.isArray(body.messages) && body.messages.every(isObject) ? (body.messages as Json[]) : null;
}

function answerMessages(body: unknown): Json[] | null {
  if (!isObject(body) || !Array.isArray(body.choices)) return null;
  const out = body.choices.map((c) => (isObject(c) && isObject(c.message) ? c.message : null));
  return out.every((m): m is Json => m !== null) ? out : null;
}

export const RequestBodies: FC<{ bodies: StoredBodies | null; kept: boolean; status?: BodiesStatus | null }> = ({ bodies, kept, status }) => {
  if (!bodies && status === "dropped") {
    return (
      <section class="card" aria-labelledby="req-bodies">
        <h2 id="req-bodies">Prompt and answer</h2>
        <p class="empty">Not stored: they could not be queued for storage (the record itself is complete).</p>
      </section>
    );
  }
  if (!bodies) {
    return (
      <section class="card" aria-labelledby="req-bodies">
        <h2 id="req-bodies">Prompt and answer</h2>
        <p class="empty">{kept || status === "pending" ? "Not stored yet: bodies appear a few seconds after the request." : "Not kept: turn on “Keep each request's prompt and answer” for the project (Organization page)."}</p>
      </section>
    );
  }
  const prompt = requestMessages(bodies.requestBody);
  const answer = answerMessages(bodies.responseBody);
  const rest = isObject(bodies.requestBody) ? Object.fromEntries(Object.entries(bodies.requestBody).filter(([k]) => k !== "messages")) : null;
  return (
    <section class="card" aria-labelledby="req-bodies">
      <h2 id="req-bodies">Prompt and answer</h2>
      {bodies.truncated ? <p class="muted small">Cut at the stored size limit: {[bodies.truncated.request ? "request" : "", bodies.truncated.response ? "answer" : ""].filter(Boolean).join(" and ")}.</p> : null}
      <h3>Prompt</h3>
      {prompt ? (
        <ol class="messages">
          {prompt.map((m) => (
            <Message m={m} />
          ))}
        </ol>
      ) : (
        <pre class="body-text">{text(bodies.requestBody)}</pre>
      )}
      {rest && Object.keys(rest).length ? (
        <details>
          <summary>Parameters</summary>
          <pre class="body-text">{JSON.stringify(rest, null, 2)}</pre>
        </details>
      ) : null}
      <h3>Answer</h3>
      {answer ? (
        <ol class="messages">
          {answer.map((m) => (
            <Message m={m} />
          ))}
        </ol>
      ) : (
        <pre class="body-text">{text(bodies.responseBody)}</pre>
      )}
    </section>
  );
};
