PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL);
INSERT INTO schema_migrations VALUES(1,'0001_accounts.sql',1795880049);
INSERT INTO schema_migrations VALUES(2,'0002_subscriptions.sql',1795880049);
INSERT INTO schema_migrations VALUES(3,'0003_analytics.sql',1795880049);
INSERT INTO schema_migrations VALUES(4,'0004_engine.sql',1795880049);
INSERT INTO schema_migrations VALUES(5,'0005_exports.sql',1795880049);
INSERT INTO schema_migrations VALUES(6,'0006_results.sql',1795880049);
INSERT INTO schema_migrations VALUES(7,'0007_tasks.sql',1795880049);
INSERT INTO schema_migrations VALUES(8,'0008_result_objects.sql',1795880049);
INSERT INTO schema_migrations VALUES(9,'0009_run_incarnation.sql',1795880049);
INSERT INTO schema_migrations VALUES(10,'0010_pending_index.sql',1795880049);
INSERT INTO schema_migrations VALUES(11,'0011_kinds_and_health.sql',1795880049);
INSERT INTO schema_migrations VALUES(12,'0012_channel_pauses.sql',1795880049);
INSERT INTO schema_migrations VALUES(13,'0013_delivery_payloads.sql',1795880049);
INSERT INTO schema_migrations VALUES(14,'0014_unrated_final_runs.sql',1795880049);
INSERT INTO schema_migrations VALUES(15,'0015_channel_resumes.sql',1795880049);
INSERT INTO schema_migrations VALUES(16,'0016_outbox_owner.sql',1795880049);
INSERT INTO schema_migrations VALUES(17,'0017_recipients.sql',1795880049);
CREATE TABLE domains (
    name    TEXT PRIMARY KEY,
    created INTEGER NOT NULL
);
INSERT INTO domains VALUES('default',1795880049);
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
INSERT INTO users VALUES('gia77j62ejifaqm3cbygwsy7h58rryvo','default','admin@herald.local','$2a$10$r2FqXvmgdnTvZ/LMfUedWuHcPxeXtuK/DbfAJKiwOrTHBH3KdwhJi','Herald','Admin',NULL,NULL,'','',1,0,1795880049,1795880049);
INSERT INTO users VALUES('8o6rs7ec3hvtfokjg56wq1dp44vm7y0x','default','herald-engine@service.invalid','$2a$10$qM/LmY4uocI/0MfcmWSazerqEVTZTikTKaE96URADAZA0hd.YPzim','Herald','Engine',NULL,NULL,'','',1,1,1795880049,1795880049);
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash  BLOB NOT NULL UNIQUE,
    user_agent  TEXT NOT NULL,
    created     INTEGER NOT NULL,
    expires     INTEGER NOT NULL,
    revoked     INTEGER NOT NULL DEFAULT 0
);
INSERT INTO sessions VALUES('cefk2v82yj14k1icuzk7w4zf','8o6rs7ec3hvtfokjg56wq1dp44vm7y0x',X'ecd781650f5bd26bac05b59ae7004587bdd33b0cfd2ad73c9c7defe69f31d5a7','herald-engine',1795880050,1797089650,0);
CREATE TABLE temp_tokens (
    token_hash BLOB PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    expires    INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO temp_tokens VALUES(X'1d2b0415f7dbb02e01888178c210d81bab9a5ca335afe6863032ffb20fec5ce0','cefk2v82yj14k1icuzk7w4zf',1795880650);
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
CREATE TABLE member_roles (
    project_id TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    role       TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id, role),
    FOREIGN KEY (project_id, user_id) REFERENCES project_members(project_id, user_id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE TABLE subscriptions (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    owner       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    title       TEXT NOT NULL,
    doc         TEXT NOT NULL,
    enabled     INTEGER NOT NULL DEFAULT 1,
    created     INTEGER NOT NULL,
    updated     INTEGER NOT NULL
, link_gen INTEGER NOT NULL DEFAULT 0);
CREATE TABLE subscription_channels (
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    channel_id      TEXT NOT NULL REFERENCES channels(id),
    position        INTEGER NOT NULL, paused_at INTEGER, paused_by TEXT NOT NULL DEFAULT '', generation INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (subscription_id, channel_id)
) WITHOUT ROWID;
CREATE TABLE runs (
    id              TEXT PRIMARY KEY,
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
    scheduled_at    INTEGER NOT NULL,
    state           TEXT NOT NULL,
    detail          TEXT NOT NULL DEFAULT '{}',
    error           TEXT NOT NULL DEFAULT '',
    started         INTEGER NOT NULL,
    finished        INTEGER, incarnation TEXT NOT NULL DEFAULT '', rated INTEGER NOT NULL DEFAULT 0,
    UNIQUE (subscription_id, scheduled_at)
);
CREATE TABLE deliveries (
    id              TEXT PRIMARY KEY,
    run_id          TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    subscription_id TEXT NOT NULL,
    scheduled_at    INTEGER NOT NULL,
    channel_id      TEXT NOT NULL,
    kind            TEXT NOT NULL,
    state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT NOT NULL DEFAULT '',
    provider_id     TEXT NOT NULL DEFAULT '',
    sent_at         INTEGER,
    created         INTEGER NOT NULL,
    updated         INTEGER NOT NULL,
    UNIQUE (subscription_id, scheduled_at, channel_id)
);
CREATE TABLE outbox (
    delivery_id TEXT PRIMARY KEY REFERENCES deliveries(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    created     INTEGER NOT NULL
, owner TEXT NOT NULL DEFAULT '');
CREATE TABLE project_models (
    project_id    TEXT PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
    model         TEXT NOT NULL,
    model_version INTEGER NOT NULL,
    data_version  INTEGER NOT NULL,
    updated       INTEGER NOT NULL
);
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
CREATE TABLE md_uses (
    from_id INTEGER NOT NULL REFERENCES md_objects(id) ON DELETE CASCADE,
    to_id   INTEGER NOT NULL REFERENCES md_objects(id),
    PRIMARY KEY (from_id, to_id)
) WITHOUT ROWID;
CREATE TABLE md_tasks (
    id         TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    status     TEXT NOT NULL CHECK (status IN ('RUNNING', 'OK', 'ERROR')),
    messages   TEXT NOT NULL DEFAULT '[]',
    created    INTEGER NOT NULL,
    finished   INTEGER
, started_by TEXT NOT NULL DEFAULT '', result TEXT NOT NULL DEFAULT '');
CREATE TABLE subscription_state (
    subscription_id TEXT PRIMARY KEY REFERENCES subscriptions(id) ON DELETE CASCADE,
    -- the condition's value at the last evaluated run (fireMode onChange); NULL before the first
    last_condition  INTEGER,
    -- failed runs in a row, and whether the owner has been told the subscription is unhealthy
    failures        INTEGER NOT NULL DEFAULT 0,
    unhealthy       INTEGER NOT NULL DEFAULT 0,
    updated         INTEGER NOT NULL
);
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
CREATE TABLE result_objects (
    id         TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    result_id  TEXT NOT NULL REFERENCES report_results(id) ON DELETE CASCADE,
    author     TEXT NOT NULL,
    created    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS "channels" (
    id       TEXT PRIMARY KEY,
    owner    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind     TEXT NOT NULL,
    title    TEXT NOT NULL,
    config   TEXT NOT NULL,
    secret   BLOB,
    created  INTEGER NOT NULL,
    updated  INTEGER NOT NULL
, recipient TEXT NOT NULL DEFAULT '');
CREATE TABLE delivery_payloads (
    delivery_id TEXT PRIMARY KEY REFERENCES deliveries(id) ON DELETE CASCADE,
    payload     TEXT NOT NULL
);
CREATE TABLE recipients (
    id       TEXT PRIMARY KEY,
    owner    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind     TEXT NOT NULL,
    address  TEXT NOT NULL,
    asked    INTEGER,
    verified INTEGER,
    UNIQUE (owner, kind, address)
);
DELETE FROM sqlite_sequence;
CREATE INDEX users_domain ON users(domain, created, id);
CREATE INDEX sessions_user ON sessions(user_id);
CREATE INDEX temp_tokens_session ON temp_tokens(session_id);
CREATE INDEX temp_tokens_expires ON temp_tokens(expires);
CREATE INDEX project_members_user ON project_members(user_id);
CREATE INDEX subscriptions_owner ON subscriptions(project_id, owner, created);
CREATE INDEX subscriptions_enabled ON subscriptions(enabled);
CREATE INDEX subscription_channels_channel ON subscription_channels(channel_id);
CREATE INDEX deliveries_run ON deliveries(run_id);
CREATE INDEX md_objects_category ON md_objects(project_id, category, id);
CREATE INDEX md_uses_to ON md_uses(to_id, from_id);
CREATE INDEX md_tasks_project ON md_tasks(project_id, created);
CREATE INDEX runs_started ON runs(started);
CREATE INDEX exports_state ON exports(state);
CREATE INDEX exports_expires ON exports(expires);
CREATE INDEX report_results_digest ON report_results(project_id, digest, data_version);
CREATE INDEX report_results_expires ON report_results(expires);
CREATE INDEX md_tasks_running ON md_tasks(status) WHERE status = 'RUNNING';
CREATE INDEX md_artifacts_expires ON md_artifacts(expires);
CREATE INDEX result_objects_result ON result_objects(result_id);
CREATE INDEX deliveries_pending ON deliveries(updated) WHERE state = 'pending';
CREATE INDEX channels_owner ON channels(owner, created);
CREATE INDEX runs_unrated ON runs(finished) WHERE rated = 0 AND state NOT IN ('running', 'queued');
CREATE INDEX outbox_owner ON outbox(owner);
COMMIT;
