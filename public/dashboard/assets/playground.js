// The dashboard playground (src/dashboard/pages/playground.tsx): keeps the conversation in the
// page, sends it to the session API's playground door (the project's playground key, same
// pipeline as /v1/chat/completions), streams the answer as Server-Sent Events and shows each
// answer's model, provider, tokens, cost and routing. No framework; CSP script-src 'self'.
"use strict";
(() => {
  const root = document.querySelector("[data-playground]");
  if (!root) return;
  const $ = (id) => document.getElementById(id);
  const url = root.dataset.playground;
  const project = root.dataset.project;
  const log = $("pg-log");
  const errorLine = $("pg-error");
  /** The conversation so far, as the API takes it (the system prompt is added at send time). */
  let history = [];
  let controller = null;

  function bubble(role, text) {
    $("pg-empty")?.remove();
    const item = document.createElement("div");
    item.className = `pg-msg ${role}`;
    const who = document.createElement("div");
    who.className = "pg-role";
    who.textContent = role === "user" ? "You" : "Assistant";
    const body = document.createElement("div");
    body.className = "pg-text";
    body.textContent = text;
    item.append(who, body);
    log.append(item);
    log.scrollTop = log.scrollHeight;
    return item;
  }

  /** "$0.000243": every digit up to 10 decimals (never an exponent), since single answers cost fractions of a cent. */
  function usd(n) {
    if (typeof n !== "number" || !Number.isFinite(n)) return "—";
    return n === 0 ? "$0" : n >= 0.01 ? `$${n.toFixed(4)}` : `$${n.toFixed(10).replace(/0+$/, "")}`;
  }

  function showMeta(item, data, ms) {
    const meta = data?.metadata ?? {};
    const usage = data?.usage ?? {};
    const box = document.createElement("dl");
    box.className = "pg-meta";
    const add = (label, value) => {
      const dt = document.createElement("dt");
      dt.textContent = label;
      const dd = document.createElement("dd");
      if (value instanceof Node) dd.append(value);
      else dd.textContent = value;
      box.append(dt, dd);
    };
    add("Model", meta.used_model || data?.model || "—");
    add("Provider", meta.used_provider || "—");
    add("Tokens", `${usage.prompt_tokens ?? 0} prompt + ${usage.completion_tokens ?? 0} completion`);
    add("Cost", `${usd(usage.cost)}${meta.cached ? " (from the cache)" : ""}`);
    add("Time", `${(ms / 1000).toFixed(1)} s`);
    const attempts = Array.isArray(meta.routing) ? meta.routing : [];
    add("Routing", attempts.length ? attempts.map((a) => `${a.provider}/${a.model} ${a.succeeded ? "✓" : "✗"} ${a.status_code}${a.credentialSource === "byok" ? " (own key)" : ""}`).join(" → ") : "—");
    if (meta.log_id) {
      const a = document.createElement("a");
      a.href = `/dashboard/requests/${encodeURIComponent(meta.log_id)}?project=${encodeURIComponent(project)}`;
      a.textContent = "Request details";
      add("Request", a);
    }
    item.append(box);
  }

  function requestBody(stream) {
    const form = $("pg-form");
    const messages = [];
    const system = form.elements.system.value.trim();
    if (system) messages.push({ role: "system", content: system });
    messages.push(...history);
    const body = { model: form.elements.model.value, messages, stream };
    const t = form.elements.temperature.value.trim();
    const mt = form.elements.max_tokens.value.trim();
    if (t !== "") body.temperature = Number(t);
    if (mt !== "") body.max_tokens = Number(mt);
    if (stream) body.stream_options = { include_usage: true };
    return body;
  }

  /** Reads an SSE body: text deltas into the bubble, the last chunk with usage kept for the summary. */
  async function readStream(res, textEl) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let text = "";
    let last = null;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        for (const line of event.split("\n")) {
          if (!line.startsWith("data:")) continue;
          const payload = line.slice(5).trim();
          if (payload === "[DONE]") continue;
          let chunk;
          try {
            chunk = JSON.parse(payload);
          } catch {
            continue;
          }
          if (chunk.error) throw new Error(chunk.error.message ?? "The stream ended with an error.");
          const delta = chunk.choices?.[0]?.delta?.content;
          if (typeof delta === "string") {
            text += delta;
            textEl.textContent = text;
            log.scrollTop = log.scrollHeight;
          }
          if (chunk.usage || chunk.metadata) last = { ...(last ?? {}), ...chunk };
        }
      }
    }
    return { text, data: last };
  }

  async function send(ev) {
    ev.preventDefault();
    const input = $("pg-message");
    const content = input.value.trim();
    if (!content || controller) return;
    errorLine.textContent = "";
    history.push({ role: "user", content });
    bubble("user", content);
    input.value = "";
    const stream = $("pg-stream").checked;
    const answer = bubble("assistant", "…");
    const textEl = answer.querySelector(".pg-text");
    controller = new AbortController();
    $("pg-submit").disabled = true;
    $("pg-stop").disabled = false;
    const started = performance.now();
    try {
      const res = await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        signal: controller.signal,
        headers: { "content-type": "application/json", accept: stream ? "text/event-stream" : "application/json", "x-csrf-token": document.querySelector('meta[name="csrf-token"]')?.getAttribute("content") ?? "" },
        body: JSON.stringify(requestBody(stream)),
      });
      if (!res.ok) {
        const data = await res.json().catch(() => null);
        throw new Error(data?.error?.message ?? `Request failed (${res.status})`);
      }
      let text;
      let data;
      if (stream) ({ text, data } = await readStream(res, textEl));
      else {
        data = await res.json();
        text = data?.choices?.[0]?.message?.content ?? "";
        textEl.textContent = text;
      }
      if (!text) textEl.textContent = "(empty answer)";
      history.push({ role: "assistant", content: text });
      showMeta(answer, data, performance.now() - started);
    } catch (err) {
      // The question stays on screen; it leaves the history so the next send does not repeat it.
      history.pop();
      answer.remove();
      errorLine.textContent = err?.name === "AbortError" ? "Stopped." : String(err?.message ?? err);
    } finally {
      controller = null;
      $("pg-submit").disabled = false;
      $("pg-stop").disabled = true;
      log.scrollTop = log.scrollHeight;
    }
  }

  $("pg-send").addEventListener("submit", send);
  $("pg-message").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) $("pg-send").requestSubmit();
  });
  $("pg-stop").addEventListener("click", () => controller?.abort());
  $("pg-clear").addEventListener("click", () => {
    history = [];
    log.replaceChildren();
    errorLine.textContent = "";
  });
})();
