CREATE TABLE `dashboard_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text,
	`signup_wallet` text,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dashboard_sessions_tenant_idx` ON `dashboard_sessions` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `key_events` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`key_id` text NOT NULL,
	`key_name` text NOT NULL,
	`key_prefix` text NOT NULL,
	`action` text NOT NULL,
	`actor` text NOT NULL,
	`ip` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `key_events_tenant_created_idx` ON `key_events` (`tenant_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `sign_in_links` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sign_in_links_tenant_idx` ON `sign_in_links` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `siwe_nonces` (
	`nonce` text PRIMARY KEY NOT NULL,
	`purpose` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `siwe_nonces_expires_idx` ON `siwe_nonces` (`expires_at`);--> statement-breakpoint
CREATE INDEX `tenants_wallet_idx` ON `tenants` (lower("wallet_address"));--> statement-breakpoint
CREATE INDEX `tenants_tempo_wallet_idx` ON `tenants` (lower("tempo_wallet_address"));