-- Per-project upstream timeouts and hedging (docs/routing-and-cache.md, "Timeouts" and "Hedged requests").
ALTER TABLE `projects` ADD `first_byte_timeout_ms` integer;--> statement-breakpoint
ALTER TABLE `projects` ADD `timeout_ms` integer;--> statement-breakpoint
ALTER TABLE `projects` ADD `hedging` integer DEFAULT false NOT NULL;
