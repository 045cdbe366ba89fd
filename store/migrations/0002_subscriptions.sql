-- Channels, subscriptions, their runs and deliveries. Times are Unix seconds (UTC).

-- A channel configuration belongs to a user. Non-secret fields are JSON in
-- config; the password is sealed with AES-256-GCM in secret.
CREATE TABLE channels (
    id       TEXT PRIMARY KEY,
    owner    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind     TEXT NOT NULL CHECK (kind IN ('email', 'sms', 'feedchat')),
    title    TEXT NOT NULL,
    config   TEXT NOT NULL,
    secret   BLOB,
    created  INTEGER NOT NULL,
    updated  INTEGER NOT NULL
);
CREATE INDEX channels_owner ON channels(owner, created);

-- A subscription of a user in a project. The definition (triggers, condition,
-- message, subject, attachments, fire mode) is JSON in doc.
CREATE TABLE subscriptions (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    owner       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    title       TEXT NOT NULL,
    doc         TEXT NOT NULL,
    enabled     INTEGER NOT NULL DEFAULT 1,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL
);
CREATE INDEX subscriptions_owner ON subscriptions(project_id, owner, created);
CREATE INDEX subscriptions_enabled ON subscriptions(enabled);

CREATE TABLE subscription_channels (
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    channel_id      TEXT NOT NULL REFERENCES channels(id),
    position        INTEGER NOT NULL,
    PRIMARY KEY (subscription_id, channel_id)
) WITHOUT ROWID;
CREATE INDEX subscription_channels_channel ON subscription_channels(channel_id);

-- One run per (subscription, scheduled instant): the unique key is the claim
-- that keeps two schedulers, or a restart, from firing an instant twice.
CREATE TABLE runs (
    id              TEXT PRIMARY KEY,
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    scheduled_at    INTEGER NOT NULL,
    state           TEXT NOT NULL,
    detail          TEXT NOT NULL DEFAULT '{}',
    error           TEXT NOT NULL DEFAULT '',
    started         INTEGER NOT NULL,
    finished        INTEGER,
    UNIQUE (subscription_id, scheduled_at)
);

-- One delivery per (subscription, instant, channel): the ledger the worker
-- checks before sending, so nothing is sent twice.
CREATE TABLE deliveries (
    id              TEXT PRIMARY KEY,
    run_id          TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    subscription_id TEXT NOT NULL,
    scheduled_at    INTEGER NOT NULL,
    channel_id      TEXT NOT NULL,
    kind            TEXT NOT NULL,
    payload         TEXT NOT NULL,
    state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    provider_id     TEXT NOT NULL DEFAULT '',
    sent_at         INTEGER,
    created         INTEGER NOT NULL,
    updated         INTEGER NOT NULL,
    UNIQUE (subscription_id, scheduled_at, channel_id)
);
CREATE INDEX deliveries_run ON deliveries(run_id);

-- Deliveries not yet published to JetStream. The relay publishes each with
-- its delivery id as the message id and then deletes the row.
CREATE TABLE outbox (
    delivery_id TEXT PRIMARY KEY REFERENCES deliveries(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    created     INTEGER NOT NULL
);
