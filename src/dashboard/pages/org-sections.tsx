/** @jsxImportSource hono/jsx */
/**
 * The Organization page's in-page navigation: a long page cut into named sections, each a link
 * target (`#id`), so a reader jumps to members or provider keys without scrolling through settings.
 * Sticky on wide screens, a wrapping row of links on a phone.
 */
import type { FC } from "hono/jsx";

export interface OrgSection {
  id: string;
  label: string;
}

/** A section id from its title: "Provider keys (BYOK)" -> "provider-keys-byok". */
export const sectionId = (title: string): string =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");

export const OrgSectionNav: FC<{ sections: OrgSection[] }> = ({ sections }) => (
  <nav class="section-nav" aria-label="On this page">
    {sections.map((s) => (
      <a href={`#${s.id}`}>{s.label}</a>
    ))}
  </nav>
);
