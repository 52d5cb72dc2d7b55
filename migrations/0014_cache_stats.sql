-- The edge cache's part of each UTC day (docs/gateway.md, "Cache rules"): SUCCESS events of paywalls whose answers
-- are cached carry `metadata.cache` = 'hit' (answered from the cache, no upstream call) or 'miss'. Counted in the
-- same three scopes as 0005, by triggers of their own (hand-written after drizzle-kit's ALTER TABLEs; 0005's triggers
-- are left as they are). Additions upsert (whichever trigger of an insert runs first creates the row); subtractions
-- only update. No backfill: no event carried `cache` before this migration.
ALTER TABLE `daily_stats` ADD `cache_hits` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `daily_stats` ADD `cache_misses` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE TRIGGER `daily_cache_insert` AFTER INSERT ON `events`
WHEN NEW.`event_type` = 'SUCCESS' AND json_extract(NEW.`metadata`, '$.cache') IN ('hit', 'miss') BEGIN
	INSERT INTO `daily_stats` (`tenant_id`, `scope`, `day`, `cache_hits`, `cache_misses`)
		SELECT NEW.`tenant_id`, s.`scope`, date(NEW.`created_at` / 1000, 'unixepoch'),
			json_extract(NEW.`metadata`, '$.cache') = 'hit', json_extract(NEW.`metadata`, '$.cache') = 'miss'
		FROM (SELECT 'tenant' AS `scope` UNION ALL SELECT 'paywall:' || NEW.`paywall_id`
			UNION ALL SELECT 'service:' || NEW.`service_id` WHERE NEW.`service_id` IS NOT NULL) AS s
		WHERE true
		ON CONFLICT (`tenant_id`, `scope`, `day`) DO UPDATE SET `cache_hits` = `cache_hits` + excluded.`cache_hits`,
			`cache_misses` = `cache_misses` + excluded.`cache_misses`;
END;
--> statement-breakpoint
CREATE TRIGGER `daily_cache_update_old` AFTER UPDATE OF `event_type`, `metadata`, `created_at`, `tenant_id`, `paywall_id`, `service_id` ON `events`
WHEN OLD.`event_type` = 'SUCCESS' AND json_extract(OLD.`metadata`, '$.cache') IN ('hit', 'miss') BEGIN
	UPDATE `daily_stats` SET `cache_hits` = `cache_hits` - (json_extract(OLD.`metadata`, '$.cache') = 'hit'),
		`cache_misses` = `cache_misses` - (json_extract(OLD.`metadata`, '$.cache') = 'miss')
		WHERE `tenant_id` = OLD.`tenant_id` AND `day` = date(OLD.`created_at` / 1000, 'unixepoch')
			AND `scope` IN ('tenant', 'paywall:' || OLD.`paywall_id`, 'service:' || OLD.`service_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `daily_cache_update_new` AFTER UPDATE OF `event_type`, `metadata`, `created_at`, `tenant_id`, `paywall_id`, `service_id` ON `events`
WHEN NEW.`event_type` = 'SUCCESS' AND json_extract(NEW.`metadata`, '$.cache') IN ('hit', 'miss') BEGIN
	INSERT INTO `daily_stats` (`tenant_id`, `scope`, `day`, `cache_hits`, `cache_misses`)
		SELECT NEW.`tenant_id`, s.`scope`, date(NEW.`created_at` / 1000, 'unixepoch'),
			json_extract(NEW.`metadata`, '$.cache') = 'hit', json_extract(NEW.`metadata`, '$.cache') = 'miss'
		FROM (SELECT 'tenant' AS `scope` UNION ALL SELECT 'paywall:' || NEW.`paywall_id`
			UNION ALL SELECT 'service:' || NEW.`service_id` WHERE NEW.`service_id` IS NOT NULL) AS s
		WHERE true
		ON CONFLICT (`tenant_id`, `scope`, `day`) DO UPDATE SET `cache_hits` = `cache_hits` + excluded.`cache_hits`,
			`cache_misses` = `cache_misses` + excluded.`cache_misses`;
END;
--> statement-breakpoint
CREATE TRIGGER `daily_cache_delete` AFTER DELETE ON `events`
WHEN OLD.`event_type` = 'SUCCESS' AND json_extract(OLD.`metadata`, '$.cache') IN ('hit', 'miss') BEGIN
	UPDATE `daily_stats` SET `cache_hits` = `cache_hits` - (json_extract(OLD.`metadata`, '$.cache') = 'hit'),
		`cache_misses` = `cache_misses` - (json_extract(OLD.`metadata`, '$.cache') = 'miss')
		WHERE `tenant_id` = OLD.`tenant_id` AND `day` = date(OLD.`created_at` / 1000, 'unixepoch')
			AND `scope` IN ('tenant', 'paywall:' || OLD.`paywall_id`, 'service:' || OLD.`service_id`);
END;
