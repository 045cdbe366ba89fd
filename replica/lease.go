package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/heraldhq/herald/internal/clock"
)

// LeaseTTL is the term of the control lease: a holder that stops renewing it
// (it died, or lost the NATS cluster) loses it this long after its last
// renewal, and another process may take it.
const LeaseTTL = 5 * time.Second

// leaseKey is the lease's key in the control bucket.
const leaseKey = "lease"

// Holder names a process that holds the lease, or wants it.
type Holder struct {
	// Name says where the process runs: its host, pid and API address.
	Name string `json:"name"`
	// Folder is the id of its data folder (see FolderID).
	Folder string `json:"folder"`
	// Incarnation names this start of the process.
	Incarnation string `json:"incarnation"`
	// Since is when it took the lease.
	Since time.Time `json:"since"`
}

func (h Holder) String() string {
	return fmt.Sprintf("%s since %s", h.Name, h.Since.UTC().Format(time.RFC3339))
}

// Lease is the control role's lease: one key in a JetStream key-value bucket
// whose entries live the lease's term after their last write. The one
// process that holds it may fire subscriptions and write the control state;
// another waits (Acquire) until the holder gives it up (Release) or stops
// renewing it, and takes it then.
//
// A holder counts its lease valid until the term after it sent its last
// renewal that succeeded, less a fifth of it (Check). The bucket keeps the
// entry at least the term after it wrote it, which was after the holder sent
// it, so the holder's validity ends before anyone else can take the lease:
// two holders never overlap, whatever the network does, as long as the
// machines' clocks run at about the same rate.
type Lease struct {
	kv  jetstream.KeyValue
	me  Holder
	ttl time.Duration
	log *slog.Logger
	// clock is real: the bucket's TTL runs on the server's time.
	clock clock.Clock

	// gone is when a process waiting for another's lease first found its
	// entry lapsed, zero while it has not (see absentFor); only Acquire's
	// loop uses it.
	gone time.Time

	mu      sync.Mutex
	rev     uint64    // the revision of this process's entry while it holds the lease
	valid   time.Time // until when it holds it; zero while it does not
	other   Holder    // the holder this process last saw while waiting
	lapsed  error     // why the lease lapsed, while it is being taken again
	lostErr error     // why it lost the lease, once it did
	lost    chan struct{}
}

