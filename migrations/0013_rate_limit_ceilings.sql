-- The most an organization may set for its own rate limits, granted by the operator
-- (PATCH /v1/admin/organizations/{id}/rate-limits); NULL: its plan's values.
ALTER TABLE `organizations` ADD `max_requests_per_minute` integer;
--> statement-breakpoint
ALTER TABLE `organizations` ADD `max_tokens_per_minute` integer;
