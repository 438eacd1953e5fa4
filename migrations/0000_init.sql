CREATE TABLE `aggregation_state` (
	`id` text PRIMARY KEY NOT NULL,
	`aggregated_until` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`project_id` text NOT NULL,
	`created_by` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`kind` text DEFAULT 'standard' NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`fingerprint` text NOT NULL,
	`prefix_hint` text NOT NULL,
	`expires_at` integer,
	`usage_limit` text,
	`period_usage_limit` text,
	`period_usage_duration_value` integer,
	`period_usage_duration_unit` text,
	`version` integer DEFAULT 1 NOT NULL,
	`last_rolled_at` integer,
	`deleted_at` integer,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `members`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_fingerprint_uq` ON `api_keys` (`fingerprint`);--> statement-breakpoint
CREATE INDEX `api_keys_project_idx` ON `api_keys` (`project_id`);--> statement-breakpoint
CREATE INDEX `api_keys_org_idx` ON `api_keys` (`organization_id`);--> statement-breakpoint
CREATE INDEX `api_keys_created_by_idx` ON `api_keys` (`created_by`);--> statement-breakpoint
CREATE INDEX `api_keys_expiry_idx` ON `api_keys` (`status`,`expires_at`);--> statement-breakpoint
CREATE TABLE `custom_models` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`provider_name` text NOT NULL,
	`model_id` text NOT NULL,
	`name` text,
	`pricing` text DEFAULT '{}' NOT NULL,
	`context_length` integer,
	`capabilities` text DEFAULT '{}' NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `custom_models_org_provider_model_uq` ON `custom_models` (`organization_id`,`provider_name`,`model_id`);--> statement-breakpoint
CREATE TABLE `custom_providers` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`name` text NOT NULL,
	`base_url` text NOT NULL,
	`token_ciphertext` text NOT NULL,
	`token_hint` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `custom_providers_org_name_uq` ON `custom_providers` (`organization_id`,`name`);--> statement-breakpoint
CREATE TABLE `iam_rules` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`level` text NOT NULL,
	`target_id` text NOT NULL,
	`rule_type` text NOT NULL,
	`rule_value` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `iam_rules_target_idx` ON `iam_rules` (`level`,`target_id`);--> statement-breakpoint
CREATE INDEX `iam_rules_org_idx` ON `iam_rules` (`organization_id`);--> statement-breakpoint
CREATE TABLE `master_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`fingerprint` text NOT NULL,
	`prefix_hint` text NOT NULL,
	`revoked_at` integer,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `master_keys_fingerprint_uq` ON `master_keys` (`fingerprint`);--> statement-breakpoint
CREATE TABLE `members` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `members_org_user_uq` ON `members` (`organization_id`,`user_id`);--> statement-breakpoint
CREATE INDEX `members_user_idx` ON `members` (`user_id`);--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`api_key_id` text NOT NULL,
	`kind` text NOT NULL,
	`limit_type` text NOT NULL,
	`window_start` integer NOT NULL,
	`message` text NOT NULL,
	`emailed_at` integer,
	`read_at` integer,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notifications_once_uq` ON `notifications` (`api_key_id`,`limit_type`,`window_start`);--> statement-breakpoint
CREATE INDEX `notifications_org_idx` ON `notifications` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `oauth_clients` (
	`id` text PRIMARY KEY NOT NULL,
	`secret_hash` text,
	`name` text NOT NULL,
	`redirect_uris` text DEFAULT '[]' NOT NULL,
	`grant_types` text DEFAULT '[]' NOT NULL,
	`api_key_id` text,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `oauth_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`token_hash` text NOT NULL,
	`client_id` text NOT NULL,
	`api_key_id` text NOT NULL,
	`scope` text,
	`redirect_uri` text,
	`code_challenge` text,
	`expires_at` integer NOT NULL,
	`revoked_at` integer,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`client_id`) REFERENCES `oauth_clients`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_grants_token_uq` ON `oauth_grants` (`token_hash`);--> statement-breakpoint
CREATE INDEX `oauth_grants_client_idx` ON `oauth_grants` (`client_id`);--> statement-breakpoint
CREATE TABLE `organizations` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`plan` text DEFAULT 'free' NOT NULL,
	`credits_pico` integer DEFAULT 0 NOT NULL,
	`compliance` text DEFAULT '{}' NOT NULL,
	`notifications` text DEFAULT '{}' NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `projects` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`name` text NOT NULL,
	`mode` text DEFAULT 'hybrid' NOT NULL,
	`caching_enabled` integer DEFAULT true NOT NULL,
	`cache_duration_seconds` integer DEFAULT 3600 NOT NULL,
	`is_default` integer DEFAULT false NOT NULL,
	`deleted_at` integer,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `projects_org_idx` ON `projects` (`organization_id`);--> statement-breakpoint
CREATE TABLE `provider_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`provider` text NOT NULL,
	`label` text,
	`base_url` text,
	`token_ciphertext` text NOT NULL,
	`token_hint` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `provider_keys_org_provider_idx` ON `provider_keys` (`organization_id`,`provider`);--> statement-breakpoint
