-- Analytics metadata: the logical data model of each project, its metadata objects,
-- the uses between them and the tasks of model changes. Times are Unix seconds (UTC).

-- The model of a project (JSON) and its versions: model_version counts model changes,
-- data_version counts model changes and data loads, so results cached for one data
-- version are valid until it changes.
CREATE TABLE project_models (
    project_id    TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    model         TEXT NOT NULL,
    model_version INTEGER NOT NULL,
    data_version  INTEGER NOT NULL,
    updated       INTEGER NOT NULL
);

-- Metadata objects: the model's own (in_model = 1: datasets, attributes, labels, facts,
-- folders; their content is the model) and the users' metrics, report definitions and
-- reports. Ids appear in URIs and are never reused.
CREATE TABLE md_objects (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    category    TEXT NOT NULL,
    identifier  TEXT NOT NULL,
    in_model    INTEGER NOT NULL DEFAULT 0,
    title       TEXT NOT NULL,
    summary     TEXT NOT NULL DEFAULT '',
    tags        TEXT NOT NULL DEFAULT '',
    deprecated  INTEGER NOT NULL DEFAULT 0,
    content     TEXT NOT NULL DEFAULT '{}',
    author      TEXT NOT NULL,
    contributor TEXT NOT NULL,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL,
    UNIQUE (project_id, identifier)
);
CREATE INDEX md_objects_category ON md_objects(project_id, category, id);

-- Object from_id uses object to_id: a metric its facts, a label its attribute. An object
-- that others use cannot be deleted.
CREATE TABLE md_uses (
    from_id INTEGER NOT NULL REFERENCES md_objects(id) ON DELETE CASCADE,
    to_id   INTEGER NOT NULL REFERENCES md_objects(id),
    PRIMARY KEY (from_id, to_id)
) WITHOUT ROWID;
CREATE INDEX md_uses_to ON md_uses(to_id, from_id);

-- Tasks of a project, such as model changes, polled by their status URI.
CREATE TABLE md_tasks (
    id         TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('RUNNING', 'OK', 'ERROR')),
    messages   TEXT NOT NULL DEFAULT '[]',
    created    INTEGER NOT NULL,
    finished   INTEGER
);
CREATE INDEX md_tasks_project ON md_tasks(project_id, created);
