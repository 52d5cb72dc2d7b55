CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`paywall_id` text NOT NULL,
	`service_id` text,
	`event_type` text NOT NULL,
	`status_code` integer,
	`response_time` integer,
	`amount` text,
	`metadata` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `events_tenant_created_idx` ON `events` (`tenant_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_tenant_type_idx` ON `events` (`tenant_id`,`event_type`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_tenant_paywall_idx` ON `events` (`tenant_id`,`paywall_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `events_tenant_service_idx` ON `events` (`tenant_id`,`service_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `transactions` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`paywall_id` text NOT NULL,
	`service_id` text,
	`protocol` text NOT NULL,
	`network` text NOT NULL,
	`amount` text NOT NULL,
	`currency` text NOT NULL,
	`status` text NOT NULL,
	`payer_address` text,
	`tx_hash` text,
	`failure_reason` text,
	`created_at` integer NOT NULL,
	`settled_at` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `transactions_tenant_created_idx` ON `transactions` (`tenant_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `transactions_tenant_status_idx` ON `transactions` (`tenant_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `transactions_tenant_paywall_idx` ON `transactions` (`tenant_id`,`paywall_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `transactions_tenant_service_idx` ON `transactions` (`tenant_id`,`service_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `transactions_tenant_network_idx` ON `transactions` (`tenant_id`,`network`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `transactions_tenant_protocol_idx` ON `transactions` (`tenant_id`,`protocol`,`created_at`,`id`);