// NewLease returns the lease of the bucket kv as me would hold it. ttl must
// be the bucket's TTL; 0 means LeaseTTL.
func NewLease(kv jetstream.KeyValue, me Holder, ttl time.Duration, log *slog.Logger) *Lease {
	if ttl <= 0 {
		ttl = LeaseTTL
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Lease{kv: kv, me: me, ttl: ttl, log: log, clock: clock.Real(), lost: make(chan struct{})}
}

// margin is how long before the end of its term a holder stops counting on
// the lease: the time a commit it allowed may still take.
func (l *Lease) margin() time.Duration { return l.ttl / 5 }

// absentFor is how long a process that waits for another's lease must find
// its entry lapsed before it takes it. The entry lapses too while the bucket
// elects a new leader (its NATS server lost), which takes nats-server 4 to
// 9 s, longer than the term: the holder, alive, writes the entry anew within
// a quarter of the term once the bucket takes writes again (regain). Waiting
// half a term from the first look that found the entry gone and the bucket
// writable leaves the lease to that holder, so that losing a NATS node costs
// the control process a pause, not a take-over from its replica. An entry
// its holder released is taken at once.
func (l *Lease) absentFor() time.Duration { return l.ttl / 2 }

// Acquire returns once this process holds the lease, or with ctx's error.
// An entry of another process of the same data folder is taken over at once:
// this process holds the folder's lock, so that process is gone. Otherwise
// Acquire waits for the entry to be released, or to lapse and stay lapsed
// for absentFor, asking every tenth of the term.
func (l *Lease) Acquire(ctx context.Context) error {
	for first := true; ; first = false {
		held, err := l.try(ctx)
		if held {
			return nil
		}
		if err != nil && ctx.Err() == nil {
			l.log.Warn("the control lease cannot be asked for now; trying again", "err", err)
		} else if first {
			l.mu.Lock()
			other := l.other
			l.mu.Unlock()
			l.log.Info("waiting for the control lease", "holder", other.String())
		}
		if !clock.Sleep(ctx, l.clock, l.ttl/10) {
			return ctx.Err()
		}
	}
}

// try asks for the lease once and reports whether this process holds it.
func (l *Lease) try(ctx context.Context) (bool, error) {
	me := l.me
	me.Since = time.Now()
	data, err := json.Marshal(me)
	if err != nil {
		return false, err
	}
	cctx, cancel := context.WithTimeout(ctx, l.ttl/4)
	defer cancel()
	e, create, err := l.look(cctx)
	switch {
	case err != nil:
		return false, err
	case e != nil:
		return l.found(cctx, me, data, e)
	case !create:
		return false, nil
	}
	sent := time.Now()
	rev, err := l.kv.Create(cctx, leaseKey, data)
	if err == nil {
		l.take(me, rev, sent)
		return true, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		l.gone = time.Time{} // the bucket took no write: it may be electing a leader
		return false, err
	}
	e, err = l.kv.Get(cctx, leaseKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil // it lapsed just now: the next try takes it
	}
	if err != nil {
		return false, err
	}
	return l.found(cctx, me, data, e)
}

// found handles the entry e that try found in its way: an earlier process
// of this data folder's is taken over, another's is recorded as the holder
// to wait for.
func (l *Lease) found(ctx context.Context, me Holder, data []byte, e jetstream.KeyValueEntry) (bool, error) {
	var other Holder
	if err := json.Unmarshal(e.Value(), &other); err != nil {
		return false, fmt.Errorf("the control lease holds %q: %w", e.Value(), err)
	}
	if other.Folder != l.me.Folder || other.Folder == "" {
		l.mu.Lock()
		l.other = other
		l.mu.Unlock()
		return false, nil
	}
	sent := time.Now()
	rev, err := l.kv.Update(ctx, leaseKey, data, e.Revision())
	if err != nil {
		return false, err
	}
	l.log.Info("took the control lease over from an earlier process of this data folder", "earlier", other.String())
	l.take(me, rev, sent)
	return true, nil
}

// look reads the entry before try writes one, and returns it when there is
// one, or else whether try may create it. A process that has seen no other
// holder, or one of its own folder, creates it at once without reading. One
// that waits for another's creates it once that entry was released, or has
// been lapsed for absentFor.
func (l *Lease) look(ctx context.Context) (e jetstream.KeyValueEntry, create bool, err error) {
	l.mu.Lock()
	other := l.other
	l.mu.Unlock()
	if other.Name == "" || other.Folder == l.me.Folder {
		return nil, true, nil
	}
	if e, err = l.kv.Get(ctx, leaseKey); !errors.Is(err, jetstream.ErrKeyNotFound) { // held
		l.gone = time.Time{}
		return e, false, err
	}
	// Released (a delete marker, which only the history shows) or lapsed
	// (nothing at all: the bucket aged it out).
	if _, err = l.kv.History(ctx, leaseKey); !errors.Is(err, jetstream.ErrKeyNotFound) {
		l.gone = time.Time{}
		return nil, err == nil, err
	}
	// Reads go on while the bucket elects a leader, and the holder cannot
	// write its entry anew before it has one: the time counts from a look
	// that found the entry gone and the bucket writable.
	if !l.writable(ctx) {
		l.gone = time.Time{}
		return nil, false, nil
	}
	now := l.clock.Now()
	if l.gone.IsZero() {
		l.gone = now
	}
	return nil, now.Sub(l.gone) >= l.absentFor(), nil
}

// writable reports whether the bucket has a leader, which its writes need.
func (l *Lease) writable(ctx context.Context) bool {
	st, err := l.kv.Status(ctx)
	if err != nil {
		return false
	}
	b, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok {
		return true
	}
	info := b.StreamInfo()
	return info.Cluster == nil || info.Cluster.Leader != ""
}

// take records that this process holds the lease at rev, from a write sent at sent.
func (l *Lease) take(me Holder, rev uint64, sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.me, l.rev, l.valid, l.other = me, rev, sent.Add(l.ttl-l.margin()), me
}

// KeepHooks are told when the lease lapses and when it is held again.
type KeepHooks struct {
	// Lapsed is called when no renewal succeeded within the term (the NATS
	// cluster cannot be reached, or elects a leader): Check fails from then
	// on, until the lease is held again.
	Lapsed func(err error)
	// Regained is called once the lease is held again after it lapsed:
	// recreated says its entry had lapsed too (another process could have
	// held it meanwhile, and let it go). An error gives the lease up for good.
	Regained func(ctx context.Context, recreated bool) error
}

// errTaken is the error of a renewal that found another process's entry.
var errTaken = errors.New("another process holds the control lease")

// Keep renews the lease every quarter of its term until ctx ends (it
// returns nil) or the lease is lost for good. When no renewal succeeds
// within the term, the lease lapses (hooks.Lapsed): Keep goes on asking for
// it, and takes it again, its own entry if the bucket still has it or a new
// one once it is gone (hooks.Regained). When another process holds it, it is
// lost for good: Lost is closed, Check fails from then on, and Keep returns
// why.
func (l *Lease) Keep(ctx context.Context, hooks KeepHooks) error {
	t := l.clock.NewTicker(l.ttl / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		err := l.renew(ctx)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, errTaken) {
			l.lapse(err)
			if hooks.Lapsed != nil {
				hooks.Lapsed(err)
			}
			var recreated bool
			if recreated, err = l.regain(ctx); err == nil && hooks.Regained != nil {
				err = hooks.Regained(ctx, recreated)
			}
			if err == nil {
				continue
			}
			if ctx.Err() != nil {
				return nil
			}
		}
		l.lose(err)
		return err
	}
}

