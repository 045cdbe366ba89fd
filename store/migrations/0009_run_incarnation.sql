-- The process that claimed a run, by the random id it drew at start: a process that
-- finds runs left running by another incarnation on its own data folder adopts them at
-- once, since that incarnation is gone.
ALTER TABLE runs ADD COLUMN incarnation TEXT NOT NULL DEFAULT '';
