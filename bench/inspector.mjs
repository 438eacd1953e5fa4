// @ts-check
/**
 * A connection to workerd's V8 inspector (the Switchboard target when listed, else the first):
 * `send(method, params)` resolves with the command's result (`{ error }` when the inspector refuses
 * it: workerd's implements only part of the protocol, e.g. no precise coverage); `onEvent(method,
 * fn)` hears the inspector's notifications. Both CPU profilers of the bench use it (bench/cpu-profile.mjs,
 * bench/integrations-profile.mjs).
 */
export async function connectInspector(port) {
  const { default: WebSocket } = await import("ws");
  const list = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const entry = list.find((t) => /switchboard/.test(t.title ?? t.id ?? "")) ?? list[0];
  const ws = new WebSocket(entry.webSocketDebuggerUrl);
  await new Promise((r) => ws.on("open", r));
  let id = 0;
  /** @type {Map<number, (result: any) => void>} */
  const pending = new Map();
  /** @type {Map<string, (params: any) => void>} */
  const listeners = new Map();
  ws.on("message", (m) => {
    const msg = JSON.parse(String(m));
    if (msg.id && pending.has(msg.id)) pending.get(msg.id)?.(msg.result ?? { error: msg.error });
    if (msg.method) listeners.get(msg.method)?.(msg.params);
  });
  return {
    /** @param {string} method @param {Record<string, unknown>} [params] @returns {Promise<any>} */
    send: (method, params = {}) =>
      new Promise((r) => {
        pending.set(++id, r);
        ws.send(JSON.stringify({ id, method, params }));
      }),
    /** @param {string} method @param {(params: any) => void} fn */
    onEvent: (method, fn) => void listeners.set(method, fn),
    close: () => ws.close(),
  };
}
