package benchapp

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wneessen/go-mail"
)

// Bare is what the bare go-mail loop measured: how long n mails took and the
// process's CPU meanwhile.
type Bare struct {
	N       int
	Elapsed time.Duration
	CPU     time.Duration
}

// BareMail sends n mails of subject and text straight from go-mail over conc
// connections to a fresh Sink, without NOOPs or RSETs (as the e-mail kind
// sends), and checks that each arrived once. It is the floor of sending n
// mails on this machine at this moment, measured in the same run as what it
// is set beside: a burst whose every mail is one such send.
func BareMail(ctx context.Context, n, conc int, subject, text string) (Bare, error) {
	return BareMailWith(ctx, n, conc, subject, text, nil)
}

// BareMailWith is BareMail with a file attached to each mail, base64
// encoded as the e-mail kind attaches report files, when attachment is not
// empty.
func BareMailWith(ctx context.Context, n, conc int, subject, text string, attachment []byte) (Bare, error) {
	s, err := NewSink(n)
	if err != nil {
		return Bare{}, err
	}
	defer s.Close()
	client, err := mail.NewClient("127.0.0.1", mail.WithPort(s.Port()), mail.WithTLSPolicy(mail.NoTLS),
		mail.WithTimeout(30*time.Second), mail.WithoutNoop(), mail.WithoutRset())
	if err != nil {
		return Bare{}, err
	}
	var next atomic.Int64
	errs := make([]error, conc)
	start, cpu := time.Now(), CPUTime()
	var wg sync.WaitGroup
	for g := range conc {
		wg.Go(func() {
			c, err := client.DialToSMTPClientWithContext(ctx)
			if err != nil {
				errs[g] = err
				return
			}
			defer client.CloseWithSMTPClient(c)
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				m := mail.NewMsg()
				if err := errors.Join(m.From("herald@example.com"), m.To(fmt.Sprintf("team%d@example.com", i))); err != nil {
					errs[g] = err
					return
				}
				m.Subject(subject)
				m.SetMessageIDWithValue(fmt.Sprintf("bare-%d@example.com", i))
				m.SetDate()
				m.SetBodyString(mail.TypeTextPlain, text)
				if len(attachment) > 0 {
					if err := m.AttachReader("report.bin", bytes.NewReader(attachment)); err != nil {
						errs[g] = err
						return
					}
				}
				if err := client.SendWithSMTPClient(c, m); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	b := Bare{N: n, Elapsed: time.Since(start), CPU: CPUTime() - cpu}
	if err := errors.Join(errs...); err != nil {
		return Bare{}, fmt.Errorf("bare loop: %w", err)
	}
	if total, distinct := s.Counts(); total != n || distinct != n {
		return Bare{}, fmt.Errorf("bare loop: %d messages, %d distinct, want %d", total, distinct, n)
	}
	return b, nil
}

// BareMailSized is BareMailWith with a file of random bytes attached that
// makes each mail about size bytes after its header: three quarters of size,
// which base64 makes about size.
func BareMailSized(ctx context.Context, n, conc int, subject, text string, size int) (Bare, error) {
	file := make([]byte, size*3/4)
	_, _ = rand.Read(file)
	return BareMailWith(ctx, n, conc, subject, text, file)
}

// String describes the loop's figures.
func (b Bare) String() string {
	return fmt.Sprintf("bare go-mail loop, %d mails: %v (%.0f/s, %v CPU a mail)", b.N, b.Elapsed.Round(time.Millisecond),
		float64(b.N)/b.Elapsed.Seconds(), (b.CPU / time.Duration(max(b.N, 1))).Round(time.Microsecond))
}
