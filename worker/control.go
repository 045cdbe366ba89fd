package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The JetStream resources of the control role: the bucket of its lease, and
// the object store its state is replicated into.
const (
	// DefaultControlBucket is the key-value bucket of the control role's lease.
	DefaultControlBucket = "HERALD_CONTROL"
	// DefaultReplicaBucket is the object store of the control state's replica.
	DefaultReplicaBucket = "HERALD_REPLICA"
)

// OpenControlBucket creates the key-value bucket of the control role's lease,
// or updates its settings, and returns it. An entry lives ttl after its last
// write: a lease its holder stops renewing lapses by itself. It waits for
// JetStream as the delivery's resources do.
func OpenControlBucket(ctx context.Context, js jetstream.JetStream, log *slog.Logger, bucket string, replicas int,
	ttl time.Duration) (jetstream.KeyValue, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var kv jetstream.KeyValue
	err := untilAvailable(ctx, log, "control bucket", func(ctx context.Context) (err error) {
		kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket:      bucket,
			Description: "Herald's control lease: the one process that may fire and write",
			History:     1,
			TTL:         ttl,
			Storage:     jetstream.FileStorage,
			Replicas:    replicas,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("control bucket %s: %w", bucket, err)
	}
	return kv, nil
}

// OpenReplicaStore creates the object store the control state is replicated
// into, or updates its settings, and returns it. Nothing in it expires:
// Litestream and the snapshots of the warehouse and the keys delete what
// they no longer need. It waits for JetStream as the delivery's resources do.
func OpenReplicaStore(ctx context.Context, js jetstream.JetStream, log *slog.Logger, bucket string,
	replicas int) (jetstream.ObjectStore, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var obs jetstream.ObjectStore
	err := untilAvailable(ctx, log, "replica bucket", func(ctx context.Context) (err error) {
		obs, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      bucket,
			Description: "Herald's control state: the database (Litestream), warehouse and key snapshots",
			Storage:     jetstream.FileStorage,
			Replicas:    replicas,
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("replica bucket %s: %w", bucket, err)
	}
	return obs, nil
}
