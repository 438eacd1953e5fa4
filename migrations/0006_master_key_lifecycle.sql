ALTER TABLE `master_keys` ADD `description` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `master_keys` ADD `created_via` text DEFAULT 'bootstrap' NOT NULL;--> statement-breakpoint
ALTER TABLE `master_keys` ADD `created_by` text;--> statement-breakpoint
ALTER TABLE `master_keys` ADD `last_used_at` integer;--> statement-breakpoint
ALTER TABLE `master_keys` ADD `last_rolled_at` integer;--> statement-breakpoint
CREATE INDEX `master_keys_org_idx` ON `master_keys` (`organization_id`);