-- Tasks of every kind (model changes, validation, project and metadata export and
-- import) share md_tasks: who started a task and, once it finished, what it produced.
-- A task still RUNNING when a process starts was cut off by the previous one.
ALTER TABLE md_tasks ADD COLUMN started_by TEXT NOT NULL DEFAULT '';
ALTER TABLE md_tasks ADD COLUMN result TEXT NOT NULL DEFAULT '';
CREATE INDEX md_tasks_running ON md_tasks(status) WHERE status = 'RUNNING';

-- Archives that export tasks write: a whole project (kind 'project') or some metadata
-- objects with what they use (kind 'partial'). The file lives in the data folder until
-- the artifact expires. Only the SHA-256 of the token that names it is kept.
CREATE TABLE md_artifacts (
    token_hash  BLOB PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('project', 'partial')),
    project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    task_id     TEXT NOT NULL REFERENCES md_tasks(id) ON DELETE CASCADE,
    path        TEXT NOT NULL,
    author      TEXT NOT NULL,               -- user id of the exporter
    authorized  TEXT NOT NULL DEFAULT '[]',  -- JSON array of logins that may import it too
    created     INTEGER NOT NULL,
    expires     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX md_artifacts_expires ON md_artifacts(expires);
