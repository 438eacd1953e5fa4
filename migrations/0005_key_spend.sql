-- Settled spend of each key as its KeyState object reports it (with its outbox flush to D1), so
-- key lists read it here instead of calling every key's object. Keys created before this
-- migration get their row from their object the first time a key list shows them (src/keys/spend.ts,
-- at most 20 object reads per list).
CREATE TABLE `key_spend` (
	`api_key_id` text PRIMARY KEY NOT NULL,
	`usage_pico` text DEFAULT '0' NOT NULL,
	`period_usage_pico` text DEFAULT '0' NOT NULL,
	`period_started_at` integer,
	`seq` integer DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL
);
