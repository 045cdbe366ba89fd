-- Exported report files. The file itself lives in the data folder; a
-- finished export survives a restart until it expires.
CREATE TABLE exports (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    result_id    TEXT NOT NULL,
    format       TEXT NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('running', 'done', 'empty', 'failed')),
    title        TEXT NOT NULL DEFAULT '',
    path         TEXT NOT NULL DEFAULT '',
    error        TEXT NOT NULL DEFAULT '',
    created      INTEGER NOT NULL,
    finished     INTEGER,
    expires      INTEGER NOT NULL
);
CREATE INDEX exports_state ON exports(state);
CREATE INDEX exports_expires ON exports(expires);
