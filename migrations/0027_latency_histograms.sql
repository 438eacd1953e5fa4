-- Hand-written: latency histograms in the hourly aggregates (src/usage/latency.ts), for p50/p95 per model and provider.
ALTER TABLE `usage_hourly` ADD `lat_b0` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `lat_b1` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `lat_b2` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `lat_b3` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `lat_b4` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `lat_b5` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `lat_b6` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `lat_b7` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `lat_b8` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `lat_b9` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `lat_b10` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `lat_b11` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `lat_b12` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b0` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b1` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b2` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b3` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b4` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b5` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b6` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b7` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b8` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b9` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b10` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b11` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `ttft_b12` integer DEFAULT 0 NOT NULL;
