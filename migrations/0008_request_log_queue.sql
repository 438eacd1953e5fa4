CREATE TABLE `key_last_use` (
	`api_key_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`last_used_at` integer NOT NULL,
	PRIMARY KEY(`api_key_id`, `organization_id`)
);
--> statement-breakpoint
CREATE TABLE `log_applied` (
	`id` text PRIMARY KEY NOT NULL,
	`applied_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `log_applied_at_idx` ON `log_applied` (`applied_at`);