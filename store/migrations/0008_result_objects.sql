-- What each execution answered: an object of its own per call, with its caller and time,
-- over the result it shares with equal executions. The object goes with its result.
CREATE TABLE result_objects (
    id         TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    result_id  TEXT NOT NULL REFERENCES report_results(id) ON DELETE CASCADE,
    author     TEXT NOT NULL,
    created    INTEGER NOT NULL
);
CREATE INDEX result_objects_result ON result_objects(result_id);
