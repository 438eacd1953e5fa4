-- Issue 12 (contract section 5): a membership for an existing account is pending until the person
-- accepts it with a one-time token e-mailed to the address. Passwords belong to the account; one
-- chosen by an organization for a brand-new account only opens that organization.
ALTER TABLE `members` ADD `name` text;--> statement-breakpoint
ALTER TABLE `members` ADD `accepted_at` integer;--> statement-breakpoint
UPDATE `members` SET `accepted_at` = `created_at`, `name` = (SELECT `name` FROM `users` WHERE `users`.`id` = `members`.`user_id`);--> statement-breakpoint
ALTER TABLE `users` ADD `password_org_id` text;--> statement-breakpoint
CREATE TABLE `membership_invitations` (
	`id` text PRIMARY KEY NOT NULL,
	`member_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`member_id`) REFERENCES `members`(`id`) ON UPDATE no action ON DELETE cascade
);--> statement-breakpoint
CREATE UNIQUE INDEX `membership_invitations_token_uq` ON `membership_invitations` (`token_hash`);--> statement-breakpoint
CREATE INDEX `membership_invitations_member_idx` ON `membership_invitations` (`member_id`);
--> statement-breakpoint
-- Who may change a key's status and limits (issue 12): set when an owner, admin or the master API
-- disabled the key / set its limits, so a developer cannot undo it from the dashboard.
ALTER TABLE `api_keys` ADD `disabled_by_manager` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `limits_set_by_manager` integer DEFAULT false NOT NULL;
