-- The sends on demand (send now, channel tests, confirmations of recipients)
-- of the last hour, one row per budget each spent from: key names the budget
-- (an owner's, a project's), at is when, in Unix nanoseconds. Kept here
-- rather than in memory, a restart or a control process that takes over goes
-- on counting them. Rows older than an hour count for nothing and go.
CREATE TABLE send_budget_spends (
    key TEXT NOT NULL,
    at  INTEGER NOT NULL
);
CREATE INDEX send_budget_spends_key_at ON send_budget_spends (key, at);
CREATE INDEX send_budget_spends_at ON send_budget_spends (at);
