CREATE INDEX `oauth_clients_api_key_idx` ON `oauth_clients` (`api_key_id`);--> statement-breakpoint
CREATE INDEX `oauth_grants_api_key_idx` ON `oauth_grants` (`api_key_id`);