ALTER TABLE `api_keys` ADD `requests_per_minute` integer;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `tokens_per_minute` integer;--> statement-breakpoint
ALTER TABLE `organizations` ADD `requests_per_minute` integer;--> statement-breakpoint
ALTER TABLE `organizations` ADD `tokens_per_minute` integer;