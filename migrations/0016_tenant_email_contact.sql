DROP INDEX `tenants_email_unique`;--> statement-breakpoint
CREATE INDEX `tenants_email_idx` ON `tenants` (`email`);