package email

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wneessen/go-mail/smtp"

	"github.com/heraldhq/herald/channels"
)

// textprotoDot is what net/textproto's DotWriter writes for chunks, written
// one after the other, and its Close.
func textprotoDot(t testing.TB, chunks ...[]byte) []byte {
	t.Helper()
	var out bytes.Buffer
	bw := bufio.NewWriter(&out)
	w := textproto.NewWriter(bw).DotWriter()
	for _, c := range chunks {
		if _, err := w.Write(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// heraldDot is what dotWriter writes for chunks and its Close, plain or not.
func heraldDot(t testing.TB, plain bool, chunks ...[]byte) []byte {
	t.Helper()
	var out bytes.Buffer
	bw := bufio.NewWriterSize(&out, 16) // small, so that its flushes come mid-line
	w := &dotWriter{w: bw, plain: plain}
	for _, c := range chunks {
		n, err := w.Write(c)
		if err != nil || n != len(c) {
			t.Fatalf("Write(%q) = %d, %v", c, n, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// relayRead is the message a relay takes out of DATA's data (RFC 5321
// 4.5.2): its CRLF-ended lines up to the line of a single dot, each without
// the dot it starts with, if any.
func relayRead(t testing.TB, data []byte) []byte {
	t.Helper()
	var out []byte
	for {
		line, rest, ok := bytes.Cut(data, []byte("\r\n"))
		if !ok {
			t.Fatalf("the data does not end in a line of a single dot: %q", data)
		}
		if string(line) == "." {
			return out
		}
		out = append(append(out, bytes.TrimPrefix(line, []byte("."))...), "\r\n"...)
		data = rest
	}
}

func TestDotWriter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   []string
		want string
	}{
		{"nothing", nil, "\r\n.\r\n"},
		{"a line", []string{"Subject: x\r\n"}, "Subject: x\r\n.\r\n"},
		{"no last line end", []string{"a\r\nb"}, "a\r\nb\r\n.\r\n"},
		{"bare LF", []string{"a\nb\n"}, "a\r\nb\r\n.\r\n"},
		{"dot first", []string{".a\r\n"}, "..a\r\n.\r\n"},
		{"dot at line starts", []string{"a\r\n.\r\n..b\n.c"}, "a\r\n..\r\n...b\r\n..c\r\n.\r\n"},
		{"dot inside a line", []string{"a.b\r\n"}, "a.b\r\n.\r\n"},
		{"ends in CR", []string{"a\r"}, "a\r\n.\r\n"},
		{"bare CR", []string{"a\rb\r\n"}, "a\rb\r\n.\r\n"},
		{"CR CR LF", []string{"a\r\r\n"}, "a\r\r\r\n.\r\n"},
		{"dot after a bare CR", []string{"a\r.b\r\n"}, "a\r.b\r\n.\r\n"},
		{"CRLF split between writes", []string{"a\r", "\n.b", "\r", "\n"}, "a\r\n..b\r\n.\r\n"},
		{"a dot alone in a write", []string{"a\r\n", ".", "\r\n"}, "a\r\n..\r\n.\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var chunks [][]byte
			for _, c := range tc.in {
				chunks = append(chunks, []byte(c))
			}
			if got := heraldDot(t, false, chunks...); string(got) != tc.want {
				t.Errorf("dotWriter wrote %q, want %q", got, tc.want)
			}
			if got := textprotoDot(t, chunks...); string(got) != tc.want {
				t.Errorf("textproto's DotWriter wrote %q, want %q: the case is wrong", got, tc.want)
			}
		})
	}
}

// FuzzDotWriterIsTextprotos: whatever a message holds, however it is cut
// into writes, dotWriter writes what net/textproto's DotWriter does, whose
// output relays have long taken: no line of a single dot before the end, and
// no line end that is not CRLF where DotWriter writes one.
func FuzzDotWriterIsTextprotos(f *testing.F) {
	f.Add([]byte("Subject: x\r\n\r\n.hidden\r\n\r\n.\r\nMAIL FROM:<a@b>\n.\n"), uint8(3))
	f.Add([]byte("a\r\r\n\r.\n\n..\r"), uint8(1))
	f.Add([]byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, msg []byte, cut uint8) {
		var chunks [][]byte
		if cut == 0 {
			chunks = [][]byte{msg}
		} else {
			for rest := msg; len(rest) > 0; {
				n := min(int(cut), len(rest))
				chunks, rest = append(chunks, rest[:n]), rest[n:]
			}
		}
		want := textprotoDot(t, chunks...)
		if got := heraldDot(t, false, chunks...); !bytes.Equal(got, want) {
			t.Fatalf("for %q in writes of %d:\ndotWriter wrote  %q\ntextproto wrote %q", msg, cut, got, want)
		}
		// Plain, for BDAT, it writes what a relay reads out of DATA.
		read := relayRead(t, want)
		if got := heraldDot(t, true, chunks...); !bytes.Equal(got, read) {
			t.Fatalf("for %q in writes of %d:\nplain dotWriter wrote %q\na relay reads of DATA %q", msg, cut, got, read)
		}
	})
}

// relayReads runs a relay on the far end of a pipe that offers caps in its
// EHLO reply and answers every command it reads with 250 (354 to DATA),
// and returns a client of it and what each of the relay's reads after EHLO
// held, in order.
func relayReads(t *testing.T, caps ...string) (*smtp.Client, func() []string) {
	t.Helper()
	return relayAnswering(t, func(cmd string) string {
		if strings.HasPrefix(cmd, "DATA") {
			return "354 go on"
		}
		return "250 ok"
	}, caps...)
}

// relayAnswering is relayReads with the relay's reply to each command line
// after EHLO given by answer.
func relayAnswering(t *testing.T, answer func(cmd string) string, caps ...string) (*smtp.Client, func() []string) {
	t.Helper()
	client, server := net.Pipe()
	var mu sync.Mutex
	var reads []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer server.Close()
		w := bufio.NewWriter(server)
		reply := func(lines ...string) {
			for _, l := range lines {
				_, _ = w.WriteString(l + "\r\n")
			}
			_ = w.Flush()
		}
		reply("220 relay ready")
		buf := make([]byte, 4096)
		ehlo := false
		for {
			n, err := server.Read(buf)
			if err != nil {
				return
			}
			got := string(buf[:n])
			if !ehlo {
				ehlo = true
				lines := []string{"250-relay"}
				for _, c := range caps {
					lines = append(lines, "250-"+c)
				}
				reply(append(lines, "250 SIZE")...)
				continue
			}
			mu.Lock()
			reads = append(reads, got)
			mu.Unlock()
			for _, line := range strings.SplitAfter(got, "\r\n") {
				if line != "" {
					reply(answer(line))
				}
			}
		}
	}()
	c, err := smtp.NewClient(client, "relay")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Hello("herald"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); <-done })
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(reads)
	}
}

