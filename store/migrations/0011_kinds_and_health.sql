-- Channel kinds come from the registry of the running binary, so the table no longer
-- lists them. SQLite cannot drop a CHECK constraint: the table is made again (the
-- migration runs with foreign keys off, and checks them before it commits).
CREATE TABLE channels_new (
    id       TEXT PRIMARY KEY,
    owner    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind     TEXT NOT NULL,
    title    TEXT NOT NULL,
    config   TEXT NOT NULL,
    secret   BLOB,
    created  INTEGER NOT NULL,
    updated  INTEGER NOT NULL
);
INSERT INTO channels_new(id, owner, kind, title, config, secret, created, updated)
    SELECT id, owner, kind, title, config, secret, created, updated FROM channels;
DROP TABLE channels;
ALTER TABLE channels_new RENAME TO channels;
CREATE INDEX channels_owner ON channels(owner, created);

-- A run's final state counts toward its subscription's health once: 0 until the
-- roll-up has counted it. Runs from before are taken as counted.
ALTER TABLE runs ADD COLUMN rated INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET rated = 1;
CREATE INDEX runs_unrated ON runs(finished) WHERE rated = 0;
