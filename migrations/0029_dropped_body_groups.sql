-- Hand-written: request-body groups whose queue send failed (src/usage/bodies.ts `markDropped`), per
-- organization, so the Requests page's kept-bodies filter agrees with `bodiesStatus: "dropped"`.
CREATE TABLE `dropped_body_groups` (
	`organization_id` text NOT NULL,
	`batch` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`organization_id`, `batch`)
);
