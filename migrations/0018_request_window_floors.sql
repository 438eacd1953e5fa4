-- Per organization, the time from which the request window (request_logs) holds every record:
-- raised when the row bound trims it or a window insert is dropped. Readers go to R2 before it.
-- checked_at: when the trim by rows last found the organization within the bound.
CREATE TABLE `request_window_floors` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`kept_from` integer DEFAULT 0 NOT NULL,
	`checked_at` integer DEFAULT 0 NOT NULL
) WITHOUT ROWID;
