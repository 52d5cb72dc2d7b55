-- Expiry indexes for the hourly cleanup of sign-in rows (src/db/dashboard.ts deleteExpiredSignInRows): expired
-- sign-in links and dashboard sessions are deleted by expires_at, like SIWE nonces.
CREATE INDEX `dashboard_sessions_expires_idx` ON `dashboard_sessions` (`expires_at`);--> statement-breakpoint
CREATE INDEX `sign_in_links_expires_idx` ON `sign_in_links` (`expires_at`);