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
      if (typeof created?.token === "string") return showSecret(created.token, created.description);
      const to = form.dataset.redirect;
      if (to) window.location.assign(to);
      else window.location.reload();
    } catch {
      if (status) status.textContent = "The gateway could not be reached; try again.";
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  }

  // ---------- the secret, shown once ----------
  function showSecret(token, description) {
    const dialog = $("#secret-dialog");
    const input = $("#secret-value");
    if (!dialog || !input) return window.location.reload();
    input.value = token;
    const label = $("#secret-for");
    if (label) label.textContent = description ? `Key “${description}”.` : "";
    dialog.addEventListener("close", () => {
      input.value = "";
      window.location.reload();
    }, { once: true });
    dialog.showModal();
    input.select();
  }

  async function copy(button) {
    const target = document.getElementById(button.dataset.copy);
    if (!target) return;
    try {
      await navigator.clipboard.writeText(target.value);
    } catch {
      target.select();
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
    const preview = $("p[data-preview]", form);
    const option = form.elements.ruleType?.selectedOptions?.[0];
    if (preview && option?.dataset.preview) preview.textContent = option.dataset.preview;
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
        list.value = [...list.value.split(/[\s,]+/).filter(Boolean), src.value.trim()].join(", ");
        src.value = "";
      }
    }
  });
  document.addEventListener("change", (ev) => {
    const el = ev.target;
    if (el instanceof HTMLSelectElement && el.hasAttribute("data-autosubmit")) el.form?.requestSubmit();
    if (el instanceof HTMLSelectElement && el.name === "ruleType" && el.form) syncRuleForm(el.form);
  });
  document.addEventListener("input", (ev) => {
    if (ev.target instanceof HTMLTextAreaElement && ev.target.hasAttribute("data-cidrs")) checkCidrs(ev.target);
  });
  for (const f of document.querySelectorAll("form[data-rule-form]")) syncRuleForm(f);
  for (const b of document.querySelectorAll("[data-js-only]")) b.hidden = false;
  showTheme();
  const acceptRoot = $("#accept");
  if (acceptRoot) acceptFlow(acceptRoot);
})();
