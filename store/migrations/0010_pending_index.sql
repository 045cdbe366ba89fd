-- The reconciler looks for deliveries still pending long after their last change.
CREATE INDEX deliveries_pending ON deliveries(updated) WHERE state = 'pending';
