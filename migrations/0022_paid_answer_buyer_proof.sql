-- What only the buyer sent with a gateway payment (never on chain): a kept answer is served again only to a request
-- carrying the same. Rows claimed before this column have none and are not served again (kept 10 minutes at most).
ALTER TABLE `paid_answers` ADD `buyer_proof` text;
