// The key editor (src/dashboard/pages/key-editor.tsx): one form, one Save. Only the fields that
// differ from what the page showed are sent, in one PATCH, so two changes are kept together; the
// three fields of a recurring limit go together (the API checks them as one window). What changed
// is listed live under the form and in the success message shown after the reload.
"use strict";
(() => {
  const form = document.querySelector("form[data-key-editor]");
  if (!form) return;
  const PERIOD = ["periodUsageLimit", "periodUsageDurationValue", "periodUsageDurationUnit"];
  const fields = [...form.elements].filter((el) => el.name);
  const initial = (el) => (el.tagName === "SELECT" ? ([...el.options].find((o) => o.defaultSelected)?.value ?? "") : el.defaultValue);
  const changed = (el) => el.value.trim() !== initial(el).trim();
  const labelOf = (el) => el.dataset.label ?? form.querySelector(`label[for="${el.id}"]`)?.textContent.trim() ?? el.name;
  const shown = (el, v) => (v.trim() === "" ? (el.placeholder || "none") : el.tagName === "SELECT" ? el.selectedOptions[0]?.textContent.trim() ?? v : v.trim());
  const shownInitial = (el) => (el.tagName === "SELECT" ? ([...el.options].find((o) => o.defaultSelected)?.textContent.trim() ?? "none") : shown(el, el.defaultValue));

  function jsonValue(el) {
    const v = el.value.trim();
    if (v === "") return null;
    if (el.dataset.type === "int") return Number(v);
    if (el.dataset.type === "datetime") return new Date(`${v}Z`).toISOString();
    return v;
  }

  /** The PATCH body and the human summary of the changes. */
  function changes() {
    const body = {};
    const lines = [];
    const periodChanged = fields.some((el) => PERIOD.includes(el.name) && changed(el));
    for (const el of fields) {
      const isPeriod = PERIOD.includes(el.name);
      if (!changed(el) && !(isPeriod && periodChanged)) continue;
      body[el.name] = el.name === "description" ? el.value.trim() : jsonValue(el);
      if (changed(el)) lines.push(`${labelOf(el)}: ${shownInitial(el)} → ${shown(el, el.value)}`);
    }
    return { body, lines };
  }

  const summary = form.querySelector("[data-changes]");
  const status = form.querySelector("[data-status]");
  function showChanges() {
    const { lines } = changes();
    summary.textContent = lines.length ? `Unsaved changes: ${lines.join("; ")}.` : "No changes yet.";
  }
  form.addEventListener("input", showChanges);
  form.addEventListener("change", showChanges);

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const { body, lines } = changes();
    status.textContent = "";
    if (!lines.length) {
      status.textContent = "Nothing to save: no field was changed.";
      return;
    }
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const res = await fetch(form.dataset.keyEditor, {
        method: "PATCH",
        credentials: "same-origin",
        headers: { "content-type": "application/json", accept: "application/json", "x-csrf-token": document.querySelector('meta[name="csrf-token"]')?.getAttribute("content") ?? "" },
        body: JSON.stringify(body),
      });
      if (!res.ok) {
        const data = await res.json().catch(() => null);
        status.textContent = data?.error?.message ?? `Request failed (${res.status})`;
        return;
      }
      try {
        sessionStorage.setItem("swb-flash", `Saved: ${lines.join("; ")}.`);
      } catch {
        // storage unavailable: the reloaded page shows the new values itself
      }
      window.location.reload();
    } catch {
      status.textContent = "The gateway could not be reached; try again.";
    } finally {
      button.disabled = false;
    }
  });
})();
