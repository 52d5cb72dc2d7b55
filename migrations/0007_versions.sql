-- A version per service and paywall, the resource's strong ETag `"v<version>"`: the data-access functions bump a
-- row's own version in the statement that writes it; the triggers below (hand-written: drizzle-kit does not model
-- triggers) bump a service's version whenever one of its paywalls is created, changed, moved or deleted, since a
-- service's representation embeds its paywalls.
ALTER TABLE `paywalls` ADD `version` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `services` ADD `version` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
CREATE TRIGGER `paywalls_version_service_insert` AFTER INSERT ON `paywalls` WHEN NEW.`service_id` IS NOT NULL BEGIN
	UPDATE `services` SET `version` = `version` + 1 WHERE `id` = NEW.`service_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `paywalls_version_service_update` AFTER UPDATE ON `paywalls` BEGIN
	UPDATE `services` SET `version` = `version` + 1 WHERE `id` IN (OLD.`service_id`, NEW.`service_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `paywalls_version_service_delete` AFTER DELETE ON `paywalls` WHEN OLD.`service_id` IS NOT NULL BEGIN
	UPDATE `services` SET `version` = `version` + 1 WHERE `id` = OLD.`service_id`;
END;
