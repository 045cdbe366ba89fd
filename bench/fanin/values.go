package main

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
)

// values are the figures the burst's mails say, by subscription: each
// subscription benchNNNNNN mails "benchNNNNNN: Revenue <value>", the value
// of metric NNNNNN mod -metrics, which is the demo's revenue plus that
// number. The sink reads them as the mails arrive, without decoding the
// message: the text part is plain ASCII.
type values struct {
	mu  sync.Mutex
	got []string // by subscription; "" until its mail arrived
	bad int      // mails that named no subscription of the burst
}

func newValues(n int) *values { return &values{got: make([]string, n)} }

var valueMark = []byte("bench")

// see reads the subscription and value a mail's body names.
func (v *values) see(_ textproto.MIMEHeader, body []byte) {
	i, val, ok := parseValue(body)
	v.mu.Lock()
	defer v.mu.Unlock()
	if !ok || i >= len(v.got) || v.got[i] != "" {
		v.bad++
		return
	}
	v.got[i] = val
}

// parseValue finds "benchNNNNNN: Revenue <value>" in body.
func parseValue(body []byte) (sub int, value string, ok bool) {
	const digits, sep = 6, ": Revenue "
	k := bytes.Index(body, valueMark)
	if k < 0 || len(body) < k+len(valueMark)+digits+len(sep) {
		return 0, "", false
	}
	rest := body[k+len(valueMark):]
	for _, c := range rest[:digits] {
		if c < '0' || c > '9' {
			return 0, "", false
		}
	}
	sub, _ = strconv.Atoi(string(rest[:digits]))
	if !bytes.HasPrefix(rest[digits:], []byte(sep)) {
		return 0, "", false
	}
	rest = rest[digits+len(sep):]
	end := bytes.IndexFunc(rest, func(r rune) bool { return !(r >= '0' && r <= '9' || r == ',' || r == '.') })
	if end < 0 {
		end = len(rest)
	}
	return sub, string(rest[:end]), end > 0
}

// check verifies that every subscription's mail arrived once with its own
// metric's value: the values less each subscription's offset (its metric's
// number) are one and the same revenue. It returns a checksum of every
// subscription's value, equal from run to run of the same data.
func (v *values) check(o options) (uint64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.bad > 0 {
		return 0, fmt.Errorf("%d mails named no subscription of the burst, or one twice", v.bad)
	}
	h := fnv.New64a()
	base := math.NaN()
	for i, s := range v.got {
		x, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
		if s == "" || err != nil {
			return 0, fmt.Errorf("subscription %d: value %q", i, s)
		}
		b := x - float64(i%o.metrics)
		if math.IsNaN(base) {
			base = b
		}
		if math.Abs(b-base) > 0.005 {
			return 0, fmt.Errorf("subscription %d mailed %s, want %.2f (its metric, %d, over the revenue %.2f)", i, s, base+float64(i%o.metrics), i%o.metrics, base)
		}
		fmt.Fprintf(h, "%d=%s;", i, s)
	}
	return h.Sum64(), nil
}
