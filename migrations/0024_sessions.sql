-- Sessions: a paywall's opt-in and least deposit, the channels' read model (written from the payment-records queue),
-- and the channel a settlement transaction moved.
CREATE TABLE `channels` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`paywall_id` text NOT NULL,
	`service_id` text,
	`protocol` text NOT NULL,
	`network` text NOT NULL,
	`currency` text NOT NULL,
	`payer_address` text NOT NULL,
	`deposit` text NOT NULL,
	`charged` text NOT NULL,
	`claimed` text NOT NULL,
	`settled` text NOT NULL,
	`status` text NOT NULL,
	`seq` integer NOT NULL,
	`opened_at` integer NOT NULL,
	`last_call_at` integer,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `channels_tenant_opened_idx` ON `channels` (`tenant_id`,`opened_at`,`id`);--> statement-breakpoint
CREATE INDEX `channels_tenant_status_idx` ON `channels` (`tenant_id`,`status`,`opened_at`,`id`);--> statement-breakpoint
ALTER TABLE `paywalls` ADD `sessions_enabled` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `paywalls` ADD `sessions_min_deposit` text;--> statement-breakpoint
ALTER TABLE `transactions` ADD `channel_id` text;