-- Caller routing: a project's default `provider` preferences (JSON, null: none), and weighted,
-- regional provider keys (several per provider, spread by weight; a key with a region serves that
-- region's endpoint).
ALTER TABLE `projects` ADD `provider_preferences` text;--> statement-breakpoint
ALTER TABLE `provider_keys` ADD `weight` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `provider_keys` ADD `region` text;
