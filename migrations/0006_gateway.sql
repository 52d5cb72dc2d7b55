-- Signed URLs of SIGNED_URL paywalls: each is claimed once, by one conditional UPDATE.
CREATE TABLE `signed_urls` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`paywall_id` text NOT NULL,
	`transaction_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
