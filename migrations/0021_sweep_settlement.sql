-- x402: what the payment sweep needs to send a settlement itself (sealed), for a payment whose upstream answered and
-- whose request never recorded an outcome (docs/gateway.md, "The payment sweep"). Nullable: earlier rows have none.
ALTER TABLE `pending_payments` ADD `settlement` text;
