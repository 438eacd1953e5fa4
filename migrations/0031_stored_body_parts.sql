-- Hand-written: the request-body objects the LOGS consumer stored (src/usage/bodies.ts `markStored`),
-- one row per object (an organization's requests of one hour in one part of a body group: places
-- `first_index` to `last_index` of the group), none per request. Lets the Requests page's kept-bodies
-- filter tell stored bodies from bodies that never came and were never marked, in SQL. WITHOUT ROWID
-- (drizzle cannot say so): the primary key is the table; retention deletes a prefix of it.
CREATE TABLE `stored_body_parts` (
	`hour_start` integer NOT NULL,
	`organization_id` text NOT NULL,
	`batch` text NOT NULL,
	`first_index` integer NOT NULL,
	`last_index` integer NOT NULL,
	PRIMARY KEY(`hour_start`, `organization_id`, `batch`, `first_index`)
) WITHOUT ROWID;
