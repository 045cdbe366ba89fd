package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The ledger reads its entries from the bucket's leader. The bucket's own Get
// is a direct get, which every replica answers, and a follower answers before
// it has applied the latest writes: right after another process's write, 231
// of 2,000 reads through a follower found no entry. The compare-and-set makes
// an older entry harmless, but a missing one would say the ledger has no such
// delivery (ErrUnknown), and a sent mail would go unrecorded, to be sent
// again. The leader has applied every write it acknowledged.

// storedEntry is a ledger entry's value as stored, with its revision.
type storedEntry struct {
	value []byte
	rev   uint64
}

// leaderReads says where the ledger of bucket asks its stream's leader for
// the last message of a key: the subject of the request, and the prefix of
// the keys' subjects.
func leaderReads(js jetstream.JetStream, bucket string) (msgGet, keys string) {
	o := js.Options()
	prefix := jetstream.DefaultAPIPrefix
	switch {
	case o.APIPrefix != "":
		prefix = strings.TrimSuffix(o.APIPrefix, ".") + "."
	case o.Domain != "":
		prefix = "$JS." + o.Domain + ".API."
	}
	return prefix + "STREAM.MSG.GET.KV_" + bucket, "$KV." + bucket + "."
}

// read asks the bucket's leader for the entry of id once; an id without an
// entry gives jetstream.ErrKeyNotFound.
func (l *KVLedger) read(ctx context.Context, id string) (storedEntry, error) {
	req, err := json.Marshal(struct {
		LastFor string `json:"last_by_subj"`
	}{l.keys + id})
	if err != nil {
		return storedEntry{}, err
	}
	msg, err := l.js.Conn().RequestWithContext(ctx, l.msgGet, req)
	if err != nil {
		return storedEntry{}, err
	}
	var resp struct {
		Error   *jetstream.APIError `json:"error"`
		Message *struct {
			Sequence uint64 `json:"seq"`
			Header   []byte `json:"hdrs"`
			Data     []byte `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return storedEntry{}, fmt.Errorf("read ledger entry %s: %w", id, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return storedEntry{}, jetstream.ErrKeyNotFound
	case resp.Error != nil:
		return storedEntry{}, resp.Error
	case resp.Message == nil:
		return storedEntry{}, fmt.Errorf("read ledger entry %s: %w", id, jetstream.ErrInvalidJetStreamResponse)
	}
	if len(resp.Message.Header) > 0 {
		// A delete or purge marker: the ledger writes none, but a bucket
		// edited by hand may hold one.
		h, err := nats.DecodeHeadersMsg(resp.Message.Header)
		if err != nil {
			return storedEntry{}, fmt.Errorf("read ledger entry %s: %w", id, err)
		}
		if h.Get("KV-Operation") != "" {
			return storedEntry{}, jetstream.ErrKeyNotFound
		}
	}
	return storedEntry{value: resp.Message.Data, rev: resp.Message.Sequence}, nil
}
