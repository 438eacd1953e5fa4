// Applies the light/dark choice stored by the top-bar toggle before the page is painted
// (html[data-theme]); without a stored choice the stylesheet follows prefers-color-scheme.
"use strict";
try {
  const t = localStorage.getItem("swb-theme");
  if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
} catch {
  // storage unavailable: follow the system
}
