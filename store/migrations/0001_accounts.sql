-- Accounts, sessions and projects. Times are Unix seconds (UTC).
CREATE TABLE domains (
    name    TEXT PRIMARY KEY,
    created INTEGER NOT NULL
);

CREATE TABLE users (
    id              TEXT PRIMARY KEY,
    domain          TEXT NOT NULL REFERENCES domains(name),
    login           TEXT NOT NULL UNIQUE COLLATE NOCASE,
    password_hash   TEXT NOT NULL,
    first_name      TEXT NOT NULL DEFAULT '',
    last_name       TEXT NOT NULL DEFAULT '',
    timezone        TEXT,
    country         TEXT,
    phone_number    TEXT NOT NULL DEFAULT '',
    sso_provider    TEXT NOT NULL DEFAULT '',
    is_domain_admin INTEGER NOT NULL DEFAULT 0,
    is_service      INTEGER NOT NULL DEFAULT 0,
    created         INTEGER NOT NULL,
    updated         INTEGER NOT NULL
);
CREATE INDEX users_domain ON users(domain, created, id);

-- A session is one login: the super-secure token (SST). Only its hash is kept.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash  BLOB NOT NULL UNIQUE,
    user_agent  TEXT NOT NULL,
    created     INTEGER NOT NULL,
    expires     INTEGER NOT NULL,
    revoked     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_user ON sessions(user_id);

-- Temporary tokens (TT) issued for a session. Only their hashes are kept.
CREATE TABLE temp_tokens (
    token_hash BLOB PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    expires    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX temp_tokens_session ON temp_tokens(session_id);
CREATE INDEX temp_tokens_expires ON temp_tokens(expires);

CREATE TABLE projects (
    id                TEXT PRIMARY KEY,
    title             TEXT NOT NULL,
    summary           TEXT NOT NULL DEFAULT '',
    template          TEXT NOT NULL DEFAULT '',
    guided_navigation INTEGER NOT NULL DEFAULT 1,
    is_public         INTEGER NOT NULL DEFAULT 0,
    state             TEXT NOT NULL,
    author            TEXT NOT NULL,
    contributor       TEXT NOT NULL,
    created           INTEGER NOT NULL,
    updated           INTEGER NOT NULL
);

CREATE TABLE project_members (
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    status     TEXT NOT NULL CHECK (status IN ('ENABLED', 'DISABLED')),
    created    INTEGER NOT NULL,
    updated    INTEGER NOT NULL,
    PRIMARY KEY (project_id, user_id)
) WITHOUT ROWID;
CREATE INDEX project_members_user ON project_members(user_id);

CREATE TABLE member_roles (
    project_id TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    role       TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id, role),
    FOREIGN KEY (project_id, user_id) REFERENCES project_members(project_id, user_id) ON DELETE CASCADE
) WITHOUT ROWID;