// renew writes the entry again, trying until it succeeds or the lease's
// validity ends; it fails with errTaken when another process holds it.
func (l *Lease) renew(ctx context.Context) error {
	var last error
	for {
		l.mu.Lock()
		me, rev, valid := l.me, l.rev, l.valid
		l.mu.Unlock()
		left := time.Until(valid)
		if left <= 0 {
			return fmt.Errorf("no renewal succeeded within its term (last: %v)", last)
		}
		data, err := json.Marshal(me)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, min(l.ttl/4, left))
		sent := time.Now()
		next, err := l.kv.Update(cctx, leaseKey, data, rev)
		if err == nil {
			cancel()
			l.mu.Lock()
			l.rev, l.valid = next, sent.Add(l.ttl-l.margin())
			l.mu.Unlock()
			return nil
		}
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			err = l.reread(cctx)
			cancel()
			if err != nil {
				return err
			}
			continue
		}
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		last = err
		l.log.Warn("the control lease was not renewed; trying again", "left", left.Round(time.Millisecond), "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.clock.After(l.ttl / 20):
		}
	}
}

// lapse records that the lease's term ended without a renewal.
func (l *Lease) lapse(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.valid = time.Time{}
	l.lapsed = fmt.Errorf("the control lease lapsed at %s (%w); firing and writing wait until it is held again",
		time.Now().UTC().Format(time.RFC3339), err)
}

