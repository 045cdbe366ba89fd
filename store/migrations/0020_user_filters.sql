-- Data permissions: a project's admin assigns mandatory user filters (metadata
-- objects of category userFilter) to users, and every execution a user makes
-- in the project meets all of that user's filters. An assignment outlives a
-- membership (a user disabled and enabled again keeps their filters), goes
-- with the user or the project, and holds its filter: an assigned filter
-- cannot be deleted.
CREATE TABLE user_filters (
    project_id TEXT    NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id    TEXT    NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    filter_id  INTEGER NOT NULL REFERENCES md_objects(id),
    PRIMARY KEY (project_id, user_id, filter_id)
) WITHOUT ROWID;
CREATE INDEX user_filters_filter ON user_filters(filter_id);
