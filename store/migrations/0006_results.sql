-- Executed reports. A result is computed once per project, compiled report and data
-- version (digest, data_version); its rows live in a file in the data folder while the
-- record says how it went. A result survives a restart until it expires; one still
-- running when a process stops is computed again from its plan when asked for.
CREATE TABLE report_results (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    digest       TEXT NOT NULL,
    data_version INTEGER NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('running', 'done', 'empty', 'failed')),
    title        TEXT NOT NULL DEFAULT '',
    author       TEXT NOT NULL,
    plan         TEXT NOT NULL,
    rows         INTEGER NOT NULL DEFAULT 0,
    columns      INTEGER NOT NULL DEFAULT 0,
    path         TEXT NOT NULL DEFAULT '',
    error        TEXT NOT NULL DEFAULT '',
    created      INTEGER NOT NULL,
    finished     INTEGER,
    expires      INTEGER NOT NULL
);
CREATE INDEX report_results_digest ON report_results(project_id, digest, data_version);
CREATE INDEX report_results_expires ON report_results(expires);
