package app_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/app/apptest"
)

// TestDrippingClientIsCut sends a request's headers and then its body one byte at a time:
// the server closes the connection once the read timeout has passed, not when the client
// is done. This test runs on the real clock: the timeout is the network's.
func TestDrippingClientIsCut(t *testing.T) {
	gate.Parallel(t)
	const timeout = 500 * time.Millisecond
	b := apptest.Start(t, func(c *app.Config) { c.HTTP.ReadTimeout, c.HTTP.ReadHeaderTimeout = timeout, timeout })
	conn, err := net.Dial("tcp", strings.TrimPrefix(b.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	began := time.Now()
	_, err = conn.Write([]byte("POST /svc/account/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"))
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan time.Duration, 1)
	go func() {
		// The server answers (or not) and closes; reading to the end sees it.
		_, _ = bufio.NewReader(conn).ReadString(0)
		closed <- time.Since(began)
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case took := <-closed:
			if took > timeout+2*time.Second {
				t.Fatalf("the dripping connection was closed after %s, want about %s", took, timeout)
			}
			return
		case <-tick.C:
			_, _ = conn.Write([]byte(" "))
		case <-deadline:
			t.Fatal("the dripping connection is still open after 10s")
		}
	}
}

// TestConnectionsAreCapped holds as many connections as the cap allows (the service's
// own clients hold one or two of them): a further client waits until one of them ends.
func TestConnectionsAreCapped(t *testing.T) {
	gate.Parallel(t)
	b := apptest.Start(t, func(c *app.Config) { c.HTTP.MaxConnections = 8 })
	addr := strings.TrimPrefix(b.URL, "http://")
	var held []net.Conn
	for range 8 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	// A transport of its own: the default one may hold an idle connection already.
	hc := &http.Client{Timeout: 300 * time.Millisecond, Transport: &http.Transport{}}
	if _, err := hc.Get(b.URL + "/svc/nothing"); err == nil {
		t.Fatal("a ninth connection was served while eight were held")
	}
	for _, c := range held[:4] { // the ones still queued behind the cap go first
		c.Close()
	}
	hc.Timeout = 5 * time.Second
	res, err := hc.Get(b.URL + "/svc/nothing")
	if err != nil {
		t.Fatalf("once a held connection ended: %v", err)
	}
	res.Body.Close()
}
