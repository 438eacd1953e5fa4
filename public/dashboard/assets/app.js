// Switchboard dashboard island: turns `<form data-api>` into JSON calls to the session API
// (same origin, HttpOnly cookie + x-csrf-token), shows a new key's secret once, copies it,
// and a few small conveniences (auto-submit switchers, rule editor fields, CIDR checks).
// No framework, no build step; served as a static asset (CSP: script-src 'self').
"use strict";
(() => {
  const $ = (sel, root = document) => root.querySelector(sel);
  const csrf = () => $('meta[name="csrf-token"]')?.getAttribute("content") ?? "";

  function setPath(obj, path, value) {
    const parts = path.split(".");
    let o = obj;
    for (let i = 0; i < parts.length - 1; i++) o = o[parts[i]] ??= {};
    o[parts[parts.length - 1]] = value;
  }
  function getPath(obj, path) {
    return path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);
  }

  /** One field's JSON value; undefined leaves it out. */
  function valueOf(el) {
    const t = el.dataset.type;
    if (el.type === "checkbox") return el.checked;
    const v = el.value.trim();
    if (v === "") return el.dataset.empty === "null" ? null : undefined;
    if (t === "int") return Number(v);
    if (t === "list") return v.split(/[\s,]+/).filter(Boolean);
    // datetime-local has no zone; the pages label these fields UTC.
    if (t === "datetime") return new Date(`${v}Z`).toISOString();
    return v;
  }

  /** JSON body of a form: dotted names nest, `data-type="list"` checkboxes collect into arrays. */
  function bodyOf(form, submitter) {
    const out = {};
    if (!submitter?.hasAttribute("data-only-json")) {
      for (const el of form.elements) {
        if ((!el.name && !el.dataset.ruleType) || el.disabled || el.closest("fieldset[disabled]") || ["submit", "button", "reset"].includes(el.type)) continue;
        if (el.type === "checkbox" && el.dataset.type === "list") {
          const list = getPath(out, el.name) ?? [];
          if (el.checked) list.push(el.value);
          setPath(out, el.name, list);
          continue;
        }
        // A field that only means something with another one (a TTL unit without a TTL value).
        if (el.dataset.with && !document.getElementById(el.dataset.with)?.value.trim()) continue;
        if (el.dataset.ruleType) {
          const list = el.value.split(/[\s,]+/).filter(Boolean);
          if (list.length) (out.iamRules ??= []).push({ ruleType: el.dataset.ruleType, ruleValue: { [el.dataset.ruleField]: list } });
          continue;
        }
        if (el.type === "radio" && !el.checked) continue;
        const v = valueOf(el);
        if (v !== undefined) setPath(out, el.name, v);
      }
    }
    if (submitter?.dataset.json) Object.assign(out, JSON.parse(submitter.dataset.json));
    return out;
  }

  function statusOf(form) {
    return $("[data-status]", form) ?? $("#flash");
  }

  async function submit(form, submitter) {
    const url = submitter?.dataset.api ?? form.dataset.api;
    const method = (submitter?.dataset.method ?? form.dataset.method ?? "POST").toUpperCase();
    const confirmText = submitter?.dataset.confirm ?? form.dataset.confirm;
    if (confirmText && !window.confirm(confirmText)) return;
    const status = statusOf(form);
    if (status) status.textContent = "";
    const buttons = [...form.querySelectorAll("button")];
    buttons.forEach((b) => (b.disabled = true));
    try {
      const init = { method, credentials: "same-origin", headers: { "x-csrf-token": csrf(), accept: "application/json" } };
      if (method !== "GET" && method !== "DELETE") {
        init.headers["content-type"] = "application/json";
        init.body = JSON.stringify(bodyOf(form, submitter));
      }
      const res = await fetch(url, init);
      const data = res.status === 204 ? null : await res.json().catch(() => null);
      if (!res.ok) {
        const msg = data?.error?.message ?? `Request failed (${res.status})`;
        if (status) status.textContent = msg;
        else window.alert(msg);
        return;
      }
      // A new secret (gateway, master or platform secret key, or a session token) is shown once.
      const created = data?.apiKey ?? data?.masterKey ?? data?.secretKey;
      if (typeof created?.token === "string") return showSecret(created.token, created.description, data.apiKey ? "" : data.masterKey ? "master key" : "platform secret key");
      const to = form.dataset.redirect;
      if (to) return window.location.assign(to);
      flashNext(submitter?.dataset.success ?? form.dataset.success ?? (method === "DELETE" ? "Deleted." : "Saved."));
      window.location.reload();
    } catch {
      if (status) status.textContent = "The gateway could not be reached; try again.";
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  }

  // ---------- success messages: kept across the reload that shows the change ----------
  function flashNext(message) {
    try {
      sessionStorage.setItem("swb-flash", message);
    } catch {
      // storage unavailable: the reloaded page shows the change itself
    }
  }
  function showFlash() {
    let message = null;
    try {
      message = sessionStorage.getItem("swb-flash");
      sessionStorage.removeItem("swb-flash");
    } catch {
      return;
    }
    const flash = $("#flash");
    if (!message || !flash) return;
    flash.classList.add("ok");
    flash.setAttribute("role", "status");
    flash.textContent = message;
  }

  // ---------- the secret, shown once, with the base URL and ready-to-run snippets ----------
  function snippets(token, model) {
    const base = `${location.origin}/v1`;
    const body = JSON.stringify({ model, messages: [{ role: "user", content: "Hello" }] });
    return {
      base,
      curl: `curl ${base}/chat/completions \\\n  -H "Authorization: Bearer ${token}" \\\n  -H "Content-Type: application/json" \\\n  -d '${body}'`,
      sdk: `from openai import OpenAI\n\nclient = OpenAI(base_url="${base}", api_key="${token}")\nreply = client.chat.completions.create(model="${model}", messages=[{"role": "user", "content": "Hello"}])\nprint(reply.choices[0].message.content)`,
    };
  }
  // `other`: a master or platform secret key (not for /v1/chat/completions): no usage snippets.
  function showSecret(token, description, other) {
    const dialog = $("#secret-dialog");
    const input = $("#secret-value");
    if (!dialog || !input) return window.location.reload();
    input.value = token;
    const title = $("#secret-title");
    if (title) title.textContent = `Copy your new ${other || "API key"}`;
    for (const el of dialog.querySelectorAll("h3, .secret:has(#secret-base), #secret-base-hint, .snippet")) el.style.display = other ? "none" : "";
    const label = $("#secret-for");
    if (label) label.textContent = description ? `Key “${description}”.` : "";
    const s = snippets(token, dialog.dataset.model || "gpt-4o-mini");
    const fill = (id, text) => {
      const el = document.getElementById(id);
      if (el) "value" in el ? (el.value = text) : (el.textContent = text);
    };
    fill("secret-base", s.base);
    fill("secret-curl", s.curl);
    fill("secret-sdk", s.sdk);
    dialog.addEventListener("close", () => {
      input.value = "";
      ["secret-curl", "secret-sdk"].forEach((id) => fill(id, ""));
      flashNext(description ? `Key “${description}” is ready.` : "The key is ready.");
      window.location.reload();
    }, { once: true });
    dialog.showModal();
    input.select();
  }

  async function copy(button) {
    const target = document.getElementById(button.dataset.copy);
    if (!target) return;
    const text = "value" in target ? target.value : target.textContent ?? "";
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      if ("select" in target) target.select();
      document.execCommand("copy");
    }
    const before = button.textContent;
    button.textContent = "Copied";
    setTimeout(() => (button.textContent = before), 1500);
  }

  // ---------- rule editor ----------
  const FIELD = { models: "models", providers: "providers", pricing: "pricingType", ip_cidrs: "ipCidrs" };
  function syncRuleForm(form) {
    const type = form.elements.ruleType?.value ?? "";
    const field = FIELD[type.replace(/^(allow|deny)_/, "")];
    for (const fs of form.querySelectorAll("fieldset[data-field]")) {
      const on = fs.dataset.field === field;
      fs.disabled = !on;
      fs.hidden = !on;
    }
    updatePreview(form);
  }

  // The 403 message of the rule being typed: the server renders each type's message for a sample
  // (data-preview) and names the word standing for the refused value (data-sample); that word is
  // replaced by what the typed values refuse.
  const listIn = (el) => (el?.value ?? "").split(/[\s,]+/).filter(Boolean);
  function v4(ip) {
    const p = ip.split(".").map(Number);
    return p.length === 4 && p.every((n) => n >= 0 && n <= 255) ? ((p[0] << 24) >>> 0) + (p[1] << 16) + (p[2] << 8) + p[3] : null;
  }
  function inRange(ip, cidr) {
    const [base, bits] = cidr.split("/");
    const a = v4(ip);
    const b = v4(base ?? "");
    if (a === null || b === null) return false; // an IPv6 range never holds these IPv4 samples (and vice versa)
    const n = Number(bits);
    const mask = n === 0 ? 0 : (0xffffffff << (32 - n)) >>> 0;
    return ((a & mask) >>> 0) === ((b & mask) >>> 0);
  }
  function refusedValue(form, type) {
    const allow = type.startsWith("allow_");
    const field = FIELD[type.replace(/^(allow|deny)_/, "")];
    if (field === "models") {
      const list = listIn(form.elements["ruleValue.models"]);
      if (!allow) return list[0];
      const taken = new Set(list.map((m) => m.toLowerCase()));
      return [...document.querySelectorAll("#model-options option")].map((o) => o.value).find((id) => !taken.has(id.toLowerCase()));
    }
    if (field === "providers") {
      const boxes = [...form.querySelectorAll('input[name="ruleValue.providers"]')];
      if (!allow) {
        const first = boxes.find((b) => b.checked)?.value;
        return first === "custom" ? "custom:example" : first;
      }
      return boxes.find((b) => !b.checked && !b.value.startsWith("custom"))?.value;
    }
    if (field === "pricingType") {
      const v = form.elements["ruleValue.pricingType"]?.value;
      return allow ? (v === "free" ? "paid" : "free") : v;
    }
    const cidrs = listIn(form.elements["ruleValue.ipCidrs"]);
    if (!allow) return cidrs[0]?.split("/")[0];
    return (form.dataset.outsideIps ?? "").split(" ").find((ip) => ip && !cidrs.some((c) => inRange(ip, c)));
  }
  function updatePreview(form) {
    const preview = $("p[data-preview]", form);
    const option = form.elements.ruleType?.selectedOptions?.[0];
    if (!preview || !option?.dataset.preview) return;
    const value = refusedValue(form, option.value);
    preview.textContent = value ? option.dataset.preview.replace(option.dataset.sample, value) : option.dataset.preview;
  }

  // ---------- model ids: refused as soon as they are added (the server's wording, src/iam/model-refs.ts) ----------
  let refsCache = null;
  function modelRefs() {
    if (!refsCache) {
      const el = document.getElementById("model-refs");
      const data = el ? JSON.parse(el.textContent || "{}") : {};
      refsCache = { refs: new Set(data.refs ?? []), providers: new Set(data.providers ?? []), custom: data.custom ?? null };
    }
    return refsCache;
  }
  /** null when the entry is accepted, else why not. */
  function modelProblem(entry) {
    const { refs, providers, custom } = modelRefs();
    if (!refs.size || refs.has(entry.toLowerCase())) return null;
    const slash = entry.indexOf("/");
    const prefix = slash > 0 ? entry.slice(0, slash) : "";
    const rest = slash > 0 ? entry.slice(slash + 1) : "";
    if (prefix && providers.has(prefix)) return refs.has(rest.toLowerCase()) ? null : `'${rest}' is not a catalogue model`;
    if (prefix && rest && (custom === null || custom.includes(prefix))) return null;
    return `'${entry}' is not a known model: use a catalogue id or alias, 'provider/model', or '<custom provider>/<model>' of one of this organization's custom providers`;
  }
  /** `block`: the form cannot be sent while the problem stands (not for the search field, which is not sent). */
  function showModelProblem(el, problem, block = true) {
    const msg = $(`#${el.getAttribute("aria-describedby")?.split(" ").pop()}`);
    el.setAttribute("aria-invalid", problem ? "true" : "false");
    if (block) el.setCustomValidity(problem ?? "");
    if (msg) msg.textContent = problem ?? "";
  }
  function checkModelList(el) {
    const search = document.getElementById("model-search");
    if (search && el.id === "rule-models") search.setAttribute("aria-invalid", "false");
    showModelProblem(el, listIn(el).map(modelProblem).find(Boolean) ?? null);
  }

  const CIDR4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}\/(3[0-2]|[12]?\d)$/;
  const CIDR6 = /^[0-9a-f:.]+\/(12[0-8]|1[01]\d|[1-9]?\d)$/i;
  function checkCidrs(el) {
    const bad = el.value.split(/[\s,]+/).filter(Boolean).filter((c) => !(CIDR4.test(c) || (c.includes(":") && CIDR6.test(c))));
    const msg = $(`#${el.getAttribute("aria-describedby")?.split(" ").pop()}`);
    el.setAttribute("aria-invalid", bad.length ? "true" : "false");
    el.setCustomValidity(bad.length ? `Not a CIDR: ${bad.join(", ")}` : "");
    if (msg) msg.textContent = bad.length ? `Not a valid CIDR: ${bad.join(", ")} (single addresses are written /32 or /128).` : "";
  }

  // ---------- membership acceptance (/dashboard/accept#token=...) ----------
  // The token lives in the URL fragment (never sent to the server); it is read once and cleared.
  async function postJson(url, body) {
    const res = await fetch(url, { method: "POST", credentials: "same-origin", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(body) });
    const data = await res.json().catch(() => null);
    if (!res.ok) throw new Error(data?.error?.message ?? `Request failed (${res.status})`);
    return data;
  }
  function acceptFlow(root) {
    const show = (id) => ["accept-token", "accept-form", "accept-done"].forEach((x) => ($(`#${x}`).hidden = x !== id));
    const status = $("#accept-status");
    const fail = (err) => (status.textContent = err instanceof Error ? err.message : String(err));
    let token = new URLSearchParams(location.hash.slice(1)).get("token") ?? "";
    if (location.hash) history.replaceState(null, "", location.pathname);
    async function preview() {
      status.textContent = "";
      try {
        const p = await postJson("/api/memberships/preview", { token });
        $("#accept-org").textContent = p.organization.name;
        $("#accept-role").textContent = p.role;
        $("#accept-email").textContent = p.email;
        $("#accept-password-field").hidden = !p.passwordRequired;
        $("#accept-password").disabled = !p.passwordRequired;
        $("#accept-password").required = p.passwordRequired;
        show("accept-form");
      } catch (err) {
        fail(err);
        show("accept-token");
      }
    }
    $("#accept-token", root).addEventListener("submit", (ev) => {
      ev.preventDefault();
      token = $("#accept-token-value").value.trim();
      void preview();
    });
    $("#accept-form", root).addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const pw = $("#accept-password");
      try {
        const r = await postJson("/api/memberships/accept", pw.disabled ? { token } : { token, password: pw.value });
        token = "";
        $("#accept-done-org").textContent = r.organization.name;
        $("#accept-sign-in").href = `/dashboard/sign-in?org=${encodeURIComponent(r.organization.id)}`;
        status.textContent = "";
        show("accept-done");
      } catch (err) {
        fail(err);
      }
    });
    if (token) void preview();
    else show("accept-token");
  }

  document.addEventListener("submit", (ev) => {
    const form = ev.target;
    if (!(form instanceof HTMLFormElement) || !form.dataset.api) return;
    ev.preventDefault();
    void submit(form, ev.submitter);
  });
  // ---------- tables: sort by any column, search, pages of 50 (or data-page-size), CSV export ----------
  // `table[data-enhance]`: a row followed by its `tr.edit-row` moves with it; `td[data-sort]` gives a
  // cell's exact value (numbers, costs) for sorting and CSV; `data-csv` names the export file.
  const cellValue = (td) => (td ? td.dataset.sort ?? td.textContent.replace(/\s+/g, " ").trim() : "");
  const numeric = (v) => (/^[\s$€£]*-?[\d,.]+[kKmMbB%]?(\s|$|\/)/.test(v) ? Number(v.replace(/[^\d.-]/g, " ").trim().split(/\s+/)[0]) : NaN);
  function compareValues(a, b) {
    const [x, y] = [numeric(a), numeric(b)];
    if (!Number.isNaN(x) && !Number.isNaN(y) && x !== y) return x - y;
    return a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
  }
  function enhanceTable(table, n) {
    const tbody = table.tBodies[0];
    if (!tbody) return;
    const groups = [];
    for (const tr of [...tbody.rows]) {
      if (tr.classList.contains("edit-row") && groups.length) groups[groups.length - 1].push(tr);
      else if (!tr.querySelector("td.empty")) groups.push([tr]);
    }
    if (!groups.length) return;
    const name = table.getAttribute("aria-label") || table.closest("section")?.querySelector("h2")?.textContent?.trim() || "table";
    const pageSize = Number(table.dataset.pageSize) || 50;
    const state = { query: "", col: -1, dir: 1, page: 0 };
    const bar = document.createElement("div");
    bar.className = "table-tools";
    const search = document.createElement("input");
    search.type = "search";
    search.id = `table-search-${n}`;
    search.placeholder = "Search…";
    search.setAttribute("aria-label", `Search ${name}`);
    bar.append(search);
    const count = document.createElement("span");
    count.className = "muted small";
    count.setAttribute("aria-live", "polite");
    const prev = Object.assign(document.createElement("button"), { type: "button", className: "sm", textContent: "Previous" });
    const next = Object.assign(document.createElement("button"), { type: "button", className: "sm", textContent: "Next" });
    prev.setAttribute("aria-label", `Previous page of ${name}`);
    next.setAttribute("aria-label", `Next page of ${name}`);
    bar.append(count, prev, next);
    if (table.dataset.csv) {
      const csv = Object.assign(document.createElement("button"), { type: "button", className: "sm", textContent: "Export CSV" });
      csv.setAttribute("aria-label", `Export ${name} as CSV`);
      csv.addEventListener("click", () => exportCsv(table, groups, table.dataset.csv));
      bar.append(csv);
    }
    (table.closest(".table-wrap") ?? table).before(bar);
    const heads = [...(table.tHead?.rows[0]?.cells ?? [])];
    heads.forEach((th, i) => {
      if (th.hasAttribute("data-nosort") || /^actions$/i.test(th.textContent.trim())) return;
      const b = Object.assign(document.createElement("button"), { type: "button", className: "sort" });
      b.append(...th.childNodes);
      th.append(b);
      th.setAttribute("aria-sort", "none");
      b.addEventListener("click", () => {
        state.dir = state.col === i ? -state.dir : 1;
        state.col = i;
        heads.forEach((h) => h.hasAttribute("aria-sort") && h.setAttribute("aria-sort", "none"));
        th.setAttribute("aria-sort", state.dir === 1 ? "ascending" : "descending");
        state.page = 0;
        render();
      });
    });
    function render() {
      const q = state.query.toLowerCase();
      let shown = groups.filter((g) => !q || g[0].textContent.toLowerCase().includes(q));
      if (state.col >= 0) shown = [...shown].sort((a, b) => state.dir * compareValues(cellValue(a[0].cells[state.col]), cellValue(b[0].cells[state.col])));
      const pages = Math.max(1, Math.ceil(shown.length / pageSize));
      state.page = Math.min(state.page, pages - 1);
      const from = state.page * pageSize;
      const visible = new Set(shown.slice(from, from + pageSize));
      for (const g of groups) g.forEach((tr) => (tr.hidden = !visible.has(g)));
      for (const g of shown) tbody.append(...g);
      count.textContent = shown.length ? `${from + 1}–${Math.min(from + pageSize, shown.length)} of ${shown.length}` : "No match";
      prev.hidden = next.hidden = pages === 1;
      prev.disabled = state.page === 0;
      next.disabled = state.page >= pages - 1;
    }
    search.addEventListener("input", () => {
      state.query = search.value.trim();
      state.page = 0;
      render();
    });
    prev.addEventListener("click", () => ((state.page -= 1), render()));
    next.addEventListener("click", () => ((state.page += 1), render()));
    render();
  }
  function exportCsv(table, groups, filename) {
    // csv.js: quoting, and a leading ' on cells a spreadsheet would run as formulas
    const quote = globalThis.SwitchboardCsv.cell;
    const heads = [...(table.tHead?.rows[0]?.cells ?? [])].map((th) => th.textContent.trim());
    const lines = [heads.map(quote).join(",")];
    for (const g of groups) lines.push([...g[0].cells].map((td) => quote(cellValue(td))).join(","));
    const url = URL.createObjectURL(new Blob([`${lines.join("\r\n")}\r\n`], { type: "text/csv" }));
    const a = Object.assign(document.createElement("a"), { href: url, download: filename });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }

  // ---------- light/dark toggle (theme.js applies the stored choice before paint) ----------
  const darkNow = () => (document.documentElement.dataset.theme ?? (matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light")) === "dark";
  function showTheme() {
    for (const b of document.querySelectorAll("[data-theme-toggle]")) b.setAttribute("aria-pressed", String(darkNow()));
  }
  function toggleTheme() {
    const next = darkNow() ? "light" : "dark";
    document.documentElement.dataset.theme = next;
    try {
      localStorage.setItem("swb-theme", next);
    } catch {
      // storage unavailable: the choice lasts for this page
    }
    showTheme();
  }

  document.addEventListener("click", (ev) => {
    const el = ev.target instanceof Element ? ev.target.closest("button") : null;
    if (!el) return;
    if (el.hasAttribute("data-theme-toggle")) toggleTheme();
    if (el.dataset.copy) void copy(el);
    if (el.dataset.close) $(`#${el.dataset.close}`)?.close();
    if (el.dataset.addModel) {
      const src = document.getElementById(el.dataset.addModel);
      const list = document.getElementById(el.dataset.into);
      if (src && list && src.value.trim()) {
        const problem = modelProblem(src.value.trim());
        showModelProblem(src, problem, false);
        if (problem) return src.focus();
        list.value = [...list.value.split(/[\s,]+/).filter(Boolean), src.value.trim()].join(", ");
        src.value = "";
        checkModelList(list);
        if (list.form) updatePreview(list.form);
      }
    }
  });
  document.addEventListener("change", (ev) => {
    const el = ev.target;
    if (el instanceof HTMLSelectElement && el.hasAttribute("data-autosubmit")) el.form?.requestSubmit();
    if (el instanceof HTMLSelectElement && el.name === "ruleType" && el.form) syncRuleForm(el.form);
    else if (el instanceof Element && el.closest("form[data-rule-form]")) updatePreview(el.closest("form[data-rule-form]"));
  });
  document.addEventListener("input", (ev) => {
    if (ev.target instanceof HTMLTextAreaElement && ev.target.hasAttribute("data-cidrs")) checkCidrs(ev.target);
    if (ev.target instanceof HTMLElement && ev.target.hasAttribute("data-model-list")) checkModelList(ev.target);
    if (ev.target instanceof HTMLInputElement && ev.target.id === "model-search") showModelProblem(ev.target, null, false);
    const form = ev.target instanceof Element ? ev.target.closest("form[data-rule-form]") : null;
    if (form) updatePreview(form);
  });
  for (const f of document.querySelectorAll("form[data-rule-form]")) syncRuleForm(f);
  for (const b of document.querySelectorAll("[data-js-only]")) b.hidden = false;
  showTheme();
  showFlash();
  document.querySelectorAll("table[data-enhance]").forEach((t, i) => enhanceTable(t, i));
  const acceptRoot = $("#accept");
  if (acceptRoot) acceptFlow(acceptRoot);
})();
