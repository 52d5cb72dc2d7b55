CREATE TABLE `discovery_listings` (
	`paywall_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`status` text NOT NULL,
	`reason` text,
	`facilitator_url` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`paywall_id`) REFERENCES `paywalls`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `siwx_nonces` (
	`nonce` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `siwx_nonces_expires_idx` ON `siwx_nonces` (`expires_at`);--> statement-breakpoint
ALTER TABLE `paywalls` ADD `input_schema` text;--> statement-breakpoint
ALTER TABLE `paywalls` ADD `output_schema` text;--> statement-breakpoint
ALTER TABLE `paywalls` ADD `output_example` text;--> statement-breakpoint
CREATE INDEX `paywalls_enabled_created_idx` ON `paywalls` (`enabled`,`created_at`,`id`);