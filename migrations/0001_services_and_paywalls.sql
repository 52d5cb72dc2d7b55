CREATE TABLE `paywalls` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`service_id` text,
	`slug` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`target_type` text NOT NULL,
	`target_url` text,
	`target_route` text,
	`price` text NOT NULL,
	`currency` text NOT NULL,
	`networks` text NOT NULL,
	`merchant_wallet` text NOT NULL,
	`timeout` integer NOT NULL,
	`allowed_methods` text NOT NULL,
	`allowed_headers` text NOT NULL,
	`fulfillment_mode` text NOT NULL,
	`enabled` integer NOT NULL,
	`headers` text,
	`query_params` text,
	`cache_rules` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`service_id`) REFERENCES `services`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `paywalls_service_slug_unique` ON `paywalls` (`service_id`,`slug`);--> statement-breakpoint
CREATE INDEX `paywalls_tenant_created_idx` ON `paywalls` (`tenant_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `paywalls_tenant_service_idx` ON `paywalls` (`tenant_id`,`service_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `paywalls_tenant_enabled_idx` ON `paywalls` (`tenant_id`,`enabled`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `paywalls_service_idx` ON `paywalls` (`service_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `services` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`base_url` text NOT NULL,
	`auth_method` text NOT NULL,
	`auth_config` text NOT NULL,
	`networks` text NOT NULL,
	`mode` text NOT NULL,
	`contact_email` text,
	`categories` text NOT NULL,
	`docs_homepage` text,
	`docs_api_reference` text,
	`docs_llms` text,
	`x_guidance` text,
	`public_routes` text NOT NULL,
	`siwx_routes` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `services_tenant_created_idx` ON `services` (`tenant_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `services_tenant_mode_idx` ON `services` (`tenant_id`,`mode`,`created_at`,`id`);