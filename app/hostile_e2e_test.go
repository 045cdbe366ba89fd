package app_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
)

// methodFlood sends n requests, each with a method of its own of size bytes, over
// conns connections to the service at base, alternating the API and the console,
// and reads every answer. It returns how many answers were not 501 and one of them.
func methodFlood(t *testing.T, base string, n, size, conns int, rng *rand.Rand) (others int, other string) {
	t.Helper()
	host := strings.TrimPrefix(base, "http://")
	methods := make(chan string, n)
	for range n {
		b := make([]byte, size)
		for i := range b {
			b[i] = 'A' + byte(rng.IntN(26))
		}
		methods <- string(b)
	}
	close(methods)
	paths := []string{"/", "/svc/projects", "/console/", "/console/login"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := make(chan string, conns)
	for range conns {
		wg.Go(func() {
			var c net.Conn
			var br *bufio.Reader
			defer func() {
				if c != nil {
					c.Close()
				}
			}()
			i := 0
			for m := range methods {
				if c == nil {
					var err error
					if c, err = net.Dial("tcp", host); err != nil {
						errs <- err.Error()
						return
					}
					br = bufio.NewReader(c)
				}
				i++
				if _, err := io.WriteString(c, m+" "+paths[i%len(paths)]+" HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); err != nil {
					errs <- err.Error()
					return
				}
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					errs <- err.Error()
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusNotImplemented {
					mu.Lock()
					others, other = others+1, res.Status+" at "+paths[i%len(paths)]
					mu.Unlock()
				}
				if res.Close {
					c.Close()
					c = nil
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("flood: %s", e)
	}
	return others, other
}

// TestMethodFloodAddsNoSeries floods the built binary with 10,000 requests whose methods
// are 8 KiB of random letters, on the API and the console, as an attacker without an
// account can: every one is answered 501, /metrics keeps its series count (the method is
// one label value, "other"), and the process's resident memory grows by less than 64 MiB.
//
// It runs the binary as a child and reads its VmRSS and VmHWM: a test binary's own memory
// holds every other test of the package running beside it.
func TestMethodFloodAddsNoSeries(t *testing.T) {
	gate.Parallel(t)
	if testing.Short() {
		t.Skip("starts the herald binary")
	}
	p := apptest.StartProcess(t, t.TempDir())
	rng := rand.New(rand.NewPCG(35, 1))
	methodFlood(t, p.URL, 4, 16, 1, rng) // the "other" series exist from here on
	// A part that reads the store or JetStream at a scrape leaves its series
	// out of a scrape that it cannot answer in time (a busy machine, a part
	// still starting): the series known are those of the scrapes of the
	// ready process until two in a row add none, and a flood must add none
	// to them.
	waitFor(t, func() bool { code, _ := readyz(t, p.OpsURL); return code == 200 })
	known := map[string]bool{}
	series := func() map[string]float64 {
		m, err := apptest.Metrics(p.OpsURL)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for scrapes, quiet := 0, 0; quiet < 2 && scrapes < 20; scrapes++ {
		quiet++
		for s := range series() {
			if !known[s] {
				known[s], quiet = true, 0
			}
		}
	}
	before, rss, peak := len(known), p.RSS(), p.PeakRSS()
	for _, n := range []int{100, 900, 9_000} { // 10,000 in all; the first check comes early
		others, other := methodFlood(t, p.URL, n, 8<<10, 8, rng)
		var added []string
		for s := range series() {
			if !known[s] {
				added = append(added, s)
			}
		}
		if len(added) > 0 {
			t.Fatalf("after %d more requests with unknown methods, /metrics has %d series more than the %d before, such as %s",
				n, len(added), before, added[0])
		}
		if others > 0 {
			t.Errorf("%d of %d requests with unknown methods were not answered 501, such as %s", others, n, other)
		}
	}
	grewRSS, grewPeak := p.RSS()-rss, p.PeakRSS()-peak
	t.Logf("10,000 requests with 8 KiB methods: %d series before and after; RSS %d → %d MiB, peak %d → %d MiB",
		before, rss>>20, (rss+grewRSS)>>20, peak>>20, (peak+grewPeak)>>20)
	if grewRSS >= 64<<20 || grewPeak >= 64<<20 {
		t.Errorf("the flood grew the resident memory by %d MiB and its peak by %d MiB, want under 64 MiB each",
			grewRSS>>20, grewPeak>>20)
	}
}

// smuggle sends on conn a request to path that states its length both ways: its
// Content-Length covers a second request, which a proxy in front that reads the
// Content-Length takes for the body, while a server that reads it as chunked
// takes it for a request of its own. It fails the test unless the answer is 400
// with the connection closed, and nothing else is answered.
func smuggle(t *testing.T, conn net.Conn, method, path string) {
	t.Helper()
	defer conn.Close()
	second := "GET /svc/account/profile/current HTTP/1.1\r\nHost: herald\r\n\r\n"
	body := "0\r\n\r\n" + second
	req := method + " " + path + " HTTP/1.1\r\nHost: herald\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\nTransfer-Encoding: chunked\r\n\r\n" + body
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a bound on a socket read, not a wait
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%s %s: no answer: %v", method, path, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest || !res.Close {
		t.Errorf("%s %s with Transfer-Encoding and Content-Length: %s, connection closed: %v; want 400 and closed",
			method, path, res.Status, res.Close)
	}
	if next, err := http.ReadResponse(br, nil); err == nil {
		t.Errorf("%s %s: the request smuggled after it was answered: %s", method, path, next.Status)
	} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%s %s: the connection was not closed: %v", method, path, err)
	}
}

// TestTwoLengthsAreRefusedAndTheConnectionClosed: a request with both Transfer-Encoding
// and Content-Length, to the API or the console, is answered 400 and its connection
// closed, so a request smuggled after it is never answered; an ordinary request on a
// kept-alive connection is served as before.
func TestTwoLengthsAreRefusedAndTheConnectionClosed(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t)
	host := strings.TrimPrefix(b.URL, "http://")
	dial := func() net.Conn {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	smuggle(t, dial(), "GET", "/console/login")
	smuggle(t, dial(), "POST", "/svc/account/login")

	// "OPTIONS *" reaches the handler too, so the requests the handler sees stay
	// in step with those the connection carried: after it, two lengths are
	// refused, unless its answer closed the connection.
	c := dial()
	if _, err := io.WriteString(c, "OPTIONS * HTTP/1.1\r\nHost: herald\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReaderSize(c, 16), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Body.Close(); !res.Close {
		smuggle(t, c, "GET", "/console/login")
	}

	c = dial()
	defer c.Close()
	br := bufio.NewReader(c)
	for range 2 {
		if _, err := io.WriteString(c, "GET /console/login HTTP/1.1\r\nHost: herald\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Close {
			t.Fatalf("an ordinary request: %s, closed %v", res.Status, res.Close)
		}
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "herald test"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestTLSServesAndRefusesTwoLengths serves over TLS from http.tlsCert and http.tlsKey:
// the console and the API answer over HTTPS, and a request with both lengths is refused
// there too, since TLS ends where the framing of requests is followed.
func TestTLSServesAndRefusesTwoLengths(t *testing.T) {
	gate.Parallel(t)
	if testing.Short() {
		t.Skip("starts the herald binary")
	}
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	p := apptest.StartProcess(t, t.TempDir(), "HERALD_HTTP_TLSCERT="+certFile, "HERALD_HTTP_TLSKEY="+keyFile)
	if !strings.HasPrefix(p.URL, "https://") {
		t.Fatalf("listening on %s, want https", p.URL)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	res, err := hc.Get(p.URL + "/console/login")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	secure := false
	for _, ck := range res.Cookies() {
		secure = secure || ck.Secure
	}
	if res.StatusCode != http.StatusOK || !secure {
		t.Errorf("GET /console/login over TLS: %s, a Secure cookie: %v", res.Status, secure)
	}
	dial := func() net.Conn {
		c, err := tls.Dial("tcp", strings.TrimPrefix(p.URL, "https://"), &tls.Config{RootCAs: pool})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	smuggle(t, dial(), "GET", "/console/login")
	smuggle(t, dial(), "POST", "/svc/account/login")
}

// TestOneClientCannotHoldEveryConnection: 100 half-sent requests from 127.0.0.2, as
// many as http.maxConnections, leave a request from 127.0.0.1 served at once: the
// first http.maxConnectionsPerClient of them hold their places (until
// http.readHeaderTimeout) and the others are closed as soon as they are accepted.
func TestOneClientCannotHoldEveryConnection(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t, func(c *app.Config) { c.HTTP.MaxConnections = 100 })
	host := strings.TrimPrefix(b.URL, "http://")
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	for range 100 {
		c, err := d.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, "GET /console/login HTTP/1.1\r\nHost: herald\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
	began := time.Now()
	res, err := hc.Get(b.URL + "/console/login")
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	t.Logf("a request from 127.0.0.1 beside 100 half-sent ones from 127.0.0.2: %s in %s", res.Status, took.Round(time.Millisecond))
	if res.StatusCode != http.StatusOK || took > 2*time.Second {
		t.Errorf("a request from another address: %s after %s, want 200 at once", res.Status, took.Round(time.Millisecond))
	}
	waitFor(t, func() bool {
		m, err := apptest.Metrics(b.App.OpsURL())
		return err == nil && m["herald_http_connections_refused_total"] == 100-64
	})
}
