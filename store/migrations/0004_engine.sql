-- What the engine remembers of each subscription between runs.
CREATE TABLE subscription_state (
    subscription_id TEXT PRIMARY KEY REFERENCES subscriptions(id) ON DELETE CASCADE,
    -- the condition's value at the last evaluated run (fireMode onChange); NULL before the first
    last_condition  INTEGER,
    -- failed runs in a row, and whether the owner has been told the subscription is unhealthy
    failures        INTEGER NOT NULL DEFAULT 0,
    unhealthy       INTEGER NOT NULL DEFAULT 0,
    updated         INTEGER NOT NULL
);

CREATE INDEX runs_started ON runs(started);
