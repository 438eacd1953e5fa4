CREATE TABLE `platform_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`project_id` text NOT NULL,
	`created_by` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`fingerprint` text NOT NULL,
	`prefix_hint` text NOT NULL,
	`last_used_at` integer,
	`last_rolled_at` integer,
	`revoked_at` integer,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `members`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `platform_keys_fingerprint_uq` ON `platform_keys` (`fingerprint`);--> statement-breakpoint
CREATE INDEX `platform_keys_org_idx` ON `platform_keys` (`organization_id`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `end_user_id` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `platform_key_id` text;--> statement-breakpoint
CREATE INDEX `api_keys_end_user_idx` ON `api_keys` (`project_id`,`end_user_id`);--> statement-breakpoint
CREATE INDEX `api_keys_platform_key_idx` ON `api_keys` (`platform_key_id`);--> statement-breakpoint
ALTER TABLE `request_logs` ADD `end_user_id` text;