// regain takes the lapsed lease again, and reports whether its entry had
// lapsed too; it fails with errTaken when another process holds it. It asks
// every twentieth of the term, each try bounded to a fifth, so that a bucket
// that answers again has the entry anew within a quarter of the term and the
// round trips, before a standby may take it (absentFor).
func (l *Lease) regain(ctx context.Context) (recreated bool, err error) {
	for {
		l.mu.Lock()
		me, rev := l.me, l.rev
		l.mu.Unlock()
		data, err := json.Marshal(me)
		if err != nil {
			return false, err
		}
		cctx, cancel := context.WithTimeout(ctx, l.ttl/5)
		sent := time.Now()
		next, err := l.kv.Update(cctx, leaseKey, data, rev)
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			// The entry lapsed, or was written since: by a renewal of this
			// process whose answer was lost, or by another process. A read
			// may come from a replica that has not aged the entry out yet,
			// and a standby takes a lapsed entry soon (absentFor): create it
			// first, and read only an entry that is there.
			sent = time.Now()
			if next, err = l.kv.Create(cctx, leaseKey, data); err == nil {
				recreated = true
			} else if errors.Is(err, jetstream.ErrKeyExists) {
				next, err = 0, l.reread(cctx)
			}
		}
		cancel()
		if err == nil && next != 0 {
			l.mu.Lock()
			l.rev, l.valid, l.lapsed = next, sent.Add(l.ttl-l.margin()), nil
			l.mu.Unlock()
			l.log.Info("holds the control lease again", "recreated", recreated)
			return recreated, nil
		}
		if errors.Is(err, errTaken) {
			return false, err
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-l.clock.After(l.ttl / 20):
		}
	}
}

// errGone is reread's error when the entry lapsed.
var errGone = errors.New("its entry lapsed before it was renewed")

// reread reads the entry after a renewal found another revision there: a
// renewal of this process whose answer was lost wrote it (this process keeps
// the lease, at that revision, valid no longer than before), or another
// process holds it now.
func (l *Lease) reread(ctx context.Context) error {
	e, err := l.kv.Get(ctx, leaseKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return errGone
	}
	if err != nil {
		return err
	}
	var other Holder
	if err := json.Unmarshal(e.Value(), &other); err != nil {
		return fmt.Errorf("the control lease holds %q: %w", e.Value(), err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if other.Incarnation == l.me.Incarnation {
		l.rev = e.Revision()
		return nil
	}
	l.other = other
	return fmt.Errorf("%w: %s took it", errTaken, other)
}

// lose records that the lease is lost, and why.
func (l *Lease) lose(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lostErr != nil {
		return
	}
	l.valid = time.Time{}
	l.lostErr = fmt.Errorf("lost the control lease: %w", err)
	close(l.lost)
}

// Lost is closed once the lease is lost.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Check returns nil while this process holds the lease, and otherwise an
// error saying who does or why this process lost it. It is cheap: it reads
// the clock, not the bucket.
func (l *Lease) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.lostErr != nil:
		return l.lostErr
	case l.lapsed != nil:
		return l.lapsed
	case l.valid.IsZero() && l.other.Name != "":
		return fmt.Errorf("the control lease is held by %s; this process waits to take over", l.other)
	case l.valid.IsZero():
		return errors.New("this process does not hold the control lease yet")
	case !time.Now().Before(l.valid):
		return fmt.Errorf("the control lease's term ended at %s without a renewal", l.valid.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// ValidUntil is until when this process counts on the lease (the end of
// Check's nil), zero while it does not hold it.
func (l *Lease) ValidUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lostErr != nil || l.lapsed != nil {
		return time.Time{}
	}
	return l.valid
}

// Release gives the lease up, so that a waiting process takes it at once.
// From its call on, Check fails. A lease not held is left alone.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	rev, held := l.rev, !l.valid.IsZero() && l.lostErr == nil
	l.valid = time.Time{}
	if l.lostErr == nil {
		l.lostErr = errors.New("this process gave the control lease up")
		close(l.lost)
	}
	l.mu.Unlock()
	if !held {
		return nil
	}
	for try := 0; ; try++ {
		err := l.kv.Delete(ctx, leaseKey, jetstream.LastRevision(rev))
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) || try == 2 {
			return err
		}
		// A renewal cut short by the stop may have written it anyway: delete
		// the entry if it is this process's, at its revision.
		e, err := l.kv.Get(ctx, leaseKey)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		var h Holder
		if json.Unmarshal(e.Value(), &h) != nil || h.Incarnation != l.me.Incarnation {
			return nil // another process's entry
		}
		rev = e.Revision()
	}
}