// TestEnvelopeIsOneWriteWhereTheRelayPipelines: a relay that offers
// PIPELINING reads MAIL, RCPT and DATA in one read; one that does not gets
// each alone, after the reply to the one before.
func TestEnvelopeIsOneWriteWhereTheRelayPipelines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		caps  []string
		reads []string
	}{
		{"PIPELINING", []string{"PIPELINING", "8BITMIME"},
			[]string{"MAIL FROM:<a@example.com> BODY=8BITMIME\r\nRCPT TO:<b@example.com>\r\nDATA\r\n"}},
		{"one command at a time", []string{"8BITMIME"},
			[]string{"MAIL FROM:<a@example.com> BODY=8BITMIME\r\n", "RCPT TO:<b@example.com>\r\n", "DATA\r\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, reads := relayReads(t, tc.caps...)
			if err := openData(c, "<a@example.com>", []string{"<b@example.com>"}, "<m@example.com>"); err != nil {
				t.Fatalf("openData: %v", err)
			}
			if got := reads(); !slices.Equal(got, tc.reads) {
				t.Fatalf("the relay's reads: %q, want %q", got, tc.reads)
			}
		})
	}
}

// TestRefusedRecipientWithDataOpenEndsTheSession: a relay that defers the
// recipient yet takes the pipelined DATA waits for a message; the error
// says so, and the sender closes the session rather than send an RSET the
// relay would read as the mail.
func TestRefusedRecipientWithDataOpenEndsTheSession(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		data     string
		step     string
		dataOpen bool
	}{
		{"DATA taken", "354 go on", stepRcpt, true},
		{"DATA refused", "554 no valid recipients", stepRcpt, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, _ := relayAnswering(t, func(cmd string) string {
				switch {
				case strings.HasPrefix(cmd, "RCPT"):
					return "450 mailbox busy"
				case strings.HasPrefix(cmd, "DATA"):
					return tc.data
				}
				return "250 ok"
			}, "PIPELINING")
			err := openData(c, "<a@example.com>", []string{"<b@example.com>"}, "<m@example.com>")
			var se *smtpError
			if !errors.As(err, &se) || se.step != tc.step || se.dataOpen != tc.dataOpen || replyCode(err) != 450 {
				t.Fatalf("openData = %#v, want a 450 at %s with dataOpen %v", err, tc.step, tc.dataOpen)
			}
			if deferred(err) == tc.dataOpen {
				t.Errorf("deferred = %v: the session would go on to an RSET with DATA open %v", deferred(err), tc.dataOpen)
			}
		})
	}
}

