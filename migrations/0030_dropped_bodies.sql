-- Hand-written: requests whose bodies were dropped (src/usage/bodies.ts `markDropped`), per request:
-- the parts (queue messages) and objects of one body group are stored or lost separately, and a
-- record names its group, not its part. Replaces `dropped_body_groups` (one mark per group), which
-- is still read until retention has deleted its rows.
CREATE TABLE `dropped_bodies` (
	`organization_id` text NOT NULL,
	`log_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`organization_id`, `log_id`)
);
