-- Per-UTC-day totals for the dashboard's charts, kept by triggers (hand-written after drizzle-kit's CREATE TABLE,
-- as in 0003: drizzle-kit does not model triggers). Each record counts in three scopes: `tenant`, `paywall:<id>`
-- and, when it has one, `service:<id>`. Revenue: the amount of a COMPLETED transaction, added when it becomes
-- COMPLETED (on insert, or on the update that settles it) to the UTC day it was created, and taken back if it stops
-- being COMPLETED or is deleted. Additions upsert; subtractions only update (the row exists since the addition).
CREATE TABLE `daily_stats` (
	`tenant_id` text NOT NULL,
	`scope` text NOT NULL,
	`day` text NOT NULL,
	`revenue` integer DEFAULT 0 NOT NULL,
	`requests` integer DEFAULT 0 NOT NULL,
	`successes` integer DEFAULT 0 NOT NULL,
	`errors` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`tenant_id`, `scope`, `day`),
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TRIGGER `daily_revenue_insert` AFTER INSERT ON `transactions` WHEN NEW.`status` = 'COMPLETED' BEGIN
	INSERT INTO `daily_stats` (`tenant_id`, `scope`, `day`, `revenue`)
		SELECT NEW.`tenant_id`, s.`scope`, date(NEW.`created_at` / 1000, 'unixepoch'), CAST(NEW.`amount` AS INTEGER)
		FROM (SELECT 'tenant' AS `scope` UNION ALL SELECT 'paywall:' || NEW.`paywall_id`
			UNION ALL SELECT 'service:' || NEW.`service_id` WHERE NEW.`service_id` IS NOT NULL) AS s
		WHERE true
		ON CONFLICT (`tenant_id`, `scope`, `day`) DO UPDATE SET `revenue` = `revenue` + excluded.`revenue`;
