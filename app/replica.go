package app

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// ReplicaConfig says where the control process replicates its state, so that
// a replacement on another machine restores it (docs/recovery.md).
type ReplicaConfig struct {
	// URL is the JetStream object store of the replica, in Litestream's form
	// nats://<host:port>/<bucket>: a server of nats.url's cluster, reached
	// with the nats.* credentials, and the bucket, which the control process
	// creates with nats.replicas replicas. Default empty: no replica.
	URL string `yaml:"url"`
	// SyncInterval bounds how old the newest change missing from the replica
	// may be: the recovery point. Default 1s.
	SyncInterval time.Duration `yaml:"syncInterval"`
}

// DefaultReplicaConfig returns the replica section's defaults.
func DefaultReplicaConfig() ReplicaConfig { return ReplicaConfig{SyncInterval: time.Second} }

// bucketName is what JetStream takes as a bucket's name.
var bucketName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,200}$`)

// replicaTarget is a parsed replica.url: the server and the bucket.
type replicaTarget struct {
	Server string // nats://host:port
	Bucket string
}

// parseReplicaURL parses replica.url, naming what is wrong with it.
func parseReplicaURL(raw string) (replicaTarget, error) {
	if len(raw) > 2048 {
		return replicaTarget{}, errors.New("longer than 2048 bytes")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return replicaTarget{}, fmt.Errorf("%q is not a URL", raw)
	}
	switch {
	case u.Scheme != "nats":
		return replicaTarget{}, fmt.Errorf("%q: the scheme must be nats (nats://<host:port>/<bucket>)", raw)
	case u.User != nil:
		return replicaTarget{}, errors.New("credentials do not go in the URL: set nats.credsFile (or nats.certFile and nats.keyFile)")
	case u.Hostname() == "" || u.Opaque != "":
		return replicaTarget{}, fmt.Errorf("%q names no server (nats://<host:port>/<bucket>)", raw)
	case u.RawQuery != "" || u.Fragment != "":
		return replicaTarget{}, fmt.Errorf("%q: no query or fragment (nats://<host:port>/<bucket>)", raw)
	}
	bucket := strings.TrimPrefix(u.Path, "/")
	if !bucketName.MatchString(bucket) {
		return replicaTarget{}, fmt.Errorf("%q: the bucket must be one name of letters, digits, _ and - (nats://<host:port>/<bucket>)", raw)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "4222")
	}
	return replicaTarget{Server: "nats://" + host, Bucket: bucket}, nil
}

// validateReplica checks the replica section and what it needs of the rest.
func (c *Config) validateReplica() error {
	var errs []error
	bad := badKey(&errs)
	if c.Replica.SyncInterval < 100*time.Millisecond || c.Replica.SyncInterval > time.Minute {
		bad("replica.syncInterval", "must be from 100ms to 1m, got %s", c.Replica.SyncInterval)
	}
	if c.Replica.URL == "" {
		return errors.Join(errs...)
	}
	if _, err := parseReplicaURL(c.Replica.URL); err != nil {
		bad("replica.url", "%v", err)
	}
	switch {
	case !c.control():
		bad("replica.url", "only the control process (roles api,engine) replicates its state")
	case c.NATS.URL == "":
		bad("replica.url", "needs nats.url: a replica in the embedded NATS server would be lost with the machine")
	case c.Delivery.Ledger != "jetstream":
		bad("replica.url", "needs delivery.ledger: jetstream, so that what was sent outlives the control machine")
	}
	return errors.Join(errs...)
}
