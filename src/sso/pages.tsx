/** @jsxImportSource hono/jsx */
/** The SSO pages as HTML strings for src/sso/routes.ts. */
import { SsoChooserPage, SsoContinuePage, SsoRefusedPage } from "../dashboard/pages/sso-sign-in";

export const renderChooser = (email: string, organizations: { id: string; name: string }[]) => <SsoChooserPage email={email} organizations={organizations} />;
export const renderRefused = (message: string) => <SsoRefusedPage message={message} />;
export const renderContinue = (location: string) => <SsoContinuePage location={location} issuerHost={new URL(location).host} />;