END;
--> statement-breakpoint
CREATE TRIGGER `daily_revenue_update_old` AFTER UPDATE OF `status`, `amount`, `created_at`, `tenant_id`, `paywall_id`, `service_id` ON `transactions`
WHEN OLD.`status` = 'COMPLETED' BEGIN
	UPDATE `daily_stats` SET `revenue` = `revenue` - CAST(OLD.`amount` AS INTEGER)
		WHERE `tenant_id` = OLD.`tenant_id` AND `day` = date(OLD.`created_at` / 1000, 'unixepoch')
			AND `scope` IN ('tenant', 'paywall:' || OLD.`paywall_id`, 'service:' || OLD.`service_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `daily_revenue_update_new` AFTER UPDATE OF `status`, `amount`, `created_at`, `tenant_id`, `paywall_id`, `service_id` ON `transactions`
WHEN NEW.`status` = 'COMPLETED' BEGIN
	INSERT INTO `daily_stats` (`tenant_id`, `scope`, `day`, `revenue`)
		SELECT NEW.`tenant_id`, s.`scope`, date(NEW.`created_at` / 1000, 'unixepoch'), CAST(NEW.`amount` AS INTEGER)
		FROM (SELECT 'tenant' AS `scope` UNION ALL SELECT 'paywall:' || NEW.`paywall_id`
			UNION ALL SELECT 'service:' || NEW.`service_id` WHERE NEW.`service_id` IS NOT NULL) AS s
		WHERE true
		ON CONFLICT (`tenant_id`, `scope`, `day`) DO UPDATE SET `revenue` = `revenue` + excluded.`revenue`;
END;
--> statement-breakpoint
CREATE TRIGGER `daily_revenue_delete` AFTER DELETE ON `transactions` WHEN OLD.`status` = 'COMPLETED' BEGIN
	UPDATE `daily_stats` SET `revenue` = `revenue` - CAST(OLD.`amount` AS INTEGER)
		WHERE `tenant_id` = OLD.`tenant_id` AND `day` = date(OLD.`created_at` / 1000, 'unixepoch')
			AND `scope` IN ('tenant', 'paywall:' || OLD.`paywall_id`, 'service:' || OLD.`service_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `daily_events_insert` AFTER INSERT ON `events` BEGIN
	INSERT INTO `daily_stats` (`tenant_id`, `scope`, `day`, `requests`, `successes`, `errors`)
		SELECT NEW.`tenant_id`, s.`scope`, date(NEW.`created_at` / 1000, 'unixepoch'),
			NEW.`event_type` = 'REQUEST', NEW.`event_type` = 'SUCCESS', NEW.`event_type` = 'ERROR'
		FROM (SELECT 'tenant' AS `scope` UNION ALL SELECT 'paywall:' || NEW.`paywall_id`
			UNION ALL SELECT 'service:' || NEW.`service_id` WHERE NEW.`service_id` IS NOT NULL) AS s
		WHERE true
		ON CONFLICT (`tenant_id`, `scope`, `day`) DO UPDATE SET `requests` = `requests` + excluded.`requests`,
			`successes` = `successes` + excluded.`successes`, `errors` = `errors` + excluded.`errors`;
END;
--> statement-breakpoint
CREATE TRIGGER `daily_events_update_old` AFTER UPDATE OF `event_type`, `created_at`, `tenant_id`, `paywall_id`, `service_id` ON `events` BEGIN
	UPDATE `daily_stats` SET `requests` = `requests` - (OLD.`event_type` = 'REQUEST'),
		`successes` = `successes` - (OLD.`event_type` = 'SUCCESS'), `errors` = `errors` - (OLD.`event_type` = 'ERROR')
		WHERE `tenant_id` = OLD.`tenant_id` AND `day` = date(OLD.`created_at` / 1000, 'unixepoch')
			AND `scope` IN ('tenant', 'paywall:' || OLD.`paywall_id`, 'service:' || OLD.`service_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `daily_events_update_new` AFTER UPDATE OF `event_type`, `created_at`, `tenant_id`, `paywall_id`, `service_id` ON `events` BEGIN
	INSERT INTO `daily_stats` (`tenant_id`, `scope`, `day`, `requests`, `successes`, `errors`)
		SELECT NEW.`tenant_id`, s.`scope`, date(NEW.`created_at` / 1000, 'unixepoch'),
			NEW.`event_type` = 'REQUEST', NEW.`event_type` = 'SUCCESS', NEW.`event_type` = 'ERROR'
		FROM (SELECT 'tenant' AS `scope` UNION ALL SELECT 'paywall:' || NEW.`paywall_id`
			UNION ALL SELECT 'service:' || NEW.`service_id` WHERE NEW.`service_id` IS NOT NULL) AS s
		WHERE true
		ON CONFLICT (`tenant_id`, `scope`, `day`) DO UPDATE SET `requests` = `requests` + excluded.`requests`,
			`successes` = `successes` + excluded.`successes`, `errors` = `errors` + excluded.`errors`;
END;
--> statement-breakpoint
CREATE TRIGGER `daily_events_delete` AFTER DELETE ON `events` BEGIN
	UPDATE `daily_stats` SET `requests` = `requests` - (OLD.`event_type` = 'REQUEST'),
		`successes` = `successes` - (OLD.`event_type` = 'SUCCESS'), `errors` = `errors` - (OLD.`event_type` = 'ERROR')
		WHERE `tenant_id` = OLD.`tenant_id` AND `day` = date(OLD.`created_at` / 1000, 'unixepoch')
			AND `scope` IN ('tenant', 'paywall:' || OLD.`paywall_id`, 'service:' || OLD.`service_id`);
END;
--> statement-breakpoint
-- Totals of the records stored before this migration.
INSERT INTO `daily_stats` (`tenant_id`, `scope`, `day`, `revenue`, `requests`, `successes`, `errors`)
	SELECT `tenant_id`, `scope`, `day`, sum(`revenue`), sum(`requests`), sum(`successes`), sum(`errors`) FROM (
		SELECT r.`tenant_id`,
			CASE k.`kind` WHEN 'tenant' THEN 'tenant' WHEN 'paywall' THEN 'paywall:' || r.`paywall_id` ELSE 'service:' || r.`service_id` END AS `scope`,
			date(r.`created_at` / 1000, 'unixepoch') AS `day`, r.`revenue`, r.`requests`, r.`successes`, r.`errors`
		FROM (
			SELECT `tenant_id`, `paywall_id`, `service_id`, `created_at`, CAST(`amount` AS INTEGER) AS `revenue`,
				0 AS `requests`, 0 AS `successes`, 0 AS `errors`
			FROM `transactions` WHERE `status` = 'COMPLETED'
			UNION ALL
			SELECT `tenant_id`, `paywall_id`, `service_id`, `created_at`, 0,
				`event_type` = 'REQUEST', `event_type` = 'SUCCESS', `event_type` = 'ERROR'
			FROM `events`
		) AS r
		CROSS JOIN (SELECT 'tenant' AS `kind` UNION ALL SELECT 'paywall' UNION ALL SELECT 'service') AS k
		WHERE k.`kind` <> 'service' OR r.`service_id` IS NOT NULL
	)
	GROUP BY `tenant_id`, `scope`, `day`;
