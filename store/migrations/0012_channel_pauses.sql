-- A recipient may stop one subscription from sending to one channel (the
-- unsubscribe link of a mail): the pause is kept on the subscription's link to
-- that channel, with who asked and when; NULL paused_at is not paused.
ALTER TABLE subscription_channels ADD COLUMN paused_at INTEGER;
ALTER TABLE subscription_channels ADD COLUMN paused_by TEXT NOT NULL DEFAULT '';
