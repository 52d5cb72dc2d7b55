CREATE TABLE `account_events` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`action` text NOT NULL,
	`subject` text,
	`detail` text,
	`actor` text NOT NULL,
	`ip` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `account_events_tenant_created_idx` ON `account_events` (`tenant_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `dashboard_flashes` (
	`id` text PRIMARY KEY NOT NULL,
	`session_id` text NOT NULL,
	`body` text NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `dashboard_flashes_expires_idx` ON `dashboard_flashes` (`expires_at`);--> statement-breakpoint
ALTER TABLE `dashboard_sessions` ADD `ip` text;--> statement-breakpoint
ALTER TABLE `dashboard_sessions` ADD `user_agent` text;--> statement-breakpoint
ALTER TABLE `dashboard_sessions` ADD `signed_in_with` text;