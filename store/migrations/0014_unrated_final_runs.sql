-- The health roll-up reads the final runs not yet rated, oldest first. The
-- index of unrated runs also held the runs still queued or running, which the
-- read skipped one by one: after a burst of a hundred thousand runs, each read
-- walked them all. The index now holds only final unrated runs.
DROP INDEX runs_unrated;
CREATE INDEX runs_unrated ON runs(finished) WHERE rated = 0 AND state NOT IN ('running', 'queued');
