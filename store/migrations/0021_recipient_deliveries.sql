-- A subscription may send to recipients other than its channels: each member
-- it names (as themselves), or each address of a burst report's rows. Such a
-- delivery goes through a channel of the owner's (its kind and credentials;
-- channel_id '' for e-mail, which needs none) to an address of its own:
-- recipient names who it is for (a member's user id, or '' for a burst row),
-- address where it goes, and config the channel configuration it sends with,
-- in place of its channel's (NULL: the channel's own). A run now has one
-- delivery per channel and address, so the unique key takes the address in,
-- and SQLite makes the table again for that (foreign keys are off while
-- migrations run). The ledger's roll-up asks whether a run has a delivery
-- still pending, which the partial index answers at once for a run of many.
CREATE TABLE deliveries_new (
    id              TEXT PRIMARY KEY,
    run_id          TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    subscription_id TEXT NOT NULL,
    scheduled_at    INTEGER NOT NULL,
    channel_id      TEXT NOT NULL,
    kind            TEXT NOT NULL,
    state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    provider_id     TEXT NOT NULL DEFAULT '',
    sent_at         INTEGER,
    created         INTEGER NOT NULL,
    updated         INTEGER NOT NULL,
    recipient       TEXT NOT NULL DEFAULT '',
    address         TEXT NOT NULL DEFAULT '',
    config          TEXT,
    UNIQUE (subscription_id, scheduled_at, channel_id, address)
);
INSERT INTO deliveries_new(id, run_id, subscription_id, scheduled_at, channel_id, kind, state, attempts, last_error,
    provider_id, sent_at, created, updated)
    SELECT id, run_id, subscription_id, scheduled_at, channel_id, kind, state, attempts, last_error,
    provider_id, sent_at, created, updated FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_new RENAME TO deliveries;
CREATE INDEX deliveries_run ON deliveries(run_id);
CREATE INDEX deliveries_pending ON deliveries(updated) WHERE state = 'pending';
CREATE INDEX deliveries_run_pending ON deliveries(run_id) WHERE state = 'pending';
