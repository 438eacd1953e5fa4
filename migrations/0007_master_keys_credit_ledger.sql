CREATE TABLE `credit_ledger` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`amount_pico` integer NOT NULL,
	`balance_after_pico` integer,
	`reason` text NOT NULL,
	`source` text NOT NULL,
	`idempotency_key` text,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `credit_ledger_idempotency_uq` ON `credit_ledger` (`organization_id`,`idempotency_key`);--> statement-breakpoint
CREATE INDEX `credit_ledger_org_created_idx` ON `credit_ledger` (`organization_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `master_keys` ADD `description` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `master_keys` ADD `created_via` text DEFAULT 'bootstrap' NOT NULL;--> statement-breakpoint
ALTER TABLE `master_keys` ADD `created_by` text;--> statement-breakpoint
ALTER TABLE `master_keys` ADD `last_used_at` integer;--> statement-breakpoint
ALTER TABLE `master_keys` ADD `last_rolled_at` integer;--> statement-breakpoint
CREATE INDEX `master_keys_org_idx` ON `master_keys` (`organization_id`);