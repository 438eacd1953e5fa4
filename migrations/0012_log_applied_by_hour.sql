-- Hand-written (drizzle-kit cannot express WITHOUT ROWID; the snapshot is drizzle's own):
-- log_applied keyed by the hour of the record's created_at, one written row per record.
CREATE TABLE `__new_log_applied` (
	`hour_start` integer NOT NULL,
	`id` text NOT NULL,
	PRIMARY KEY(`hour_start`, `id`)
) WITHOUT ROWID;
--> statement-breakpoint
-- Ids applied before the upgrade keep deduplicating: under the hour of their window row when it is
-- there (a refund record's under its job's row) ...
INSERT OR IGNORE INTO `__new_log_applied` (`hour_start`, `id`)
SELECT r.`created_at` - (r.`created_at` % 3600000), a.`id` FROM `log_applied` a JOIN `request_logs` r ON r.`id` = a.`id`;
--> statement-breakpoint
INSERT OR IGNORE INTO `__new_log_applied` (`hour_start`, `id`)
SELECT r.`created_at` - (r.`created_at` % 3600000), a.`id` FROM `log_applied` a JOIN `request_logs` r
ON a.`id` LIKE '%:refund' AND r.`id` = substr(a.`id`, 1, length(a.`id`) - 7);
--> statement-breakpoint
-- ... and else under the hour they were applied in and the hour before (records are applied within
-- minutes of their start; a pair that matches no record costs one row and is never hit).
INSERT OR IGNORE INTO `__new_log_applied` (`hour_start`, `id`)
SELECT `applied_at` - (`applied_at` % 3600000), `id` FROM `log_applied`;
--> statement-breakpoint
INSERT OR IGNORE INTO `__new_log_applied` (`hour_start`, `id`)
SELECT `applied_at` - (`applied_at` % 3600000) - 3600000, `id` FROM `log_applied`;
--> statement-breakpoint
DROP TABLE `log_applied`;
--> statement-breakpoint
ALTER TABLE `__new_log_applied` RENAME TO `log_applied`;
