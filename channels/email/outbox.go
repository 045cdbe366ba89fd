package email

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/heraldhq/herald/channels"
)

// Outbox is an e-mail Sender that writes each message as an .eml file
// instead of sending it; it stands in for a relay when none is configured.
// The file is named after the delivery, so a re-send overwrites it.
type Outbox struct {
	dir     string
	compose composer
	err     error // a From address that cannot be used; every Send reports it
	log     *slog.Logger
}

var _ channels.Sender = (*Outbox)(nil)

// NewOutbox returns an Outbox writing into dir (created when needed) with
// from as the sender address. It logs once that mail goes to files.
func NewOutbox(dir, from string, logger *slog.Logger) *Outbox {
	return newOutbox(dir, from, nil, logger)
}

// newOutbox is NewOutbox whose messages dkim signs (nil: none).
func newOutbox(dir, from string, dkim *dkimSigner, logger *slog.Logger) *Outbox {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	comp, err := newComposer(from, nil, dkim)
	logger.Info("no SMTP host configured: e-mail is written to the outbox folder", "dir", dir)
	return &Outbox{dir: dir, compose: comp, err: err, log: logger}
}

// Kind is the e-mail kind.
func (o *Outbox) Kind() channels.Kind { return Kind }

// Path is the file a delivery is written to.
func (o *Outbox) Path(deliveryID string) string {
	return filepath.Join(o.dir, token(deliveryID)+".eml")
}

// Send writes m to its file atomically (a temporary file renamed over it)
// and returns its Message-ID.
func (o *Outbox) Send(ctx context.Context, m channels.Message) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("write email: %w", err)
	}
	if o.err != nil {
		return "", channels.Permanent(fmt.Errorf("write email: %w", o.err))
	}
	msg, err := o.compose.compose(m)
	if err != nil {
		return "", fmt.Errorf("compose email: %w", err)
	}
	if err := o.write(msg, m.DeliveryID); err != nil {
		// The folder, not the message: every message would fail alike until
		// the disk has room or the folder is writable again.
		return "", channels.Unavailable(fmt.Errorf("write email: %w", err))
	}
	id := msg.GetMessageID()
	o.log.DebugContext(ctx, "email written to outbox", "delivery", m.DeliveryID, "message_id", id)
	return id, nil
}

// write writes msg to the file of delivery id: a temporary file, synced, then
// renamed, so that whoever watches the folder never reads one half written
// (only a finished message carries the .eml suffix).
func (o *Outbox) write(msg *message, id string) error {
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(o.dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := msg.WriteTo(tmp); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), o.Path(id))
}
