CREATE TABLE `pending_payments` (
	`transaction_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`reference` text NOT NULL,
	`valid_before` integer NOT NULL,
	`asset` text NOT NULL,
	`pay_to` text NOT NULL,
	`checked_at` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
