-- With delivery.verifyRecipients on, messages to a person's mailbox or phone
-- wait until that person accepts them through a signed link. A channel's
-- recipient is the address its owner must have confirmed before it sends,
-- '' when none must be; recipients holds the confirmations, one per owner,
-- kind and address, so that a second channel to a confirmed address needs
-- none. asked is when the last confirmation message went out (NULL: none
-- yet), verified when the link was followed (NULL: not yet).
ALTER TABLE channels ADD COLUMN recipient TEXT NOT NULL DEFAULT '';
CREATE TABLE recipients (
    id       TEXT PRIMARY KEY,
    owner    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind     TEXT NOT NULL,
    address  TEXT NOT NULL,
    asked    INTEGER,
    verified INTEGER,
    UNIQUE (owner, kind, address)
);
