-- An unsubscribe link pauses one subscription's sends to one channel. Once the
-- owner turns that channel back on, the links sent before must not pause it
-- again: each link names the channel's generation, which a resume moves on.
-- Generations of one subscription come from its own sequence (link_gen), so a
-- channel taken off and put back gets a new one too; the channels a
-- subscription was created with start at 0, as every link made before this
-- version reads.
ALTER TABLE subscription_channels ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE subscriptions ADD COLUMN link_gen INTEGER NOT NULL DEFAULT 0;
