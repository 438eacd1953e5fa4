-- What hedged requests cost, per hourly aggregate: requests whose hedge was cancelled by the other
-- attempt's answer, and the cancelled attempts' `hedge_cost` (src/usage/hedging.ts).
ALTER TABLE `usage_hourly` ADD `hedged_requests` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `hedge_cost_pico` integer DEFAULT 0 NOT NULL;
