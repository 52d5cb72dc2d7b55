-- Completed revenue per UTC day and network (hand-written triggers and backfill after drizzle-kit's CREATE TABLE, as
-- in 0005). daily_stats.revenue added every token into one number (pathUSD into USDC), and the dashboard's per-token
-- totals had to read the transactions themselves; daily_revenue keeps the amount per network (so per token and per
-- protocol) in the same three scopes: `tenant`, `paywall:<id>`, `service:<id>`. 0005's revenue triggers go, then the
-- column; the triggers below take their names.
DROP TRIGGER `daily_revenue_insert`;--> statement-breakpoint
DROP TRIGGER `daily_revenue_update_old`;--> statement-breakpoint
DROP TRIGGER `daily_revenue_update_new`;--> statement-breakpoint
DROP TRIGGER `daily_revenue_delete`;--> statement-breakpoint
CREATE TABLE `daily_revenue` (
	`tenant_id` text NOT NULL,
	`scope` text NOT NULL,
	`day` text NOT NULL,
	`network` text NOT NULL,
	`amount` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`tenant_id`, `scope`, `day`, `network`),
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `daily_stats` DROP COLUMN `revenue`;--> statement-breakpoint
CREATE TRIGGER `daily_revenue_insert` AFTER INSERT ON `transactions` WHEN NEW.`status` = 'COMPLETED' BEGIN
	INSERT INTO `daily_revenue` (`tenant_id`, `scope`, `day`, `network`, `amount`)
		SELECT NEW.`tenant_id`, s.`scope`, date(NEW.`created_at` / 1000, 'unixepoch'), NEW.`network`, CAST(NEW.`amount` AS INTEGER)
		FROM (SELECT 'tenant' AS `scope` UNION ALL SELECT 'paywall:' || NEW.`paywall_id`
			UNION ALL SELECT 'service:' || NEW.`service_id` WHERE NEW.`service_id` IS NOT NULL) AS s
		WHERE true
		ON CONFLICT (`tenant_id`, `scope`, `day`, `network`) DO UPDATE SET `amount` = `amount` + excluded.`amount`;
END;
--> statement-breakpoint
CREATE TRIGGER `daily_revenue_update_old` AFTER UPDATE OF `status`, `amount`, `created_at`, `tenant_id`, `paywall_id`, `service_id`, `network` ON `transactions`
WHEN OLD.`status` = 'COMPLETED' BEGIN
	UPDATE `daily_revenue` SET `amount` = `amount` - CAST(OLD.`amount` AS INTEGER)
		WHERE `tenant_id` = OLD.`tenant_id` AND `day` = date(OLD.`created_at` / 1000, 'unixepoch') AND `network` = OLD.`network`
			AND `scope` IN ('tenant', 'paywall:' || OLD.`paywall_id`, 'service:' || OLD.`service_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `daily_revenue_update_new` AFTER UPDATE OF `status`, `amount`, `created_at`, `tenant_id`, `paywall_id`, `service_id`, `network` ON `transactions`
WHEN NEW.`status` = 'COMPLETED' BEGIN
	INSERT INTO `daily_revenue` (`tenant_id`, `scope`, `day`, `network`, `amount`)
		SELECT NEW.`tenant_id`, s.`scope`, date(NEW.`created_at` / 1000, 'unixepoch'), NEW.`network`, CAST(NEW.`amount` AS INTEGER)
		FROM (SELECT 'tenant' AS `scope` UNION ALL SELECT 'paywall:' || NEW.`paywall_id`
			UNION ALL SELECT 'service:' || NEW.`service_id` WHERE NEW.`service_id` IS NOT NULL) AS s
		WHERE true
		ON CONFLICT (`tenant_id`, `scope`, `day`, `network`) DO UPDATE SET `amount` = `amount` + excluded.`amount`;
END;
--> statement-breakpoint
CREATE TRIGGER `daily_revenue_delete` AFTER DELETE ON `transactions` WHEN OLD.`status` = 'COMPLETED' BEGIN
	UPDATE `daily_revenue` SET `amount` = `amount` - CAST(OLD.`amount` AS INTEGER)
		WHERE `tenant_id` = OLD.`tenant_id` AND `day` = date(OLD.`created_at` / 1000, 'unixepoch') AND `network` = OLD.`network`
			AND `scope` IN ('tenant', 'paywall:' || OLD.`paywall_id`, 'service:' || OLD.`service_id`);
END;
--> statement-breakpoint
-- Totals of the transactions stored before this migration.
INSERT INTO `daily_revenue` (`tenant_id`, `scope`, `day`, `network`, `amount`)
	SELECT `tenant_id`, `scope`, `day`, `network`, sum(`amount`) FROM (
		SELECT r.`tenant_id`,
			CASE k.`kind` WHEN 'tenant' THEN 'tenant' WHEN 'paywall' THEN 'paywall:' || r.`paywall_id` ELSE 'service:' || r.`service_id` END AS `scope`,
			date(r.`created_at` / 1000, 'unixepoch') AS `day`, r.`network`, CAST(r.`amount` AS INTEGER) AS `amount`
		FROM `transactions` AS r
		CROSS JOIN (SELECT 'tenant' AS `kind` UNION ALL SELECT 'paywall' UNION ALL SELECT 'service') AS k
		WHERE r.`status` = 'COMPLETED' AND (k.`kind` <> 'service' OR r.`service_id` IS NOT NULL)
	)
	GROUP BY `tenant_id`, `scope`, `day`, `network`;
