-- A delivery's payload (its rendered message, often kilobytes) is written once;
-- its state is rewritten by every send, attempt and roll-up. Kept in one row, each
-- state change rewrote the message and every read of the state walked its overflow
-- pages. The payload now has a table of its own.
CREATE TABLE delivery_payloads (
    delivery_id TEXT PRIMARY KEY REFERENCES deliveries(id) ON DELETE CASCADE,
    payload     TEXT NOT NULL
);
INSERT INTO delivery_payloads(delivery_id, payload) SELECT id, payload FROM deliveries;
ALTER TABLE deliveries DROP COLUMN payload;
