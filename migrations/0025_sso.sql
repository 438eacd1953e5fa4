-- OpenID Connect single sign-on per organization (src/sso/). The client secret is stored
-- AES-GCM encrypted under KEY_HASH_SECRET and never shown again; allowed domains are a JSON array.
CREATE TABLE `organization_sso` (
	`organization_id` text PRIMARY KEY NOT NULL REFERENCES `organizations`(`id`) ON DELETE cascade,
	`issuer` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret_encrypted` text NOT NULL,
	`client_secret_hint` text NOT NULL,
	`allowed_domains` text NOT NULL,
	`default_role` text NOT NULL,
	`required` integer DEFAULT 0 NOT NULL,
	`break_glass_member_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
-- Which door a dashboard session came through: an SSO session opens only the organization whose
-- identity provider vouched for it (no switching to another organization without a password).
ALTER TABLE `sessions` ADD `sign_in_method` text DEFAULT 'password' NOT NULL;