// BenchmarkDotWriter writes a mail of 100 KB, nearly all of it base64 lines
// of attached files, through dotWriter to a connection's 4 KB buffer, and
// counts the writes that reach the connection.
func BenchmarkDotWriter(b *testing.B) {
	var mail bytes.Buffer
	mail.WriteString("Subject: report\r\nContent-Type: text/plain\r\n\r\n.a line that starts with a dot\r\n")
	file := make([]byte, 75_000)
	for i := range file {
		file[i] = byte(i * 7)
	}
	if err := encodeBase64(&mail, bytes.NewReader(file)); err != nil {
		b.Fatal(err)
	}
	var conn countingWriter
	bw := bufio.NewWriter(&conn)
	b.SetBytes(int64(mail.Len()))
	for b.Loop() {
		w := &dotWriter{w: bw}
		if _, err := w.Write(mail.Bytes()); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(conn.writes)/float64(b.N), "writes/mail")
}

// countingWriter discards what it is written, counting the writes.
type countingWriter struct{ writes int }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return len(p), nil
}

// TestMailIsOneWriteWhereTheRelayChunks: a relay that offers CHUNKING and
// PIPELINING gets MAIL, RCPT and the message in BDAT chunks without a reply
// between them: this one answers nothing before the last chunk is whole,
// and the mail still goes.
func TestMailIsOneWriteWhereTheRelayChunks(t *testing.T) {
	t.Parallel()
	client, server := net.Pipe()
	got := make(chan []byte, 1)
	go func() {
		defer server.Close()
		_, _ = server.Write([]byte("220 relay ready\r\n"))
		r := bufio.NewReader(server)
		if _, err := r.ReadString('\n'); err != nil { // EHLO
			return
		}
		_, _ = server.Write([]byte("250-relay\r\n250-PIPELINING\r\n250-CHUNKING\r\n250 SIZE\r\n"))
		var mail []byte
		var replies string
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			replies += "250 ok\r\n"
			var n int
			var last string
			if _, err := fmt.Sscanf(line, "BDAT %d %s", &n, &last); err == nil || n > 0 {
				chunk := make([]byte, n)
				if _, err := io.ReadFull(r, chunk); err != nil {
					return
				}
				mail = append(mail, chunk...)
			}
			if last == "LAST" {
				break
			}
		}
		_, _ = server.Write([]byte(replies))
		got <- mail
	}()
	c, err := smtp.NewClient(client, "relay")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hello("herald"); err != nil {
		t.Fatal(err)
	}
	comp, err := newComposer("Herald <alerts@example.com>", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := channels.Message{DeliveryID: "d1", Subject: "Revenue", Text: ".dot first\n",
		Channel: channels.Channel{ID: "c1", Kind: Kind, Config: []byte(`{"to":"ops@example.com"}`)}}
	msg, err := comp.compose(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := transact(c, msg, 5*time.Second); err != nil {
		t.Fatalf("transact: %v", err)
	}
	var want bytes.Buffer
	if _, err := msg.WriteTo(&want); err != nil {
		t.Fatal(err)
	}
	if mail := <-got; !bytes.Equal(mail, want.Bytes()) {
		t.Fatalf("the relay read %q, want the message as written, %q", mail, want.Bytes())
	}
}
