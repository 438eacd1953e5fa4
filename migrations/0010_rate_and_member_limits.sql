ALTER TABLE `api_keys` ADD `requests_per_minute` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `tokens_per_minute` integer;--> statement-breakpoint
ALTER TABLE `members` ADD `usage_limit` text;--> statement-breakpoint
ALTER TABLE `members` ADD `period_usage_limit` text;--> statement-breakpoint
ALTER TABLE `members` ADD `period_usage_duration_value` integer;--> statement-breakpoint
ALTER TABLE `members` ADD `period_usage_duration_unit` text;--> statement-breakpoint
ALTER TABLE `organizations` ADD `requests_per_minute` integer;--> statement-breakpoint
ALTER TABLE `organizations` ADD `tokens_per_minute` integer;--> statement-breakpoint
ALTER TABLE `teams` ADD `usage_limit` text;--> statement-breakpoint
ALTER TABLE `teams` ADD `period_usage_limit` text;--> statement-breakpoint
ALTER TABLE `teams` ADD `period_usage_duration_value` integer;--> statement-breakpoint
ALTER TABLE `teams` ADD `period_usage_duration_unit` text;