CREATE TABLE `paid_answers` (
	`transaction_id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`payment_key` text,
	`fingerprint` text NOT NULL,
	`credential` text NOT NULL,
	`answer` text,
	`answered_at` integer,
	`owner_until` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `paid_answers_payment_key_unique` ON `paid_answers` (`payment_key`);--> statement-breakpoint
CREATE INDEX `paid_answers_expires_idx` ON `paid_answers` (`expires_at`);