-- ProtoAgent session store, PostgreSQL schema version 1: the same shape as the SQLite store.
-- One row per session, one row per event; (session_id, seq) is unique, so a duplicated append
-- is refused by the database rather than stored twice. Payloads are `json` (kept as written,
-- key order included), not `jsonb`, so a log reads back byte-for-byte as the SQLite store does.
CREATE TABLE IF NOT EXISTS protoagent_sessions (
    session_id     TEXT PRIMARY KEY,
    created        DOUBLE PRECISION NOT NULL,
    format_version INTEGER NOT NULL,
    title          TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS protoagent_events (
    session_id TEXT NOT NULL REFERENCES protoagent_sessions(session_id),
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    time       DOUBLE PRECISION NOT NULL,
    type       TEXT NOT NULL,
    turn       INTEGER,
    step       INTEGER,
    agent      TEXT NOT NULL,
    payload    JSON NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE INDEX IF NOT EXISTS protoagent_sessions_created ON protoagent_sessions (created);
