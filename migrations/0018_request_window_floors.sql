-- The time from which the request window (request_logs) holds every record of an organization:
-- raised when the row bound trims it or a window insert is dropped. Readers go to R2 before it.
CREATE TABLE `request_window_floors` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`kept_from` integer NOT NULL
) WITHOUT ROWID;