CREATE TABLE `request_logs` (
	`id` text PRIMARY KEY NOT NULL,
	`request_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`project_id` text NOT NULL,
	`api_key_id` text NOT NULL,
	`kind` text DEFAULT 'chat' NOT NULL,
	`source_app` text DEFAULT 'unknown' NOT NULL,
	`requested_model` text NOT NULL,
	`requested_provider` text,
	`used_model` text,
	`used_provider` text,
	`used_region` text,
	`status_code` integer NOT NULL,
	`error_type` text,
	`error_message` text,
	`finish_reason` text,
	`streamed` integer DEFAULT false NOT NULL,
	`cached` integer DEFAULT false NOT NULL,
	`client_aborted` integer DEFAULT false NOT NULL,
	`prompt_tokens` integer DEFAULT 0 NOT NULL,
	`completion_tokens` integer DEFAULT 0 NOT NULL,
	`reasoning_tokens` integer DEFAULT 0 NOT NULL,
	`cached_tokens` integer DEFAULT 0 NOT NULL,
	`cache_write_tokens` integer DEFAULT 0 NOT NULL,
	`total_tokens` integer DEFAULT 0 NOT NULL,
	`cost_pico` integer DEFAULT 0 NOT NULL,
	`credits_cost_pico` integer DEFAULT 0 NOT NULL,
	`byok_cost_pico` integer DEFAULT 0 NOT NULL,
	`data_storage_cost_pico` integer DEFAULT 0 NOT NULL,
	`latency_ms` integer,
	`ttft_ms` integer,
	`routing` text DEFAULT '[]' NOT NULL,
	`extra` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `request_logs_created_idx` ON `request_logs` (`created_at`);--> statement-breakpoint
CREATE INDEX `request_logs_project_created_idx` ON `request_logs` (`project_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `request_logs_key_created_idx` ON `request_logs` (`api_key_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `request_logs_org_created_idx` ON `request_logs` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `retired_key_fingerprints` (
	`fingerprint` text PRIMARY KEY NOT NULL,
	`api_key_id` text NOT NULL,
	`retired_at` integer NOT NULL,
	FOREIGN KEY (`api_key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`user_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`member_id` text NOT NULL,
	`csrf_token` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`member_id`) REFERENCES `members`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_token_uq` ON `sessions` (`token_hash`);--> statement-breakpoint
CREATE TABLE `team_members` (
	`team_id` text NOT NULL,
	`member_id` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	PRIMARY KEY(`team_id`, `member_id`),
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`member_id`) REFERENCES `members`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `team_members_member_idx` ON `team_members` (`member_id`);--> statement-breakpoint
CREATE TABLE `teams` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `teams_org_name_uq` ON `teams` (`organization_id`,`name`);--> statement-breakpoint
CREATE TABLE `usage_hourly` (
	`hour_start` integer NOT NULL,
	`organization_id` text NOT NULL,
	`project_id` text NOT NULL,
	`api_key_id` text NOT NULL,
	`provider` text NOT NULL,
	`model` text NOT NULL,
	`source_app` text NOT NULL,
	`requests` integer DEFAULT 0 NOT NULL,
	`errors` integer DEFAULT 0 NOT NULL,
	`cache_hits` integer DEFAULT 0 NOT NULL,
	`prompt_tokens` integer DEFAULT 0 NOT NULL,
	`completion_tokens` integer DEFAULT 0 NOT NULL,
	`reasoning_tokens` integer DEFAULT 0 NOT NULL,
	`cached_tokens` integer DEFAULT 0 NOT NULL,
	`total_tokens` integer DEFAULT 0 NOT NULL,
	`cost_pico` integer DEFAULT 0 NOT NULL,
	`credits_cost_pico` integer DEFAULT 0 NOT NULL,
	`byok_cost_pico` integer DEFAULT 0 NOT NULL,
	`data_storage_cost_pico` integer DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`hour_start`, `project_id`, `api_key_id`, `provider`, `model`, `source_app`)
);
--> statement-breakpoint
CREATE INDEX `usage_hourly_project_hour_idx` ON `usage_hourly` (`project_id`,`hour_start`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`name` text NOT NULL,
	`password_hash` text,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_uq` ON `users` (`email`);