-- Row counts per tenant, kept by triggers (hand-written after drizzle-kit's CREATE TABLE: drizzle-kit does not
-- model triggers). Events and transactions are never updated in a way that changes their counted columns.
CREATE TABLE `tenant_counts` (
	`tenant_id` text NOT NULL,
	`kind` text NOT NULL,
	`n` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`tenant_id`, `kind`),
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TRIGGER `services_count_insert` AFTER INSERT ON `services` BEGIN
	INSERT OR IGNORE INTO `tenant_counts` (`tenant_id`, `kind`, `n`) VALUES (NEW.`tenant_id`, 'services', 0);
	UPDATE `tenant_counts` SET `n` = `n` + 1 WHERE `tenant_id` = NEW.`tenant_id` AND `kind` = 'services';
END;
--> statement-breakpoint
CREATE TRIGGER `services_count_delete` AFTER DELETE ON `services` BEGIN
	UPDATE `tenant_counts` SET `n` = `n` - 1 WHERE `tenant_id` = OLD.`tenant_id` AND `kind` = 'services';
END;
--> statement-breakpoint
CREATE TRIGGER `paywalls_count_insert` AFTER INSERT ON `paywalls` BEGIN
	INSERT OR IGNORE INTO `tenant_counts` (`tenant_id`, `kind`, `n`) VALUES (NEW.`tenant_id`, 'paywalls', 0);
	UPDATE `tenant_counts` SET `n` = `n` + 1 WHERE `tenant_id` = NEW.`tenant_id` AND `kind` = 'paywalls';
END;
--> statement-breakpoint
CREATE TRIGGER `paywalls_count_delete` AFTER DELETE ON `paywalls` BEGIN
	UPDATE `tenant_counts` SET `n` = `n` - 1 WHERE `tenant_id` = OLD.`tenant_id` AND `kind` = 'paywalls';
END;
--> statement-breakpoint
CREATE TRIGGER `transactions_count_insert` AFTER INSERT ON `transactions` BEGIN
	INSERT OR IGNORE INTO `tenant_counts` (`tenant_id`, `kind`, `n`) VALUES (NEW.`tenant_id`, 'transactions', 0);
	UPDATE `tenant_counts` SET `n` = `n` + 1 WHERE `tenant_id` = NEW.`tenant_id` AND `kind` = 'transactions';
END;
--> statement-breakpoint
CREATE TRIGGER `transactions_count_delete` AFTER DELETE ON `transactions` BEGIN
	UPDATE `tenant_counts` SET `n` = `n` - 1 WHERE `tenant_id` = OLD.`tenant_id` AND `kind` = 'transactions';
END;
--> statement-breakpoint
CREATE TRIGGER `events_count_insert` AFTER INSERT ON `events` BEGIN
	INSERT OR IGNORE INTO `tenant_counts` (`tenant_id`, `kind`, `n`) VALUES (NEW.`tenant_id`, 'events:' || NEW.`event_type`, 0);
	UPDATE `tenant_counts` SET `n` = `n` + 1 WHERE `tenant_id` = NEW.`tenant_id` AND `kind` = 'events:' || NEW.`event_type`;
END;
--> statement-breakpoint
CREATE TRIGGER `events_count_delete` AFTER DELETE ON `events` BEGIN
	UPDATE `tenant_counts` SET `n` = `n` - 1 WHERE `tenant_id` = OLD.`tenant_id` AND `kind` = 'events:' || OLD.`event_type`;
END;
--> statement-breakpoint
-- Counts of the rows stored before this migration.
INSERT INTO `tenant_counts` (`tenant_id`, `kind`, `n`)
	SELECT `tenant_id`, 'services', count(*) FROM `services` GROUP BY `tenant_id`
	UNION ALL SELECT `tenant_id`, 'paywalls', count(*) FROM `paywalls` GROUP BY `tenant_id`
	UNION ALL SELECT `tenant_id`, 'transactions', count(*) FROM `transactions` GROUP BY `tenant_id`
	UNION ALL SELECT `tenant_id`, 'events:' || `event_type`, count(*) FROM `events` GROUP BY `tenant_id`, `event_type`;
