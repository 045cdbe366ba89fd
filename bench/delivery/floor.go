package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"

	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/worker"
)

// floorBatch is how many messages a floor consumer fetches, sends and
// records at a time (-floorbatch): the larger, the less the bookkeeping costs
// a mail and the longer a mail waits for the others of its batch.
var floorBatch = 8

// floorPublish is how many outbox rows the floor's publisher reads at a time,
// as many as Herald's relay publishes at most (delivery.relayBatch).
const floorPublish = worker.DefaultRelayBatch

// floor sends n mails as the lean loop does, each through the least that a
// sender which loses none and sends none twice without a crash does with
// Herald's parts: the mail's id is read from an outbox table in SQLite (WAL,
// synchronous NORMAL, as Herald opens its store), published to a file-backed
// work-queue stream on an embedded JetStream with the id as its Nats-Msg-Id,
// and its row deleted once JetStream acknowledged it; one of conc consumers
// fetches it, reads its ledger row, sends it if it is pending, marks it sent
// and acknowledges the message. Every step is batched as far as it goes (a
// read and one write transaction per fetched batch, one per published
// batch), so the floor is what the guarantees cost with these parts, not
// how Herald pays for them: Herald's pipeline cannot cost less.
func floor(ctx context.Context, dir string, n, conc int) (result, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return result{}, err
	}
	html, s, err := htmlAndSink(ctx, n)
	if err != nil {
		return result{}, err
	}
	defer s.Close()
	db, err := openFloorDB(ctx, filepath.Join(dir, "floor.db"), n)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	nc, err := worker.StartEmbedded(filepath.Join(dir, "nats"), worker.EmbeddedConfig{})
	if err != nil {
		return result{}, err
	}
	defer nc.Close()
	js := nc.JetStream()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FLOOR", Subjects: []string{"floor.>"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute}); err != nil {
		return result{}, err
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, "FLOOR", jetstream.ConsumerConfig{Durable: "email",
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute, MaxAckPending: 1024})
	if err != nil {
		return result{}, err
	}
	client, err := mail.NewClient("127.0.0.1", mail.WithPort(s.Port()), mail.WithTLSPolicy(mail.NoTLS),
		mail.WithTimeout(30*time.Second), mail.WithoutNoop(), mail.WithoutRset())
	if err != nil {
		return result{}, err
	}
	f := &floorRun{db: db, js: js, cons: cons, client: client, html: html, n: int64(n)}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	start, cpu := time.Now(), benchapp.CPUTime()
	var wg sync.WaitGroup
	errs := make([]error, conc+1)
	// The first to fail stops the others, which would wait for ever for the
	// mails it was to publish or send.
	goStopping := func(i int, part func(context.Context) error) {
		wg.Go(func() {
			if errs[i] = part(runCtx); errs[i] != nil {
				cancel()
			}
		})
	}
	goStopping(conc, f.publish)
	for g := range conc {
		goStopping(g, f.consume)
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), benchapp.CPUTime()-cpu
	if err := errors.Join(errs...); err != nil {
		return result{}, fmt.Errorf("floor: %w", err)
	}
	if err := eachOnce("floor", s, n); err != nil {
		return result{}, err
	}
	return result{n: n, elapsed: elapsed, cpu: cpu}, nil
}

// floorRun is the floor side's shared state.
type floorRun struct {
	db     *sql.DB
	js     jetstream.JetStream
	cons   jetstream.Consumer
	client *mail.Client
	html   string
	n      int64
	sent   atomic.Int64
}

// openFloorDB creates the outbox and the ledger with n pending mails.
func openFloorDB(ctx context.Context, path string, n int) (*sql.DB, error) {
	q := url.Values{"_journal_mode": {"WAL"}, "_synchronous": {"NORMAL"}, "_busy_timeout": {"5000"}, "_txlock": {"immediate"}}
	db, err := sql.Open("sqlite3", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	err = func() error {
		if _, err := db.ExecContext(ctx, `CREATE TABLE outbox(id TEXT PRIMARY KEY);
			CREATE TABLE ledger(id TEXT PRIMARY KEY, state TEXT NOT NULL, provider_id TEXT NOT NULL DEFAULT '')`); err != nil {
			return err
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		for i := range n {
			id := fmt.Sprintf("d%07d", i)
			if _, err := tx.ExecContext(ctx, `INSERT INTO outbox(id) VALUES (?); INSERT INTO ledger(id, state) VALUES (?, 'pending')`, id, id); err != nil {
				return err
			}
		}
		return tx.Commit()
	}()
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("floor store: %w", err)
	}
	return db, nil
}

// publish moves the outbox to the stream, a batch at a time.
func (f *floorRun) publish(ctx context.Context) error {
	for {
		ids, err := f.column(ctx, `SELECT id FROM outbox ORDER BY id LIMIT ?`, floorPublish)
		if err != nil || len(ids) == 0 {
			return err
		}
		futures := make([]jetstream.PubAckFuture, len(ids))
		for i, id := range ids {
			msg := &nats.Msg{Subject: "floor.email", Header: nats.Header{jetstream.MsgIDHeader: {id}}, Data: []byte(id)}
			if futures[i], err = f.js.PublishMsgAsync(msg); err != nil {
				return err
			}
		}
		for _, fu := range futures {
			select {
			case <-fu.Ok():
			case err := <-fu.Err():
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := f.exec(ctx, `DELETE FROM outbox WHERE id IN `, ids); err != nil {
			return err
		}
	}
}

// consume sends fetched batches until every mail is sent.
func (f *floorRun) consume(ctx context.Context) error {
	c, err := f.client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return err
	}
	defer f.client.CloseWithSMTPClient(c)
	for f.sent.Load() < f.n {
		if ctx.Err() != nil { // another consumer failed
			return nil
		}
		batch, err := f.cons.Fetch(floorBatch, jetstream.FetchMaxWait(50*time.Millisecond))
		if err != nil {
			return err
		}
		var msgs []jetstream.Msg
		var ids []string
		for m := range batch.Messages() {
			msgs, ids = append(msgs, m), append(ids, string(m.Data()))
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) {
			return err
		}
		if len(ids) == 0 {
			continue
		}
		pending, err := f.column(ctx, `SELECT id FROM ledger WHERE state = 'pending' AND id IN `+inList(len(ids)), anys(ids)...)
		if err != nil {
			return err
		}
		for _, id := range pending {
			if err := f.send(c, id); err != nil {
				return err
			}
		}
		if err := f.exec(ctx, `UPDATE ledger SET state = 'sent', provider_id = id WHERE state = 'pending' AND id IN `, pending); err != nil {
			return err
		}
		for _, m := range msgs {
			if err := m.Ack(); err != nil {
				return err
			}
		}
		f.sent.Add(int64(len(pending)))
	}
	return nil
}

// send composes and sends mail id as the lean loop does.
func (f *floorRun) send(c *smtp.Client, id string) error {
	m, err := bareMail(id, "team0@example.com", f.html)
	if err != nil {
		return err
	}
	return f.client.SendWithSMTPClient(c, m)
}

// column reads one text column.
func (f *floorRun) column(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := f.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// exec runs query, which ends in IN, over ids in one transaction.
func (f *floorRun) exec(ctx context.Context, query string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	tx, err := f.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, query+inList(len(ids)), anys(ids)...); err != nil {
		return err
	}
	return tx.Commit()
}

func inList(n int) string { return "(" + strings.Repeat("?,", n-1) + "?)" }

func anys(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
