-- The relay publishes the outbox owner by owner, in turn, with a bound on what
-- each owner has published and not yet final: the outbox row names the owner
-- of the delivery's subscription, and the index finds each owner's rows, oldest
-- first, and the owners with rows.
ALTER TABLE outbox ADD COLUMN owner TEXT NOT NULL DEFAULT '';
UPDATE outbox SET owner = COALESCE((SELECT s.owner FROM deliveries d JOIN subscriptions s ON s.id = d.subscription_id
    WHERE d.id = outbox.delivery_id), '');
CREATE INDEX outbox_owner ON outbox(owner);
