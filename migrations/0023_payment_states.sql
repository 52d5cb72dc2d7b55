-- The payment gateway's version map: one row per tenant whose `version` is drawn from one sequence over every tenant
-- (the highest version plus one) by the triggers below (hand-written after drizzle-kit's CREATE TABLE and index, as in
-- 0019), whenever what the tenant's payment URLs are answered with changes: its catalog version (any write of its
-- services or paywalls), its wallets, or its deletion. No foreign key: the row outlives its tenant, so an isolate
-- reading the rows moved since the highest version it saw also hears of a deletion.
CREATE TABLE `payment_states` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`version` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `payment_states_version_idx` ON `payment_states` (`version`);
--> statement-breakpoint
CREATE TRIGGER `payment_states_catalog_insert` AFTER INSERT ON `catalog_versions` BEGIN
	INSERT INTO `payment_states` (`tenant_id`, `version`)
		VALUES (NEW.`tenant_id`, (SELECT coalesce(max(`version`), 0) + 1 FROM `payment_states`))
		ON CONFLICT (`tenant_id`) DO UPDATE SET `version` = excluded.`version`;
END;
--> statement-breakpoint
CREATE TRIGGER `payment_states_catalog_update` AFTER UPDATE ON `catalog_versions` BEGIN
	INSERT INTO `payment_states` (`tenant_id`, `version`)
		VALUES (NEW.`tenant_id`, (SELECT coalesce(max(`version`), 0) + 1 FROM `payment_states`))
		ON CONFLICT (`tenant_id`) DO UPDATE SET `version` = excluded.`version`;
END;
--> statement-breakpoint
CREATE TRIGGER `payment_states_wallets_update` AFTER UPDATE OF `wallet_address`, `tempo_wallet_address` ON `tenants`
	WHEN OLD.`wallet_address` IS NOT NEW.`wallet_address` OR OLD.`tempo_wallet_address` IS NOT NEW.`tempo_wallet_address`
BEGIN
	UPDATE `payment_states` SET `version` = (SELECT max(`version`) + 1 FROM `payment_states`) WHERE `tenant_id` = NEW.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `payment_states_tenant_delete` AFTER DELETE ON `tenants` BEGIN
	UPDATE `payment_states` SET `version` = (SELECT max(`version`) + 1 FROM `payment_states`) WHERE `tenant_id` = OLD.`id`;
END;
--> statement-breakpoint
-- Every tenant with a catalog starts at version 1.
INSERT INTO `payment_states` (`tenant_id`, `version`) SELECT `tenant_id`, 1 FROM `catalog_versions`;
