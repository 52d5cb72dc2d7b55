-- Each tenant's catalog version, bumped by triggers (hand-written after drizzle-kit's CREATE TABLE, as in 0003) on
-- every insert, update and delete of its services and paywalls: the key under which the API keeps serialized pages of
-- its services and paywalls lists. The bump writes only while the tenant exists (a tenant's deletion cascades to its
-- services and paywalls, and to this row).
CREATE TABLE `catalog_versions` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TRIGGER `services_catalog_insert` AFTER INSERT ON `services` BEGIN
	INSERT INTO `catalog_versions` (`tenant_id`, `version`)
		SELECT NEW.`tenant_id`, 1 WHERE EXISTS (SELECT 1 FROM `tenants` WHERE `id` = NEW.`tenant_id`)
		ON CONFLICT (`tenant_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `services_catalog_update` AFTER UPDATE ON `services` BEGIN
	INSERT INTO `catalog_versions` (`tenant_id`, `version`)
		SELECT NEW.`tenant_id`, 1 WHERE EXISTS (SELECT 1 FROM `tenants` WHERE `id` = NEW.`tenant_id`)
		ON CONFLICT (`tenant_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `services_catalog_delete` AFTER DELETE ON `services` BEGIN
	INSERT INTO `catalog_versions` (`tenant_id`, `version`)
		SELECT OLD.`tenant_id`, 1 WHERE EXISTS (SELECT 1 FROM `tenants` WHERE `id` = OLD.`tenant_id`)
		ON CONFLICT (`tenant_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `paywalls_catalog_insert` AFTER INSERT ON `paywalls` BEGIN
	INSERT INTO `catalog_versions` (`tenant_id`, `version`)
		SELECT NEW.`tenant_id`, 1 WHERE EXISTS (SELECT 1 FROM `tenants` WHERE `id` = NEW.`tenant_id`)
		ON CONFLICT (`tenant_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `paywalls_catalog_update` AFTER UPDATE ON `paywalls` BEGIN
	INSERT INTO `catalog_versions` (`tenant_id`, `version`)
		SELECT NEW.`tenant_id`, 1 WHERE EXISTS (SELECT 1 FROM `tenants` WHERE `id` = NEW.`tenant_id`)
		ON CONFLICT (`tenant_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `paywalls_catalog_delete` AFTER DELETE ON `paywalls` BEGIN
	INSERT INTO `catalog_versions` (`tenant_id`, `version`)
		SELECT OLD.`tenant_id`, 1 WHERE EXISTS (SELECT 1 FROM `tenants` WHERE `id` = OLD.`tenant_id`)
		ON CONFLICT (`tenant_id`) DO UPDATE SET `version` = `version` + 1;
END;
--> statement-breakpoint
-- Every tenant starts at version 1.
INSERT INTO `catalog_versions` (`tenant_id`, `version`) SELECT `id`, 1 FROM `tenants`;
