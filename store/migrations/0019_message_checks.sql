-- What a subscription's messages check before they go. last_values holds, as
-- a JSON object of metric URI to number or null, the values of the metrics its
-- condition and templates read with f:previous, as its last evaluated fire saw
-- them; NULL before the first.
ALTER TABLE subscription_state ADD COLUMN last_values TEXT;
-- A delivery that may be compared with the next one (sendWhen changed) or
-- that moves a high-water mark (newRowsBy) carries its marks: the digest of
-- its message and files, and the latest value of each attachment's
-- newRowsBy attribute it held, as a JSON object.
CREATE TABLE delivery_marks (
    delivery_id TEXT PRIMARY KEY REFERENCES deliveries(id) ON DELETE CASCADE,
    digest      TEXT NOT NULL,
    high_water  TEXT NOT NULL
);
-- The marks of the last delivery sent to each channel of a subscription,
-- written as the delivery becomes sent and kept when its run is pruned:
-- the next run compares with them and sends only what is newer.
CREATE TABLE channel_marks (
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    channel_id      TEXT NOT NULL,
    scheduled_at    INTEGER NOT NULL,
    digest          TEXT NOT NULL,
    high_water      TEXT NOT NULL,
    PRIMARY KEY (subscription_id, channel_id)
);
