CREATE TABLE `dashboard_form_tokens` (
	`session_id` text NOT NULL,
	`token` text NOT NULL,
	`location` text,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `token`)
);
--> statement-breakpoint
CREATE INDEX `dashboard_form_tokens_expires_idx` ON `dashboard_form_tokens` (`expires_at`);