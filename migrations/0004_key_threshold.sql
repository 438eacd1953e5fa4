-- Issue 16: an optional per-key budget alert threshold (percent, 50..100). NULL uses the
-- organization's notifications.thresholdPercent.
ALTER TABLE api_keys ADD COLUMN alert_threshold_percent INTEGER;
